import CSQLite
import Foundation

/// The connections of one SQLite store: the primary one (opened with the store, where migrations
/// and a single thread's work run, so a program with one context opens one connection), and more
/// opened on demand, up to ``limit``, when another thread needs one while it is leased. In WAL
/// mode readers never wait for the writer: each request leases a connection of its own, reads see
/// the last commit when their statement starts, and a save in progress holds only its own
/// connection. Writes are serialized by the coordinator's write lock (and SQLite's), on whichever
/// connection is free (normally the primary). See `docs/concurrency.md` for the picture.
///
/// A lease is bound to its thread (``ThreadLocalSlot/connectionLease``): a request nested in
/// another on the same thread (a fault fired in `awakeFromFetch()`, a fetch in a save) reuses the
/// outer request's connection, so it sees what the outer one sees and a thread holds at most one
/// connection of a store at a time.
///
/// Query generations (``SQLiteQueryGeneration``) hold a connection of their own, outside the
/// pool's count, with a read transaction open for as long as a context is pinned to them.
///
/// `@unchecked Sendable` invariant: every mutable field is read and written under `mutex`; a
/// connection is used by the one thread that leased it (the mutex hands it over).
final class SQLiteConnectionPool: @unchecked Sendable {
    /// The connection opened with the store (``SQLiteStore/connection``).
    let primary: SQLiteConnection
    /// How many connections the pool opens at most (the primary included): 1 when the file is not
    /// in WAL mode (readers would wait for the writer's lock anyway), else a few.
    let limit: Int
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let released: UnsafeMutablePointer<pthread_cond_t>
    private let openConnection: () throws -> SQLiteConnection
    private var primaryIsIdle = true
    private var idle: [SQLiteConnection] = []
    private var opened = 1
    private var leased = 0
    private var pins: [SQLiteConnection] = []
    private var closed = false

    /// The most connections a WAL store opens (a small pool: more readers than cores gain nothing).
    static let readerLimit = 8

    private static let lease = ThreadLocalReference<SQLiteConnection>(.connectionLease)

    init(primary: SQLiteConnection, limit: Int, open: @escaping () throws -> SQLiteConnection) {
        self.primary = primary
        self.limit = max(1, limit)
        openConnection = open
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        released = .allocate(capacity: 1)
        pthread_cond_init(released, nil)
        primary.pool = ObjectIdentifier(self)
    }

