import CSQLite
import Foundation

/// The SQLite store (`NSSQLiteStoreType`): Core Data's own file layout (FORMATS.md §1), so a store
/// file moves between Apple platforms and Linux.
///
/// Concerns live in extensions: `+Metadata` (opening, Z_METADATA, compatibility), `+Fetch` (SQL
/// generation and row decoding), `+Save` (transactions, optimistic locking, join tables).
///
/// `@unchecked Sendable` invariant: its mutable state (metadata, test hooks) is used under its
/// coordinator's write lock; reads run beside it, each on a connection leased from ``pool``, and
/// read only what is fixed once the store is open (`schema`, `pool`).
final class SQLiteStore: NSIncrementalStore, @unchecked Sendable {
    /// The store's connections (`nil` before `loadMetadata()`; closed by `willRemove(from:)`).
    var pool: SQLiteConnectionPool?
    /// The primary connection (`nil` before `loadMetadata()`), where a single thread's requests run.
    var connection: SQLiteConnection? { pool?.primary }
    /// The layout of the coordinator's model in this file.
    var schema: SQLiteSchema!
    /// The metadata as last written to Z_METADATA (or read from it), to know when a save must write
    /// it again.
    var writtenMetadata: NSDictionary? { didSet { writtenMetadataGeneration = _metadataGeneration } }
    /// ``NSPersistentStore/_metadataGeneration`` when `writtenMetadata` was last set or found equal to
    /// the metadata: while it is unchanged, a save skips comparing the dictionaries (`NSDictionary`'s
    /// `isEqual(_:)` over the version hashes and model data, about 4.5 million instructions a save).
    var writtenMetadataGeneration = -1

    /// Test hooks (reached with `@testable import`).
    struct TestHooks {
        /// Fail a save after this many rows were written (inserted, updated or deleted), inside the transaction.
        var failAfterRowWrites: Int?
        /// Called inside a save's write transaction, before any row is written (a save held open).
        var insideSaveTransaction: (() -> Void)?
    }
    var testHooks = TestHooks()
    /// The statements the last in-place migration ran (`SQLiteStore+Migration.swift`), for tests.
    var migrationStatements: [String] = []

    override var type: String { NSSQLiteStoreType }

