import CSQLite
import Foundation

/// A value bound to, or read from, a SQLite statement.
enum SQLiteValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// One prepared statement. Owned by its ``SQLiteConnection`` (which caches and finalizes it).
///
/// Not thread-safe: used only under the owning store's coordinator lock.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private unowned let connection: SQLiteConnection

    /// Set for a statement made for one use (see ``SQLiteConnection/reuse(_:)``).
    let finalizesWhenReleased: Bool
    private var isFinalized = false
    /// The bytes of each text parameter, owned here and bound with `SQLITE_STATIC` (see
    /// the `String` binding); index `i - 1` for parameter `i`, grown as needed. No run-time
    /// exclusivity checks: the statement has one user at a time (each access was checked, about 150
    /// instructions a string bound, callgrind case 1).
    @exclusivity(unchecked) private var textBuffers: [(bytes: UnsafeMutableRawPointer, capacity: Int)?] = []
    /// Whether the statement has been stepped since its last reset, and whether a parameter has
    /// been bound since bindings were last cleared: ``reset()`` calls SQLite only for what needs
    /// undoing. A cached statement is reset when its fetch ends and again when the next one takes
    /// it; the second reset, and clearing bindings that were cleared already, cost about 80
    /// instructions a fetch (callgrind case 4).
    @exclusivity(unchecked) private var needsReset = false
    @exclusivity(unchecked) private var hasBindings = false
    /// Set for a statement whose every use binds all of its parameters (the fetch statements cached
    /// by shape): ``reset()`` then leaves the old values bound, since the next use replaces them all.
    /// Others may leave a parameter unbound to mean `NULL` and need them cleared. (`prepare(_:)` may
    /// give the same statement for the same SQL text; a fetch's text is a `SELECT`, and any code
    /// running one binds all its parameters.) Clearing cost about 80 instructions a lookup
    /// (callgrind case 4).
    @exclusivity(unchecked) var keepsBindings = false

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection, finalizesWhenReleased: Bool = false) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
        self.finalizesWhenReleased = finalizesWhenReleased
    }

    /// A statement is finalized when the last reference goes (one dropped from a full cache, while
    /// a fetch still holds it, lives until that fetch ends), or when its connection closes.
    deinit {
        finalize()
        for buffer in textBuffers { buffer?.bytes.deallocate() }
    }

    func finalize() {
        guard !isFinalized else { return }
        isFinalized = true
        sqlite3_finalize(handle)
    }

    /// Whether the statement is between its first step and its end or reset: someone is reading its rows.
    var isStepping: Bool { sqlite3_stmt_busy(handle) != 0 }

    /// Makes the statement ready for new bindings: resets it and clears old bindings (unless
    /// ``keepsBindings``).
    func reset() {
        if needsReset {
            sqlite3_reset(handle)
            needsReset = false
        }
        if hasBindings, !keepsBindings {
            sqlite3_clear_bindings(handle)
            hasBindings = false
        }
    }

    // MARK: Binding (indices start at 1, as in SQLite)

    func bindNull(_ index: Int32) {
        hasBindings = true
        sqlite3_bind_null(handle, index)
    }

    func bind(_ value: Int64, _ index: Int32) {
        hasBindings = true
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: Double, _ index: Int32) {
        hasBindings = true
        sqlite3_bind_double(handle, index, value)
    }

    /// Binds a string's UTF-8 bytes, copied into a buffer this statement keeps for parameter
    /// `index` and bound with `SQLITE_STATIC`: SQLite reads them only while stepping, and the next
    /// binding of the index, or the statement's end, comes first. `SQLITE_TRANSIENT` made SQLite
    /// allocate, copy and later free each string (about 1,100 instructions a string, callgrind
    /// case 1).
    func bind(_ value: String, _ index: Int32) {
        // Read in place (a native or small string is contiguous); copied first only if it is not.
        if value.utf8.withContiguousStorageIfAvailable({ bindText($0, index) }) == nil {
            var value = value
            value.withUTF8 { bindText($0, index) }
        }
    }

    private func bindText(_ utf8: UnsafeBufferPointer<UInt8>, _ index: Int32) {
        let slot = Int(index) - 1
        guard slot >= 0 else { return }
        hasBindings = true
        let bytes = textBuffer(slot, holding: utf8.count)
        if let base = utf8.baseAddress { bytes.copyMemory(from: base, byteCount: utf8.count) }
        _ = sqlite3_bind_text64(
            handle, index, bytes.assumingMemoryBound(to: CChar.self), sqlite3_uint64(utf8.count), csqlite_static(),
            UInt8(SQLITE_UTF8))
    }

    /// Parameter `slot + 1`'s buffer, with room for `count` bytes.
    @inline(__always)
    private func textBuffer(_ slot: Int, holding count: Int) -> UnsafeMutableRawPointer {
        if slot < textBuffers.count, let buffer = textBuffers[slot], buffer.capacity >= count { return buffer.bytes }
        if slot >= textBuffers.count {
            textBuffers.append(contentsOf: repeatElement(nil, count: slot + 1 - textBuffers.count))
        }
        textBuffers[slot]?.bytes.deallocate()
        let capacity = max(count, 32)
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        textBuffers[slot] = (bytes, capacity)
        return bytes
    }

    func bind(_ value: Data, _ index: Int32) {
        hasBindings = true
        if value.isEmpty {
            sqlite3_bind_zeroblob(handle, index, 0)
            return
        }
        value.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob64(handle, index, raw.baseAddress, sqlite3_uint64(raw.count), csqlite_transient())
        }
    }

    func bind(_ value: SQLiteValue, _ index: Int32) {
        switch value {
        case .null: bindNull(index)
        case .integer(let v): bind(v, index)
        case .real(let v): bind(v, index)
        case .text(let v): bind(v, index)
        case .blob(let v): bind(v, index)
        }
    }

    func bind(_ values: [SQLiteValue]) {
        for (i, value) in values.enumerated() { bind(value, Int32(i + 1)) }
    }

    // MARK: Stepping

    /// Advances to the next row: `true` if there is one, `false` when done.
    func step() throws -> Bool {
        needsReset = true
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = connection.error(rc, sql: sql)
        sqlite3_reset(handle)
        needsReset = false
        throw error
    }

    /// Runs the statement to completion, ignoring rows.
    func run() throws {
        while try step() {}
        sqlite3_reset(handle)
        needsReset = false
    }

    // MARK: Columns (indices start at 0)

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    func columnType(_ column: Int32) -> Int32 { sqlite3_column_type(handle, column) }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(sqliteText: pointer, count: count)
    }

    func blob(_ column: Int32) -> Data {
        guard let pointer = sqlite3_column_blob(handle, column) else { return Data() }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Data(bytes: pointer, count: count)
    }

    func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(int64(column))
        case SQLITE_FLOAT: .real(double(column))
        case SQLITE_TEXT: .text(text(column))
        case SQLITE_BLOB: .blob(blob(column))
        default: .null
        }
    }
}
