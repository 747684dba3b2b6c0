import Foundation
import OpenCoreData
import Synchronization

/// The floor of an object graph on Apple's table: cases 2, 4 and 5 on OpenCoreData's own file, doing
/// only what any object graph that keeps one object per row must do, and nothing a framework adds.
///
/// Per row: read the row's columns with typed calls (as raw SQLite does), make one class instance
/// holding the values, and file it by primary key in a table under a lock, reusing the object filed
/// there if there is one (uniquing); the object leaves the table in its `deinit`. Case 5 changes each
/// object's `score`, notes the object in a list of changed objects, and saves the list as Apple's
/// format requires: each row's `Z_OPT` checked against the version the object was fetched with and
/// advanced by one, in the store's own statement (``FloorSave``). The table is the
/// cheapest possible, an array indexed by primary key (dense here), where a real graph needs a key
/// of store, entity and key. No faults, no change tracking, no snapshots, no context: a lower bound,
/// not a competitor (`--libraries floor`, not in the default set). Measured against it, OpenCoreData's
/// ratio to raw splits into the part any object graph pays and the part the framework adds.
struct FloorSubject: Subject {
    /// The file is OpenCoreData's (its set-up), so the table, its columns and pages are the same.
    func setUp(_ kind: CaseKind, sizes: Sizes, directory: URL) throws {
        try OpenCoreDataSubject(storeType: NSSQLiteStoreType).setUp(kind, sizes: sizes, directory: directory)
    }

    func run(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        let db = try RawDatabase(path: directory.appendingPathComponent(OpenCoreDataSubject.fileName).path)
        let registry = FloorRegistry()
        // The table's last column first, as OpenCoreData selects it (SQLite then reads each row's header
        // in one loop; `SQLiteSchema.Table.selectedPlace(ofColumn:)`).
        let columns = "Z_PK, ZNOTE, Z_OPT, ZFLAG, ZID, ZRANK, ZCREATEDAT, ZSCORE, ZWEIGHT, ZNAME"
        switch kind {
        case .fetchAll:
            return try measure {
                let select = try db.prepare("SELECT \(columns) FROM ZITEM")
                var objects: [FloorObject] = []
                while try select.step() { objects.append(FloorObject.fetched(select, registry: registry)) }
                var check: Int64 = 0
                for object in objects {
                    check &+= ItemValues.checksum(
                        id: object.id, name: object.name, rank: object.rank, score: object.score,
                        weight: object.weight, createdAt: object.createdAt, flag: object.flag, note: object.note)
                }
                return check
            }
        case .lookups:
            return try measure {
                let select = try db.prepare("SELECT \(columns) FROM ZITEM WHERE ZID = ? LIMIT 1")
                var check: Int64 = 0
                for j in 0..<sizes.lookups {
                    select.bind(1, sizes.lookupKey(j))
                    guard try select.step() else { throw BenchError("lookup \(j): none") }
                    let object = FloorObject.fetched(select, registry: registry)
                    check &+= object.id &+ Int64(object.name.utf8.count)
                    select.reset()
                }
                return check
            }
        case .update:
            return try measure {
                let select = try db.prepare("SELECT \(columns) FROM ZITEM")
                var objects: [FloorObject] = []
                while try select.step() { objects.append(FloorObject.fetched(select, registry: registry)) }
                var changed: [FloorObject] = []
                for object in objects {
                    object.score += 1
                    changed.append(object)
                }
                try FloorSave(db).save(changed)
                return Int64(objects.count)
            }
        default:
            throw BenchError("the floor measures cases 2, 4 and 5 only")
        }
    }
}

/// One row's object: its identity, version (`Z_OPT`) and values, held in place.
final class FloorObject {
    let pk: Int64
    /// The row's `Z_OPT` as fetched; advanced by a save.
    var version: Int64
    /// The table that files the object; it outlives every object (the run holds it).
    unowned(unsafe) let registry: FloorRegistry
    let id: Int64
    let name: String
    let rank: Int16
    var score: Double
    let weight: Double
    let createdAt: Double
    let flag: Bool
    let note: String?

