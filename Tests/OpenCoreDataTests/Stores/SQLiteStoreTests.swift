import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Reads a store file with plain SQL, independently of the store's own code.
private final class RawDatabase {
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

@Suite("SQLite store")
struct SQLiteStoreTests {
    private func sqliteStore(_ coordinator: NSPersistentStoreCoordinator) throws -> SQLiteStore {
        try #require(coordinator.persistentStores.first as? SQLiteStore)
    }

    // MARK: Values

    @Test func everyAttributeTypeRoundTrips() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let big = Data((0..<10_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.123456)
        let uuid = UUID()
        let decimal = Decimal(string: "12345678901234567890.123456789")!
        let rows: [String: [String: Any]] = [
            "max": [
                "int16": Int16.max, "int32": Int32.max, "int64": Int64.max, "double": Double.greatestFiniteMagnitude,
                "float": Float(3.25), "string": "", "bool": true, "date": date, "binary": big, "uuid": uuid,
                "decimal": decimal, "uri": URL(string: "https://example.com/a?b=c#d")!,
            ],
            "min": [
                "int16": Int16.min, "int32": Int32.min, "int64": Int64.min, "double": -0.5, "float": Float(-1.5),
                "string": "한국어 😀 e\u{301}", "bool": false, "date": Date(timeIntervalSince1970: -1.75),
                "binary": Data(), "decimal": Decimal(-1) / Decimal(8),
            ],
            "nil": [:],
        ]
        for (tag, values) in rows {
            let item = insertObject("Item", values, into: context)
            if tag == "nil" { item.setValue("nil", forKey: "string") }
        }
        try context.save()
        try store.reopen()
        let fetched = try store.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        #expect(fetched.count == 3)
        let max = try #require(fetched.first { $0.value(forKey: "int16") as? Int16 == .max })
        #expect(max.value(forKey: "int32") as? Int32 == .max)
        #expect(max.value(forKey: "int64") as? Int64 == .max)
        #expect(max.value(forKey: "double") as? Double == .greatestFiniteMagnitude)
        #expect(max.value(forKey: "float") as? Float == 3.25)
        #expect(max.value(forKey: "string") as? String == "")
        #expect(max.value(forKey: "bool") as? Bool == true)
        #expect(max.value(forKey: "date") as? Date == date)
        #expect((max.value(forKey: "binary") as? Data) == big)
        #expect(max.value(forKey: "uuid") as? UUID == uuid)
        #expect(max.value(forKey: "decimal") as? Decimal == decimal)
        #expect(max.value(forKey: "uri") as? URL == URL(string: "https://example.com/a?b=c#d")!)
        let min = try #require(fetched.first { $0.value(forKey: "int16") as? Int16 == .min })
        #expect(min.value(forKey: "int32") as? Int32 == .min)
        #expect(min.value(forKey: "int64") as? Int64 == .min)
        #expect(min.value(forKey: "string") as? String == "한국어 😀 e\u{301}")
        #expect(min.value(forKey: "bool") as? Bool == false)
        #expect(min.value(forKey: "date") as? Date == Date(timeIntervalSince1970: -1.75))
        #expect(min.value(forKey: "binary") as? Data == Data())
        #expect(min.value(forKey: "decimal") as? Decimal == Decimal(string: "-0.125"))
        #expect(min.value(forKey: "uuid") == nil)
        let empty = try #require(fetched.first { $0.value(forKey: "string") as? String == "nil" })
        for key in ["int16", "int32", "int64", "decimal", "double", "float", "bool", "date", "binary", "uuid", "uri"] {
            #expect(empty.value(forKey: key) == nil, "\(key) should stay nil")
        }
    }

    // MARK: File layout

    @Test func fileLayoutMatchesCoreData() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sales = insertObject("Department", ["name": "Sales"], into: context)
        let ann = insertObject(
            "Employee", ["name": "Ann", "hiredAt": Date(timeIntervalSinceReferenceDate: 1.5), "department": sales],
            into: context)
        insertObject("Manager", ["name": "Dee", "department": sales], into: context)
        let project = insertObject("Project", ["title": "Rocket"], into: context)
        ann.setValue(Set([project]), forKey: "projects")
        let uuid = UUID()
        insertObject("Item", ["uuid": uuid], into: context)
        try context.save()