    deinit {
        close()
        pthread_cond_destroy(released)
        released.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Whether ``close()`` ran.
    var isClosed: Bool { locked { closed } }

    /// How many connections are open, pins aside (the primary included; for tests).
    var openCount: Int { locked { closed ? 0 : opened } }

    @inline(__always)
    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    // MARK: Leases

    /// The connection of this pool the current thread holds (the innermost; a pin only if it is
    /// `pin`, an ordinary lease only if `pin` is `nil`).
    @inline(__always)
    func boundConnection(pin: SQLiteConnection? = nil) -> SQLiteConnection? {
        var next = Self.lease.unretained
        let me = ObjectIdentifier(self)
        while let current = next {
            let connection = current.takeUnretainedValue()
            if let pin {
                if connection === pin { return connection }
            } else if connection.pool == me, !connection.isPin {
                return connection
            }
            next = connection.outerLease.map { Unmanaged.passUnretained($0) }
        }
        return nil
    }

    /// The connection of this pool the current thread leased last (a pin or not), if any.
    @inline(__always)
    func innermostConnection() -> SQLiteConnection? {
        guard var current = Self.lease.unretained else { return nil }
        let me = ObjectIdentifier(self)
        while true {
            let connection = current.takeUnretainedValue()
            if connection.pool == me { return connection }
            guard let outer = connection.outerLease else { return nil }
            current = Unmanaged.passUnretained(outer)
        }
    }

    /// Runs `body` with a connection for the current thread: the one it already holds (a nested
    /// request), else `pin`'s (waiting while another thread reads through that pin), else a leased
    /// one, given back when `body` returns.
    @inline(__always)
    func withConnection<R>(pin: SQLiteQueryGeneration? = nil, _ body: (SQLiteConnection) throws -> R) throws -> R {
        if let bound = boundConnection(pin: pin?.connection) { return try body(bound) }
        let connection: SQLiteConnection
        if let pin {
            connection = try pin.acquire()
        } else {
            connection = try checkout()
        }
        connection.outerLease = Self.lease.unretained?.takeUnretainedValue()
        Self.lease.set(connection)
        defer {
            Self.lease.set(connection.outerLease)
            connection.outerLease = nil
            if let pin { pin.release() } else { checkin(connection) }
        }
        return try body(connection)
    }

    /// An idle connection (the primary first, whose caches are warm), a new one while fewer than
    /// ``limit`` are open, or the next one given back.
    private func checkout() throws -> SQLiteConnection {
        pthread_mutex_lock(mutex)
        while true {
            if closed {
                pthread_mutex_unlock(mutex)
                throw OpenCoreDataError(.persistentStoreOperation, "the SQLite store is not open", url: primary.url)
            }
            if primaryIsIdle {
                primaryIsIdle = false
                leased += 1
                pthread_mutex_unlock(mutex)
                return primary
            }
            if let connection = idle.popLast() {
                leased += 1
                pthread_mutex_unlock(mutex)
                return connection
            }
            if opened < limit {
                opened += 1
                leased += 1
                pthread_mutex_unlock(mutex)
                do {
                    let connection = try openConnection()
                    connection.pool = ObjectIdentifier(self)
                    return connection
                } catch {
                    locked {
                        opened -= 1
                        leased -= 1
                        pthread_cond_broadcast(released)
                    }
                    throw error
                }
            }
            pthread_cond_wait(released, mutex)
        }
    }

    /// Gives `connection` back: idle again, or closed if the pool closed meanwhile.
    private func checkin(_ connection: SQLiteConnection) {
        connection.endDanglingRead()
        locked {
            leased -= 1
            if closed {
                connection.close()
            } else if connection === primary {
                primaryIsIdle = true
            } else {
                idle.append(connection)
            }
            pthread_cond_broadcast(released)
        }
    }

    // MARK: Query generations

    /// A new connection with a read transaction open on the store's current state, for a query
    /// generation; given back with ``closePin(_:)``.
    func openPin() throws -> SQLiteConnection {
        guard !isClosed else {
            throw OpenCoreDataError(.persistentStoreOperation, "the SQLite store is not open", url: primary.url)
        }
        let connection = try openConnection()
        connection.pool = ObjectIdentifier(self)
        connection.isPin = true
        do {
            try connection.execute("BEGIN DEFERRED")
            // The snapshot starts with the transaction's first read.
            _ = try connection.column("SELECT COUNT(*) FROM Z_METADATA")
        } catch {
            connection.close()
            throw error
        }
        let added = locked { () -> Bool in
            guard !closed else { return false }
            pins.append(connection)
            return true
        }
        if !added {
            connection.close()
            throw OpenCoreDataError(.persistentStoreOperation, "the SQLite store is not open", url: primary.url)
        }
        return connection
    }

    /// Ends a pin's read transaction and closes its connection (no thread is reading through it).
    func closePin(_ connection: SQLiteConnection) {
        let owned = locked { () -> Bool in
            guard let index = pins.firstIndex(where: { $0 === connection }) else { return false }
            pins.remove(at: index)
            return true
        }
        if owned { connection.close() }  // closing ends its read transaction
    }

    /// Counts a pin's connection as in use while a thread reads through it, so that ``close()``
    /// waits for that read; `false` if the pool is closed.
    fileprivate func notePinLeased(_ delta: Int) -> Bool {
        locked {
            if delta > 0, closed { return false }
            leased += delta
            if delta < 0 { pthread_cond_broadcast(released) }
            return true
        }
    }

    // MARK: Closing

    /// Closes every connection: idle ones and pins now, leased ones when their request ends, which
    /// this waits for (except the current thread's own, which close when it gives them back).
    /// Requests that start afterwards throw `NSPersistentStoreOperationError`.
    func close() {
        var mine = 0
        var next = Self.lease.unretained
        while let current = next {
            let connection = current.takeUnretainedValue()
            if connection.pool == ObjectIdentifier(self) { mine += 1 }
            next = connection.outerLease.map { Unmanaged.passUnretained($0) }
        }
        pthread_mutex_lock(mutex)
        closed = true
        if primaryIsIdle {
            primaryIsIdle = false
            primary.close()
        }
        for connection in idle { connection.close() }
        idle.removeAll()
        while leased > mine { pthread_cond_wait(released, mutex) }
        let openPins = pins
        pins.removeAll()
        pthread_mutex_unlock(mutex)
        for pin in openPins where boundConnection(pin: pin) == nil { pin.close() }
    }
}

/// A query generation of one SQLite store: a connection of the store's pool with a read
/// transaction open, which every context pinned to it reads through (one thread at a time).
/// Released (its transaction ended, its connection closed) when no token holds it.
///
/// `@unchecked Sendable` invariant: `connection` is used only between ``acquire()`` and
/// ``release()``, which a mutex orders.
final class SQLiteQueryGeneration: @unchecked Sendable {
    let connection: SQLiteConnection
    private weak var pool: SQLiteConnectionPool?
    private let mutex = NSLock()

    init(pool: SQLiteConnectionPool) throws {
        connection = try pool.openPin()
        self.pool = pool
    }

    deinit { pool?.closePin(connection) }

    /// The pin's connection, waiting while another thread reads through it.
    func acquire() throws -> SQLiteConnection {
        mutex.lock()
        guard let pool, pool.notePinLeased(1) else {
            mutex.unlock()
            throw OpenCoreDataError(.persistentStoreOperation, "the SQLite store is not open", url: connection.url)
        }
        return connection
    }

    func release() {
        _ = pool?.notePinLeased(-1)
        mutex.unlock()
    }
}
