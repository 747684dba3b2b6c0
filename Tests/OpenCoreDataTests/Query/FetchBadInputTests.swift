import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Fetches with input that does not fit the model: wrong constant types, unknown keys, and text
/// meant to break out of SQL. Every case runs on both stores.
@Suite("Fetch bad input")
struct FetchBadInputTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    private func store(_ type: String) throws -> TestStore {
        let store = try TestStore(type, model: PredicateDifferentialTests.model())
        try PredicateDifferentialTests.seed(store.newContext())
        return store
    }

    private func keys(_ store: TestStore, _ predicate: NSPredicate, sort: [NSSortDescriptor]? = nil) throws -> Set<Int> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = predicate
        request.sortDescriptors = sort
        return PredicateDifferentialTests.keys(try store.newContext().fetch(request))
    }

    /// A string compared with an Integer attribute. Apple's in-memory evaluation uses `isEqual:`,
    /// under which an `NSString` never equals an `NSNumber`; Apple's SQLite store would bind the text
    /// and let column affinity convert `'30'` to 30. We keep the in-memory meaning on every store
    /// (the SQL compiler leaves such comparisons to memory): the string matches no number, `!=`
    /// matches everything, ordering comparisons match nothing. No error is thrown.
    @Test(arguments: storeTypes)
    func aStringConstantNeverEqualsANumber(storeType: String) throws {
        let store = try store(storeType)
        let all = Set(PredicateDifferentialTests.rows.map(\.0))
        #expect(try keys(store, NSPredicate(format: "age == %@", "notANumber")).isEmpty)
        #expect(try keys(store, NSPredicate(format: "age == %@", "30")).isEmpty)
        #expect(try keys(store, NSPredicate(format: "age != %@", "30")) == all)
        #expect(try keys(store, NSPredicate(format: "age > %@", "1")).isEmpty)
        #expect(try keys(store, NSPredicate(format: "age == %@", 30)) == [1, 6])
    }

    @Test(arguments: storeTypes)
    func unknownKeysThrowNamingEntityAndKey(storeType: String) throws {
        let store = try store(storeType)
        let cases: [(NSPredicate?, [NSSortDescriptor]?, String, String)] = [
            (NSPredicate(format: "nickname == 'x'"), nil, "Person", "nickname"),
            (NSPredicate(format: "team.colour == 'red'"), nil, "Team", "colour"),
            (NSPredicate(format: "ANY pets.weight > 3"), nil, "Pet", "weight"),
            (nil, [NSSortDescriptor(key: "height", ascending: true)], "Person", "height"),
            (nil, [NSSortDescriptor(key: "team.size", ascending: true)], "Team", "size"),
        ]
        for (predicate, sort, entity, key) in cases {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = predicate
            request.sortDescriptors = sort
            let error = try #require(throws: OpenCoreDataError.self) { try store.newContext().fetch(request) }
            #expect(error.code == .unknownKey && error.entityName == entity && error.key == key, "\(error)")
            #expect(error.message.contains(key) && error.message.contains(entity))
        }
    }

    @Test(arguments: storeTypes)
    func unknownKeysInPropertiesToFetchAndGroupByThrow(storeType: String) throws {
        let store = try store(storeType)
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "weight")])
        let cases: [([Any], [Any]?, String, String)] = [
            (["name", "nickname"], nil, "Person", "nickname"),
            (["team.colour"], nil, "Team", "colour"),
            ([total], nil, "Person", "weight"),
            (["name"], ["height"], "Person", "height"),
        ]
        for (properties, groupBy, entity, key) in cases {
            let request = NSFetchRequest<NSDictionary>(entityName: "Person")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = properties
            request.propertiesToGroupBy = groupBy
            let error = try #require(throws: OpenCoreDataError.self) { try store.newContext().fetch(request) }
            #expect(error.code == .unknownKey && error.entityName == entity && error.key == key, "\(error)")
        }
    }

    /// Quotes and SQL in keys and values never reach SQL as text: keys are checked against the model
    /// first, values are bound parameters.
    @Test(arguments: storeTypes)
    func quotesAndSQLInKeysAndValuesStayData(storeType: String) throws {
        let store = try store(storeType)
        var statements: [String] = []
        if storeType == NSSQLiteStoreType {
            try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        }
        let injection = "'; DROP TABLE ZPERSON; --"
        #expect(try keys(store, NSPredicate(format: "name == %@", "Ann O'Neil")) == [9])
        #expect(try keys(store, NSPredicate(format: "name == %@", injection)).isEmpty)
        #expect(try keys(store, NSPredicate(format: "name BEGINSWITH %@ OR name == %@", "Ann O'", injection)) == [9])
        #expect(try keys(store, NSPredicate(format: "name IN %@", [injection, "zoe\" OR 1=1 --"])).isEmpty)
        #expect(try keys(store, NSPredicate(format: "ANY pets.name == %@", injection)).isEmpty)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "%K == 1", "name' OR 1=1; DROP TABLE ZPERSON; --")
        let error = try #require(throws: OpenCoreDataError.self) { try store.newContext().fetch(request) }
        #expect(error.code == .unknownKey)
        // Everything is still there.
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 11)
        if storeType == NSSQLiteStoreType {
            #expect(!statements.isEmpty)
            for sql in statements {
                #expect(!sql.contains("DROP") && !sql.contains("O'") && !sql.contains("zoe"), "\(sql)")
            }
            let raw = try RawDatabase(try #require(store.url))
            #expect(try raw.value("SELECT COUNT(*) FROM ZPERSON") as? Int64 == 11)
        }
    }
}
