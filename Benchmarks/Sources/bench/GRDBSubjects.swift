import Foundation
import GRDB

// GRDB.swift 7.10.0 two ways: records through the query interface, the way its documentation writes
// an app, and plain SQL with cached statements. Both on a DatabaseQueue in WAL mode, which GRDB
// opens with synchronous NORMAL.

// Records with hand-written row coding (`init(row:)`, `encode(to:)`), which GRDB documents as its
// fastest record form. Codable records were about 2× slower here at N = 100,000 (fetch 176 ms against
// 89, insert 1,052 against 706, with GRDB's default text dates), which would flatter the OCD/GRDB ratio.
// Dates are stored as Core Data stores them, seconds since 2001.

struct ItemRecord: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "item"
    var pk: Int64?
    var id: Int64
    var name: String
    var rank: Int16
    var score: Double
    var weight: Double
    var createdAt: Date
    var flag: Bool
    var note: String?

    init(_ i: Int) {
        let v = ItemValues(i)
        id = v.id
        name = v.name
        rank = v.rank
        score = v.score
        weight = v.weight
        createdAt = Date(timeIntervalSinceReferenceDate: v.createdAt)
        flag = v.flag
        note = v.note
    }

    init(row: Row) throws {
        pk = row["pk"]
        id = row["id"]
        name = row["name"]
        rank = row["rank"]
        score = row["score"]
        weight = row["weight"]
        createdAt = Date(timeIntervalSinceReferenceDate: row["createdAt"])
        flag = row["flag"]
        note = row["note"]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["pk"] = pk
        container["id"] = id
        container["name"] = name
        container["rank"] = rank
        container["score"] = score
        container["weight"] = weight
        container["createdAt"] = createdAt.timeIntervalSinceReferenceDate
        container["flag"] = flag
        container["note"] = note
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { pk = inserted.rowID }
}

struct CountryRecord: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "country"
    static var moods: HasManyAssociation<CountryRecord, MoodRecord> { hasMany(MoodRecord.self, key: "moods") }
    var pk: Int64?
    var code: Int16
    var updatedAt: Date
    var moods: QueryInterfaceRequest<MoodRecord> { request(for: Self.moods) }

    init(code: Int16, updatedAt: Date) {
        self.code = code
        self.updatedAt = updatedAt
    }

    init(row: Row) throws {
        pk = row["pk"]
        code = row["code"]
        updatedAt = Date(timeIntervalSinceReferenceDate: row["updatedAt"])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["pk"] = pk
        container["code"] = code
        container["updatedAt"] = updatedAt.timeIntervalSinceReferenceDate
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { pk = inserted.rowID }
}

struct MoodRecord: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "mood"
    var pk: Int64?
    var date: Date
    var latitude: Double
    var longitude: Double
    var country: Int64?

    init(date: Date, latitude: Double, longitude: Double, country: Int64?) {
        self.date = date
        self.latitude = latitude
        self.longitude = longitude
        self.country = country
    }

    init(row: Row) throws {
        pk = row["pk"]
        date = Date(timeIntervalSinceReferenceDate: row["date"])
        latitude = row["latitude"]
        longitude = row["longitude"]
        country = row["country"]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["pk"] = pk
        container["date"] = date.timeIntervalSinceReferenceDate
        container["latitude"] = latitude
        container["longitude"] = longitude
        container["country"] = country
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { pk = inserted.rowID }
}

struct CountryWithMoods: FetchableRecord {
    var country: CountryRecord
    var moods: [MoodRecord]

    init(row: Row) throws {
        country = try CountryRecord(row: row)
        moods = row["moods"]
    }
}

enum GRDBDatabase {
    static func open(_ directory: URL, name: String, create: Bool) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.journalMode = .wal
        let queue = try DatabaseQueue(path: directory.appendingPathComponent(name).path, configuration: configuration)
        if create { try queue.write { db in try db.execute(sql: RawDatabase.schema) } }
        return queue
    }
}

struct GRDBRecordsSubject: Subject {
    func open(_ directory: URL, create: Bool) throws -> DatabaseQueue {
        try GRDBDatabase.open(directory, name: "grdb-records.sqlite", create: create)
    }

