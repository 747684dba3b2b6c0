import Foundation
import GRDB

// Issue 40's cases c1 (import) and c2 (readers) for the peers, doing what the OpenCoreData side does
// with their own means: raw SQLite with a connection per thread (busy timeout, `BEGIN IMMEDIATE`),
// GRDB with a `DatabasePool` (reads in parallel on its reader connections, writes serialized on its
// writer). c3 (merge) and c4 (fetched results controller) have no counterpart.

/// How long a raw connection waits for another's lock (ms).
private let busyTimeout: Int32 = 60_000

extension RawSubject {
    func runContexts(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        let path = directory.appendingPathComponent("raw.sqlite").path
        switch kind {
        case .importContexts:
            // Four threads, each with its own connection, inserting its share in transactions of 1,000.
            let db = try open(directory, create: true)
            let measurement = try measure {
                try Workers(Sizes.importers) { k in
                    let connection = try RawDatabase(path: path, busyTimeout: busyTimeout)
                    let range = sizes.importRange(k)
                    for low in stride(from: range.lowerBound, to: range.upperBound, by: sizes.importSave) {
                        try Self.insertItems(
                            low..<min(range.upperBound, low + sizes.importSave), into: connection, immediate: true)
                    }
                }.join()
                return try Self.count(db)
            }
            return try importResult(measurement, sizes)
        case .readers:
            // Readers each on a connection of their own, a block's rows in one statement (its own
            // snapshot); the writer on another, a block's update in one transaction.
            return try runReadersCase(
                ReadersSides(
                    makeReader: {
                        let db = try RawDatabase(path: path, busyTimeout: busyTimeout)
                        let select = try db.prepare(
                            "SELECT pk, id, name, rank, score, weight, createdAt, flag, note FROM item"
                                + " WHERE id >= ? AND id < ?")
                        return { block in
                            _ = db  // the statement's connection lives as long as the read does
                            let low = Int64(block * sizes.readBlock)
                            select.bind(1, low)
                            select.bind(2, low + Int64(sizes.readBlock))
                            defer { select.reset() }
                            var rows: [ItemValues] = []
                            while try select.step() {
                                rows.append(
                                    ItemValues(
                                        id: select.int64(1), name: select.text(2) ?? "",
                                        rank: Int16(truncatingIfNeeded: select.int64(3)), score: select.double(4),
                                        weight: select.double(5), createdAt: select.double(6),
                                        flag: select.int64(7) != 0, note: select.text(8)))
                            }
                            return (rows.count, consistent(rows.map { ($0.id, $0.score) }))
                        }
                    },
                    makeWriter: {
                        let db = try RawDatabase(path: path, busyTimeout: busyTimeout)
                        let update = try db.prepare("UPDATE item SET score = score + 1 WHERE id >= ? AND id < ?")
                        return { block, timeline in
                            let low = Int64(block * sizes.readBlock)
                            let start = timeline.now()
                            try db.execute("BEGIN IMMEDIATE")
                            update.bind(1, low)
                            update.bind(2, low + Int64(sizes.readBlock))
                            try update.run()
                            try db.execute("COMMIT")
                            return Span(start: start, end: timeline.now())
                        }
                    }), sizes: sizes)
        default:
            throw BenchError("case \(kind): OpenCoreData only")
        }
    }

    static func count(_ db: RawDatabase) throws -> Int64 {
        let count = try db.prepare("SELECT COUNT(*) FROM item")
        _ = try count.step()
        return count.int64(0)
    }
}

/// Whether a block read in one snapshot is whole: every row has had the writer's `score + 1` the
/// same number of times (score starts at id / 2).
func consistent(_ rows: [(id: Int64, score: Double)]) -> Bool {
    guard let first = rows.first else { return true }
    let saves = first.score - Double(first.id) * 0.5
    return rows.allSatisfy { $0.score - Double($0.id) * 0.5 == saves }
}

enum GRDBContexts {
    /// The library's file (set up by its `DatabaseQueue`) opened as a pool; the import case
    /// creates the tables.
    static func pool(_ directory: URL, name: String, create: Bool) throws -> DatabasePool {
        let pool = try DatabasePool(path: directory.appendingPathComponent(name).path)
        if create { try pool.write { db in try db.execute(sql: RawDatabase.schema) } }
        return pool
    }

