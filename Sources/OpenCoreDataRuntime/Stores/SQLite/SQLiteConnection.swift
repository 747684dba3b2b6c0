import CSQLite
import Foundation

/// A thin wrapper over one `sqlite3` connection: opening, a prepared-statement cache keyed by SQL,
/// transactions, and errors mapped to ``OpenCoreDataError``.
///
/// Not thread-safe: one thread at a time uses it, between a lease from its store's
/// ``SQLiteConnectionPool`` and its return.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    let url: URL
    /// The pool that opened it (``SQLiteConnectionPool``), to find a thread's lease of a store.
    var pool: ObjectIdentifier?
    /// Whether it holds a query generation's read transaction (``SQLiteQueryGeneration``).
    var isPin = false
    /// The lease the current thread held before this one (of another store, or a pin), put back
    /// when this one ends: the leases of one thread form a chain from its thread-local slot.
    unowned(unsafe) var outerLease: SQLiteConnection?
    private var cache: [String: SQLiteStatement] = [:]
    /// How many statements `cache` keeps. SQL with a list of values (`IN (?, ?, ...)`) has a text per
    /// list length, so an app could otherwise grow the cache without end; when it is full it starts
    /// over (statements in use stay valid: they are finalized when their last user lets go).
    static let statementCacheLimit = 256
    /// The same statements for fetches, found by their shape, which is cheaper to hash than the SQL
    /// text with its long select list. (A concrete key: `AnyHashable` cost more than the text.)
    private var fetchCache: [SQLiteStore.FetchShape: SQLiteStatement] = [:]
    /// The statement `prepare(_:)` gave last, tried before `cache`: the same SQL is often asked for
    /// many times in a row (a fault fired per object), and the same text compares equal at once,
    /// where hashing it (a select list of every column) took about 640 instructions and the whole
    /// lookup about 1,000 (callgrind case 8).
    @exclusivity(unchecked) private var lastPrepared: SQLiteStatement?
    /// What fetches of format-template predicates compiled, for their later instances. Used only by
    /// the connection's one user at a time (the store serializes its use): no run-time exclusivity
    /// check (about 110 instructions a fetch, callgrind case 4).
    @exclusivity(unchecked) var fetchPlans = SQLiteStore.FetchPlans()
    /// The entity mapping the last fetch used, with the schema it is from (held, so that another
    /// schema cannot take its identity): a loop of fetches of one entity looks it up once, where
    /// the schema's dictionary hashed the entity each time (about 80 instructions a fetch,
    /// callgrind case 4). Used by the connection's one user at a time, as ``fetchPlans``.
    @exclusivity(unchecked) private var lastFetchMapping: (schema: SQLiteSchema, mapping: SQLiteSchema.EntityMapping)?

    /// `schema`'s mapping of `entity`, through ``lastFetchMapping``.
    func fetchMapping(of entity: NSEntityDescription, in schema: SQLiteSchema) -> SQLiteSchema.EntityMapping? {
        if let last = lastFetchMapping, last.mapping.entity === entity, last.schema === schema { return last.mapping }
        guard let mapping = schema.mapping(for: entity) else { return nil }
        lastFetchMapping = (schema, mapping)
        return mapping
    }

    /// The row offer of the last fetch, reused by the next (see ``rowOffer(store:entity:)``).
    @exclusivity(unchecked) private var spareRowOffer: FaultConstruction.RowOffer?

    /// A row offer for a fetch's rows of `store`: the last fetch's, taken (a fetch made inside it, by
    /// an overriding initializer, makes its own), or a new one. Each lookup of case 4 allocated and
    /// freed one, about 300 instructions of its 28k (callgrind). Give it back with ``recycle(_:)``.
    func rowOffer(store: ObjectIDStore, entity: NSEntityDescription) -> FaultConstruction.RowOffer {
        guard let spare = spareRowOffer, spare.store === store else {
            return FaultConstruction.RowOffer(store: store, entity: entity)
        }
        spareRowOffer = nil
        spare.entity = entity
        spare.key = 0
        return spare
    }

    /// Keeps `offer`, which no object holds once its fetch has made its rows' objects, for the next fetch.
    func recycle(_ offer: FaultConstruction.RowOffer) { spareRowOffer = offer }
    /// Test hook: told the SQL of every statement run (placeholders only, never values).
    var statementObserver: ((String) -> Void)?

    enum Mode {
        /// Read-only, without locks or side files (`immutable=1`): for checking a file before touching it.
        case probe
        /// Read-only, through the normal WAL machinery.
        case readOnly
        /// Read-write; `create` also creates a missing file.
        case readWrite(create: Bool)
    }

    init(url: URL, mode: Mode) throws {
        self.url = url
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        var filename = url.path
        switch mode {
        case .probe:
            flags |= SQLITE_OPEN_READONLY
            filename = url.standardizedFileURL.absoluteString + "?immutable=1"
        case .readOnly:
            flags |= SQLITE_OPEN_READONLY
            filename = url.standardizedFileURL.absoluteString + "?mode=ro"
        case .readWrite(let create):
            flags |= SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
            filename = url.standardizedFileURL.absoluteString
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(filename, &db, flags, nil)
        handle = db
        if rc != SQLITE_OK {
            let error = OpenCoreDataError(
                .persistentStoreOpen, "cannot open the SQLite file: \(Self.message(db, rc))", url: url, sqliteCode: rc)
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        SQLiteFunctions.register(on: db)
    }

    deinit { close() }

    /// Finalizes every cached statement and closes the connection.
    func close() {
        for statement in cache.values { statement.finalize() }
        cache.removeAll()
        lastPrepared = nil
        fetchCache.removeAll()
        fetchPlans.removeAll()
        lastFetchMapping = nil
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    // MARK: Statements

    /// The cached prepared statement for `sql`, reset and with bindings cleared.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        if let last = lastPrepared, last.sql == sql { return try reuse(last) }
        if let cached = cache[sql] {
            lastPrepared = cached
            return try reuse(cached)
        }
        statementObserver?(sql)
        let statement = try prepareUncached(sql)
        if cache.count >= Self.statementCacheLimit {
            cache.removeAll(keepingCapacity: true)
            fetchCache.removeAll(keepingCapacity: true)
        }
        cache[sql] = statement
        lastPrepared = statement
        return statement
    }

    /// How many statements are cached (for tests).
    var cachedStatementCount: Int { cache.count }

    /// The cached prepared statement for a fetch of `shape`, reset and with bindings cleared; on a
    /// miss, `sql()` is prepared (through the SQL-keyed cache) and remembered under `shape`.
    func prepare(shape: SQLiteStore.FetchShape, sql: () -> String) throws -> SQLiteStatement {
        if let cached = fetchCache[shape] { return try reuse(cached) }
        let statement = try prepare(sql())
        statement.keepsBindings = true  // a fetch binds every parameter of its SQL
        fetchCache[shape] = statement
        return statement
    }

    /// `statement`, one of this connection's cached statements, reset and with bindings cleared
    /// (unless it ``SQLiteStatement/keepsBindings``).
    /// While it is being stepped (a fetch run from `awakeFromFetch()` inside a fetch of the same
    /// shape), resetting it would end the outer fetch early: the caller gets a statement of the
    /// same SQL of its own, finalized when released.
    /// `observed: false` leaves telling ``statementObserver`` to the caller (a planned fetch tells
    /// it once its values are bound, and runs the statement compiled afresh if they cannot be).
    func reuse(_ statement: SQLiteStatement, observed: Bool = true) throws -> SQLiteStatement {
        if observed { statementObserver?(statement.sql) }
        if statement.isStepping { return try prepareUncached(statement.sql, finalizesWhenReleased: true) }
        statement.reset()
        return statement
    }

    /// A statement that is not cached; the caller finalizes it, unless `finalizesWhenReleased`.
    func prepareUncached(_ sql: String, finalizesWhenReleased: Bool = false) throws -> SQLiteStatement {
        guard let handle else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store's SQLite connection is closed", sql: sql, url: url)
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql: sql) }
        return SQLiteStatement(handle: stmt, sql: sql, connection: self, finalizesWhenReleased: finalizesWhenReleased)
    }

    /// Runs SQL without parameters (may hold several statements separated by `;`).
    func execute(_ sql: String) throws {
        statementObserver?(sql)
        guard let handle else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store's SQLite connection is closed", sql: sql, url: url)
        }
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        if rc != SQLITE_OK { throw error(rc, sql: sql) }
    }

    /// Runs a statement with bound values and returns the first column of each row.
    func column(_ sql: String, _ values: [SQLiteValue] = []) throws -> [SQLiteValue] {
        let statement = try prepare(sql)
        defer { statement.reset() }
        statement.bind(values)
        var result: [SQLiteValue] = []
        while try statement.step() { result.append(statement.value(0)) }
        return result
    }

    /// Runs a statement with bound values, ignoring rows.
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws {
        let statement = try prepare(sql)
        statement.bind(values)
        try statement.run()
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// How many rows one multi-row INSERT or UPDATE of a save writes, for rows of `parameters`
    /// parameters each: at most ``multiRowLimit`` and within the connection's limit on parameters;
    /// 0 when a statement would take fewer than two rows, or when `update` and the library has no
    /// `UPDATE … FROM` (SQLite 3.33).
    func rowsPerStatement(parameters: Int, update: Bool) -> Int {
        guard let handle, parameters > 0, !update || sqlite3_libversion_number() >= 3_033_000 else { return 0 }
        let rows = min(Self.multiRowLimit, Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) / parameters)
        return rows >= 2 ? rows : 0
    }

    /// The most rows one multi-row statement of a save writes. Per row of 100,000 (11 columns, one
    /// index, `/tmp`'s file system, C against the system SQLite 3.40): INSERT 1.19 µs one row a
    /// statement, 0.86 at 16 rows, 0.77 at 64, 0.76 at 90; `UPDATE … SET ZSCORE, Z_OPT … WHERE Z_PK,
    /// Z_OPT` 0.87 µs, `UPDATE … FROM (VALUES …)` 0.80 at 16 rows, 0.66 at 64, 0.64 at 100.
    static let multiRowLimit = 64

    /// Whether a table exists.
    func tableExists(_ name: String) throws -> Bool {
        try !column("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]).isEmpty
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`): committed if it returns, rolled back if it throws.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if let handle, sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Ends a read transaction a statement left open (one not reset after its last row), so that
    /// the connection's next user sees the latest commit: a check of one call per lease.
    func endDanglingRead() {
        guard let handle, sqlite3_txn_state(handle, nil) != SQLITE_TXN_NONE, sqlite3_get_autocommit(handle) != 0
        else { return }
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            if sqlite3_stmt_busy(current) != 0 { sqlite3_reset(current) }
            statement = sqlite3_next_stmt(handle, current)
        }
    }

    /// Sets the busy timeout in seconds.
    func setBusyTimeout(_ seconds: Double) {
        if let handle { sqlite3_busy_timeout(handle, Int32(max(0, min(seconds * 1000, Double(Int32.max))))) }
    }

    // MARK: Errors

    func error(_ rc: Int32, sql: String?) -> OpenCoreDataError {
        let primary = rc & 0xFF
        let code: OpenCoreDataError.Code =
            primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? .persistentStoreTimeout : .sqlite
        return OpenCoreDataError(
            code, "SQLite error \(rc): \(Self.message(handle, rc))", sql: sql, url: url, sqliteCode: rc)
    }

    static func message(_ db: OpaquePointer?, _ rc: Int32) -> String {
        if let db, let text = sqlite3_errmsg(db) { return String(cString: text) }
        return String(cString: sqlite3_errstr(rc))
    }
}
