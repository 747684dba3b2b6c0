import Foundation

/// Raw SQLite through the C API: prepared statements prepared once and reused, WAL, synchronous NORMAL.
/// It does what the case needs and nothing more; where an object framework works per row (update, delete,
/// to-many faults), it works per row too, with one reused statement.
struct RawSubject: Subject {
    func open(_ directory: URL, create: Bool) throws -> RawDatabase {
        let db = try RawDatabase(path: directory.appendingPathComponent("raw.sqlite").path)
        if create { try db.execute(RawDatabase.schema) }
        return db
    }

    /// Inserts `range`'s items in one transaction; `immediate` takes the write lock at `BEGIN` (for
    /// writers that share the file: a busy timeout then applies instead of a lock upgrade failing).
    static func insertItems(_ range: Range<Int>, into db: RawDatabase, immediate: Bool = false) throws {
        let insert = try db.prepare(
            "INSERT INTO item(id, name, rank, score, weight, createdAt, flag, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        try db.execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        for i in range {
            let v = ItemValues(i)
            insert.bind(1, v.id)
            insert.bind(2, v.name)
            insert.bind(3, Int64(v.rank))
            insert.bind(4, v.score)
            insert.bind(5, v.weight)
            insert.bind(6, v.createdAt)
            insert.bind(7, Int64(v.flag ? 1 : 0))
            insert.bind(8, v.note)
            try insert.run()
        }
        try db.execute("COMMIT")
    }

    func setUp(_ kind: CaseKind, sizes: Sizes, directory: URL) throws {
        let db = try open(directory, create: true)
        switch kind.fixture {
        case .none:
            break
        case .items:
            try Self.insertItems(0..<sizes.n, into: db)
        case .countriesAndMoods:
            let country = try db.prepare("INSERT INTO country(code, updatedAt) VALUES (?, ?)")
            let mood = try db.prepare("INSERT INTO mood(date, latitude, longitude, country) VALUES (?, ?, ?, ?)")
            try db.execute("BEGIN")
            for c in 0..<sizes.countries8 {
                country.bind(1, Int64(Int16(truncatingIfNeeded: c)))
                country.bind(2, 700_000_000.0)
                try country.run()
                let countryPK = db.lastInsertRowID
                for m in 0..<sizes.moodsPerCountry8 {
                    mood.bind(1, Sizes.moodDate(c * sizes.moodsPerCountry8 + m))
                    mood.bind(2, 50.0)
                    mood.bind(3, 20.0)
                    mood.bind(4, countryPK)
                    try mood.run()
                }
            }
            try db.execute("COMMIT")
        }
    }