    /// Opens or creates the file (see `openStore()` in `SQLiteStore+Metadata.swift`).
    override func loadMetadata() throws { try openStore() }

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] { try storeMetadata(at: url) }

    override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        try writeMetadata(metadata, at: url)
    }

    /// The connection of the current request: the one leased to this thread
    /// (``_withConnection(for:writing:_:)``), else the primary one (the store's own work while it
    /// opens, and direct calls); an error if the store is closed.
    @inline(__always)
    func db() throws -> SQLiteConnection {
        guard let pool else {
            throw OpenCoreDataError(.persistentStoreOperation, "the SQLite store is not open", url: url)
        }
        return pool.innermostConnection() ?? pool.primary
    }

    /// Makes `connection`, just opened and configured, the primary connection of a new pool.
    func installPool(primary connection: SQLiteConnection) throws {
        let statement = try connection.prepareUncached("PRAGMA journal_mode")  // (not cached: asked once)
        defer { statement.finalize() }
        let isWAL = try statement.step() && statement.text(0).lowercased() == "wal"
        pool = SQLiteConnectionPool(
            primary: connection, limit: isWAL ? SQLiteConnectionPool.readerLimit : 1,
            open: { [unowned self] in try self.openAnotherConnection() })
    }

    /// One more connection to the open file, configured as the primary one.
    private func openAnotherConnection() throws -> SQLiteConnection {
        guard let url else { throw OpenCoreDataError(.persistentStoreOpen, "the SQLite store needs a file URL") }
        let connection = try SQLiteConnection(url: url, mode: isReadOnly ? .readOnly : .readWrite(create: false))
        do {
            try configure(connection, journalMode: false)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// In WAL mode reads run on connections of their own, beside a save (``SQLiteConnectionPool``).
    override var _servesConcurrentReads: Bool { (pool?.limit ?? 1) > 1 }

    override func _withConnection<R>(
        for context: NSManagedObjectContext?, writing: Bool, _ body: () throws -> R
    ) throws -> R {
        guard let pool else {
            throw OpenCoreDataError(.persistentStoreOperation, "the SQLite store is not open", url: url)
        }
        let pin = writing ? nil : try context?._link.queryGeneration?._generation(of: self) as? SQLiteQueryGeneration
        return try pool.withConnection(pin: pin) { _ in try body() }
    }

    override func _newQueryGeneration() throws -> AnyObject {
        guard let pool, pool.limit > 1 else {
            throw OpenCoreDataError(
                .persistentStoreUnsupportedRequestType, "query generations need a SQLite store in WAL mode", url: url)
        }
        return try SQLiteQueryGeneration(pool: pool)
    }

    override func _closeConcurrentReads() { pool?.close() }

    override func willRemove(from coordinator: NSPersistentStoreCoordinator?) { pool?.close() }

    override class func destroyStore(at url: URL, options: [AnyHashable: Any]?) throws {
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = url.path + suffix
            guard manager.fileExists(atPath: path) else { continue }
            do {
                try manager.removeItem(atPath: path)
            } catch {
                throw OpenCoreDataError(
                    .persistentStoreOperation, "cannot remove the store file", url: URL(fileURLWithPath: path),
                    underlyingError: error as NSError)
            }
        }
    }

    // MARK: Requests

    override func _executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext) throws -> FetchResults {
        try executeFetch(request, context: context)
    }

    override func _plannedFetch(
        _ settings: UnsafePointer<FetchRequestSettings>, entity: NSEntityDescription, context: NSManagedObjectContext
    ) throws -> FetchResults? {
        try plannedFetch(settings, entity: entity, context: context)
    }

    override var _wantsSavesWithoutChanges: Bool { !isReadOnly && metadataMayHaveChanged }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        switch request {
        case let fetch as NSFetchRequest<any NSFetchRequestResult>:
            guard let context else { throw OpenCoreDataError(.coreDataError, "a fetch needs a context") }
            // `executeFetch` reads stored settings: a subclass's overriding accessors are read here.
            return try executeFetch(fetch._ofTheClassItself(), context: context).values
        case let save as NSSaveChangesRequest:
            // A save without changes (Apple's stores are sent one for every context save) opens no
            // write transaction, unless the store's metadata changed: then it writes that.
            if save._hasNoChanges, isReadOnly || !metadataMayHaveChanged { return [Any]() }
            if isReadOnly { throw OpenCoreDataError(.persistentStoreSave, "the store is read-only", url: url) }
            try executeSave(save)
            return [Any]()
        default:
            throw OpenCoreDataError(
                .persistentStoreUnsupportedRequestType, "the SQLite store cannot run \(Swift.type(of: request))")
        }
    }

    // MARK: Primary keys

    /// Allocates primary keys from each root entity's `Z_PRIMARYKEY.Z_MAX`, in one short write
    /// transaction so several processes never hand out the same key.
    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        let keys = try _obtainPermanentKeys(for: array)!
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(array.count)
        var runLayout: ObjectIdentifier?
        var runEntity: NSEntityDescription?
        for (object, pk) in zip(array, keys) {
            if ObjectIdentifier(object._layout) != runLayout {
                (runLayout, runEntity) = (ObjectIdentifier(object._layout), object.entity)
            }
            ids.append(NSManagedObjectID(entity: runEntity!, store: self, reference: .int64(pk)))
        }
        return ids
    }

    /// New primary keys from `Z_PRIMARYKEY`, counted per root entity in one write transaction.
    override func _obtainPermanentKeys(for array: [NSManagedObject]) throws -> [Int64]? {
        guard !array.isEmpty else { return [] }
        if isReadOnly {
            throw OpenCoreDataError(
                .persistentStoreSave, "the store is read-only: it cannot hand out new primary keys", url: url)
        }
        let connection = try db()
        var countByRoot: [Int64: Int64] = [:]
        var rootNumbers: [Int64] = []
        rootNumbers.reserveCapacity(array.count)
        // Runs of one entity are told apart by the object's layout (one per entity): a plain load,
        // where `entity` is an unowned reference to retain and release per object.
        var lastEntity: ObjectIdentifier?
        var lastRoot: Int64 = 0
        var run: Int64 = 0  // objects of `lastEntity` in a row, counted once per run
        try array.forEachBorrowed { object in
            if ObjectIdentifier(object._layout) == lastEntity {
                rootNumbers.append(lastRoot)
                run += 1
                return
            }
            let entity = object.entity
            guard let root = schema.number(of: entity.rootEntity) else {
                throw OpenCoreDataError(
                    .persistentStoreOperation, "the store does not hold this entity", entityName: object.entity.name)
            }
            if lastEntity != nil { countByRoot[lastRoot, default: 0] += run }
            rootNumbers.append(root)
            run = 1
            (lastEntity, lastRoot) = (ObjectIdentifier(object._layout), root)
        }
        if lastEntity != nil { countByRoot[lastRoot, default: 0] += run }
        var next: [Int64: Int64] = [:]
        try connection.writeTransaction {
            for (root, count) in countByRoot.sorted(by: { $0.key < $1.key }) {
                let current = try connection.column("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(root)])
                    .first
                let max: Int64
                if case .integer(let value)? = current { max = value } else { max = 0 }
                try connection.run(
                    "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", [.integer(max + count), .integer(root)])
                next[root] = max + 1
            }
        }
        var keys: [Int64] = []
        keys.reserveCapacity(array.count)
        var currentRoot: Int64?
        var pk: Int64 = 0
        for root in rootNumbers {
            if root != currentRoot {
                if let currentRoot { next[currentRoot] = pk }
                (currentRoot, pk) = (root, next[root]!)
            }
            keys.append(pk)
            pk += 1
        }
        return keys
    }

    /// The object ID for a row.
    @inline(__always)
    func rowID(entity: NSEntityDescription, pk: Int64, root: ObjectIdentifier? = nil) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, store: self, reference: .int64(pk), root: root)
    }

    // MARK: Faults and relationships

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws
        -> NSIncrementalStoreNode
    {
        guard let (values, version) = try loadRow(objectID) else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store has no row for this object (it may have been deleted)",
                entityName: objectID.entity.name, objectID: objectID)
        }
        return NSIncrementalStoreNode(objectID: objectID, slotValues: values, version: UInt64(max(0, version)))
    }

    /// The slot values and version of one row, or `nil` if the row is gone.
    func loadRow(_ objectID: NSManagedObjectID) throws -> (RowValues, Int64)? {
        guard let pk = objectID.primaryKey, let mapping = schema.mapping(for: objectID.entity) else { return nil }
        let connection = try db()
        let statement = try connection.prepare(mapping.table.selectByPrimaryKey)
        defer { statement.reset() }
        statement.bind(pk, 1)
        guard try statement.step() else { return nil }
        let rowMapping = schema.mapping(forNumber: statement.int64(1)) ?? mapping
        return (decodeRow(statement, mapping: rowMapping, offset: 0), statement.int64(mapping.table.versionPosition))
    }

    override func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        guard let mapping = schema.mapping(for: objectID.entity),
            let slot = objectID.entity.layout.indexByName[relationship.name],
            let pk = objectID.primaryKey
        else { return relationship.isToMany ? [NSManagedObjectID]() : NSNull() }
        guard relationship.isToMany else {
            guard let (values, _) = try loadRow(objectID) else { return NSNull() }
            return values[slot] as? NSManagedObjectID ?? NSNull()
        }
        let connection = try db()
        let sql: String
        switch mapping.toMany[slot] {
        case .inverseForeignKey(let table, let column, let order, _)?:
            sql =
                "SELECT Z_PK, Z_ENT FROM \(table.name) WHERE \(column) = ? ORDER BY \(order.map { "\($0), " } ?? "")Z_PK"
        case .join(let join, let mine, let other, let otherOrder, let destination)?:
            guard let table = schema.table(for: destination) else { return [NSManagedObjectID]() }
            sql =
                "SELECT j.\(other), t.Z_ENT FROM \(join.name) j JOIN \(table.name) t ON t.Z_PK = j.\(other) WHERE j.\(mine) = ? ORDER BY \(otherOrder.map { "j.\($0), " } ?? "")j.\(other)"
        case nil:
            return [NSManagedObjectID]()
        }
        let statement = try connection.prepare(sql)
        defer { statement.reset() }
        statement.bind(pk, 1)
        var ids: [NSManagedObjectID] = []
        while try statement.step() {
            guard let entity = schema.entitiesByNumber[statement.int64(1)] else { continue }
            ids.append(rowID(entity: entity, pk: statement.int64(0)))
        }
        return ids
    }

    // MARK: Values

    /// Decodes a row selected with the table's `selectList` (starting at column `offset`) into slots.
    func decodeRow(_ statement: SQLiteStatement, mapping: SQLiteSchema.EntityMapping, offset: Int32) -> RowValues {
        decodeRow(statement, mapping: mapping, plan: mapping.rowPlan, offset: offset)
    }

    /// The canonical Swift value of a non-NULL column for an attribute type.
    func decodeAttribute(_ statement: SQLiteStatement, _ column: Int32, _ type: NSAttributeType) -> Any? {
        switch type {
        case .integer16AttributeType: return Int16(truncatingIfNeeded: statement.int64(column))
        case .integer32AttributeType: return Int32(truncatingIfNeeded: statement.int64(column))
        case .integer64AttributeType: return statement.int64(column)
        case .booleanAttributeType: return statement.int64(column) != 0
        case .doubleAttributeType: return statement.double(column)
        case .floatAttributeType: return Float(statement.double(column))
        case .dateAttributeType: return Date(timeIntervalSinceReferenceDate: statement.double(column))
        case .stringAttributeType: return statement.text(column)
        case .URIAttributeType: return URL(string: statement.text(column))
        case .binaryDataAttributeType, .transformableAttributeType: return statement.blob(column)
        case .UUIDAttributeType:
            if statement.columnType(column) == SQLITE_TEXT { return UUID(uuidString: statement.text(column)) }
            let data = statement.blob(column)
            guard data.count == 16 else { return nil }
            return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        case .decimalAttributeType:
            switch statement.columnType(column) {
            case SQLITE_INTEGER: return Decimal(statement.int64(column))
            case SQLITE_FLOAT:
                return Decimal(string: String(statement.double(column)), locale: Locale(identifier: "en_US_POSIX"))
            case SQLITE_BLOB:
                return Decimal(
                    string: String(decoding: statement.blob(column), as: UTF8.self),
                    locale: Locale(identifier: "en_US_POSIX"))
            default: return Decimal(string: statement.text(column), locale: Locale(identifier: "en_US_POSIX"))
            }
        case .objectIDAttributeType:
            return URL(string: statement.text(column)).flatMap {
                persistentStoreCoordinator?.managedObjectID(forURIRepresentation: $0)
            }
        case .compositeAttributeType, .undefinedAttributeType: return nil
        }
    }

    /// The SQLite value for an attribute value (canonicalized first if it is not the canonical type).
    static func sqliteValue(_ value: Any?, _ type: NSAttributeType) -> SQLiteValue {
        guard let value else { return .null }
        switch (type, value) {
        case (.integer16AttributeType, let v as Int16): return .integer(Int64(v))
        case (.integer32AttributeType, let v as Int32): return .integer(Int64(v))
        case (.integer64AttributeType, let v as Int64): return .integer(v)
        case (.booleanAttributeType, let v as Bool): return .integer(v ? 1 : 0)
        case (.doubleAttributeType, let v as Double): return .real(v)
        case (.floatAttributeType, let v as Float): return .real(Double(v))
        case (.dateAttributeType, let v as Date): return .real(v.timeIntervalSinceReferenceDate)
        case (.stringAttributeType, let v as String): return .text(v)
        case (.URIAttributeType, let v as URL): return .text(v.absoluteString)
        case (.binaryDataAttributeType, let v as Data), (.transformableAttributeType, let v as Data): return .blob(v)
        case (.UUIDAttributeType, let v as UUID): return .blob(withUnsafeBytes(of: v.uuid) { Data($0) })
        case (.decimalAttributeType, let v as Decimal): return Self.decimalValue(v)
        case (.objectIDAttributeType, let v as NSManagedObjectID): return .text(v.uriRepresentation().absoluteString)
        case (.compositeAttributeType, _), (.undefinedAttributeType, _): return .null
        default:
            // Not the canonical type (an Int for an Int16 attribute, a String for a URI): convert once.
            guard let canonical = ValueConversion.canonicalize(value, for: type),
                Swift.type(of: canonical) != Swift.type(of: value)
            else { return .null }
            return Self.sqliteValue(canonical, type)
        }
    }

    /// A Decimal as stored in its `DECIMAL` column: text, which SQLite's NUMERIC affinity turns into
    /// an INTEGER or REAL when that keeps every digit (≤ 15 significant digits); a value with more
    /// digits is bound as a BLOB of the same UTF-8 text, which no affinity converts, so it stays exact.
    static func decimalValue(_ value: Decimal) -> SQLiteValue {
        let text = value.description
        let digits = text.filter(\.isNumber).drop { $0 == "0" }.count
        if digits <= 15, let double = Double(text),
            Decimal(string: String(double), locale: Locale(identifier: "en_US_POSIX")) == value
        {
            return .text(text)
        }
        return .blob(Data(text.utf8))
    }

    /// Binds an attribute value straight to a statement (the save hot path).
    @inline(__always)
    func bindAttribute(_ value: Any?, _ type: NSAttributeType, _ statement: SQLiteStatement, _ index: Int32) {
        // One cast to the attribute's canonical type; anything else takes the general conversion.
        guard let value else { return statement.bindNull(index) }
        switch type {
        case .integer64AttributeType:
            if let v = ValueConversion.cast(value, to: Int64.self) { return statement.bind(v, index) }
        case .integer32AttributeType:
            if let v = ValueConversion.cast(value, to: Int32.self) { return statement.bind(Int64(v), index) }
        case .integer16AttributeType:
            if let v = ValueConversion.cast(value, to: Int16.self) { return statement.bind(Int64(v), index) }
        case .booleanAttributeType:
            if let v = ValueConversion.cast(value, to: Bool.self) { return statement.bind(Int64(v ? 1 : 0), index) }
        case .doubleAttributeType:
            if let v = ValueConversion.cast(value, to: Double.self) { return statement.bind(v, index) }
        case .stringAttributeType:
            if let v = ValueConversion.cast(value, to: String.self) { return statement.bind(v, index) }
        case .dateAttributeType:
            if let v = ValueConversion.cast(value, to: Date.self) {
                return statement.bind(v.timeIntervalSinceReferenceDate, index)
            }
        default: break
        }
        statement.bind(Self.sqliteValue(value, type), index)
    }
}
