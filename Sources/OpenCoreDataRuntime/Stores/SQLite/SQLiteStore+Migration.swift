import Foundation

// Lightweight migration of a SQLite store in place, in SQL, in one transaction.
//
// Apple's SQLite store performs an inferred migration "in situ (solely by issuing SQL statements)"
// (Core Data Model Versioning and Data Migration Programming Guide, "Lightweight Migration"). This
// does the same: added attributes are `ALTER TABLE … ADD COLUMN` (existing rows are not rewritten),
// renamed ones `ALTER TABLE … RENAME COLUMN`, renamed root entities `ALTER TABLE … RENAME TO`, added
// entities get new tables and new `Z_ENT` numbers, and an entity table is rebuilt (copied into a
// new table) only when a column must go. Every step, Z_PRIMARYKEY and Z_METADATA run in one
// transaction: on any failure the transaction rolls back and the file is as it was.
//
// Existing entities keep their `Z_ENT` numbers (join-table and polymorphic column names contain
// them) when every hierarchy stays contiguous; added entities are numbered after the highest number
// in the store. Entity hierarchy changes (renumbering, entities moving between tables) are in
// `SQLiteLightweightMigration+Hierarchy.swift`; relationships whose storage changes (to-one ↔
// to-many ↔ many-to-many, ordered ↔ unordered) in `SQLiteLightweightMigration+Relationships.swift`.

extension SQLiteStore {
    /// Migrates the file open on `connection` from `stored` (the source model's layout) to the
    /// destination model, and returns the store's metadata and entity numbers afterwards.
    ///
    /// With `deferringCleanup` (`NSPersistentStoreDeferredLightweightMigrationOptionKey`), removed
    /// columns, tables and non-unique indexes stay until ``finishDeferredLightweightMigration()``;
    /// the metadata then says so.
    func migrateInPlace(
        _ connection: SQLiteConnection, stored: SQLiteStoredMetadata, plan: LightweightMigrationPlan, url: URL,
        deferringCleanup: Bool = false
    ) throws -> SQLiteStoredMetadata {
        let migration = try SQLiteLightweightMigration(stored: stored, plan: plan, url: url)
        migration.deferCleanup = deferringCleanup
        var metadata = stored.metadata
        for key in [
            NSStoreModelVersionHashesKey, NSStoreModelVersionIdentifiersKey, NSStoreModelVersionChecksumKey,
            "NSStoreModelVersionHashesDigest", "NSStoreModelVersionHashesVersion",
        ] {
            metadata[key] = nil
        }
        metadata.merge(Self.modelMetadata(plan.destinationModel)) { _, new in new }
        metadata[NSStoreTypeKey] = NSSQLiteStoreType
        // Another process may have migrated the file between reading its metadata and taking the
        // write lock: look again inside the transaction.
        let current: [String: Any]? = try connection.writeTransaction {
            let now = try Self.currentMetadata(connection)
            if plan.destinationModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: now) { return now }
            guard plan.sourceModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: now) else {
                throw OpenCoreDataError(
                    .migration, "cannot migrate: another process changed the store's model while it was being opened",
                    url: url)
            }
            try migration.run(on: connection)
            if !migration.deferred.isEmpty {
                var pending = metadata[deferredCleanupKey] as? [String: [String]] ?? [:]
                for (kind, names) in migration.deferred { pending[kind, default: []] += names }
                metadata[deferredCleanupKey] = pending
                metadata[NSPersistentStoreDeferredLightweightMigrationOptionKey] = true
            }
            migration.step = "writing the store metadata"
            try migration.execute(
                connection, "UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = 1", [.blob(try Self.plistData(metadata))])
            return nil
        }
        if var current {
            migrationStatements = []
            current[NSStoreUUIDKey] = stored.uuid
            var numbers: [String: Int64] = [:]
            let keys = try connection.prepareUncached("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")
            defer { keys.finalize() }
            while try keys.step() { numbers[keys.text(1)] = keys.int64(0) }
            return SQLiteStoredMetadata(uuid: stored.uuid, metadata: current, entityNumbers: numbers)
        }
        metadata[NSStoreUUIDKey] = stored.uuid
        migrationStatements = migration.statements
        return SQLiteStoredMetadata(uuid: stored.uuid, metadata: metadata, entityNumbers: migration.newNumbers)
    }

    /// Z_PLIST as it is now, read on `connection` (inside its transaction).
    private static func currentMetadata(_ connection: SQLiteConnection) throws -> [String: Any] {
        guard case .blob(let data)? = try connection.column("SELECT Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1").first,
            let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any]
        else { return [:] }
        return plist
    }
}

