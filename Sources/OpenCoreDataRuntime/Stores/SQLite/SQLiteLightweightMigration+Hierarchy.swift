import Foundation

// Entity hierarchy changes in an in-place lightweight migration: entity numbers (Z_ENT), entities
// that move to another table, and the Z_PRIMARYKEY counters.
//
// FORMATS.md §1.1/§1.4: one table per root entity, rows told apart by Z_ENT, and the numbers of a
// hierarchy contiguous in pre-order (fetches select an entity and its subentities with one
// `Z_ENT BETWEEN` range). Existing entities keep their numbers when the destination model allows
// it; when a hierarchy's numbers would not be contiguous (a subentity added to an existing
// hierarchy, a subentity removed from its middle, an entity moved), every entity is numbered
// afresh, 1...N in Core Data's order, as a new store of the destination model would be. Apple's
// stores show numbers 1...N without gaps after migrations (knowledgeC's `Object` went from 8 to 9
// between two OS versions), which suggests Apple renumbers too; its exact rule is not documented.
//
// Apple's inferred migration refuses to merge two hierarchies, so every destination table holds
// rows from at most one source table. Rows keep their Z_PK when they move (keys are unique within
// the source table), so foreign keys and join tables that point at them stay valid; only their
// Z_ENT and the destination-entity columns (`Z<n>_<REL>`) change.

extension SQLiteLightweightMigration {
    /// Where the rows of each destination table come from.
    struct TableOrigins {
        /// Destination table name → the source table it continues (altered, and renamed if needed, in place).
        var continued: [String: SQLiteSchema.Table] = [:]
        /// Destination table name → the source table some entities' rows are copied from (a new table).
        var copied: [String: SQLiteSchema.Table] = [:]
        /// Whether an existing entity's Z_ENT changes.
        var renumbered = false
    }

