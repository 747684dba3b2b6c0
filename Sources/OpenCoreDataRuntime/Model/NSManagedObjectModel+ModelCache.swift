import CZlib
import Foundation

extension NSManagedObjectModel {
    /// The model Apple's Core Data cached inside a SQLite store, so the store can be opened and
    /// inspected without its app's model; `nil` when the store has no cache.
    ///
    /// Core Data keeps a copy of the model a SQLite store was last saved with in the store's
    /// `Z_MODELCACHE` table: the model's keyed archive (as in a compiled `.mom`), compressed with raw
    /// DEFLATE. Stores from before that table existed (framework versions up to 519 in the test
    /// corpus) have none, and neither do stores OpenCoreData creates.
    ///
    /// ```swift
    /// if let model = try NSManagedObjectModel.cachedModel(ofStoreAt: url) {
    ///     let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    ///     try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
    ///                                        options: [NSReadOnlyPersistentStoreOption: true])
    /// }
    /// ```
    ///
    /// The file is only read (work on a copy of a store that has a `-wal` companion if it must stay
    /// byte-for-byte unchanged: SQLite may checkpoint the WAL when it opens the file).
    ///
    /// - Throws: ``OpenCoreDataError`` naming the file: `persistentStoreOpen` (134080) when the file
    ///   is not a Core Data SQLite store; `fileReadCorruptFile` (259) when the cache does not inflate
    ///   or does not hold a model archive.
    ///
    /// Related Core Data documentation: [NSManagedObjectModel](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel)
    ///
    /// - Note: An OpenCoreData addition; Apple's form (macOS and iOS 26.4) is
    ///   ``NSPersistentStoreCoordinator/cachedModelForPersistentStore(at:options:)``, which throws
    ///   where this answers `nil`. Fetched properties in the cached model are left out of its entities.
    public static func cachedModel(ofStoreAt url: URL) throws -> NSManagedObjectModel? {
        // Checks that the file is a Core Data store, with the metadata reader's errors.
        _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        guard let blob = try ModelCache.blob(ofStoreAt: url) else { return nil }
        return try ModelCache.model(fromCache: blob, url: url)
    }
}

/// `Z_MODELCACHE` (docs/FORMATS.md §1.6): one row, `Z_CONTENT` = raw DEFLATE (zlib window bits
/// −15, no header) of the model's keyed archive.
package enum ModelCache {
    /// Inflated caches larger than this are refused (the corpus's largest is about 30 KB).
    static let maximumInflatedSize = 64 << 20

    /// The `Z_CONTENT` of the store's `Z_MODELCACHE`; `nil` without the table or a row.
    package static func blob(ofStoreAt url: URL) throws -> Data? {
        let wal = (try? FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int) ?? 0
        let connection = try SQLiteConnection(url: url, mode: wal > 0 ? .readOnly : .probe)
        defer { connection.close() }
        guard try connection.tableExists("Z_MODELCACHE") else { return nil }
        let statement = try connection.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let blob = statement.blob(0)
        return blob.isEmpty ? nil : blob
    }

    /// Inflates a cache and decodes its model; `url` (the store) is named in errors.
    package static func model(fromCache blob: Data, url: URL?) throws -> NSManagedObjectModel {
        let archive = try inflate(blob, url: url)
        let model = NSManagedObjectModel()
        try CompiledModelReader.decode(archive, url: url, what: "model cache (Z_MODELCACHE)", into: model)
        return model
    }

    /// Raw DEFLATE → bytes, with the system zlib. Truncated or corrupt input throws.
    package static func inflate(_ data: Data, url: URL?) throws -> Data {
        func failure(_ message: String) -> OpenCoreDataError {
            KeyedArchive.error(message, url: url, what: "model cache (Z_MODELCACHE)")
        }
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw failure("cannot be inflated: zlib did not initialize")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var status = Z_OK
        let chunkSize = 64 << 10
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        try data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            guard let base = input.bindMemory(to: Bytef.self).baseAddress else { throw failure("is empty") }
            stream.next_in = UnsafeMutablePointer(mutating: base)
            stream.avail_in = uInt(input.count)
            repeat {
                let produced = chunk.withUnsafeMutableBufferPointer { buffer -> Int in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return chunkSize - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
                guard output.count <= maximumInflatedSize else { throw failure("inflates to more than \(maximumInflatedSize) bytes") }
                if status == Z_BUF_ERROR, stream.avail_in == 0 { throw failure("is truncated (the DEFLATE stream ends early)") }
            } while status == Z_OK
        }
        guard status == Z_STREAM_END else {
            let reason = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            throw failure("does not inflate (\(reason))")
        }
        return output
    }
}