        let raw = try RawDatabase(try #require(store.url))
        let tables = try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map {
            $0[0] as? String
        }
        #expect(
            tables == [
                "ZDEPARTMENT", "ZEMPLOYEE", "ZITEM", "ZPROJECT", "Z_2PROJECTS", "Z_METADATA", "Z_MODELCACHE",
                "Z_PRIMARYKEY",
            ])
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'ZEMPLOYEE'") as? String
                == "CREATE TABLE ZEMPLOYEE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZACTIVE INTEGER, ZAGE INTEGER, ZDEPARTMENT INTEGER, ZLEVEL INTEGER, ZHIREDAT TIMESTAMP, ZNAME VARCHAR )"
        )
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'Z_2PROJECTS'") as? String
                == "CREATE TABLE Z_2PROJECTS ( Z_2MEMBERS INTEGER, Z_5PROJECTS INTEGER, PRIMARY KEY (Z_2MEMBERS, Z_5PROJECTS) )"
        )
        let itemColumns = try raw.rows("PRAGMA table_info(ZITEM)").map { "\($0[1]!) \($0[2]!)" }
        #expect(
            itemColumns == [
                "Z_PK INTEGER", "Z_ENT INTEGER", "Z_OPT INTEGER", "ZBOOL INTEGER", "ZINT16 INTEGER", "ZINT32 INTEGER",
                "ZINT64 INTEGER", "ZDATE TIMESTAMP", "ZDECIMAL DECIMAL", "ZDOUBLE FLOAT", "ZFLOAT FLOAT",
                "ZSTRING VARCHAR", "ZURI VARCHAR", "ZBINARY BLOB", "ZUUID BLOB",
            ])
        let indexes = Set(
            try raw.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'").compactMap
            { $0[0] as? String })
        #expect(indexes == ["ZEMPLOYEE_ZDEPARTMENT_INDEX", "ZEMPLOYEE_Z_ENT_INDEX", "Z_2PROJECTS_Z_5PROJECTS_INDEX"])
        #expect(try raw.value("PRAGMA page_size") as? Int64 == 4096)
        #expect(try raw.value("PRAGMA auto_vacuum") as? Int64 == 2)
        #expect(try raw.value("PRAGMA journal_mode") as? String == "wal")

        // Z_PRIMARYKEY: numbering, parents, and the shared counter of a hierarchy.
        let keys = try raw.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { row in
            row.map { "\($0!)" }.joined(separator: " ")
        }
        #expect(keys == ["1 Department 0 1", "2 Employee 0 2", "3 Manager 2 0", "4 Item 0 1", "5 Project 0 1"])
        #expect(
            try raw.rows("SELECT Z_ENT, ZNAME FROM ZEMPLOYEE ORDER BY ZNAME").map { "\($0[0]!) \($0[1]!)" } == [
                "2 Ann", "3 Dee",
            ])
        #expect(try raw.rows("SELECT Z_PK FROM ZEMPLOYEE ORDER BY Z_PK").map { "\($0[0]!)" } == ["1", "2"])
        #expect(try raw.value("SELECT ZDEPARTMENT FROM ZEMPLOYEE WHERE ZNAME = 'Ann'") as? Int64 == 1)
        #expect(
            try raw.rows("SELECT Z_2MEMBERS, Z_5PROJECTS FROM Z_2PROJECTS").map { "\($0[0]!)-\($0[1]!)" }
                == ["\(ann.objectID.primaryKey!)-\(project.objectID.primaryKey!)"])

        // Stored representations.
        #expect(try raw.value("SELECT ZHIREDAT FROM ZEMPLOYEE WHERE ZNAME = 'Ann'") as? Double == 1.5)
        #expect(try raw.value("SELECT typeof(ZHIREDAT) FROM ZEMPLOYEE WHERE ZNAME = 'Ann'") as? String == "real")
        let uuidBlob = try #require(try raw.value("SELECT ZUUID FROM ZITEM") as? Data)
        #expect(uuidBlob == withUnsafeBytes(of: uuid.uuid) { Data($0) })

        // Z_METADATA: one row, the UUID in Z_UUID and not in the plist.
        let metadataRows = try raw.rows("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA")
        #expect(metadataRows.count == 1)
        #expect(metadataRows[0][0] as? Int64 == 1)
        let storeUUID = try #require(metadataRows[0][1] as? String)
        #expect(storeUUID == store.coordinator.persistentStores.first?.identifier)
        #expect(storeUUID == storeUUID.uppercased())
        let plistData = try #require(metadataRows[0][2] as? Data)
        #expect(plistData.prefix(8) == Data("bplist00".utf8))
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: plistData, format: nil) as? [String: Any])
        #expect(plist[NSStoreUUIDKey] == nil)
        #expect(plist[NSStoreTypeKey] as? String == "SQLite")
        #expect(plist[NSPersistenceFrameworkVersionKey] as? Int == 1344)
        #expect(plist["NSStoreModelVersionHashesVersion"] as? Int == 3)
        #expect(plist["_NSAutoVacuumLevel"] as? String == "2")
        #expect(plist[NSStoreModelVersionIdentifiersKey] as? [String] == [""])
        let hashes = try #require(plist[NSStoreModelVersionHashesKey] as? [String: Data])
        #expect(Set(hashes.keys) == ["Department", "Employee", "Manager", "Project", "Item"])
        #expect(store.coordinator.persistentStores.first?.metadata[NSStoreUUIDKey] as? String == storeUUID)

        // Z_OPT: 1 on insert, 2 after one update.
        #expect(try raw.value("SELECT Z_OPT FROM ZDEPARTMENT") as? Int64 == 1)
        sales.setValue("Sales & Marketing", forKey: "name")
        try context.save()
        #expect(try raw.value("SELECT Z_OPT FROM ZDEPARTMENT") as? Int64 == 2)
    }

    @Test func recordsSQLWithPlaceholdersOnly() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Employee", ["name": "Ann", "age": 30], into: context)
        try context.save()
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = and(
            comparison("age", .notEqualTo, 31), comparison("name", .beginsWith, "a", options: .caseInsensitive))
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let found = try store.newContext().fetch(request)
        #expect(found.count == 1)
        #expect(
            statements == [
                "SELECT t0.Z_PK, t0.Z_ENT, t0.Z_OPT, t0.ZACTIVE, t0.ZAGE, t0.ZDEPARTMENT, t0.ZLEVEL, t0.ZHIREDAT, t0.ZNAME FROM ZEMPLOYEE t0 "
                    + "WHERE (t0.ZAGE != ? OR t0.ZAGE IS NULL) AND ocd_strop(8, 1, t0.ZNAME, ?) ORDER BY t0.ZNAME ASC, t0.Z_PK"
            ])
    }

    @Test func formatStringPredicatesRunInSQL() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sales = insertObject("Department", ["name": "Sales"], into: context)
        for (name, age) in [("Ann", 30), ("Bob", 40), ("Cid", 25)] {
            insertObject("Employee", ["name": name, "age": age, "department": sales], into: context)
        }
        try context.save()
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        func names(_ format: String, _ args: Any?...) throws -> [String] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: format, argumentArray: args.map { $0 as Any })
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try store.newContext().fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
        let cases: [(String, [Any?], [String], String)] = [
            ("age IN {25, 30}", [], ["Ann", "Cid"], "t0.ZAGE IN (?, ?)"),
            ("age BETWEEN {26, 40}", [], ["Ann", "Bob"], "t0.ZAGE >= ? AND t0.ZAGE <= ?"),
            ("name IN %@", [["Bob", "Cid"]], ["Bob", "Cid"], "t0.ZNAME IN (?, ?)"),
            ("department.name ==[c] %@", ["SALES"], ["Ann", "Bob", "Cid"], "ocd_strop(4, 1, t1.ZNAME, ?)"),
            ("ANY department.employees.age > 35", [], ["Ann", "Bob", "Cid"], ""),  // in memory: to-many after a to-one
        ]
        for (format, args, expected, fragment) in cases {
            statements.removeAll()
            #expect(try names(format, args.first ?? nil) == expected, "\(format)")
            #expect(
                fragment.isEmpty || statements.last?.contains(fragment) == true, "\(format): \(statements.last ?? "")")
        }
    }

    @Test func sortsWithAComparatorInMemory() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for name in ["Bea", "Al", "Christopher", "Dot"] { insertObject("Employee", ["name": name], into: context) }
        try context.save()
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [
            NSSortDescriptor(key: "name", ascending: false) { a, b in
                let (x, y) = ((a as? String)?.count ?? 0, (b as? String)?.count ?? 0)
                return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
            },
            NSSortDescriptor(key: "name", ascending: true),
        ]
        request.fetchLimit = 3
        let names = try store.newContext().fetch(request).compactMap { $0.value(forKey: "name") as? String }
        #expect(names == ["Christopher", "Bea", "Dot"])
        #expect(statements.last?.contains("ORDER BY t0.Z_PK") == true)
        #expect(statements.last?.contains("LIMIT") == false)
    }

    @Test func toManyKeyPathsBecomeCorrelatedSubqueries() throws {
        let store = try TestStore(NSSQLiteStoreType)
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        request.predicate = and(
            NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: "employees.department.name"),
                rightExpression: NSExpression(forConstantValue: "X"),
                modifier: .all, type: .equalTo),
            comparison("employees.@count", .lessThan, 3))
        _ = try store.newContext().fetch(request)
        let expected: String = [
            "SELECT t0.Z_PK, t0.Z_ENT, t0.Z_OPT, t0.ZBUDGET, t0.ZNAME FROM ZDEPARTMENT t0 WHERE",
            "NOT EXISTS (SELECT 1 FROM ZEMPLOYEE ts00 LEFT JOIN ZDEPARTMENT ts01 ON ts01.Z_PK = ts00.ZDEPARTMENT",
            "WHERE ts00.ZDEPARTMENT = t0.Z_PK AND ts01.ZNAME IS NOT NULL AND NOT ts01.ZNAME IS ?)",
            "AND (SELECT COUNT(*) FROM ZEMPLOYEE ts10 WHERE ts10.ZDEPARTMENT = t0.Z_PK) < ? ORDER BY t0.Z_PK",
        ].joined(separator: " ")
        #expect(statements.last == expected)
    }

    @Test func unicodeStringOperatorsFollowUnicodeNotASCII() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for name in ["Émile", "ÉCOLE", "straße", "İstanbul", "Zoë"] {
            insertObject("Department", ["name": name], into: context)
        }
        try context.save()
        func names(_ predicate: NSPredicate) throws -> Set<String> {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.predicate = predicate
            return Set(try store.newContext().fetch(request).compactMap { $0.value(forKey: "name") as? String })
        }
        #expect(try names(comparison("name", .equalTo, "émile", options: .caseInsensitive)) == ["Émile"])
        #expect(
            try names(comparison("name", .equalTo, "emile", options: [.caseInsensitive, .diacriticInsensitive])) == [
                "Émile"
            ])
        #expect(try names(comparison("name", .beginsWith, "éc", options: .caseInsensitive)) == ["ÉCOLE"])
        #expect(try names(comparison("name", .contains, "Ë", options: .caseInsensitive)) == ["Zoë"])
        // Full Unicode case folding (ß folds to "ss"), as NSString's case-insensitive search does.
        #expect(try names(comparison("name", .endsWith, "SSE", options: .caseInsensitive)) == ["straße"])
        #expect(
            try names(comparison("name", .like, "*o?", options: [.caseInsensitive, .diacriticInsensitive])) == ["Zoë"])
        #expect(try names(comparison("name", .matches, ".*[eë]")) == ["Émile", "Zoë", "straße"])
        #expect(try names(comparison("name", .matches, "[A-Z].*")) == ["Zoë"])
        // Equality is canonical equivalence, as Swift and NSString compare: a decomposed "é" matches.
        #expect(try names(comparison("name", .equalTo, "E\u{301}mile")) == ["Émile"])
        #expect(try names(comparison("name", .in, ["E\u{301}mile", "ZOË", "Zoe\u{308}"])) == ["Émile", "Zoë"])
        #expect(try names(comparison("name", .in, ["zoë", "école"], options: .caseInsensitive)) == ["Zoë", "ÉCOLE"])
        #expect(
            try names(comparison("name", .notEqualTo, "ZOË", options: .caseInsensitive)) == [
                "Émile", "ÉCOLE", "straße", "İstanbul",
            ])
    }

    @Test func orderedPolymorphicAndInverseLessRelationships() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.media())
        let context = store.newContext()
        let playlist = insertObject("Playlist", ["name": "Mix"], into: context)
        let songs = (1...3).map { insertObject("Song", ["title": "S\($0)"], into: context) }
        let remix = insertObject("Remix", ["title": "R", "artist": "DJ"], into: context)
        playlist.setValue(NSOrderedSet(array: [songs[2], remix, songs[0], songs[1]]), forKey: "songs")
        let tags = (1...2).map { insertObject("Tag", ["label": "T\($0)"], into: context) }
        let library = insertObject("Library", ["name": "Home", "favorite": remix, "tags": Set(tags)], into: context)
        try context.save()
        _ = library

        let raw = try RawDatabase(try #require(store.url))
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'ZLIBRARY'") as? String
                == "CREATE TABLE ZLIBRARY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFAVORITE INTEGER, Z3_FAVORITE INTEGER, ZNAME VARCHAR )"
        )
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'ZSONG'") as? String
                == "CREATE TABLE ZSONG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPLAYLIST INTEGER, Z_FOK_PLAYLIST INTEGER, ZTITLE VARCHAR, ZARTIST VARCHAR )"
        )
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'Z_1TAGS'") as? String
                == "CREATE TABLE Z_1TAGS ( Z_1TAGSINVERSE INTEGER, Z_5TAGS INTEGER, PRIMARY KEY (Z_1TAGSINVERSE, Z_5TAGS) )"
        )
        #expect(
            try raw.rows("SELECT ZTITLE FROM ZSONG ORDER BY Z_FOK_PLAYLIST").map { $0[0] as? String } == [
                "S3", "R", "S1", "S2",
            ])
        #expect(try raw.value("SELECT Z3_FAVORITE FROM ZLIBRARY") as? Int64 == 4)

        try store.reopen()
        let reader = store.newContext()
        let freshPlaylist = try #require(
            try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Playlist")).first)
        let ordered = try #require(freshPlaylist.value(forKey: "songs") as? NSOrderedSet)
        #expect(
            ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == [
                "S3", "R", "S1", "S2",
            ])
        let freshLibrary = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Library")).first)
        let favorite = try #require(freshLibrary.value(forKey: "favorite") as? NSManagedObject)
        #expect(favorite.entity.name == "Remix")
        #expect(favorite.value(forKey: "artist") as? String == "DJ")
        let freshTags = try #require(freshLibrary.value(forKey: "tags") as? Set<NSManagedObject>)
        #expect(Set(freshTags.compactMap { $0.value(forKey: "label") as? String }) == ["T1", "T2"])

        // Reordering saves the new positions.
        let reversed = NSOrderedSet(array: ordered.array.reversed())
        freshPlaylist.setValue(reversed, forKey: "songs")
        try reader.save()
        let third = store.newContext()
        let again = try #require(try third.fetch(NSFetchRequest<NSManagedObject>(entityName: "Playlist")).first)
        let titles = (again.value(forKey: "songs") as? NSOrderedSet)?.array.compactMap {
            ($0 as? NSManagedObject)?.value(forKey: "title") as? String
        }
        #expect(titles == ["S2", "S1", "R", "S3"])

        // Fetching the superentity returns subentity rows with their own values; dictionaries too.
        let allSongs = try third.fetch(NSFetchRequest<NSManagedObject>(entityName: "Song"))
        #expect(allSongs.count == 4)
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Song")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["title"]
        dictionaries.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        #expect(try third.fetch(dictionaries).compactMap { $0["title"] as? String } == ["R", "S1", "S2", "S3"])
        let limitedCount = NSFetchRequest<NSManagedObject>(entityName: "Song")
        limitedCount.fetchLimit = 3
        #expect(try third.count(for: limitedCount) == 3)
    }

    /// A predicate no store can compile: it only answers `evaluate(with:)`.
    private final class EvenAge: NSPredicate, @unchecked Sendable {
        init() { super.init(value: true) }
        override func evaluate(with object: Any?) -> Bool {
            guard let age = (object as? NSManagedObject)?.value(forKey: "age") as? Int32 else { return false }
            return age % 2 == 0
        }
    }

    @Test func predicatesSQLCannotHoldRunInMemory() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for age in 20...29 { insertObject("Employee", ["name": "E\(age)", "age": age], into: context) }
        try context.save()
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let reader = store.newContext()
        func names(_ predicate: NSPredicate, limit: Int = 0, offset: Int = 0) throws -> [String] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = predicate
            request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: false)]
            request.fetchLimit = limit
            request.fetchOffset = offset
            return try reader.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(try names(EvenAge()) == ["E28", "E26", "E24", "E22", "E20"])
        // The compilable conjunct narrows the SQL; limit and offset apply after the in-memory filter.
        #expect(try names(and(comparison("age", .lessThan, 27), EvenAge()), limit: 2, offset: 1) == ["E24", "E22"])
        #expect(statements.last?.contains("WHERE (t0.ZAGE IS NOT NULL AND t0.ZAGE < ?)") == true)
        #expect(statements.last?.contains("LIMIT") == false)
        // OR cannot be split: all of it runs in memory.
        #expect(
            try names(or(comparison("age", .equalTo, 21), EvenAge())) == ["E28", "E26", "E24", "E22", "E21", "E20"])
        let count = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        count.predicate = EvenAge()
        #expect(try reader.count(for: count) == 5)
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
        ids.resultType = .managedObjectIDResultType
        ids.predicate = EvenAge()
        #expect(try reader.fetch(ids).count == 5)
    }

    @Test func faultForDeletedRowThrows() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sales = insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        let id = sales.objectID
        context.delete(sales)
        try context.save()
        let error = try #require(throws: OpenCoreDataError.self) { try store.newContext().existingObject(with: id) }
        #expect(error.code == .persistentStoreOperation)
    }

    // MARK: Transactions

    @Test func failedSaveLeavesNothingOnDiskAndKeepsChanges() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sqlite = try sqliteStore(store.coordinator)
        sqlite.testHooks.failAfterRowWrites = 2
        for i in 0..<5 { insertObject("Department", ["name": "D\(i)"], into: context) }
        #expect(throws: OpenCoreDataError.self) { try context.save() }
        let raw = try RawDatabase(try #require(store.url))
        #expect(try raw.value("SELECT COUNT(*) FROM ZDEPARTMENT") as? Int64 == 0)
        #expect(context.insertedObjects.count == 5)
        #expect(context.hasChanges)
        sqlite.testHooks.failAfterRowWrites = nil
        try context.save()
        #expect(try raw.value("SELECT COUNT(*) FROM ZDEPARTMENT") as? Int64 == 5)
        #expect(!context.hasChanges)
    }

    @Test func uniquenessConstraintViolationIsAConstraintErrorWithoutValues() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.coreDataPlusSampleModelV1())
        let context = store.newContext()
        for _ in 0..<2 { insertObject("Car", ["numberPlate": "SECRET-PLATE"], into: context) }
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(error.code == .managedObjectConstraintMerge)
        #expect(error.sqliteCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(error.sql?.hasPrefix("INSERT INTO ZCAR (Z_PK, Z_ENT, Z_OPT") == true)
        #expect(error.entityName == "Car")
        #expect(!error.description.contains("SECRET-PLATE"))
        #expect(try RawDatabase(try #require(store.url)).value("SELECT COUNT(*) FROM ZCAR") as? Int64 == 0)
    }

    @Test func optimisticLockingConflictBetweenCoordinators() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let seed = store.newContext()
        insertObject("Department", ["name": "Sales"], into: seed)
        try seed.save()
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let first = store.newContext()
        let second = StoreHarness.context(other)
        let a = try #require(try first.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        let b = try #require(try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        a.setValue("First", forKey: "name")
        try first.save()
        b.setValue("Second", forKey: "name")
        let error = try #require(throws: OpenCoreDataError.self) { try second.save() }
        #expect(error.code == .persistentStoreSaveConflicts)
        #expect((error as NSError).code == NSPersistentStoreSaveConflictsError)
        let check = try store.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))
        #expect(check.first?.value(forKey: "name") as? String == "First")
    }

    @Test func primaryKeysComeFromZMaxAcrossCoordinators() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let a = store.newContext()
        let b = StoreHarness.context(other)
        let x = insertObject("Employee", ["name": "X"], into: a)
        let y = insertObject("Manager", ["name": "Y"], into: b)
        try a.obtainPermanentIDs(for: [x])
        try b.obtainPermanentIDs(for: [y])
        try a.save()
        try b.save()
        #expect(x.objectID.uriRepresentation().lastPathComponent == "p1")
        #expect(y.objectID.uriRepresentation().lastPathComponent == "p2")
        #expect(
            x.objectID.uriRepresentation().absoluteString.hasPrefix(
                "x-coredata://\(store.coordinator.persistentStores[0].identifier!)/Employee/"))
    }

    @Test func twoCoordinatorsWriteConcurrently() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let coordinators = [store.coordinator, other]
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let context = StoreHarness.context(coordinators[worker])
            for batch in 0..<5 {
                for i in 0..<20 { insertObject("Employee", ["name": "w\(worker)-\(batch)-\(i)"], into: context) }
                do { try context.save() } catch { failures.withLock { $0.append("\(error)") } }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let raw = try RawDatabase(try #require(store.url))
        #expect(try raw.value("SELECT COUNT(*) FROM ZEMPLOYEE") as? Int64 == 200)
        #expect(try raw.value("SELECT COUNT(DISTINCT Z_PK) FROM ZEMPLOYEE") as? Int64 == 200)
        #expect(try raw.value("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Employee'") as? Int64 == 200)
    }

    @Test func fileNamesWithURISpecialCharacters() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("My Store #1?%.sqlite")
        let writer = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSSQLiteStoreType, url: url)
        let context = StoreHarness.context(writer)
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        StoreHarness.close(writer)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["My Store #1?%.sqlite"])
        let reader = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(reader) }
        #expect(try StoreHarness.context(reader).count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 1)
    }

    // MARK: Files that are not stores

    private func expectRejected(_ bytes: Data, code: OpenCoreDataError.Code = .persistentStoreOpen) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Store.sqlite")
        try bytes.write(to: url)
        let error = try #require(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(model: TestModels.company(), storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == code)
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Store.sqlite"])
    }

    @Test func rejectsFilesThatAreNotStoresWithoutTouchingThem() throws {
        try expectRejected(
            Data("this is not a database, just some text that is long enough to look like a header....".utf8))
        try expectRejected(Data())

        // A SQLite database that is not a Core Data store.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let plain = directory.file("plain.sqlite")
        try RawDatabase(plain, readOnly: false).execute("CREATE TABLE foo (bar INTEGER); INSERT INTO foo VALUES (1)")
        try expectRejected(try Data(contentsOf: plain))

        // Truncated stores: past the header, and inside it.
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for i in 0..<200 {
            insertObject("Department", ["name": String(repeating: "x", count: 100) + "\(i)"], into: context)
        }
        try context.save()
        StoreHarness.close(store.coordinator)
        let full = try Data(contentsOf: try #require(store.url))
        #expect(full.count > 8192)
        try expectRejected(full.prefix(4096))
        try expectRejected(full.prefix(50))
    }

    // MARK: Compatibility

    private func modelWithoutItem() -> NSManagedObjectModel {
        let model = TestModels.company()
        model.entities = model.entities.filter { $0.name != "Item" }
        return model
    }

    @Test func incompatibleModelIsRejectedWithoutTouchingTheFile() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        StoreHarness.close(store.coordinator)
        let url = try #require(store.url)
        let before = try Data(contentsOf: url)
        let error = try #require(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(model: modelWithoutItem(), storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == .persistentStoreIncompatibleVersionHash)
        #expect((error as NSError).code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(try Data(contentsOf: url) == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: url.path + "-shm"))
        // The right model still opens it.
        try store.reopen()
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 1)
    }

    @Test func changedAttributeTypeIsIncompatible() throws {
        let store = try TestStore(NSSQLiteStoreType)
        StoreHarness.close(store.coordinator)
        let changed = TestModels.company()
        let department = try #require(changed.entitiesByName["Department"])
        (department.propertiesByName["budget"] as? NSAttributeDescription)?.attributeType = .floatAttributeType
        let url = try #require(store.url)
        let before = try Data(contentsOf: url)
        let error = try #require(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(model: changed, storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == .persistentStoreIncompatibleVersionHash)
        #expect(try Data(contentsOf: url) == before)
    }

    // MARK: Metadata and files

    @Test func metadataReadsAndWritesThroughTheCoordinator() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let url = try #require(store.url)
        let persistent = try #require(store.coordinator.persistentStores.first)
        var metadata = store.coordinator.metadata(for: persistent)
        metadata["AppVersion"] = "7"
        store.coordinator.setMetadata(metadata, for: persistent)
        let context = store.newContext()
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        StoreHarness.close(store.coordinator)
        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(read["AppVersion"] as? String == "7")
        #expect(read[NSStoreUUIDKey] as? String == persistent.identifier)
        #expect(read[NSStoreTypeKey] as? String == NSSQLiteStoreType)

        var updated = read
        updated["AppVersion"] = "8"
        try NSPersistentStoreCoordinator.setMetadata(updated, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        #expect(
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)[
                "AppVersion"] as? String == "8")
        try store.reopen()
        #expect(store.coordinator.persistentStores.first?.identifier == persistent.identifier)
    }

    @Test func destroyRemovesTheFileAndItsCompanions() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        let url = try #require(store.url)
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
        try store.coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).isEmpty)
    }

    @Test func pragmasAndReadOnlyOptions() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Store.sqlite")
        let writer = try StoreHarness.coordinator(
            model: TestModels.company(), storeType: NSSQLiteStoreType, url: url,
            options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"], NSPersistentStoreTimeoutOption: 5])
        let context = StoreHarness.context(writer)
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        #expect(try RawDatabase(url).value("PRAGMA journal_mode") as? String == "delete")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        StoreHarness.close(writer)

        let reader = try StoreHarness.coordinator(
            model: TestModels.company(), storeType: NSSQLiteStoreType, url: url,
            options: [NSReadOnlyPersistentStoreOption: true])
        defer { StoreHarness.close(reader) }
        let readContext = StoreHarness.context(reader)
        let sales = try #require(try readContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        sales.setValue("Renamed", forKey: "name")
        #expect(throws: OpenCoreDataError.self) { try readContext.save() }
        insertObject("Department", ["name": "New"], into: readContext)
        let insertError = try #require(throws: OpenCoreDataError.self) { try readContext.save() }
        #expect(insertError.code == .persistentStoreSave)

        #expect(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(
                model: TestModels.company(), storeType: NSSQLiteStoreType, url: url,
                options: [NSSQLitePragmasOption: ["journal_mode; DROP TABLE ZDEPARTMENT": "WAL"]])
        }
    }

    // MARK: Apple-written stores

    private func fixture(_ path: String) throws -> URL {
        let base = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures")
        return base.appendingPathComponent(path)
    }

    @Test func generatedSchemaMatchesAppleForSampleModel3() throws {
        try expectSameSchema(
            TestModels.sampleModel3V1(),
            "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite")
    }

    /// Our CREATE statements for `model` equal the ones Apple wrote in `fixture` (tables and indexes).
    private func expectSameSchema(_ model: NSManagedObjectModel, _ fixturePath: String) throws {
        let raw = try RawDatabase(try fixture(fixturePath), immutable: true)
        let apple = Set(
            try raw.rows("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").compactMap { $0[0] as? String })
        let ours = Set(SQLiteSchema(model: model).createStatements)
        #expect(apple.count >= 4 && apple.count == ours.count)
        #expect(ours.subtracting(apple).sorted() == [])
        #expect(apple.subtracting(ours).sorted() == [])
        let schema = SQLiteSchema(model: model)
        let appleKeys = try raw.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
            "\($0[0]!) \($0[1]!) \($0[2]!)"
        }
        #expect(schema.primaryKeyRows.map { "\($0.0) \($0.1) \($0.2)" } == appleKeys)
    }

    @Test func generatedSchemaMatchesAppleForInheritanceAndConstraints() throws {
        try expectSameSchema(
            TestModels.coreDataPlusSampleModelV1(),
            "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
    }

    @Test func generatedSchemaMatchesAppleForOrderedManyToMany() throws {
        try expectSameSchema(
            TestModels.contentfulTest(),
            "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/BundledPreseededDatabaseTests/Test.sqlite"
        )
    }

    @Test func readsMetadataOfAppleWrittenStoreWithoutTouchingIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel3_V1.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"),
            to: url)
        let before = try Data(contentsOf: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata[NSStoreUUIDKey] as? String == "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09")
        #expect(metadata[NSStoreTypeKey] as? String == "SQLite")
        #expect(metadata[NSPersistenceFrameworkVersionKey] as? Int == 1344)
        #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["1"])
        #expect(
            (metadata[NSStoreModelVersionHashesKey] as? [String: Data])?["User"]?.base64EncodedString()
                == "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["SampleModel3_V1.sqlite"])
    }

    @Test func newStoreCarriesTheModelMetadataAppleWrote() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Ours.sqlite")
        let coordinator = try StoreHarness.coordinator(
            model: TestModels.sampleModel3V1(), storeType: NSSQLiteStoreType, url: url)
        StoreHarness.close(coordinator)
        let ours = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let apple = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType,
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"))
        for key in [
            NSStoreModelVersionHashesKey, "NSStoreModelVersionHashesDigest", NSStoreModelVersionChecksumKey,
            "NSStoreModelVersionHashesVersion", NSStoreModelVersionIdentifiersKey, NSStoreTypeKey,
            NSPersistenceFrameworkVersionKey,
            "_NSAutoVacuumLevel",
        ] {
            #expect(ours[key].map { "\($0)" } == apple[key].map { "\($0)" }, "\(key)")
        }
        #expect(Set(ours.keys) == Set(apple.keys))
    }

    /// Decodes Apple-written rows (UUID blobs, 2001-epoch dates, three entities in one table, to-one
    /// and to-many through the foreign key), opened through a coordinator with the model file Apple's
    /// Core Data used, read by our model loader.
    @Test func decodesAppleWrittenRows() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel_V1.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"), to: url
        )
        let model = try #require(
            NSManagedObjectModel(
                contentsOf: try fixture(
                    "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"
                )))
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let store = try sqliteStore(coordinator)
        let context = StoreHarness.context(coordinator)
        func fetch(_ name: String, subentities: Bool = true) throws -> [NSManagedObject] {
            let request = NSFetchRequest<NSManagedObject>(entityName: name)
            request.includesSubentities = subentities
            return try context.fetch(request)
        }
        let cars = try fetch("Car")
        #expect(cars.count == 125)
        #expect(try fetch("Car", subentities: false).count == 115)
        #expect(try fetch("SportCar").count == 10)
        let limited = try fetch("ExpensiveSportCar")
        #expect(limited.count == 5)
        #expect(limited.allSatisfy { $0.value(forKey: "isLimitedEdition") is Bool })
        #expect(cars.filter { $0.value(forKey: "owner") != nil }.count == 118)
        let people = try fetch("Person")
        #expect(people.count == 20)
        let victoria = try #require(people.first { $0.value(forKey: "firstName") as? String == "Victoria" })
        #expect(victoria.value(forKey: "lastName") as? String == "Coster")
        #expect(victoria.value(forKey: "id") as? UUID == UUID(uuidString: "FEFE4176-912D-429F-9C83-662FFF641115"))
        #expect((victoria.value(forKey: "updatedAt") as? Date)?.timeIntervalSinceReferenceDate == 639503569.638733)
        let owned = people.reduce(0) { $0 + ((($1.value(forKey: "cars") as? Set<NSManagedObject>)?.count) ?? 0) }
        #expect(owned == 118)
        #expect(store.identifier == "753753D3-A961-4901-AB05-8CC48B1D3853")
    }

    @Test func readsAppleWrittenSampleModel3() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel3_V1.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"),
            to: url)
        let coordinator = try StoreHarness.coordinator(
            model: TestModels.sampleModel3V1(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let users = try StoreHarness.context(coordinator).fetch(NSFetchRequest<NSManagedObject>(entityName: "User"))
        #expect(users.count == 12)
        #expect(Set(users.compactMap { $0.value(forKey: "name") as? String }) == ["User_0", "User_1", "User_2"])
        #expect(coordinator.persistentStores.first?.identifier == "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09")
    }
}