/// The plan and the SQL of one in-place lightweight migration.
final class SQLiteLightweightMigration {
    /// A stored property's columns: its value (or foreign key), and for to-one relationships the
    /// destination-entity column and the ordering column.
    struct Columns {
        var main: String
        var entity: String?
        var order: String?
    }

    let url: URL
    let source: NSManagedObjectModel
    let destination: NSManagedObjectModel
    let oldSchema: SQLiteSchema
    let newSchema: SQLiteSchema
    let storedNumbers: [String: Int64]
    let newNumbers: [String: Int64]
    /// Destination entity → the source entity it came from.
    let sourceEntity: [ObjectIdentifier: NSEntityDescription]
    /// Destination property → the source property it came from.
    let sourceProperty: [ObjectIdentifier: NSPropertyDescription]
    let oldColumns: [ObjectIdentifier: Columns]
    let newColumns: [ObjectIdentifier: Columns]
    /// Where each destination table's rows come from (see `SQLiteLightweightMigration+Hierarchy.swift`).
    var tableOrigins = TableOrigins()
    /// Relationships whose storage changes, captured before the tables change (see `+Relationships.swift`).
    var capturedRelationships: [CapturedRelationship] = []
    /// What the migration is doing, for error messages.
    var step = "planning"
    var stepEntity: String?
    /// The statements run, in order (for tests and error messages).
    private(set) var statements: [String] = []
    /// Leave removed tables, columns and non-unique indexes for `finishDeferredLightweightMigration()`.
    var deferCleanup = false
    /// What was left: `"tables"` and `"indexes"` to drop (tables with extra columns are found again).
    var deferred: [String: [String]] = [:]

