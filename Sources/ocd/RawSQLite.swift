import CSQLite
import Foundation

/// Read-only SQL on a store file, for what the object graph does not show: tables, row counts,
/// `Z_PRIMARYKEY` and the journal mode. Used on the tool's scratch copy only.
final class RawSQLite {
    private var db: OpaquePointer?

    init(_ url: URL) throws {
        let rc = sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil)
        guard rc == SQLITE_OK else {
            let message = String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw ToolError("cannot open the SQLite file: \(message)")
        }
    }

    deinit { sqlite3_close_v2(db) }

    /// Every row of `sql`, each column as text (`nil` for NULL).
    func rows(_ sql: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw ToolError(String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw ToolError(String(cString: sqlite3_errmsg(db))) }
            result.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) }
                })
        }
        return result
    }

    func scalar(_ sql: String) throws -> String? { try rows(sql).first?.first ?? nil }
}
