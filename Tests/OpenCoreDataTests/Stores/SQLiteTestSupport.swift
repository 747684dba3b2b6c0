import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

// Helpers shared by the SQLite store test files.

/// Reads a store file with plain SQL, independently of the store's own code.
final class RawDatabase {
    private var db: OpaquePointer?

    /// `immutable` reads a fixture without locks or side files (it must not be written meanwhile).
    init(_ url: URL, readOnly: Bool = true, immutable: Bool = false) throws {
        let flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let name = immutable ? url.absoluteString + "?immutable=1" : url.path
        guard sqlite3_open_v2(name, &db, flags | SQLITE_OPEN_URI, nil) == SQLITE_OK else {
            throw CocoaError(.fileReadUnknown)
        }
    }

    deinit { sqlite3_close_v2(db) }

    /// Every row of a query, values as Int64, Double, String, Data or nil.
    func rows(_ sql: String) throws -> [[Any?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw OpenCoreDataError(.sqlite, String(cString: sqlite3_errmsg(db)), sql: sql)
        }
        defer { sqlite3_finalize(statement) }
        var result: [[Any?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(
                (0..<sqlite3_column_count(statement)).map { i -> Any? in
                    switch sqlite3_column_type(statement, i) {
                    case SQLITE_INTEGER: return sqlite3_column_int64(statement, i)
                    case SQLITE_FLOAT: return sqlite3_column_double(statement, i)
                    case SQLITE_TEXT: return String(cString: sqlite3_column_text(statement, i))
                    case SQLITE_BLOB:
                        let count = Int(sqlite3_column_bytes(statement, i))
                        return count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, i), count: count)
                    default: return nil
                    }
                })
        }
        return result
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw OpenCoreDataError(.sqlite, String(cString: sqlite3_errmsg(db)), sql: sql)
        }
    }

    func value(_ sql: String) throws -> Any? { try rows(sql).first?.first ?? nil }
}

/// The SQLite store a coordinator holds (its first store).
func sqliteStore(_ coordinator: NSPersistentStoreCoordinator) throws -> SQLiteStore {
    try #require(coordinator.persistentStores.first as? SQLiteStore)
}

/// A fixture copied into the test bundle (`Tests/OpenCoreDataTests/Fixtures/<path>`).
func fixture(_ path: String) throws -> URL {
    try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures").appendingPathComponent(path)
}