    init(stored: SQLiteStoredMetadata, plan: LightweightMigrationPlan, url: URL) throws {
        self.url = url
        let source = plan.sourceModel
        let destination = plan.destinationModel
        self.source = source
        self.destination = destination
        storedNumbers = stored.entityNumbers
        var oldNumbers: [String: Int64] = [:]
        for entity in source.entities {
            guard let number = SQLiteSchema.storedNumber(of: entity, in: stored.entityNumbers) else {
            throw OpenCoreDataError(
                .migration,
                "cannot migrate: the store's Z_PRIMARYKEY has no row for entity \(entity.name ?? "?") of the model it was written with",
                entityName: entity.name, url: url)
            }
            oldNumbers[entity.name ?? ""] = number
        }
        oldSchema = SQLiteSchema(model: source, numbers: oldNumbers)

        // Entity and property correspondence from the mapping model.
        var sourceEntityMap: [ObjectIdentifier: NSEntityDescription] = [:]
        var sourcePropertyMap: [ObjectIdentifier: NSPropertyDescription] = [:]
        for entityMapping in plan.mapping.entityMappings ?? [] {
            switch entityMapping.mappingType {
            case .addEntityMappingType, .removeEntityMappingType: continue
            case .copyEntityMappingType, .transformEntityMappingType: break
            default:
                throw OpenCoreDataError(
                    .migration,
                    "cannot migrate: entity mapping \(entityMapping.name ?? "?") is a custom mapping; custom entity mappings and migration policies are not supported on Linux yet",
                    entityName: entityMapping.sourceEntityName, url: url)
            }
            guard let target = entityMapping.destinationEntityName.flatMap({ destination.entitiesByName[$0] }),
                let origin = entityMapping.sourceEntityName.flatMap({ source.entitiesByName[$0] })
            else {
                throw OpenCoreDataError(
                    .migration,
                    "cannot migrate: entity mapping \(entityMapping.name ?? "?") names an entity the models do not have",
                    entityName: entityMapping.destinationEntityName ?? entityMapping.sourceEntityName, url: url)
            }
            sourceEntityMap[ObjectIdentifier(target)] = origin
            for propertyMapping in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) {
                guard let name = propertyMapping.name, let property = target.propertiesByName[name],
                    let copied = propertyMapping._copiedSourceProperty
                else { continue }
                var error: OpenCoreDataError
                switch copied {
                case .success(let sourceName):
                    if let old = origin.propertiesByName[sourceName] {
                        let sameKind =
                            (old as? NSAttributeDescription)?.attributeType
                            == (property as? NSAttributeDescription)?.attributeType
                            && (old is NSRelationshipDescription) == (property is NSRelationshipDescription)
                        if sameKind {
                            sourcePropertyMap[ObjectIdentifier(property)] = old
                            continue
                        }
                        error = OpenCoreDataError(
                            .migration,
                            "cannot migrate: property \(name) of \(target.name ?? "?") would be copied from \(sourceName), which has another type",
                            key: name)
                    } else {
                        error = OpenCoreDataError(
                            .migration,
                            "cannot migrate: property mapping \(name) reads \(sourceName), which \(origin.name ?? "?") does not have",
                            key: name)
                    }
                case .failure(let failure): error = failure
                }
                error.entityName = target.name
                error.url = url
                throw error
            }
        }
        sourceEntity = sourceEntityMap
        sourceProperty = sourcePropertyMap
        newNumbers = Self.destinationNumbers(
            destination, sourceEntity: sourceEntityMap, oldNumbers: oldNumbers, stored: stored.entityNumbers)
        newSchema = SQLiteSchema(model: destination, numbers: newNumbers)
        oldColumns = Self.columnsByProperty(oldSchema)
        newColumns = Self.columnsByProperty(newSchema)
        tableOrigins = try planTableOrigins()
    }

    func unsupported(_ what: String, entity: String) -> OpenCoreDataError {
        OpenCoreDataError(
            .migration,
            "cannot migrate in place: \(what); the SQLite store's lightweight migration does not support this change yet (the store is unchanged)",
            entityName: entity, url: url)
    }

    /// Every stored property's columns in a layout, by property identity.
    private static func columnsByProperty(_ schema: SQLiteSchema) -> [ObjectIdentifier: Columns] {
        var result: [ObjectIdentifier: Columns] = [:]
        for entity in schema.entitiesInOrder {
            guard let mapping = schema.mapping(for: entity) else { continue }
            let properties = entity.layout.properties
            for slot in mapping.slots {
                let key = ObjectIdentifier(properties[slot.slot])
                if result[key] != nil { continue }
                var columns = Columns(main: mapping.table.columns[slot.column].name)
                if case .toOne(_, let entityColumn?) = slot.kind { columns.entity = mapping.table.columns[entityColumn].name }
                columns.order = mapping.orderColumns[slot.slot]
                result[key] = columns
            }
        }
        return result
    }

    // MARK: Running

    /// Runs every statement; the caller holds the transaction.
    func run(on connection: SQLiteConnection) throws {
        var deletedRowsIn: Set<String> = []
        // 0. Before any table changes: relationships whose storage changes, and rows that move to a
        // new table (SQLiteLightweightMigration+Relationships.swift, +Hierarchy.swift).
        try captureRelationships(on: connection)
        let copiedTables = try copyRowsIntoNewTables(on: connection)
        // 1. Source tables no destination table continues.
        let keptOldTables = Set(tableOrigins.continued.values.map(\.name))
        let newNames = Set(newSchema.tables.map(\.name) + newSchema.joinTables.map(\.name))
        for table in oldSchema.tables where !keptOldTables.contains(table.name) {
            if deferCleanup, !newNames.contains(table.name) {
                deferred["tables", default: []].append(table.name)
                continue
            }
            (step, stepEntity) = ("dropping the table of a removed entity", table.root.name)
            try execute(connection, "DROP TABLE IF EXISTS \(table.name)")
        }
        // 2. Entity tables.
        for table in newSchema.tables where tableOrigins.copied[table.name] == nil {
            stepEntity = table.root.name
            guard let old = tableOrigins.continued[table.name] else {
                step = "creating the table of an added entity"
                try dropLeftoverTable(table.name, on: connection)
                try execute(connection, SQLiteSchema.createStatement(table))
                continue
            }
            if try migrateTable(table, from: old, on: connection) { deletedRowsIn.insert(table.name) }
        }
        step = "renaming tables of entities that moved"
        for (temporary, name) in copiedTables {
            stepEntity = name
            try dropLeftoverTable(name, on: connection)
            if try connection.tableExists(name) { throw unsupported("table \(name) already exists", entity: name) }
            try execute(connection, "ALTER TABLE \(temporary) RENAME TO \(name)")
            deletedRowsIn.insert(name)
        }
        // 3. Join tables, then relationships whose storage changed.
        try migrateJoinTables(on: connection)
        let rewritten = try writeCapturedRelationships(on: connection)
        // 4. References to rows of removed subentities, or to rows that moved out of a destination's reach.
        if !deletedRowsIn.isEmpty { try clearDanglingReferences(to: deletedRowsIn, on: connection) }
        try refreshEntityColumns(rewritten: rewritten, on: connection)
        // 5. Indexes, Z_PRIMARYKEY, Z_MODELCACHE.
        try reconcileIndexes(on: connection)
        try updatePrimaryKeyTable(on: connection)
        stepEntity = nil
        if try connection.tableExists("Z_MODELCACHE") {
            // The cached model describes the old version; OpenCoreData cannot write Apple's archive.
            step = "clearing the stale model cache"
            try execute(connection, "DELETE FROM Z_MODELCACHE")
        }
    }

    /// Brings one entity table to the destination layout. Returns whether rows of removed
    /// subentities were deleted.
    private func migrateTable(_ table: SQLiteSchema.Table, from old: SQLiteSchema.Table, on connection: SQLiteConnection)
        throws -> Bool
    {
        step = "checking the existing table"
        let existing = Set(try connection.column("SELECT name FROM pragma_table_info(?)", [.text(old.name)]).compactMap {
            if case .text(let name) = $0 { return name } else { return nil }
        })
        // Where each destination column comes from.
        var origin: [String: String] = [:]
        var fill: [String: (SQLiteValue, ClosedRange<Int64>, all: Bool)] = [:]
        var added: [String] = []
        for entity in newSchema.entitiesInOrder where newSchema.table(for: entity) === table {
            for property in entity.ownProperties where !property.isTransient {
                let oldProperty = sourceProperty[ObjectIdentifier(property)]
                if let elements = newSchema.compositeColumnsByProperty[ObjectIdentifier(property)] {
                    // A composite attribute: one column per element, matched by element path.
                    let previous = oldProperty.flatMap { oldSchema.compositeColumnsByProperty[ObjectIdentifier($0)] } ?? []
                    for element in elements {
                        guard let old = previous.first(where: { $0.path == element.path }) else {
                            added.append(element.name)
                            continue
                        }
                        guard old.type == element.type, existing.contains(old.name) else {
                            throw unsupported(
                                "element \(element.path.joined(separator: ".")) of composite attribute \(property.name) changes type or is missing from the store",
                                entity: entity.name ?? "?")
                        }
                        origin[element.name] = old.name
                    }
                    continue
                }
                guard let columns = newColumns[ObjectIdentifier(property)] else { continue }
                let range = newSchema.mapping(for: entity)!.subentityRange
                let all = entity === table.root
                let before = oldProperty.flatMap { oldColumns[ObjectIdentifier($0)] }
                for (new, previous) in [
                    (columns.main, before?.main), (columns.entity, before?.entity), (columns.order, before?.order),
                ] {
                    guard let new else { continue }
                    if let previous {
                        guard existing.contains(previous) else {
                            throw OpenCoreDataError(
                                .migration,
                                "cannot migrate: column \(previous) of table \(old.name) is missing; the store does not have the layout of the model it says it was written with",
                                entityName: entity.name, key: property.name, url: url)
                        }
                        origin[new] = previous
                    } else {
                        added.append(new)
                    }
                }
                if let attribute = property as? NSAttributeDescription, !attribute.isOptional,
                    let value = attribute.defaultValue, oldProperty == nil || oldProperty!.isOptional
                {
                    fill[columns.main] = (SQLiteStore.sqliteValue(value, attribute.attributeType), range, all)
                }
            }
        }
        // Rows of removed subentities and of entities that moved to another table (copied already).
        let removedNumbers = numbersLeaving(old, continuedBy: table)
        var deleted = false
        if !removedNumbers.isEmpty {
            step = "deleting the rows of removed subentities and of entities that moved to another table"
            try execute(
                connection,
                "DELETE FROM \(old.name) WHERE Z_ENT IN (\(removedNumbers.map(String.init).joined(separator: ", ")))")
            deleted = true
        }
        try renumberRows(of: old, continuedBy: table, on: connection)
        let used = Set(origin.values)
        let dropped = old.columns.map(\.name).filter { !used.contains($0) }
        let renames = origin.filter { $0.key != $0.value }
        // A rename onto a name that another kept column still has would need two steps: rebuild instead.
        let renameClash = renames.keys.contains { used.contains($0) && origin[$0] != $0 }
        // A column left over from an earlier deferred migration may have the name of an added one.
        let addedClash = added.contains { existing.contains($0) && !used.contains($0) }
        if (!dropped.isEmpty && !deferCleanup) || renameClash || addedClash {
            try rebuild(table, from: old, origin: origin, fill: fill, on: connection)
            return deleted
        }
        if old.name != table.name {
            step = "renaming the table of a renamed entity"
            if try connection.tableExists(table.name) { throw unsupported("table \(table.name) already exists", entity: stepEntity ?? "?") }
            try execute(connection, "ALTER TABLE \(old.name) RENAME TO \(table.name)")
        }
        step = "renaming columns"
        for (new, previous) in renames.sorted(by: { $0.key < $1.key }) {
            try execute(connection, "ALTER TABLE \(table.name) RENAME COLUMN \(previous) TO \(new)")
        }
        step = "adding columns"
        for name in added {
            let column = table.columns.first { $0.name == name }!
            var sql = "ALTER TABLE \(table.name) ADD COLUMN \(name) \(column.declaredType)"
            if let (value, _, all) = fill[name], all {
                // A constant default: SQLite answers it for existing rows without rewriting them.
                sql += " DEFAULT \(try literal(value))"
                fill[name] = nil
            }
            try execute(connection, sql)
        }
        step = "filling default values of attributes that became required"
        for (name, (value, range, _)) in fill.sorted(by: { $0.key < $1.key }) {
            try execute(
                connection,
                "UPDATE \(table.name) SET \(name) = \(try literal(value)) WHERE \(name) IS NULL AND Z_ENT >= \(range.lowerBound) AND Z_ENT <= \(range.upperBound)"
            )
        }
        return deleted
    }

    /// Copies an entity table into a new one with the destination layout (when columns go away).
    private func rebuild(
        _ table: SQLiteSchema.Table, from old: SQLiteSchema.Table, origin: [String: String],
        fill: [String: (SQLiteValue, ClosedRange<Int64>, all: Bool)], on connection: SQLiteConnection
    ) throws {
        step = "rebuilding the table without removed columns"
        let temporary = "Z_OCDMIGRATION_" + table.name
        try execute(connection, SQLiteSchema.createStatement(table, name: temporary))
        var targets = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values = ["Z_PK", "Z_ENT", "Z_OPT"]
        for column in table.columns {
            var value = origin[column.name] ?? "NULL"
            if let (fillValue, range, _) = fill[column.name] {
                value =
                    "CASE WHEN Z_ENT >= \(range.lowerBound) AND Z_ENT <= \(range.upperBound) THEN COALESCE(\(value), \(try literal(fillValue))) ELSE \(value) END"
            }
            targets.append(column.name)
            values.append(value)
        }
        try execute(
            connection,
            "INSERT INTO \(temporary) (\(targets.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(old.name)"
        )
        try execute(connection, "DROP TABLE \(old.name)")
        if try connection.tableExists(table.name) { throw unsupported("table \(table.name) already exists", entity: stepEntity ?? "?") }
        try execute(connection, "ALTER TABLE \(temporary) RENAME TO \(table.name)")
    }

    /// Keeps, copies, creates and drops join tables (many-to-many relationships).
    private func migrateJoinTables(on connection: SQLiteConnection) throws {
        typealias Side = (join: SQLiteSchema.JoinTable, mine: String, other: String, otherOrder: String?, mineOrder: String?)
        func sides(_ schema: SQLiteSchema) -> [ObjectIdentifier: Side] {
            var result: [ObjectIdentifier: Side] = [:]
            for entity in schema.entitiesInOrder {
                guard let mapping = schema.mapping(for: entity) else { continue }
                for (slot, kind) in mapping.toMany {
                    guard case .join(let join, let mine, let other, let otherOrder, _) = kind else { continue }
                    let mineOrder = mine == join.columnA ? join.orderA : join.orderB
                    result[ObjectIdentifier(entity.layout.properties[slot])] = (join, mine, other, otherOrder, mineOrder)
                }
            }
            return result
        }
        let oldSides = sides(oldSchema)
        let newSides = sides(newSchema)
        var kept: Set<String> = []
        var renames: [(String, String)] = []
        var handled: Set<String> = []
        for (key, side) in newSides.sorted(by: { $0.value.join.name < $1.value.join.name }) {
            guard handled.insert(side.join.name).inserted else { continue }
            stepEntity = side.join.entityA.name
            let property = destination.entities.lazy.flatMap(\.ownProperties).first { ObjectIdentifier($0) == key }
            guard let property, let oldProperty = sourceProperty[ObjectIdentifier(property)],
                let old = oldSides[ObjectIdentifier(oldProperty)]
            else {
                step = "creating the join table of an added relationship"
                try dropLeftoverTable(side.join.name, on: connection)
                try execute(connection, SQLiteSchema.createStatement(side.join))
                continue
            }
            let same =
                old.join.name == side.join.name && old.mine == side.mine && old.other == side.other
                && old.otherOrder == side.otherOrder && old.mineOrder == side.mineOrder
            if same {
                kept.insert(old.join.name)
                continue
            }
            step = "copying a join table whose relationship or entity was renamed"
            let temporary = "Z_OCDMIGRATION_" + side.join.name
            try execute(connection, SQLiteSchema.createStatement(side.join, name: temporary))
            var targets = [side.mine, side.other]
            var values = [old.mine, old.other]
            if let order = side.otherOrder { (targets, values) = (targets + [order], values + [old.otherOrder ?? old.other]) }
            if let order = side.mineOrder { (targets, values) = (targets + [order], values + [old.mineOrder ?? old.mine]) }
            try execute(
                connection,
                "INSERT INTO \(temporary) (\(targets.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(old.join.name)"
            )
            renames.append((temporary, side.join.name))
        }
        stepEntity = nil
        step = "dropping join tables that are no longer used"
        let newJoinNames = Set(newSchema.joinTables.map(\.name))
        for join in oldSchema.joinTables where !kept.contains(join.name) {
            if deferCleanup, !newJoinNames.contains(join.name) {
                deferred["tables", default: []].append(join.name)
                continue
            }
            try execute(connection, "DROP TABLE IF EXISTS \(join.name)")
        }
        step = "renaming copied join tables"
        for (temporary, name) in renames { try execute(connection, "ALTER TABLE \(temporary) RENAME TO \(name)") }
    }

    /// After rows of removed subentities were deleted: to-one references and join rows that pointed at them.
    private func clearDanglingReferences(to tables: Set<String>, on connection: SQLiteConnection) throws {
        step = "clearing references to deleted rows"
        for entity in newSchema.entitiesInOrder {
            guard let mapping = newSchema.mapping(for: entity) else { continue }
            for slot in mapping.slots {
                guard case .toOne(let target, let entityColumn) = slot.kind,
                    let targetMapping = newSchema.mapping(for: target), tables.contains(targetMapping.table.name),
                    entity.layout.properties[slot.slot].entity === entity
                else { continue }
                let column = mapping.table.columns[slot.column].name
                var sets = ["\(column) = NULL"]
                if let entityColumn { sets.append("\(mapping.table.columns[entityColumn].name) = NULL") }
                try execute(
                    connection,
                    "UPDATE \(mapping.table.name) SET \(sets.joined(separator: ", ")) WHERE \(column) IS NOT NULL AND \(column) NOT IN \(Self.keys(of: targetMapping))"
                )
            }
        }
        for join in newSchema.joinTables {
            for (column, entity) in [(join.columnA, join.entityA), (join.columnB, join.entityB)] {
                guard let target = newSchema.mapping(for: entity), tables.contains(target.table.name) else { continue }
                try execute(connection, "DELETE FROM \(join.name) WHERE \(column) NOT IN \(Self.keys(of: target))")
            }
        }
    }

    /// `(SELECT Z_PK FROM <table> WHERE <Z_ENT of the entity or a subentity>)`.
    static func keys(of mapping: SQLiteSchema.EntityMapping) -> String {
        "(SELECT Z_PK FROM \(mapping.table.name) WHERE Z_ENT >= \(mapping.subentityRange.lowerBound) AND Z_ENT <= \(mapping.subentityRange.upperBound))"
    }

    /// Drops indexes the destination layout does not have (or has with other SQL) and creates missing ones.
    private func reconcileIndexes(on connection: SQLiteConnection) throws {
        step = "updating indexes"
        stepEntity = nil
        var wanted: [String: String] = [:]
        var order: [String] = []
        for statement in newSchema.indexStatements {
            guard let name = Self.indexName(statement) else { continue }
            wanted[name] = statement
            order.append(name)
        }
        let statement = try connection.prepareUncached(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        var existing: [String: String] = [:]
        do {
            defer { statement.finalize() }
            while try statement.step() { existing[statement.text(0)] = statement.text(1) }
        }
        for (name, sql) in existing.sorted(by: { $0.key < $1.key }) where wanted[name] != sql {
            // Only indexes Core Data's layout names (Z…); anything else belongs to someone else.
            guard name.hasPrefix("Z") else { continue }
            if deferCleanup, wanted[name] == nil, !sql.hasPrefix("CREATE UNIQUE") {
                // A unique index must go now (it would refuse valid rows); a plain one can wait.
                deferred["indexes", default: []].append(name)
                continue
            }
            try execute(connection, "DROP INDEX \(name)")
            existing[name] = nil
        }
        for name in order where existing[name] == nil { try execute(connection, wanted[name]!) }
    }

    private static func indexName(_ statement: String) -> String? {
        let words = statement.split(separator: " ")
        guard let at = words.firstIndex(of: "INDEX"), at + 1 < words.count else { return nil }
        return String(words[at + 1])
    }

    // MARK: SQL

    /// Runs one statement, recording it; a failure names the step and entity.
    func execute(_ connection: SQLiteConnection, _ sql: String, _ values: [SQLiteValue] = []) throws {
        statements.append(sql)
        do {
            if values.isEmpty { try connection.execute(sql) } else { try connection.run(sql, values) }
        } catch let error as OpenCoreDataError {
            throw OpenCoreDataError(
                .migration,
                "lightweight migration failed while \(step)\(stepEntity.map { " (entity \($0))" } ?? ""); the store is unchanged: \(error.message)",
                entityName: stepEntity, sql: sql, url: url, sqliteCode: error.sqliteCode, underlyingError: error)
        }
    }

    /// A SQL literal for a default value.
    func literal(_ value: SQLiteValue) throws -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v):
            guard v.isFinite else { throw unsupported("a default value is not a finite number", entity: stepEntity ?? "?") }
            return "\(v)"
        case .text(let v): return "'" + v.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let v): return "X'" + v.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }
}

