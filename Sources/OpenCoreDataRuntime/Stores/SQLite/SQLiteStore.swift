import Foundation

// PLACEHOLDER: the SQLite store subsystem replaces this file.
final class SQLiteStore: NSIncrementalStore, @unchecked Sendable {
    override var type: String { NSSQLiteStoreType }
    override func loadMetadata() throws {
        throw OpenCoreDataError(.persistentStoreInvalidType, "the SQLite store is not built yet", url: url)
    }
}