    func setUp(_ kind: CaseKind, sizes: Sizes, directory: URL) throws {
        let queue = try open(directory, create: true)
        try queue.write { db in
            switch kind.fixture {
            case .none:
                break
            case .items:
                for i in 0..<sizes.n {
                    var item = ItemRecord(i)
                    try item.insert(db)
                }
            case .countriesAndMoods:
                for c in 0..<sizes.countries8 {
                    var country = CountryRecord(
                        code: Int16(truncatingIfNeeded: c), updatedAt: Date(timeIntervalSinceReferenceDate: 700_000_000)
                    )
                    try country.insert(db)
                    for m in 0..<sizes.moodsPerCountry8 {
                        var mood = MoodRecord(
                            date: Date(timeIntervalSinceReferenceDate: Sizes.moodDate(c * sizes.moodsPerCountry8 + m)),
                            latitude: 50, longitude: 20, country: country.pk)
                        try mood.insert(db)
                    }
                }
            }
        }
    }

    func run(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        if kind.isMigration { return try runMigration(kind, directory: directory) }  // Migrations.swift
        if kind.isContexts { return try runContexts(kind, sizes: sizes, directory: directory) }  // Contexts*.swift
        let queue = try open(directory, create: kind.fixture == .none)
        switch kind {
        case .migrateAddAttribute, .migrateRenameAttribute, .migrateAddEntity:
            throw BenchError("the migration cases run in Migrations.swift")
        case .importContexts, .readers, .mergeSave, .frcInsert:
            throw BenchError("the contexts cases run in Contexts.swift and ContextsPeers.swift")
        case .insert:
            return try measure {
                try queue.write { db in
                    for i in 0..<sizes.n {
                        var item = ItemRecord(i)
                        try item.insert(db)
                    }
                }
                return Int64(sizes.n)
            }
        case .fetchAll:
            return try measure {
                let items = try queue.read { db in try ItemRecord.fetchAll(db) }
                var check: Int64 = 0
                for item in items {
                    check &+= ItemValues.checksum(
                        id: item.id, name: item.name, rank: item.rank, score: item.score, weight: item.weight,
                        createdAt: item.createdAt.timeIntervalSinceReferenceDate, flag: item.flag, note: item.note)
                }
                return check
            }
        case .faults:
            // No faults in GRDB: records are always full.
            return try measure {
                let items = try queue.read { db in try ItemRecord.fetchAll(db) }
                var check: Int64 = 0
                for item in items { check &+= Int64(item.name.utf8.count) }
                return check
            }
        case .lookups:
            return try measure {
                try queue.read { db in
                    var check: Int64 = 0
                    for j in 0..<sizes.lookups {
                        guard let item = try ItemRecord.filter(Column("id") == sizes.lookupKey(j)).fetchOne(db) else {
                            throw BenchError("lookup \(j): none")
                        }
                        check &+= item.id &+ Int64(item.name.utf8.count)
                    }
                    return check
                }
            }
        case .update:
            return try measure {
                try queue.write { db in
                    var items = try ItemRecord.fetchAll(db)
                    for index in items.indices { try items[index].updateChanges(db) { $0.score += 1 } }
                    return Int64(items.count)
                }
            }
        case .delete:
            return try measure {
                try queue.write { db in
                    let items = try ItemRecord.fetchAll(db)
                    for item in items { try item.delete(db) }
                    return Int64(items.count)
                }
            }
        case .findOrCreate:
            return try measure {
                try queue.write { db in
                    var check: Int64 = 0
                    var created = 0
                    for i in 0..<sizes.moods7 {
                        let code = sizes.countryCode7(i)
                        var country: CountryRecord
                        if let found = try CountryRecord.filter(Column("code") == code).fetchOne(db) {
                            country = found
                        } else {
                            country = CountryRecord(code: code, updatedAt: Date())
                            try country.insert(db)
                            created += 1
                        }
                        var mood = MoodRecord(
                            date: Date(timeIntervalSinceReferenceDate: Sizes.moodDate(i)), latitude: 50, longitude: 20,
                            country: country.pk)
                        try mood.insert(db)
                        check &+= Int64(country.code)
                    }
                    return check &+ Int64(created) &* 1_000_000
                }
            }
        case .traverse:
            return try measure {
                try queue.read { db in
                    var check: Int64 = 0
                    for country in try CountryRecord.fetchAll(db) {
                        for mood in try country.moods.fetchAll(db) {
                            check &+= 1 &+ Int64(mood.date.timeIntervalSinceReferenceDate.rounded())
                        }
                    }
                    return check
                }
            }
        case .traversePrefetch:
            return try measure {
                try queue.read { db in
                    var check: Int64 = 0
                    let request = CountryRecord.including(all: CountryRecord.moods).asRequest(of: CountryWithMoods.self)
                    for info in try request.fetchAll(db) {
                        for mood in info.moods {
                            check &+= 1 &+ Int64(mood.date.timeIntervalSinceReferenceDate.rounded())
                        }
                    }
                    return check
                }
            }
        case .memory:
            // GRDB's answer to batching is a cursor: one row in memory at a time.
            return try measure {
                try queue.read { db in
                    var check: Int64 = 0
                    let cursor = try ItemRecord.fetchCursor(db)
                    while let item = try cursor.next() { check &+= Int64(item.name.utf8.count) }
                    return check
                }
            }
        }
    }
}