    func run(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        if kind.isMigration { return try runMigration(kind, directory: directory) }  // Migrations.swift
        if kind.isContexts { return try runContexts(kind, sizes: sizes, directory: directory) }  // Contexts*.swift
        let db = try open(directory, create: kind.fixture == .none)
        switch kind {
        case .migrateAddAttribute, .migrateRenameAttribute, .migrateAddEntity:
            throw BenchError("the migration cases run in Migrations.swift")
        case .importContexts, .readers, .mergeSave, .frcInsert:
            throw BenchError("the contexts cases run in Contexts.swift and ContextsPeers.swift")
        case .insert:
            return try measure {
                try Self.insertItems(0..<sizes.n, into: db)
                return Int64(sizes.n)
            }
        case .fetchAll:
            return try measure {
                let select = try db.prepare(
                    "SELECT pk, id, name, rank, score, weight, createdAt, flag, note FROM item")
                var rows: [(pk: Int64, values: ItemValues)] = []
                while try select.step() {
                    let v = ItemValues(
                        id: select.int64(1), name: select.text(2) ?? "",
                        rank: Int16(truncatingIfNeeded: select.int64(3)),
                        score: select.double(4), weight: select.double(5), createdAt: select.double(6),
                        flag: select.int64(7) != 0, note: select.text(8))
                    rows.append((select.int64(0), v))
                }
                var check: Int64 = 0
                for (_, v) in rows {
                    check &+= ItemValues.checksum(
                        id: v.id, name: v.name, rank: v.rank, score: v.score, weight: v.weight,
                        createdAt: v.createdAt, flag: v.flag, note: v.note)
                }
                return check
            }
        case .faults, .memory:
            // No faults in SQL: the least work that gives the same answer is to select the key and the column.
            return try measure {
                let select = try db.prepare("SELECT pk, name FROM item")
                var check: Int64 = 0
                while try select.step() { check &+= Int64(select.text(1)?.utf8.count ?? 0) }
                return check
            }
        case .lookups:
            return try measure {
                let select = try db.prepare(
                    "SELECT pk, id, name, rank, score, weight, createdAt, flag, note FROM item WHERE id = ? LIMIT 1")
                var check: Int64 = 0
                for j in 0..<sizes.lookups {
                    select.bind(1, sizes.lookupKey(j))
                    guard try select.step() else { throw BenchError("lookup \(j): none") }
                    check &+= select.int64(1) &+ Int64(select.text(2)?.utf8.count ?? 0)
                    select.reset()
                }
                return check
            }
        case .update:
            return try measure {
                let select = try db.prepare("SELECT pk, score FROM item")
                var rows: [(Int64, Double)] = []
                while try select.step() { rows.append((select.int64(0), select.double(1))) }
                let update = try db.prepare("UPDATE item SET score = ? WHERE pk = ?")
                try db.execute("BEGIN")
                for (pk, score) in rows {
                    update.bind(1, score + 1)
                    update.bind(2, pk)
                    try update.run()
                }
                try db.execute("COMMIT")
                return Int64(rows.count)
            }
        case .delete:
            return try measure {
                let select = try db.prepare("SELECT pk FROM item")
                var pks: [Int64] = []
                while try select.step() { pks.append(select.int64(0)) }
                let delete = try db.prepare("DELETE FROM item WHERE pk = ?")
                try db.execute("BEGIN")
                for pk in pks {
                    delete.bind(1, pk)
                    try delete.run()
                }
                try db.execute("COMMIT")
                return Int64(pks.count)
            }
        case .findOrCreate:
            // A lookup per mood (no in-memory cache: that is the object framework's trick), insert when absent.
            return try measure {
                let find = try db.prepare("SELECT pk FROM country WHERE code = ? LIMIT 1")
                let insertCountry = try db.prepare("INSERT INTO country(code, updatedAt) VALUES (?, ?)")
                let insertMood = try db.prepare(
                    "INSERT INTO mood(date, latitude, longitude, country) VALUES (?, ?, ?, ?)")
                var check: Int64 = 0
                var created = 0
                try db.execute("BEGIN")
                for i in 0..<sizes.moods7 {
                    let code = sizes.countryCode7(i)
                    find.bind(1, Int64(code))
                    let countryPK: Int64
                    if try find.step() {
                        countryPK = find.int64(0)
                        find.reset()
                    } else {
                        find.reset()
                        insertCountry.bind(1, Int64(code))
                        insertCountry.bind(2, Date().timeIntervalSinceReferenceDate)
                        try insertCountry.run()
                        countryPK = db.lastInsertRowID
                        created += 1
                    }
                    insertMood.bind(1, Sizes.moodDate(i))
                    insertMood.bind(2, 50.0)
                    insertMood.bind(3, 20.0)
                    insertMood.bind(4, countryPK)
                    try insertMood.run()
                    check &+= Int64(code)
                }
                try db.execute("COMMIT")
                return check &+ Int64(created) &* 1_000_000
            }
        case .traverse:
            // One query per country, as a to-many fault does.
            return try measure {
                let countries = try db.prepare("SELECT pk, code, updatedAt FROM country")
                var pks: [Int64] = []
                while try countries.step() { pks.append(countries.int64(0)) }
                let moods = try db.prepare("SELECT pk, date, latitude, longitude FROM mood WHERE country = ?")
                var check: Int64 = 0
                for pk in pks {
                    moods.bind(1, pk)
                    while try moods.step() { check &+= 1 &+ Int64(moods.double(1).rounded()) }
                    moods.reset()
                }
                return check
            }
        case .traversePrefetch:
            // Two queries: the countries, then every mood of them, grouped in memory.
            return try measure {
                let countries = try db.prepare("SELECT pk, code, updatedAt FROM country")
                var moodsByCountry: [Int64: [Double]] = [:]
                while try countries.step() { moodsByCountry[countries.int64(0)] = [] }
                let moods = try db.prepare(
                    "SELECT pk, date, latitude, longitude, country FROM mood WHERE country IS NOT NULL")
                while try moods.step() { moodsByCountry[moods.int64(4), default: []].append(moods.double(1)) }
                var check: Int64 = 0
                for (_, dates) in moodsByCountry { for date in dates { check &+= 1 &+ Int64(date.rounded()) } }
                return check
            }
        }
    }
}