    private init(_ row: RawStatement, registry: FloorRegistry) {
        pk = row.int64(0)
        version = row.int64(2)
        self.registry = registry
        note = row.text(1)
        flag = row.int64(3) != 0
        id = row.int64(4)
        rank = Int16(truncatingIfNeeded: row.int64(5))
        createdAt = row.double(6)
        score = row.double(7)
        weight = row.double(8)
        name = row.text(9) ?? ""
    }

    /// The object filed for the row's primary key, or a new one made from the row and filed.
    static func fetched(_ row: RawStatement, registry: FloorRegistry) -> FloorObject {
        let pk = Int(row.int64(0))
        if let filed = registry.object(at: pk) { return filed }
        let object = FloorObject(row, registry: registry)
        registry.file(object, at: pk)
        return object
    }

    deinit { registry.remove(self, at: Int(pk)) }
}

/// A save of changed objects' `score` in the statement OpenCoreData's store runs for it: an `UPDATE …
/// FROM (VALUES …)` of 64 rows, each row's `Z_OPT` advanced and checked against the object's version
/// (`SQLiteSchema.EntityMapping.updateSQL(_:rows:)`, `SQLiteConnection.multiRowLimit`: the cheapest
/// form measured, 0.66 µs a row against 0.87 for an `UPDATE` a row), in one transaction.
struct FloorSave {
    static let rowsPerStatement = 64
    let db: RawDatabase

    init(_ db: RawDatabase) { self.db = db }

    func save(_ objects: [FloorObject]) throws {
        try db.execute("BEGIN IMMEDIATE")
        do {
            let full = try db.prepare(Self.sql(rows: Self.rowsPerStatement))
            var start = 0
            while start < objects.count {
                let end = min(start + Self.rowsPerStatement, objects.count)
                let rows = end - start
                let statement = rows == Self.rowsPerStatement ? full : try db.prepare(Self.sql(rows: rows))
                var parameter: Int32 = 1
                for object in objects[start..<end] {
                    statement.bind(parameter, object.version + 1)
                    statement.bind(parameter + 1, object.score)
                    statement.bind(parameter + 2, object.pk)
                    statement.bind(parameter + 3, object.version)
                    parameter += 4
                }
                try statement.run()
                // Optimistic locking: a row whose version moved since the fetch is not written.
                guard db.changes == rows else { throw BenchError("optimistic locking failure") }
                start = end
            }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        for object in objects { object.version += 1 }
    }

    static func sql(rows: Int) -> String {
        "UPDATE ZITEM SET Z_OPT = v.column1, ZSCORE = v.column2 FROM (VALUES "
            + Array(repeating: "(?, ?, ?, ?)", count: rows).joined(separator: ", ") + ") AS v "
            + "WHERE ZITEM.Z_PK = v.column3 AND ZITEM.Z_OPT = v.column4"
    }
}

/// Objects by primary key, unretained, under a lock (objects are freed on any thread).
///
/// `@unchecked Sendable` invariant: `slots` is only touched while `mutex` is held.
final class FloorRegistry: @unchecked Sendable {
    private let mutex = Mutex<Void>(())
    // No run-time exclusivity check (OpenCoreData's lock does the same): only touched under the lock.
    @exclusivity(unchecked) private var slots: [Unmanaged<FloorObject>?] = []

    /// The object filed at `pk`, retained. A graph used from several threads must retain it only if it is
    /// not being freed (its `deinit` may be waiting for this lock; OpenCoreData calls `swift_tryRetain`);
    /// here one thread fetches and frees, and no row of cases 2, 4 and 5 finds an object filed.
    func object(at pk: Int) -> FloorObject? {
        mutex.withLock { _ in
            guard pk < slots.count, let filed = slots[pk] else { return nil }
            return filed.takeUnretainedValue()
        }
    }

    func file(_ object: FloorObject, at pk: Int) {
        mutex.withLock { _ in
            if pk >= slots.count {
                slots.append(contentsOf: repeatElement(nil, count: max(pk + 1 - slots.count, 1024)))
            }
            slots[pk] = Unmanaged.passUnretained(object)
        }
    }

    func remove(_ object: FloorObject, at pk: Int) {
        mutex.withLock { _ in
            let address = Unmanaged.passUnretained(object).toOpaque()
            if pk < slots.count, slots[pk]?.toOpaque() == address { slots[pk] = nil }
        }
    }
}