struct GRDBSQLSubject: Subject {
    func open(_ directory: URL, create: Bool) throws -> DatabaseQueue {
        try GRDBDatabase.open(directory, name: "grdb-sql.sqlite", create: create)
    }

    static func insertItems(_ range: Range<Int>, _ db: Database) throws {
        let insert = try db.cachedStatement(
            sql:
                "INSERT INTO item(id, name, rank, score, weight, createdAt, flag, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        for i in range {
            let v = ItemValues(i)
            try insert.execute(arguments: [v.id, v.name, v.rank, v.score, v.weight, v.createdAt, v.flag, v.note])
        }
    }

    func setUp(_ kind: CaseKind, sizes: Sizes, directory: URL) throws {
        let queue = try open(directory, create: true)
        try queue.write { db in
            switch kind.fixture {
            case .none:
                break
            case .items:
                try Self.insertItems(0..<sizes.n, db)
            case .countriesAndMoods:
                let insertCountry = try db.cachedStatement(sql: "INSERT INTO country(code, updatedAt) VALUES (?, ?)")
                let insertMood = try db.cachedStatement(
                    sql: "INSERT INTO mood(date, latitude, longitude, country) VALUES (?, ?, ?, ?)")
                for c in 0..<sizes.countries8 {
                    try insertCountry.execute(arguments: [Int16(truncatingIfNeeded: c), 700_000_000.0])
                    let pk = db.lastInsertedRowID
                    for m in 0..<sizes.moodsPerCountry8 {
                        try insertMood.execute(arguments: [
                            Sizes.moodDate(c * sizes.moodsPerCountry8 + m), 50.0, 20.0, pk,
                        ])
                    }
                }
            }
        }
    }

