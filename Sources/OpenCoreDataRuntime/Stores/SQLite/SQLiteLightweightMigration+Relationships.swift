import Foundation

// Relationships whose storage changes in an in-place lightweight migration.
//
// FORMATS.md §1.3 stores a relationship pair in one of three ways: a foreign-key column on the
// to-one side(s), a `Z_<n><NAME>` join table for many-to-many (and inverse-less to-many), and
// `Z_FOK_` ordering columns for ordered to-many relationships. When a pair changes cardinality
// (to-one ↔ to-many ↔ many-to-many) or a foreign-key-stored to-many changes between ordered and
// unordered, its contents are read from the source layout into a temporary table *before* any
// table changes, as (owner, target, position of the target among the owner's, position of the
// owner among the target's) rows, then written to the destination layout once the tables have it.
// Join table ↔ join table changes (ordering, renames) are copied by `migrateJoinTables`.
//
// A to-many becoming to-one keeps one object: the first in the relationship's order when it was
// ordered, else the one with the lowest primary key (the earliest saved). Apple's guide lists
// "changing a relationship from a to-one to a to-many, or a non-ordered to-many to ordered (and
// visa-versa)" as inferable; whether that covers to-many → to-one, and which object survives, is not
// documented, so this rule is OpenCoreData's (docs/linux-differences.md).

extension SQLiteLightweightMigration {
    /// A relationship pair read from the source layout, to be written to the destination layout.
    struct CapturedRelationship {
        /// The temporary table holding `owner, target, ord, iord`.
        let table: String
        /// The destination relationship whose objects are the owners.
        let relationship: NSRelationshipDescription
    }

    /// How a relationship pair is stored, as far as a migration cares.
    private struct Storage: Equatable {
        var toMany: Bool
        var ordered: Bool
        var inverseToMany: Bool?
        var inverseOrdered: Bool

        init(_ relationship: NSRelationshipDescription) {
            toMany = relationship.isToMany
            ordered = relationship.isToMany && relationship.isOrdered
            let inverse = relationship.inverseRelationship
            inverseToMany = inverse?.isToMany
            inverseOrdered = inverse.map { $0.isToMany && $0.isOrdered } ?? false
        }

        /// Stored in a join table (many-to-many, or to-many without an inverse).
        var isJoin: Bool { toMany && (inverseToMany ?? true) }
    }

    /// Reads every relationship pair whose storage changes into a temporary table (reduced to one
    /// object per to-one side, with positions renumbered 1...n). Runs before any table changes.
    func captureRelationships(on connection: SQLiteConnection) throws {
        var handled: Set<ObjectIdentifier> = []
        for entity in newSchema.entitiesInOrder {
            for case let relationship as NSRelationshipDescription in entity.ownProperties where !relationship.isTransient {
                guard !handled.contains(ObjectIdentifier(relationship)),
                    let old = sourceProperty[ObjectIdentifier(relationship)] as? NSRelationshipDescription
                else { continue }
                let (before, after) = (Storage(old), Storage(relationship))
                guard before != after, !(before.isJoin && after.isJoin) else { continue }
                handled.insert(ObjectIdentifier(relationship))
                if let inverse = relationship.inverseRelationship { handled.insert(ObjectIdentifier(inverse)) }
                (step, stepEntity) = ("reading a relationship whose storage changes (\(relationship.name))", entity.name)
                guard let pairs = try sourcePairs(of: old) else { continue }
                let name = "Z_OCDRELATIONSHIP_\(capturedRelationships.count)"
                // One object per to-one side: the first by position, else the lowest primary key.
                let oneTarget = !relationship.isToMany
                let oneOwner = relationship.inverseRelationship.map { !$0.isToMany } ?? false
                try execute(
                    connection,
                    """
                    CREATE TEMP TABLE \(name) AS WITH raw(owner, target, ord, iord) AS (\(pairs)), \
                    a AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY owner ORDER BY ord, target) AS n FROM raw), \
                    b AS (SELECT owner, target, ord, iord FROM a WHERE \(oneTarget ? "n = 1" : "1")), \
                    c AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY target ORDER BY iord, owner) AS m FROM b), \
                    d AS (SELECT owner, target, ord, iord FROM c WHERE \(oneOwner ? "m = 1" : "1")) \
                    SELECT owner, target, ROW_NUMBER() OVER (PARTITION BY owner ORDER BY ord, target) AS ord, \
                    ROW_NUMBER() OVER (PARTITION BY target ORDER BY iord, owner) AS iord FROM d
                    """)
                try execute(connection, "CREATE INDEX temp.\(name)_OWNER ON \(name) (owner)")
                try execute(connection, "CREATE INDEX temp.\(name)_TARGET ON \(name) (target)")
                capturedRelationships.append(CapturedRelationship(table: name, relationship: relationship))
            }
        }
        stepEntity = nil
    }

