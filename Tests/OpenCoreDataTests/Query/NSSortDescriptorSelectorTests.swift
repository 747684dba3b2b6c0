import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Selector-based and key-path sort descriptors, in memory and on both stores.
@Suite("NSSortDescriptor selectors and key paths")
struct NSSortDescriptorSelectorTests {
    static let selectors: [Selector] = [
        "compare:", "caseInsensitiveCompare:", "localizedCompare:", "localizedCaseInsensitiveCompare:",
        Selector("localizedStandardCompare:"),
    ]

    private func sorted(_ names: [String], _ descriptor: NSSortDescriptor) -> [String] {
        names.map { ["name": $0] }.sorted { descriptor.compare($0, to: $1) == .orderedAscending }.map { $0["name"]! }
    }

    @Test func selectorsOrderStringsAsTheirNSStringMethods() {
        let names = ["apple", "Banana", "cherry"]
        #expect(sorted(names, NSSortDescriptor(key: "name", ascending: true)) == ["Banana", "apple", "cherry"])
        #expect(
            sorted(names, NSSortDescriptor(key: "name", ascending: true, selector: "caseInsensitiveCompare:"))
                == ["apple", "Banana", "cherry"])
        #expect(
            sorted(names, NSSortDescriptor(key: "name", ascending: false, selector: "localizedCaseInsensitiveCompare:"))
                == ["cherry", "Banana", "apple"])
        // localizedStandardCompare: is the Finder's order: case-insensitive, numbers by value.
        let files = ["file10", "file9", "File1"]
        #expect(
            sorted(files, NSSortDescriptor(key: "name", ascending: true, selector: "localizedStandardCompare:"))
                == ["File1", "file9", "file10"])
        #expect(sorted(files, NSSortDescriptor(key: "name", ascending: true)) == ["File1", "file10", "file9"])
    }

    @Test func selectorPropertyDescriptionAndReversal() {
        let plain = NSSortDescriptor(key: "name", ascending: true)
        #expect(plain.selector == Selector("compare:"))
        let folded = NSSortDescriptor(key: "name", ascending: true, selector: Selector("caseInsensitiveCompare:"))
        #expect(folded.selector == "caseInsensitiveCompare:")
        #expect(folded.description == "(name, ascending, caseInsensitiveCompare:)")
        let reversed = folded.reversedSortDescriptor as! NSSortDescriptor
        #expect(reversed.selector == folded.selector && !reversed.ascending)
        #expect(!folded.isEqual(plain))
        #expect(NSSortDescriptor(key: "name", ascending: true) { _, _ in .orderedSame }.selector == nil)
        // Nil values sort first and non-strings by compare:, whatever the selector.
        let byAge = NSSortDescriptor(key: "age", ascending: true, selector: "localizedStandardCompare:")
        #expect(byAge.compare(["age": 10], to: ["age": 9]) == .orderedDescending)
        #expect(byAge.compare([String: Any](), to: ["age": 9]) == .orderedAscending)
        // An unknown selector sorts as compare:.
        let unknown = NSSortDescriptor(key: "name", ascending: true, selector: "noSuchCompare:")
        #expect(unknown.compare(["name": "a"], to: ["name": "B"]) == .orderedDescending)
    }

    /// Both stores return the same order as sorting the fetched objects in memory, and the SQLite
    /// store sorts in SQL with the selector's collation.
    @Test(arguments: selectors, [true, false])
    func storesAgreeWithInMemorySorting(selector: Selector, ascending: Bool) throws {
        let stores = try PredicateDifferentialTests.Stores()
        var statements: [String] = []
        try sqliteStore(stores.sqlite.coordinator).connection?.statementObserver = { statements.append($0) }
        let sorts = [
            NSSortDescriptor(key: "name", ascending: ascending, selector: selector),
            NSSortDescriptor(key: "key", ascending: true),
        ]
        func keys(_ store: TestStore) throws -> [Int] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.sortDescriptors = sorts
            return try store.newContext().fetch(request).map { ($0.value(forKey: "key") as! NSNumber).intValue }
        }
        let context = stores.memory.newContext()
        let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        let expected = everyone.sorted { a, b in
            for sort in sorts {
                let order = sort.compare(a, to: b)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }.map { ($0.value(forKey: "key") as! NSNumber).intValue }
        #expect(try keys(stores.sqlite) == expected)
        #expect(try keys(stores.memory) == expected)
        let select = try #require(statements.last { $0.hasPrefix("SELECT") })
        let collation = SortSelector(name: selector.name)?.collationName
        let term = "t0.ZNAME\(collation.map { " COLLATE \($0)" } ?? "") \(ascending ? "ASC" : "DESC"), t0.ZKEY ASC"
        #expect(select.hasSuffix("ORDER BY \(term), t0.Z_PK"), "\(select)")
    }

    /// Every attribute type and to-one key paths, both directions: the stores sort as memory does.
    @Test(arguments: ["name", "age", "score", "born", "flag", "team.name", "team.rank"], [true, false])
    func storesSortEveryKeyAsMemoryDoes(key: String, ascending: Bool) throws {
        let stores = try PredicateDifferentialTests.Stores()
        let sorts = [NSSortDescriptor(key: key, ascending: ascending), NSSortDescriptor(key: "key", ascending: true)]
        func keys(_ store: TestStore) throws -> [Int] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.sortDescriptors = sorts
            return try store.newContext().fetch(request).map { ($0.value(forKey: "key") as! NSNumber).intValue }
        }
        let context = stores.memory.newContext()  // kept alive: relationship faults fire through it
        let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        let expected = everyone.sorted { a, b in
            for sort in sorts {
                let order = sort.compare(a, to: b)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }.map { ($0.value(forKey: "key") as! NSNumber).intValue }
        let (fromSQLite, fromMemory) = (try keys(stores.sqlite), try keys(stores.memory))
        #expect(fromSQLite == expected, "SQLite \(fromSQLite), expected \(expected)")
        #expect(fromMemory == expected, "in-memory \(fromMemory), expected \(expected)")
    }

    /// Apple's initializers stay designated, so subclasses can call them.
    final class ByName: NSSortDescriptor, @unchecked Sendable {  // immutable, as its superclass
        init(ascending: Bool) { super.init(key: "name", ascending: ascending, selector: "caseInsensitiveCompare:") }
    }

    @Test func subclassesCallTheDesignatedInitializers() {
        let descriptor = ByName(ascending: false)
        #expect(descriptor.key == "name" && descriptor.selector == "caseInsensitiveCompare:" && !descriptor.ascending)
        #expect(descriptor.compare(["name": "a"], to: ["name": "B"]) == .orderedDescending)
    }

    final class Team { var name: String? = nil }
    final class Country {
        var updatedAt = Date()
        var team: Team? = nil
        var leader: Team! = nil
    }

    @Test func keyPathDescriptorsDeriveTheirKey() throws {
        let byDate = NSSortDescriptor(keyPath: \Country.updatedAt, ascending: false)
        #expect(byDate.key == "updatedAt" && !byDate.ascending)
        #expect(byDate.keyPath == \Country.updatedAt)
        #expect(byDate.selector == "compare:")
        #expect(NSSortDescriptor(keyPath: \Country.team?.name, ascending: true).key == "team.name")
        #expect(NSSortDescriptor(keyPath: \Country.leader.name, ascending: true).key == "leader.name")
        let custom = NSSortDescriptor(keyPath: \Country.team?.name, ascending: true) { _, _ in .orderedSame }
        #expect(custom.key == "team.name" && custom.selector == nil)
        #expect(NSExpression(forKeyPath: \Country.team?.name).keyPath == "team.name")
        #expect(NSExpression(forKeyPath: \Country.updatedAt).expressionType == .keyPath)
    }

    @Test func keyPathDescriptorsSortFetches() throws {
        let stores = try PredicateDifferentialTests.Stores()
        for store in [stores.sqlite, stores.memory] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "born != nil")
            request.sortDescriptors = [NSSortDescriptor(keyPath: \PersonKeys.born, ascending: false)]
            let dates = try store.newContext().fetch(request).compactMap { $0.value(forKey: "born") as? Date }
            #expect(dates.count == 9 && dates == dates.sorted(by: >), "\(store.storeType)")
        }
    }

    /// The stored properties of the differential test's `Person`, for key paths.
    final class PersonKeys { var born: Date? = nil }
}
