import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The SQL the store generates for fetches, and what it leaves to memory.
@Suite("SQLite store queries")
struct SQLiteStoreQueryTests {
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
                // The table's last column first: SQLite then reads each row's header in one go.
                "SELECT t0.Z_PK, t0.Z_ENT, t0.ZNAME, t0.Z_OPT, t0.ZACTIVE, t0.ZAGE, t0.ZDEPARTMENT, t0.ZLEVEL, t0.ZHIREDAT FROM ZEMPLOYEE t0 "
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

    /// A limit is written into the SQL (`LIMIT 3`), as Apple's store writes it, with `OFFSET ?` only
    /// when the offset is not 0; an offset alone has the limit -1 (none). Each gives the rows Apple's
    /// documentation describes. A lookup through a format template, planned once, keeps each limit's
    /// SQL apart: the same format with limits 1, 2, 1, 3 and 2 returns as many rows.
    @Test func limitsAndOffsetsRunInSQL() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for age in 20..<30 { insertObject("Employee", ["name": "E\(age)", "age": age], into: context) }
        try context.save()
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        for (limit, offset, ages, tail) in [
            (3, 0, [20, 21, 22], " LIMIT 3"), (3, 8, [28, 29], " LIMIT 3 OFFSET ?"),
            (0, 7, [27, 28, 29], " LIMIT -1 OFFSET ?"), (1, 0, [20], " LIMIT 1"), (0, 0, Array(20..<30), "t0.Z_PK"),
            (2, 0, [20, 21], " LIMIT 2"),
        ] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
            request.fetchLimit = limit
            request.fetchOffset = offset
            let found = try store.newContext().fetch(request).compactMap {
                $0.value(forKey: "age").flatMap(ValueConversion.int64)
            }
            #expect(found == ages.map(Int64.init), "limit \(limit), offset \(offset)")
            #expect(statements.last?.hasSuffix(tail) == true, "\(statements.last ?? "")")
        }
        let reader = store.newContext()
        for (round, limit) in [1, 2, 1, 3, 2].enumerated() {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "%K >= %lld", "age", Int64(24 + round % 2))
            request.fetchLimit = limit
            #expect(try reader.fetch(request).count == limit, "round \(round), limit \(limit)")
            #expect(statements.last?.hasSuffix(" LIMIT \(limit)") == true, "\(statements.last ?? "")")
        }
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
            "SELECT t0.Z_PK, 1, t0.ZNAME, t0.Z_OPT, t0.ZBUDGET FROM ZDEPARTMENT t0 WHERE",
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

    /// A row's `Z_OPT` is read from where the select list puts it: after the table's last column
    /// (selected first, so SQLite reads the header in one loop), or third for a table with no
    /// columns. Versions written behind the store's back must come back through a fetch and through
    /// a fault's row (`newValuesForObject`), for both kinds of table.
    @Test func versionsAreReadFromTheirPlaceInEveryKindOfTable() throws {
        let tag = NSEntityDescription(name: "Tag", properties: [])
        let note = NSEntityDescription(
            name: "Note",
            properties: [
                NSAttributeDescription(name: "text", type: .stringAttributeType),
                NSAttributeDescription(name: "rank", type: .integer64AttributeType),
            ])
        let model = NSManagedObjectModel()
        model.entities = [tag, note]
        let store = try TestStore(NSSQLiteStoreType, model: model)
        let writer = store.newContext()
        insertObject("Tag", [:], into: writer)
        insertObject("Note", ["text": "hello", "rank": 7], into: writer)
        try writer.save()
        let raw = try RawDatabase(try #require(store.url), readOnly: false)
        try raw.execute("UPDATE ZTAG SET Z_OPT = 5")
        try raw.execute("UPDATE ZNOTE SET Z_OPT = 9")

        let reader = store.newContext()
        for (entity, version) in [("Tag", 5), ("Note", 9)] {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.returnsObjectsAsFaults = false
            let object = try #require(try reader.fetch(request).first)
            #expect(object._version == Int64(version), "\(entity), fetched")
            let node = try sqliteStore(store.coordinator).newValuesForObject(with: object.objectID, with: reader)
            #expect(node.version == UInt64(version), "\(entity), a fault's row")
            if entity == "Note" {
                #expect(object.value(forKey: "text") as? String == "hello")
                #expect(object.value(forKey: "rank") as? Int64 == 7)
            }
        }
    }
}
