import CSQLite
import Foundation

/// The framework version written to `NSPersistenceFrameworkVersion` in new stores: 1344 is the
/// newest version seen in Apple-written stores of our corpus (alemar11/CoreDataPlus fixtures, macOS 14 /
/// iOS 17 era). Apple's Core Data reads stores of any version it knows the layout of; claiming a
/// version we have evidence for keeps those readers on the code path our layout matches.
let sqliteStoreFrameworkVersion = 1344

/// What an existing store file holds, read without changing the file.
struct SQLiteStoredMetadata {
    var uuid: String
    /// Z_PLIST's contents, plus NSStoreUUID from Z_UUID.
    var metadata: [String: Any]
    /// Z_PRIMARYKEY: entity name → Z_ENT.
    var entityNumbers: [String: Int64]
}

extension SQLiteStore {
    // MARK: Opening

    /// Opens the store file, creating it (schema and metadata in one transaction) if there is none.
    ///
    /// An existing file is checked first through a read-only, lock-free connection: a file that is not
    /// a Core Data SQLite store, or one written with an incompatible model that cannot migrate, is
    /// rejected byte-for-byte untouched (no `-wal`/`-shm` is created either). A store written with an
    /// earlier model version migrates in place when the options ask for it (`LightweightMigration`).
    func openStore() throws {
        guard let url else { throw OpenCoreDataError(.persistentStoreOpen, "the SQLite store needs a file URL") }
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw OpenCoreDataError(.persistentStoreOpen, "the store has no coordinator", url: url)
        }
        if connection != nil { return }
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            if isReadOnly {
                throw OpenCoreDataError(.persistentStoreOpen, "there is no store file to open read-only", url: url)
            }
            try createStore(at: url, model: model)
            return
        }
        if isDirectory.boolValue {
            throw OpenCoreDataError(.persistentStoreOpen, "the store URL names a directory", url: url)
        }
        var stored = try Self.readStoredMetadata(at: url)
        // A store written with another model version migrates in place (SQLiteStore+Migration.swift).
        let migration = try LightweightMigration.plan(
            storeMetadata: stored.metadata, model: model, options: options, url: url,
            cachedModel: { try ModelCache.blob(ofStoreAt: url).map { try ModelCache.model(fromCache: $0, url: url) } })
        if migration != nil, isReadOnly {
            throw OpenCoreDataError(
                .persistentStoreIncompatibleVersionHash,
                "the store needs a migration to open with this model, and a read-only store cannot migrate", url: url)
        }
        let connection = try SQLiteConnection(url: url, mode: isReadOnly ? .readOnly : .readWrite(create: false))
        do {
            try configure(connection)
            if let migration {
                stored = try migrateInPlace(
                    connection, stored: stored, plan: migration, url: url,
                    deferringCleanup: LightweightMigration.bool(options?[NSPersistentStoreDeferredLightweightMigrationOptionKey]))
            }
        } catch {
            connection.close()
            throw error
        }
        try installPool(primary: connection)
        schema = SQLiteSchema(model: model, numbers: stored.entityNumbers)
        metadata = stored.metadata
        writtenMetadata = NSDictionary(dictionary: stored.metadata)
    }

    /// Creates a new store: pragmas, every table and index, Z_PRIMARYKEY rows and Z_METADATA, in one
    /// transaction (a failure removes the half-made file).
    ///
    /// Z_MODELCACHE is created but left without a row: Apple fills it with a raw-DEFLATE
    /// `NSKeyedArchiver` archive of the compiled model (FORMATS.md §1.6), which needs a model archiver
    /// we do not have yet. Apple's oldest stores have no such table at all, so readers cannot depend on it.
    private func createStore(at url: URL, model: NSManagedObjectModel) throws {
        let connection = try SQLiteConnection(url: url, mode: .readWrite(create: true))
        let schema = SQLiteSchema(model: model)
        let uuid = UUID().uuidString
        var metadata = Self.modelMetadata(model)
        metadata[NSStoreTypeKey] = NSSQLiteStoreType
        do {
            // page_size and auto_vacuum only take effect before the first table exists.
            try connection.execute("PRAGMA page_size = 4096")
            try connection.execute("PRAGMA auto_vacuum = 2")
            try configure(connection)
            let plist = try Self.plistData(metadata)
            try connection.writeTransaction {
                for statement in schema.createStatements { try connection.execute(statement) }
                for (number, name, parent) in schema.primaryKeyRows {
                    try connection.run(
                        "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                        [.integer(number), .text(name), .integer(parent)])
                }
                try connection.run(
                    "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", [.text(uuid), .blob(plist)])
            }
        } catch {
            connection.close()
            try? Self.destroyStore(at: url, options: nil)
            throw error
        }
        try installPool(primary: connection)
        self.schema = schema
        metadata[NSStoreUUIDKey] = uuid
        self.metadata = metadata
        writtenMetadata = NSDictionary(dictionary: metadata)
    }

    /// Journal mode, synchronous level, the caller's pragmas (`NSSQLitePragmasOption`) and the busy
    /// timeout (`NSPersistentStoreTimeoutOption`, seconds).
    func configure(_ connection: SQLiteConnection, journalMode: Bool = true) throws {
        let timeout = (options?[NSPersistentStoreTimeoutOption]).flatMap { ValueConversion.double($0) } ?? 60
        connection.setBusyTimeout(timeout)
        guard !isReadOnly else { return }
        // The journal mode is the file's: a further connection of the pool finds it set.
        var pragmas: [(String, String)] = journalMode ? [("journal_mode", "WAL"), ("synchronous", "NORMAL")] : [("synchronous", "NORMAL")]
        if let custom = options?[NSSQLitePragmasOption] as? [String: Any] {
            for (name, value) in custom.sorted(by: { $0.key < $1.key }) {
                let text = "\(value)"
                let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_-."))
                guard name.unicodeScalars.allSatisfy(allowed.contains), text.unicodeScalars.allSatisfy(allowed.contains)
                else {
                    throw OpenCoreDataError(
                        .persistentStoreOpen, "NSSQLitePragmasOption holds a pragma that is not a plain name and value",
                        key: name)
                }
                pragmas.removeAll { $0.0.lowercased() == name.lowercased() }
                pragmas.append((name, text))
            }
        }
        if !journalMode { pragmas.removeAll { $0.0.lowercased() == "journal_mode" } }
        for (name, value) in pragmas {
            let statement = try connection.prepareUncached("PRAGMA \(name) = \(value)")
            defer { statement.finalize() }
            try statement.run()
        }
    }

    // MARK: Metadata

    /// The model-derived keys of Z_PLIST (FORMATS.md §1.5).
    static func modelMetadata(_ model: NSManagedObjectModel) -> [String: Any] {
        var metadata: [String: Any] = [
            NSPersistenceFrameworkVersionKey: sqliteStoreFrameworkVersion,
            NSStoreModelVersionHashesKey: model.entityVersionHashesByName,
            "NSStoreModelVersionHashesVersion": 3,
            NSStoreModelVersionIdentifiersKey: model.versionIdentifiers.isEmpty
                ? [""] : model.versionIdentifiers.map { "\($0.base)" }.sorted(),
            "_NSAutoVacuumLevel": "2",
        ]
        let digest = model.versionHashesDigest
        if !digest.isEmpty { metadata["NSStoreModelVersionHashesDigest"] = digest }
        let checksum = model.versionChecksum
        if !checksum.isEmpty { metadata[NSStoreModelVersionChecksumKey] = checksum }
        return metadata
    }

    /// Z_PLIST's bytes: a binary plist without NSStoreUUID (Z_UUID holds it).
    static func plistData(_ metadata: [String: Any]) throws -> Data {
        var plist = metadata
        plist[NSStoreUUIDKey] = nil
        do {
            return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        } catch {
            throw OpenCoreDataError(
                .persistentStoreSave, "the store metadata holds a value a property list cannot hold",
                underlyingError: error as NSError)
        }
    }

    /// Reads Z_METADATA and Z_PRIMARYKEY without changing the file.
    static func readStoredMetadata(at url: URL) throws -> SQLiteStoredMetadata {
        // Without a -wal file, `immutable=1` reads without locks or side files. With one, committed
        // transactions may live in it, so read through the normal (read-only) WAL machinery.
        let wal = (try? FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int) ?? 0
        let connection = try SQLiteConnection(url: url, mode: wal > 0 ? .readOnly : .probe)
        defer { connection.close() }
        do {
            guard try connection.tableExists("Z_METADATA"), try connection.tableExists("Z_PRIMARYKEY") else {
                throw OpenCoreDataError(
                    .persistentStoreOpen,
                    "the file is a SQLite database but not a Core Data store (no Z_METADATA or Z_PRIMARYKEY table)",
                    url: url)
            }
            let statement = try connection.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
            defer { statement.reset() }
            guard try statement.step() else {
                throw OpenCoreDataError(.persistentStoreOpen, "the store's Z_METADATA table is empty", url: url)
            }
            let uuid = statement.text(0)
            let plist = statement.blob(1)
            statement.reset()
            var metadata: [String: Any] = [:]
            if !plist.isEmpty {
                guard
                    let decoded = try? PropertyListSerialization.propertyList(from: plist, options: [], format: nil)
                        as? [String: Any]
                else {
                    throw OpenCoreDataError(
                        .persistentStoreOpen, "the store's metadata (Z_PLIST) is not a property list dictionary",
                        url: url)
                }
                metadata = decoded
            }
            metadata[NSStoreUUIDKey] = uuid
            var numbers: [String: Int64] = [:]
            let keys = try connection.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")
            defer { keys.reset() }
            while try keys.step() { numbers[keys.text(1)] = keys.int64(0) }
            return SQLiteStoredMetadata(uuid: uuid, metadata: metadata, entityNumbers: numbers)
        } catch var error as OpenCoreDataError where error.code == .sqlite || error.code == .persistentStoreTimeout {
            let primary = (error.sqliteCode ?? 0) & 0xFF
            if primary == SQLITE_NOTADB {
                error.message = "the file is not a SQLite database (\(error.message))"
            } else if primary == SQLITE_CORRUPT {
                error.message = "the SQLite file is damaged or truncated (\(error.message))"
            }
            if error.code == .sqlite { error.code = .persistentStoreOpen }
            throw error
        }
    }

    /// Whether ``metadata`` was set since it was last written or found equal to what was written
    /// (``writeMetadataIfChanged(_:)`` then compares the two).
    var metadataMayHaveChanged: Bool {
        metadata != nil && (writtenMetadata == nil || writtenMetadataGeneration != _metadataGeneration)
    }

    /// Writes the store's metadata to Z_METADATA inside the current transaction, if it changed.
    func writeMetadataIfChanged(_ connection: SQLiteConnection) throws -> NSDictionary? {
        guard let metadata, metadataMayHaveChanged else { return nil }
        let current = NSDictionary(dictionary: metadata)
        if let writtenMetadata, writtenMetadata.isEqual(current) {
            writtenMetadataGeneration = _metadataGeneration
            return nil
        }
        let uuid = metadata[NSStoreUUIDKey] as? String ?? identifier ?? UUID().uuidString
        try connection.run(
            "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ? WHERE Z_VERSION = 1",
            [.text(uuid), .blob(Self.plistData(metadata))])
        return current
    }

    // MARK: Class-level metadata access

    static func storeMetadata(at url: URL) throws -> [String: Any] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw OpenCoreDataError(.persistentStoreOpen, "there is no store file at this URL", url: url)
        }
        return try readStoredMetadata(at: url).metadata
    }

    static func writeMetadata(_ metadata: [String: Any]?, at url: URL) throws {
        let stored = try readStoredMetadata(at: url)
        var merged = metadata ?? [:]
        let uuid = merged[NSStoreUUIDKey] as? String ?? stored.uuid
        merged[NSStoreTypeKey] = merged[NSStoreTypeKey] ?? NSSQLiteStoreType
        let plist = try plistData(merged)
        let connection = try SQLiteConnection(url: url, mode: .readWrite(create: false))
        defer { connection.close() }
        connection.setBusyTimeout(60)
        try connection.writeTransaction {
            try connection.run(
                "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ? WHERE Z_VERSION = 1", [.text(uuid), .blob(plist)])
        }
    }
}