extension SQLiteStore: MigratingPersistentStore {
    /// `VACUUM INTO` from a read-only connection: a consistent copy even while the store is in use.
    /// Without a `-wal` file the source is read as immutable, so not even side files appear.
    static func copyStoreForMigration(from source: URL, to destination: URL) throws {
        let wal = (try? FileManager.default.attributesOfItem(atPath: source.path + "-wal")[.size] as? Int) ?? 0
        let connection = try SQLiteConnection(url: source, mode: wal > 0 ? .readOnly : .probe)
        defer { connection.close() }
        connection.setBusyTimeout(60)
        try connection.run("VACUUM INTO ?", [.text(destination.path)])
    }

    static func migrateStoreInPlace(at url: URL, plan: LightweightMigrationPlan) throws {
        let stored = try readStoredMetadata(at: url)
        let connection = try SQLiteConnection(url: url, mode: .readWrite(create: false))
        defer { connection.close() }
        connection.setBusyTimeout(60)
        let store = SQLiteStore(persistentStoreCoordinator: nil, configurationName: nil, at: url, options: nil)
        _ = try store.migrateInPlace(connection, stored: stored, plan: plan, url: url)
    }
}

/// Private metadata key: what a deferred lightweight migration left to clean up.
let deferredCleanupKey = "_OpenCoreDataDeferredCleanup"

