import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// `relationshipKeyPathsForPrefetching`: one fetch per key path step, objects kept alive by their sources.
@Suite("Relationship prefetching")
struct PrefetchingTests {
    /// 20 owners, 3 items each (the first is the owner's `best`), 2 subitems per item.
    private func seed(_ store: TestStore) throws {
        let context = store.newContext()
        var uid: Int64 = 0
        func next() -> Int64 { uid += 1; return uid }
        for _ in 0..<20 {
            let owner = insertObject("Owner", ["uid": next()], into: context)
            for index in 0..<3 {
                let item = insertObject("Item", ["uid": next(), "owner": owner], into: context)
                if index == 0 { owner.setValue(item, forKey: "best") }
                for _ in 0..<2 { insertObject("Item", ["uid": next(), "parent": item], into: context) }
            }
        }
        try context.save()
    }

    /// Reads every prefetched relationship and returns a description of the graph.
    private func walk(_ owners: [NSManagedObject]) -> [String] {
        owners.map { owner in
            let items = (owner.value(forKey: "items") as? Set<NSManagedObject> ?? []).map { item in
                let subitems = (item.value(forKey: "subitems") as? Set<NSManagedObject> ?? []).compactMap { $0.value(forKey: "uid") as? Int64 }
                return "\(item.value(forKey: "uid") as? Int64 ?? -1)\(subitems.sorted())"
            }.sorted()
            return "\(owner.value(forKey: "uid") as? Int64 ?? -1): \(items) best \(owner.value(forKeyPath: "best.uid") as? Int64 ?? -1)"
        }.sorted()
    }

    private func owners(_ context: NSManagedObjectContext, prefetch: [String]?) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        request.relationshipKeyPathsForPrefetching = prefetch
        return try context.fetch(request)
    }

    @Test func oneStatementPerKeyPathStepOnSQLite() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        try seed(store)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }

        let plain = store.newContext()
        let expected = walk(try owners(plain, prefetch: nil))
        let withoutPrefetching = statements.count

        statements = []
        let context = store.newContext()
        let fetched = try owners(context, prefetch: ["items", "items.subitems", "best"])
        // `best` needs no statement: the owners' best items came with `items`.
        #expect(statements.count == 3, "owners, items, subitems: \(statements)")
        #expect(context.registeredObjects.count == 20 + 60 + 120, "prefetched objects stay alive, held by their sources")
        statements = []
        #expect(walk(fetched) == expected)
        #expect(statements.isEmpty, "everything was prefetched: \(statements)")
        print("prefetching: \(withoutPrefetching) statements without, 3 with")
        #expect(withoutPrefetching > 100)
    }

    @Test func dottedToOnePaths() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        try seed(store)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "parent != nil")
        request.relationshipKeyPathsForPrefetching = ["parent.owner"]
        let subitems = try context.fetch(request)
        #expect(subitems.count == 120)
        #expect(statements.count == 3, "\(statements)")
        statements = []
        let owners = Set(subitems.compactMap { $0.value(forKeyPath: "parent.owner.uid") as? Int64 })
        #expect(owners.count == 20)
        #expect(statements.isEmpty, "\(statements)")
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func prefetchedGraphMatchesTheLoadedOne(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        try seed(store)
        let plain = store.newContext()
        let context = store.newContext()
        #expect(walk(try owners(context, prefetch: ["items.subitems", "best", "tags", "list"])) == walk(try owners(plain, prefetch: nil)))
        #expect(context._checkInvariants().isEmpty)
    }
}
