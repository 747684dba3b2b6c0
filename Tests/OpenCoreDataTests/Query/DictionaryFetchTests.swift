import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Dictionary results: expression descriptions, aggregates, grouping, HAVING, DISTINCT, and the
/// untyped and NSDictionary request types. Every test runs the same assertions on both stores.
@Suite("Dictionary fetches")
struct DictionaryFetchTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    private func store(_ type: String) throws -> TestStore {
        let store = try TestStore(type, model: PredicateDifferentialTests.model())
        try PredicateDifferentialTests.seed(store.newContext())
        return store
    }

    private func expression(_ name: String, _ expression: NSExpression, _ type: NSAttributeType) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = expression
        description.expressionResultType = type
        return description
    }

    private func rows(_ store: TestStore, _ configure: (NSFetchRequest<NSDictionary>) -> Void) throws -> [[String: Any]] {
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        configure(request)
        return try store.newContext().fetch(request).map { $0 as! [String: Any] }
    }

    private func number(_ row: [String: Any]?, _ key: String) -> Double? { (row?[key] as? NSNumber)?.doubleValue }

    /// Ages (non-nil): 30, -5, 0, 41, 30, 7, 100, 12, -100.
    @Test(arguments: storeTypes)
    func aggregatesOverAllObjects(storeType: String) throws {
        let store = try store(storeType)
        let result = try rows(store) { request in
            request.propertiesToFetch = [
                expression("total", NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "age")]), .integer64AttributeType),
                expression("n", NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "age")]), .integer64AttributeType),
                expression("low", NSExpression(forFunction: "min:", arguments: [NSExpression(forKeyPath: "age")]), .integer64AttributeType),
                expression("high", NSExpression(forKeyPath: "@max.age"), .integer64AttributeType),
                expression("mean", NSExpression(forKeyPath: "@avg.age"), .doubleAttributeType),
                expression("scores", NSExpression(format: "sum:(score)"), .doubleAttributeType),
            ]
        }
        #expect(result.count == 1)
        let row = result.first
        #expect(row?["total"] as? Int64 == 115)
        #expect(row?["n"] as? Int64 == 9)
        #expect(row?["low"] as? Int64 == -100)
        #expect(row?["high"] as? Int64 == 100)
        #expect(abs((row?["mean"] as? Double ?? 0) - 115.0 / 9) < 1e-9)
        #expect(number(row, "scores") == 1.5 - 2.25 + 0 + 99.75 + 30 - 0.5 + 3 + 12 + 1e9)
    }

    /// flag nil: keys 3, 7, 9 (ages 0, 7, nil); NO: 2, 5, 10 (-5, nil, 12); YES: 1, 4, 6, 8, 11.
    @Test(arguments: storeTypes)
    func groupByHavingLimitAndPredicate(storeType: String) throws {
        let store = try store(storeType)
        func grouped(_ configure: (NSFetchRequest<NSDictionary>) -> Void = { _ in }) throws -> [[String: Any]] {
            try rows(store) { request in
                request.propertiesToFetch = [
                    "flag",
                    expression("n", NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "key")]), .integer64AttributeType),
                    expression("ages", NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "age")]), .integer64AttributeType),
                ]
                request.propertiesToGroupBy = ["flag"]
                request.sortDescriptors = [NSSortDescriptor(key: "flag", ascending: true)]
                configure(request)
            }
        }
        let all = try grouped()
        #expect(all.map { $0["flag"] as? Bool } == [nil, false, true])
        #expect(all.map { $0["n"] as? Int64 } == [3, 3, 5])
        #expect(all.map { $0["ages"] as? Int64 } == [7, 7, 101])
        #expect(try grouped { $0.havingPredicate = NSPredicate(format: "n > 3") }.map { $0["flag"] as? Bool } == [true])
        #expect(try grouped { $0.fetchLimit = 2 }.map { $0["n"] as? Int64 } == [3, 3])
        #expect(try grouped { $0.fetchOffset = 1 }.map { $0["flag"] as? Bool } == [false, true])
        let adults = try grouped { $0.predicate = NSPredicate(format: "age >= 18") }
        #expect(adults.map { $0["flag"] as? Bool } == [true])
        #expect(adults.first?["ages"] as? Int64 == 201)
        // Grouping by a key path through a to-one relationship.
        let byTeam = try rows(store) { request in
            request.propertiesToFetch = [
                expression("team", NSExpression(forKeyPath: "team.name"), .stringAttributeType),
                expression("n", NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "key")]), .integer64AttributeType),
            ]
            request.propertiesToGroupBy = ["team.name"]
            request.sortDescriptors = [NSSortDescriptor(key: "team.name", ascending: true)]
        }
        #expect(byTeam.map { $0["team"] as? String } == [nil, "Red", "red"])
        #expect(byTeam.map { $0["n"] as? Int64 } == [5, 3, 3])
    }

    /// The SQLite store runs grouping in SQL when every piece compiles and in memory otherwise; both
    /// give the in-memory store's rows.
    @Test func sqliteGroupsInSQLWhenItCanWithTheSameRows() throws {
        let sqlite = try store(NSSQLiteStoreType)
        let memory = try store(NSInMemoryStoreType)
        var statements: [String] = []
        try sqliteStore(sqlite.coordinator).connection?.statementObserver = { statements.append($0) }
        let count = expression(
            "n", NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "key")]), .integer64AttributeType)
        let oldest = expression("oldest", NSExpression(forKeyPath: "@max.born"), .dateAttributeType)
        let mean = expression("mean", NSExpression(forKeyPath: "@avg.score"), .doubleAttributeType)
        // Without sort descriptors the order of rows is unspecified (primary keys differ between stores).
        let byFlag = NSSortDescriptor(key: "flag", ascending: true)
        let configurations: [(String, Bool, (NSFetchRequest<NSDictionary>) -> Void)] = [
            ("group by flag", true, {
                $0.propertiesToFetch = ["flag", count, oldest, mean]
                $0.propertiesToGroupBy = ["flag"]
                $0.sortDescriptors = [byFlag]
            }),
            ("group by team.name, sorted descending", true, {
                $0.propertiesToFetch = [count, mean]
                $0.propertiesToGroupBy = ["team.name"]
                $0.sortDescriptors = [NSSortDescriptor(key: "team.name", ascending: false)]
            }),
            ("aggregate with a predicate", true, {
                $0.propertiesToFetch = [count, oldest, mean]
                $0.predicate = NSPredicate(format: "name BEGINSWITH[cd] 'e' OR age < 0")
            }),
            ("aggregate of nothing", true, {
                $0.propertiesToFetch = [count, oldest, mean]
                $0.predicate = NSPredicate(format: "FALSEPREDICATE")
            }),
            ("distinct flags", true, {
                $0.propertiesToFetch = ["flag"]
                $0.returnsDistinctResults = true
                $0.sortDescriptors = [byFlag]
            }),
            ("distinct with limit", true, {
                $0.propertiesToFetch = ["flag", "age"]
                $0.returnsDistinctResults = true
                $0.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true), byFlag]
                $0.fetchLimit = 4
            }),
            ("having runs in memory", false, {
                $0.propertiesToFetch = ["flag", count]
                $0.propertiesToGroupBy = ["flag"]
                $0.havingPredicate = NSPredicate(format: "n >= 3")
                $0.sortDescriptors = [byFlag]
            }),
            ("sort outside the groups runs in memory", false, {
                $0.propertiesToFetch = ["flag", count]
                $0.propertiesToGroupBy = ["flag"]
                $0.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "key", ascending: true)]
            }),
            ("a predicate SQL cannot run", false, {
                $0.propertiesToFetch = ["flag", count]
                $0.propertiesToGroupBy = ["flag"]
                $0.predicate = NSPredicate(format: "age > score")
                $0.sortDescriptors = [byFlag]
            }),
        ]
        for (label, expectSQL, configure) in configurations {
            statements.removeAll()
            let fromSQLite = try rows(sqlite, configure).map { NSDictionary(dictionary: $0) }
            let fromMemory = try rows(memory, configure).map { NSDictionary(dictionary: $0) }
            #expect(fromSQLite == fromMemory, "\(label): \(fromSQLite) vs \(fromMemory)")
            #expect(!fromSQLite.isEmpty, "\(label)")
            let grouped = statements.contains { $0.contains("GROUP BY") || $0.contains("COUNT(") }
            #expect(grouped == expectSQL, "\(label): \(statements)")
        }
    }

    @Test(arguments: storeTypes)
    func distinctResults(storeType: String) throws {
        let store = try store(storeType)
        let flags = try rows(store) { request in
            request.propertiesToFetch = ["flag"]
            request.returnsDistinctResults = true
            request.sortDescriptors = [NSSortDescriptor(key: "key", ascending: true)]
        }
        #expect(flags.map { $0["flag"] as? Bool } == [true, false, nil])
        let ages = try rows(store) { request in
            request.propertiesToFetch = ["age"]
            request.returnsDistinctResults = true
            request.predicate = NSPredicate(format: "age != nil")
            request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: false)]
        }
        #expect(ages.map { $0["age"] as? Int64 } == [100, 41, 30, 12, 7, 0, -5, -100])
    }

    @Test(arguments: storeTypes)
    func untypedAndDictionaryRequests(storeType: String) throws {
        let store = try store(storeType)
        let context = store.newContext()
        // Apple spells it `NSFetchRequest<NSFetchRequestResult>`, the same type; this package builds with
        // the ExistentialAny upcoming feature, under which the bare protocol name warns, so tests write `any`.
        let untyped = NSFetchRequest<any NSFetchRequestResult>(entityName: "Person")
        untyped.predicate = NSPredicate(format: "age > 30")
        let objects = try context.fetch(untyped)
        #expect(objects.count == 2 && objects.allSatisfy { $0 is NSManagedObject })
        untyped.resultType = .managedObjectIDResultType
        #expect(try context.fetch(untyped).allSatisfy { $0 is NSManagedObjectID })
        untyped.resultType = .countResultType
        #expect(try context.count(for: untyped) == 2)

        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Person")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name", "age"]
        dictionaries.predicate = NSPredicate(format: "age > 30")
        dictionaries.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        let rows = try context.fetch(dictionaries)
        #expect(rows.map { $0["name"] as? String } == ["Zoë", nil])
        #expect(rows.map { ($0["age"] as? NSNumber)?.intValue } == [41, 100])
    }
}