    /// c1 and c2 on `pool`; `records` says whether through records and the query interface or in
    /// SQL with cached statements.
    static func run(_ kind: CaseKind, sizes: Sizes, pool: DatabasePool, records: Bool) throws -> Measurement {
        switch kind {
        case .importContexts:
            let measurement = try measure {
                try Workers(Sizes.importers) { k in
                    let range = sizes.importRange(k)
                    for low in stride(from: range.lowerBound, to: range.upperBound, by: sizes.importSave) {
                        let batch = low..<min(range.upperBound, low + sizes.importSave)
                        try pool.write { db in
                            if records {
                                for i in batch {
                                    var item = ItemRecord(i)
                                    try item.insert(db)
                                }
                            } else {
                                try GRDBSQLSubject.insertItems(batch, db)
                            }
                        }
                    }
                }.join()
                return try pool.read { db in try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0 }
            }
            return try importResult(measurement, sizes)
        case .readers:
            return try runReadersCase(
                ReadersSides(
                    makeReader: {
                        { block in
                            let low = Int64(block * sizes.readBlock)
                            let high = low + Int64(sizes.readBlock)
                            return try pool.read { db in
                                let rows: [(id: Int64, score: Double)]
                                if records {
                                    rows = try ItemRecord.filter(Column("id") >= low && Column("id") < high)
                                        .fetchAll(db).map { ($0.id, $0.score) }
                                } else {
                                    let statement = try db.cachedStatement(
                                        sql: "SELECT pk, id, name, rank, score, weight, createdAt, flag, note"
                                            + " FROM item WHERE id >= ? AND id < ?")
                                    var values: [(id: Int64, score: Double)] = []
                                    let cursor = try Row.fetchCursor(statement, arguments: [low, high])
                                    while let row = try cursor.next() {
                                        let id: Int64 = row[1]
                                        let name: String = row[2]
                                        let rank: Int16 = row[3]
                                        let score: Double = row[4]
                                        let weight: Double = row[5]
                                        let createdAt: Double = row[6]
                                        let flag: Bool = row[7]
                                        let note: String? = row[8]
                                        let v = ItemValues(
                                            id: id, name: name, rank: rank, score: score, weight: weight,
                                            createdAt: createdAt, flag: flag, note: note)
                                        values.append((v.id, v.score))
                                    }
                                    rows = values
                                }
                                return (rows.count, consistent(rows))
                            }
                        }
                    },
                    makeWriter: {
                        { block, timeline in
                            let low = Int64(block * sizes.readBlock)
                            let high = low + Int64(sizes.readBlock)
                            let start = timeline.now()
                            try pool.write { db in
                                if records {
                                    _ = try ItemRecord.filter(Column("id") >= low && Column("id") < high)
                                        .updateAll(db, Column("score") += 1)
                                } else {
                                    try db.execute(
                                        sql: "UPDATE item SET score = score + 1 WHERE id >= ? AND id < ?",
                                        arguments: [low, high])
                                }
                            }
                            return Span(start: start, end: timeline.now())
                        }
                    }), sizes: sizes)
        default:
            throw BenchError("case \(kind): OpenCoreData only")
        }
    }
}

extension GRDBRecordsSubject {
    func runContexts(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        let pool = try GRDBContexts.pool(directory, name: "grdb-records.sqlite", create: kind.fixture == .none)
        return try GRDBContexts.run(kind, sizes: sizes, pool: pool, records: true)
    }
}

extension GRDBSQLSubject {
    func runContexts(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        let pool = try GRDBContexts.pool(directory, name: "grdb-sql.sqlite", create: kind.fixture == .none)
        return try GRDBContexts.run(kind, sizes: sizes, pool: pool, records: false)
    }
}

/// A peer's import run (c1): fails unless the file holds every row; reports rows a second.
private func importResult(_ measurement: Measurement, _ sizes: Sizes) throws -> Measurement {
    guard measurement.check == Int64(sizes.n) else {
        throw BenchError("the file holds \(measurement.check) rows of \(sizes.n)")
    }
    var result = measurement
    result.metrics = [Metric.rowsPerSecond: Double(sizes.n) / measurement.milliseconds * 1000]
    return result
}