extension SQLiteStore: DeferredLightweightMigrationStore {
    /// Drops what a deferred migration left (tables, indexes), rebuilds tables that still hold
    /// removed columns, creates missing indexes, reclaims free pages, and clears the metadata flag,
    /// in one transaction.
    func finishDeferredLightweightMigration() throws {
        try _withConnection(for: nil, writing: true) { try finishDeferredCleanup() }  // (a leased connection)
    }

    private func finishDeferredCleanup() throws {
        guard let metadata, LightweightMigration.bool(metadata[NSPersistentStoreDeferredLightweightMigrationOptionKey])
            || metadata[deferredCleanupKey] != nil
        else { return }
        if isReadOnly { throw OpenCoreDataError(.persistentStoreSave, "the store is read-only", url: url) }
        let connection = try db()
        let pending = metadata[deferredCleanupKey] as? [String: [String]] ?? [:]
        var updated = metadata
        updated[NSPersistentStoreDeferredLightweightMigrationOptionKey] = nil
        updated[deferredCleanupKey] = nil
        let keep = Set(schema.tables.map(\.name) + schema.joinTables.map(\.name))
        try connection.writeTransaction {
            for name in pending["indexes"] ?? [] { try connection.execute("DROP INDEX IF EXISTS \(name)") }
            for name in pending["tables"] ?? [] where !keep.contains(name) {
                try connection.execute("DROP TABLE IF EXISTS \(name)")
            }
            for table in schema.tables {
                let existing = try connection.column("SELECT name FROM pragma_table_info(?)", [.text(table.name)]).compactMap {
                    if case .text(let name) = $0 { return name } else { return nil }
                }
                let expected = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
                guard Set(existing) != Set(expected) else { continue }
                let temporary = "Z_OCDMIGRATION_" + table.name
                try connection.execute(SQLiteSchema.createStatement(table, name: temporary))
                let copied = expected.filter(existing.contains)
                try connection.execute(
                    "INSERT INTO \(temporary) (\(copied.joined(separator: ", "))) SELECT \(copied.joined(separator: ", ")) FROM \(table.name)"
                )
                try connection.execute("DROP TABLE \(table.name)")
                try connection.execute("ALTER TABLE \(temporary) RENAME TO \(table.name)")
            }
            for statement in schema.indexStatements {
                let words = statement.split(separator: " ")
                guard let at = words.firstIndex(of: "INDEX"), at + 1 < words.count else { continue }
                let exists = try connection.column(
                    "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", [.text(String(words[at + 1]))])
                if exists.isEmpty { try connection.execute(statement) }
            }
            try connection.run(
                "UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = 1", [.blob(Self.plistData(updated))])
        }
        // Give the pages of dropped tables and columns back to the file system (auto_vacuum is incremental).
        let vacuum = try connection.prepareUncached("PRAGMA incremental_vacuum")
        defer { vacuum.finalize() }
        while try vacuum.step() {}
        self.metadata = updated
        writtenMetadata = NSDictionary(dictionary: updated)
    }
}