    func run(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        if kind.isMigration { return try runMigration(kind, directory: directory) }  // Migrations.swift
        if kind.isContexts { return try runContexts(kind, sizes: sizes, directory: directory) }  // Contexts*.swift
        let queue = try open(directory, create: kind.fixture == .none)
        switch kind {
        case .migrateAddAttribute, .migrateRenameAttribute, .migrateAddEntity:
            throw BenchError("the migration cases run in Migrations.swift")
        case .importContexts, .readers, .mergeSave, .frcInsert:
            throw BenchError("the contexts cases run in Contexts.swift and ContextsPeers.swift")
        case .insert:
            return try measure {
                try queue.write { db in try Self.insertItems(0..<sizes.n, db) }
                return Int64(sizes.n)
            }
        case .fetchAll:
            return try measure {
                let rows = try queue.read { db in
                    var rows: [(pk: Int64, values: ItemValues)] = []
                    let cursor = try Row.fetchCursor(
                        db, sql: "SELECT pk, id, name, rank, score, weight, createdAt, flag, note FROM item")
                    while let row = try cursor.next() {
                        let v = ItemValues(
                            id: row[1], name: row[2], rank: row[3], score: row[4], weight: row[5], createdAt: row[6],
                            flag: row[7], note: row[8])
                        rows.append((row[0], v))
                    }
                    return rows
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
            return try measure {
                try queue.read { db in
                    var check: Int64 = 0
                    let cursor = try Row.fetchCursor(db, sql: "SELECT pk, name FROM item")
                    while let row = try cursor.next() {
                        let name: String = row[1]
                        check &+= Int64(name.utf8.count)
                    }
                    return check
                }
            }
        case .lookups:
            return try measure {
                try queue.read { db in
                    let select = try db.cachedStatement(
                        sql:
                            "SELECT pk, id, name, rank, score, weight, createdAt, flag, note FROM item "
                            + "WHERE id = ? LIMIT 1"
                    )
                    var check: Int64 = 0
                    for j in 0..<sizes.lookups {
                        guard let row = try Row.fetchOne(select, arguments: [sizes.lookupKey(j)]) else {
                            throw BenchError("lookup \(j): none")
                        }
                        let id: Int64 = row[1]
                        let name: String = row[2]
                        check &+= id &+ Int64(name.utf8.count)
                    }
                    return check
                }
            }
        case .update:
            return try measure {
                try queue.write { db in
                    let rows = try Row.fetchAll(db, sql: "SELECT pk, score FROM item")
                    let update = try db.cachedStatement(sql: "UPDATE item SET score = ? WHERE pk = ?")
                    for row in rows {
                        let pk: Int64 = row[0]
                        let score: Double = row[1]
                        try update.execute(arguments: [score + 1, pk])
                    }
                    return Int64(rows.count)
                }
            }
        case .delete:
            return try measure {
                try queue.write { db in
                    let pks = try Int64.fetchAll(db, sql: "SELECT pk FROM item")
                    let delete = try db.cachedStatement(sql: "DELETE FROM item WHERE pk = ?")
                    for pk in pks { try delete.execute(arguments: [pk]) }
                    return Int64(pks.count)
                }
            }
        case .findOrCreate:
            return try measure {
                try queue.write { db in
                    let find = try db.cachedStatement(sql: "SELECT pk FROM country WHERE code = ? LIMIT 1")
                    let insertCountry = try db.cachedStatement(
                        sql: "INSERT INTO country(code, updatedAt) VALUES (?, ?)")
                    let insertMood = try db.cachedStatement(
                        sql: "INSERT INTO mood(date, latitude, longitude, country) VALUES (?, ?, ?, ?)")
                    var check: Int64 = 0
                    var created = 0
                    for i in 0..<sizes.moods7 {
                        let code = sizes.countryCode7(i)
                        let pk: Int64
                        if let found = try Int64.fetchOne(find, arguments: [code]) {
                            pk = found
                        } else {
                            try insertCountry.execute(arguments: [code, Date().timeIntervalSinceReferenceDate])
                            pk = db.lastInsertedRowID
                            created += 1
                        }
                        try insertMood.execute(arguments: [Sizes.moodDate(i), 50.0, 20.0, pk])
                        check &+= Int64(code)
                    }
                    return check &+ Int64(created) &* 1_000_000
                }
            }
        case .traverse:
            return try measure {
                try queue.read { db in
                    let pks = try Int64.fetchAll(db, sql: "SELECT pk FROM country")
                    let moods = try db.cachedStatement(
                        sql: "SELECT pk, date, latitude, longitude FROM mood WHERE country = ?")
                    var check: Int64 = 0
                    for pk in pks {
                        let cursor = try Row.fetchCursor(moods, arguments: [pk])
                        while let row = try cursor.next() {
                            let date: Double = row[1]
                            check &+= 1 &+ Int64(date.rounded())
                        }
                    }
                    return check
                }
            }
        case .traversePrefetch:
            return try measure {
                try queue.read { db in
                    var moodsByCountry: [Int64: [Double]] = [:]
                    for pk in try Int64.fetchAll(db, sql: "SELECT pk FROM country") { moodsByCountry[pk] = [] }
                    let cursor = try Row.fetchCursor(
                        db, sql: "SELECT pk, date, latitude, longitude, country FROM mood WHERE country IS NOT NULL")
                    while let row = try cursor.next() {
                        let country: Int64 = row[4]
                        moodsByCountry[country, default: []].append(row[1])
                    }
                    var check: Int64 = 0
                    for (_, dates) in moodsByCountry { for date in dates { check &+= 1 &+ Int64(date.rounded()) } }
                    return check
                }
            }
        }
    }
}