    /// A SELECT of `owner, target, ord, iord` from the source layout of `relationship` (owners are
    /// objects of its entity; `ord` orders targets within an owner, `iord` owners within a target).
    private func sourcePairs(of relationship: NSRelationshipDescription) throws -> String? {
        guard let entity = relationship.entity, let mapping = oldSchema.mapping(for: entity),
            let destination = relationship.destinationEntity, let targetTable = oldSchema.table(for: destination)
        else { return nil }
        let range = mapping.subentityRange
        if !relationship.isToMany {
            guard let columns = oldColumns[ObjectIdentifier(relationship)] else { return nil }
            return "SELECT Z_PK, \(columns.main), NULL, \(columns.order ?? "NULL") FROM \(mapping.table.name) WHERE \(columns.main) IS NOT NULL AND Z_ENT >= \(range.lowerBound) AND Z_ENT <= \(range.upperBound) AND \(columns.main) IN (SELECT Z_PK FROM \(targetTable.name))"
        }
        guard let slot = entity.layout.properties.firstIndex(where: { $0 === relationship }) else { return nil }
        switch mapping.toMany[slot] {
        case .inverseForeignKey(let table, let column, let order, _)?:
            let inverseRange = relationship.inverseRelationship?.entity.flatMap { oldSchema.mapping(for: $0)?.subentityRange } ?? range
            return "SELECT \(column), Z_PK, \(order ?? "NULL"), NULL FROM \(table.name) WHERE \(column) IS NOT NULL AND Z_ENT >= \(inverseRange.lowerBound) AND Z_ENT <= \(inverseRange.upperBound) AND \(column) IN (SELECT Z_PK FROM \(mapping.table.name))"
        case .join(let join, let mine, let other, let otherOrder, _)?:
            let mineOrder = mine == join.columnA ? join.orderA : join.orderB
            return "SELECT \(mine), \(other), \(otherOrder ?? "NULL"), \(mineOrder ?? "NULL") FROM \(join.name)"
        case nil:
            return nil
        }
    }

    /// Writes every captured relationship pair to the destination layout (foreign keys, ordering
    /// columns, join table) and drops the temporary tables. Returns the relationships written.
    func writeCapturedRelationships(on connection: SQLiteConnection) throws -> Set<ObjectIdentifier> {
        var written: Set<ObjectIdentifier> = []
        for captured in capturedRelationships {
            let relationship = captured.relationship
            let inverse = relationship.inverseRelationship
            guard let entity = relationship.entity, let mapping = newSchema.mapping(for: entity),
                let destination = relationship.destinationEntity, let targetMapping = newSchema.mapping(for: destination)
            else { continue }
            (step, stepEntity) = ("writing a relationship whose storage changed (\(relationship.name))", entity.name)
            let cap = captured.table
            let owners = Self.keys(of: mapping)
            let targets = Self.keys(of: targetMapping)
            if !relationship.isToMany, let columns = newColumns[ObjectIdentifier(relationship)] {
                var sets = [
                    "\(columns.main) = (SELECT c.target FROM \(cap) AS c WHERE c.owner = \(mapping.table.name).Z_PK AND c.target IN \(targets))"
                ]
                if let order = columns.order {
                    sets.append("\(order) = (SELECT c.iord FROM \(cap) AS c WHERE c.owner = \(mapping.table.name).Z_PK AND c.target IN \(targets))")
                }
                try execute(
                    connection,
                    "UPDATE \(mapping.table.name) SET \(sets.joined(separator: ", ")) WHERE \(Self.inRange(mapping))")
                written.insert(ObjectIdentifier(relationship))
            }
            if let inverse, !inverse.isToMany, let inverseEntity = inverse.entity,
                let inverseMapping = newSchema.mapping(for: inverseEntity), let columns = newColumns[ObjectIdentifier(inverse)]
            {
                let table = inverseMapping.table.name
                var sets = ["\(columns.main) = (SELECT c.owner FROM \(cap) AS c WHERE c.target = \(table).Z_PK AND c.owner IN \(owners))"]
                if let order = columns.order {
                    sets.append("\(order) = (SELECT c.ord FROM \(cap) AS c WHERE c.target = \(table).Z_PK AND c.owner IN \(owners))")
                }
                try execute(connection, "UPDATE \(table) SET \(sets.joined(separator: ", ")) WHERE \(Self.inRange(inverseMapping))")
                written.insert(ObjectIdentifier(inverse))
            }
            if relationship.isToMany, inverse?.isToMany ?? true,
                let slot = entity.layout.properties.firstIndex(where: { $0 === relationship }),
                case .join(let join, let mine, let other, let otherOrder, _)? = mapping.toMany[slot]
            {
                let mineOrder = mine == join.columnA ? join.orderA : join.orderB
                var targetsColumns = [mine, other]
                var values = ["owner", "target"]
                if let otherOrder { (targetsColumns, values) = (targetsColumns + [otherOrder], values + ["ord"]) }
                if let mineOrder { (targetsColumns, values) = (targetsColumns + [mineOrder], values + ["iord"]) }
                try execute(connection, "DELETE FROM \(join.name)")
                try execute(
                    connection,
                    "INSERT INTO \(join.name) (\(targetsColumns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(cap) WHERE owner IN \(owners) AND target IN \(targets)"
                )
            }
            try execute(connection, "DROP TABLE temp.\(cap)")
        }
        capturedRelationships = []
        stepEntity = nil
        return written
    }

    private static func inRange(_ mapping: SQLiteSchema.EntityMapping) -> String {
        "Z_ENT >= \(mapping.subentityRange.lowerBound) AND Z_ENT <= \(mapping.subentityRange.upperBound)"
    }
}