    /// Entity numbers of the destination layout: existing entities keep theirs and added ones come
    /// after the highest in the store, unless a hierarchy's numbers would then not be contiguous;
    /// then all are numbered 1...N in Core Data's order (FORMATS.md §1.4).
    static func destinationNumbers(
        _ destination: NSManagedObjectModel, sourceEntity: [ObjectIdentifier: NSEntityDescription],
        oldNumbers: [String: Int64], stored: [String: Int64]
    ) -> [String: Int64] {
        let order = SQLiteSchema.numberingOrder(destination.entities)
        var numbers: [String: Int64] = [:]
        // Rows above 16000 are Core Data's own (persistent history); model entities stay below.
        var next = (stored.values.filter { $0 < 16000 }.max() ?? 0) + 1
        for entity in order {
            if let origin = sourceEntity[ObjectIdentifier(entity)], let number = oldNumbers[origin.name ?? ""] {
                numbers[entity.name ?? ""] = number
            } else {
                numbers[entity.name ?? ""] = next
                next += 1
            }
        }
        let contiguous = order.allSatisfy { entity in
            let members = order.filter { $0.isKindOf(entity: entity) }.compactMap { numbers[$0.name ?? ""] }
            guard let low = members.min(), let high = members.max() else { return true }
            return high - low + 1 == Int64(members.count)
        }
        if contiguous { return numbers }
        return Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1.name ?? "", Int64($0 + 1)) })
    }

    /// Decides which source table each destination table continues, and which destination tables
    /// are new tables that receive rows copied from a source table. Throws (before anything is
    /// written) when a destination table would hold rows of two source tables (merged hierarchies,
    /// which only a custom mapping model can ask for).
    func planTableOrigins() throws -> TableOrigins {
        var origins = TableOrigins()
        var drawing: [String: [SQLiteSchema.Table]] = [:]
        var oldTables: [String: SQLiteSchema.Table] = [:]
        for table in newSchema.tables {
            var sources: [String: SQLiteSchema.Table] = [:]
            for entity in members(of: table, in: newSchema) {
                if let origin = sourceEntity[ObjectIdentifier(entity)], let old = oldSchema.table(for: origin) {
                    sources[old.name] = old
                }
            }
            if sources.count > 1 {
                throw unsupported(
                    "table \(table.name) would hold rows of the tables \(sources.keys.sorted().joined(separator: " and ")) (two entity hierarchies merged into one)",
                    entity: table.root.name ?? "?")
            }
            if let old = sources.values.first {
                drawing[old.name, default: []].append(table)
                oldTables[old.name] = old
            }
        }
        for (name, tables) in drawing {
            let old = oldTables[name]!
            // The table whose root entity was the source table's root continues it; else a sole heir does.
            let heir = tables.first { sourceEntity[ObjectIdentifier($0.root)] === old.root } ?? (tables.count == 1 ? tables[0] : nil)
            for table in tables {
                if table === heir { origins.continued[table.name] = old } else { origins.copied[table.name] = old }
            }
        }
        origins.renumbered = newSchema.entitiesInOrder.contains { entity in
            sourceEntity[ObjectIdentifier(entity)].map { oldSchema.number(of: $0) != newSchema.number(of: entity) } ?? false
        }
        return origins
    }

    /// The entities whose rows live in `table`.
    func members(of table: SQLiteSchema.Table, in schema: SQLiteSchema) -> [NSEntityDescription] {
        schema.entitiesInOrder.filter { schema.table(for: $0) === table }
    }

    /// Z_ENT values of the source entities in `old` whose rows do not stay there: removed entities
    /// and entities that move to another table.
    func numbersLeaving(_ old: SQLiteSchema.Table, continuedBy table: SQLiteSchema.Table) -> [Int64] {
        let staying = Set(members(of: table, in: newSchema).compactMap { sourceEntity[ObjectIdentifier($0)].map(ObjectIdentifier.init) })
        return members(of: old, in: oldSchema).filter { !staying.contains(ObjectIdentifier($0)) }
            .compactMap { oldSchema.number(of: $0) }
    }

    /// Gives the rows that stay in `old` their new Z_ENT (one UPDATE of the rows whose number changes).
    func renumberRows(of old: SQLiteSchema.Table, continuedBy table: SQLiteSchema.Table, on connection: SQLiteConnection)
        throws
    {
        var cases: [(Int64, Int64)] = []
        for entity in members(of: table, in: newSchema) {
            guard let origin = sourceEntity[ObjectIdentifier(entity)], let from = oldSchema.number(of: origin),
                let to = newSchema.number(of: entity), from != to
            else { continue }
            cases.append((from, to))
        }
        guard !cases.isEmpty else { return }
        step = "renumbering entities (Z_ENT)"
        let whens = cases.map { "WHEN \($0.0) THEN \($0.1)" }.joined(separator: " ")
        try execute(
            connection,
            "UPDATE \(old.name) SET Z_ENT = CASE Z_ENT \(whens) END WHERE Z_ENT IN (\(cases.map { String($0.0) }.joined(separator: ", ")))"
        )
    }

    /// Creates each new table that receives moved rows (under a temporary name) and copies the rows
    /// of its entities from their source table, before any source table changes. Returns the
    /// temporary and final names, for renaming once the source tables are out of the way.
    func copyRowsIntoNewTables(on connection: SQLiteConnection) throws -> [(temporary: String, name: String)] {
        var created: [(temporary: String, name: String)] = []
        for table in newSchema.tables {
            guard let old = tableOrigins.copied[table.name] else { continue }
            stepEntity = table.root.name
            step = "copying the rows of entities that move to another table"
            let temporary = "Z_OCDMIGRATION_" + table.name
            try execute(connection, SQLiteSchema.createStatement(table, name: temporary))
            let existing = Set(try connection.column("SELECT name FROM pragma_table_info(?)", [.text(old.name)]).compactMap {
                if case .text(let name) = $0 { return name } else { return nil }
            })
            for entity in members(of: table, in: newSchema) {
                guard let origin = sourceEntity[ObjectIdentifier(entity)], let from = oldSchema.number(of: origin),
                    let to = newSchema.number(of: entity)
                else { continue }
                stepEntity = entity.name
                var targets = ["Z_PK", "Z_ENT", "Z_OPT"]
                var values = ["Z_PK", String(to), "Z_OPT"]
                for (column, value) in try copiedValues(of: entity, existing: existing) {
                    targets.append(column)
                    values.append(value)
                }
                try execute(
                    connection,
                    "INSERT INTO \(temporary) (\(targets.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(old.name) WHERE Z_ENT = \(from)"
                )
            }
            created.append((temporary, table.name))
        }
        return created
    }

    /// Destination column → SQL value (a source column, or a default) for the rows of `entity`
    /// copied from its source table, whose columns are `existing`.
    private func copiedValues(of entity: NSEntityDescription, existing: Set<String>) throws -> [(String, String)] {
        var result: [(String, String)] = []
        for property in entity.properties where !property.isTransient {
            let old = sourceProperty[ObjectIdentifier(property)]
            if let elements = newSchema.compositeColumnsByProperty[ObjectIdentifier(property)] {
                let previous = old.flatMap { oldSchema.compositeColumnsByProperty[ObjectIdentifier($0)] } ?? []
                for element in elements {
                    if let match = previous.first(where: { $0.path == element.path && $0.type == element.type }),
                        existing.contains(match.name)
                    {
                        result.append((element.name, match.name))
                    }
                }
                continue
            }
            guard let columns = newColumns[ObjectIdentifier(property)] else { continue }
            let before = old.flatMap { oldColumns[ObjectIdentifier($0)] }
            for (new, previous) in [(columns.main, before?.main), (columns.entity, before?.entity), (columns.order, before?.order)] {
                guard let new else { continue }
                var value = previous.flatMap { existing.contains($0) ? $0 : nil } ?? "NULL"
                if new == columns.main, let attribute = property as? NSAttributeDescription, !attribute.isOptional,
                    let fill = attribute.defaultValue
                {
                    value = "COALESCE(\(value), \(try literal(SQLiteStore.sqliteValue(fill, attribute.attributeType))))"
                }
                if value != "NULL" { result.append((new, value)) }
            }
        }
        return result
    }

    /// Drops a table named like one the migration creates when the source layout has no such table:
    /// one an earlier deferred migration left for `finishDeferredLightweightMigration()` (a removed
    /// entity or relationship added again), whose rows must not come back.
    func dropLeftoverTable(_ name: String, on connection: SQLiteConnection) throws {
        let known = Set(oldSchema.tables.map(\.name) + oldSchema.joinTables.map(\.name))
        guard !known.contains(name), try connection.tableExists(name) else { return }
        try execute(connection, "DROP TABLE \(name)")
    }

    /// Sets every destination-entity column (`Z<n>_<REL>`) that may be stale (entities renumbered or
    /// moved, the column new, or its relationship rewritten) from the Z_ENT of the row it points at.
    func refreshEntityColumns(rewritten: Set<ObjectIdentifier>, on connection: SQLiteConnection) throws {
        step = "updating destination-entity columns"
        let everything = tableOrigins.renumbered || !tableOrigins.copied.isEmpty
        for entity in newSchema.entitiesInOrder {
            guard let mapping = newSchema.mapping(for: entity) else { continue }
            for slot in mapping.slots {
                let property = entity.layout.properties[slot.slot]
                guard case .toOne(let target, let entityColumn?) = slot.kind, property.entity === entity,
                    let targetTable = newSchema.table(for: target)
                else { continue }
                // An added relationship has no values yet; a kept one whose column is new needs it filled.
                let old = sourceProperty[ObjectIdentifier(property)]
                let columnIsNew = old != nil && old.flatMap { oldColumns[ObjectIdentifier($0)]?.entity } == nil
                guard everything || rewritten.contains(ObjectIdentifier(property)) || columnIsNew else { continue }
                stepEntity = entity.name
                let table = mapping.table.name
                let column = mapping.table.columns[slot.column].name
                let range = mapping.subentityRange
                let entityName = mapping.table.columns[entityColumn].name
                try execute(
                    connection,
                    "UPDATE \(table) SET \(entityName) = (SELECT t.Z_ENT FROM \(targetTable.name) AS t WHERE t.Z_PK = \(table).\(column)) WHERE (\(column) IS NOT NULL OR \(entityName) IS NOT NULL) AND Z_ENT >= \(range.lowerBound) AND Z_ENT <= \(range.upperBound)"
                )
            }
        }
        stepEntity = nil
    }

    /// Z_PRIMARYKEY for the destination layout: one row per entity with its (maybe new) number and
    /// parent. A kept entity keeps its Z_NAME, as Apple's migration does (see
    /// `SQLiteSchema.storedNumber(of:in:)`). A root's Z_MAX is the counter of the source hierarchy
    /// its rows came from (never lower than its highest Z_PK); subentities' stay 0 (§1.4).
    func updatePrimaryKeyTable(on connection: SQLiteConnection) throws {
        step = "updating Z_PRIMARYKEY"
        stepEntity = nil
        var oldNames: [Int64: String] = [:]
        var oldMax: [Int64: Int64] = [:]
        let rows = try connection.prepareUncached("SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY")
        do {
            defer { rows.finalize() }
            while try rows.step() {
                oldNames[rows.int64(0)] = rows.text(1)
                oldMax[rows.int64(0)] = rows.int64(2)
            }
        }
        let replaced = Set(storedNumbers.values).intersection(
            Set(oldSchema.entitiesInOrder.compactMap { oldSchema.number(of: $0) } + newNumbers.values))
        for number in replaced.sorted() {
            try execute(connection, "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(number)])
        }
        for (number, name, parent) in newSchema.primaryKeyRows {
            stepEntity = name
            guard let entity = newSchema.entitiesByNumber[number] else { continue }
            let origin = sourceEntity[ObjectIdentifier(entity)].flatMap { oldSchema.number(of: $0) }
            var counter: Int64 = 0
            if parent == 0, let table = newSchema.table(for: entity) {
                if let old = tableOrigins.continued[table.name] ?? tableOrigins.copied[table.name],
                    let root = oldSchema.number(of: old.root)
                {
                    counter = oldMax[root] ?? 0
                }
                if case .integer(let highest)? = try connection.column("SELECT MAX(Z_PK) FROM \(table.name)").first {
                    counter = max(counter, highest)
                }
            }
            try execute(
                connection, "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                [.integer(number), .text(origin.flatMap { oldNames[$0] } ?? name), .integer(parent), .integer(counter)])
        }
        stepEntity = nil
    }
}
