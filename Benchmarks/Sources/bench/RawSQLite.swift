import CSQLiteBench
import Foundation

/// A minimal wrapper over the SQLite C API: one connection, prepared statements the caller keeps and reuses.
final class RawDatabase {
    let handle: OpaquePointer

    /// `busyTimeout` (milliseconds): how long a statement waits for another connection's lock
    /// before it fails with `SQLITE_BUSY` (the contexts cases, whose connections share a file).
    init(path: String, busyTimeout: Int32 = 0) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK, let db else {
            throw BenchError("sqlite3_open_v2(\(path)) failed")
        }
        handle = db
        if busyTimeout > 0 { sqlite3_busy_timeout(db, busyTimeout) }
        // The same pragmas the other libraries run with.
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw BenchError("\(sql): \(text)")
        }
    }

    func prepare(_ sql: String) throws -> RawStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else {
            throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return RawStatement(statement, database: self)
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows the last INSERT, UPDATE or DELETE wrote.
    var changes: Int { Int(sqlite3_changes(handle)) }

    static let schema = """
        CREATE TABLE item(pk INTEGER PRIMARY KEY, id INTEGER NOT NULL, name TEXT NOT NULL, rank INTEGER NOT NULL,
            score REAL NOT NULL, weight REAL NOT NULL, createdAt REAL NOT NULL, flag INTEGER NOT NULL, note TEXT);
        CREATE INDEX item_id ON item(id);
        CREATE TABLE country(pk INTEGER PRIMARY KEY, code INTEGER NOT NULL, updatedAt REAL NOT NULL);
        CREATE INDEX country_code ON country(code);
        CREATE TABLE mood(pk INTEGER PRIMARY KEY, date REAL NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL,
            country INTEGER REFERENCES country(pk));
        CREATE INDEX mood_country ON mood(country);
        """
}

final class RawStatement {
    let statement: OpaquePointer
    unowned let database: RawDatabase

    init(_ statement: OpaquePointer, database: RawDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(statement, index, value) }
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(statement, index, value) }
    func bind(_ index: Int32, _ value: String?) {
        if let value {
            sqlite3_bind_text(statement, index, value, -1, csqlitebench_transient())
        } else {
            sqlite3_bind_null(statement, index)
        }
    }

    /// Steps once: true on a row, false when done.
    func step() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw BenchError(String(cString: sqlite3_errmsg(database.handle)))
        }
    }

    /// Runs a statement that returns no rows, then resets it for the next use.
    func run() throws {
        _ = try step()
        sqlite3_reset(statement)
    }

    func reset() { sqlite3_reset(statement) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }
}
