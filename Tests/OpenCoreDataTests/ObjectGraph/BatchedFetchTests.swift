import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// `fetchBatchSize`: object IDs up front, rows loaded a batch at a time as faults fire.
@Suite("Batched fetches")
struct BatchedFetchTests {
    /// The graph model with `Item` objects counted by ``LifetimeTracker``.
    static func model() -> NSManagedObjectModel {
        let model = TestModels.graph()
        model.entitiesByName["Item"]!.managedObjectClassName = NSStringFromClass(TrackedObject.self)
        return model
    }

    /// Saves `count` items with `uid` 0..<count in order.
    static func seed(_ store: TestStore, count: Int) throws {
        let context = store.newContext()
        for uid in 0..<count { insertObject("Item", ["uid": Int64(uid), "value": Int32(uid % 7)], into: context) }
        try context.save()
    }

    /// Items by `uid`, in batches of `batchSize`.
    static func request<T>(batchSize: Int, ascending: Bool = true) -> NSFetchRequest<T> {
        let request = NSFetchRequest<T>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: ascending)]
        request.fetchBatchSize = batchSize
        return request
    }

    @Test func oneStatementPerBatchAndBoundedValues() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        try Self.seed(store, count: 1_000)
        let item = store.model.entitiesByName["Item"]!
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        do {
            let results = try context.fetch(Self.request(batchSize: 100) as NSFetchRequest<NSManagedObject>)
            #expect(results.count == 1_000)
            #expect(statements.count == 1, "only the object IDs: \(statements)")
            #expect(results.allSatisfy { $0.isFault })
            #expect(results.allSatisfy { $0._lazyRowKey != nil }, "a fault per row, none with an ID made yet")

            #expect(results[0].value(forKey: "uid") as? Int64 == 0)
            #expect(statements.count == 2)
            #expect(results[1..<100].allSatisfy { !$0.isFault }, "the whole batch loaded")
            #expect(results[100].isFault)
            for (index, object) in results.enumerated() {
                #expect(object.value(forKey: "uid") as? Int64 == Int64(index))
            }
            #expect(statements.count == 11, "one statement per batch of 100")
            #expect(results.filter { !$0.isFault }.count <= 200, "older batches turned back into faults")
            #expect(results[0].value(forKey: "value") as? Int32 == 0, "and fire again when read")
            // Loading a batch gives its objects snapshots, which take the place of their batch in
            // the object: turned back into faults, they get it back, and load it whole again.
            #expect(statements.count == 12, "one statement for the batch read again")
            #expect(results[1..<100].allSatisfy { !$0.isFault }, "the whole batch loaded again")
            // `results` lives to here (an optimized build may end it at its last use).
            withExtendedLifetime(results) { #expect(LifetimeTracker.live(item) == 1_000) }
        }
        #expect(LifetimeTracker.live(item) == 0, "objects the caller drops are released")
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func batchedResultsMatchAPlainFetch(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try Self.seed(store, count: 250)
        let context = store.newContext()
        let filtered: NSFetchRequest<NSManagedObject> = Self.request(batchSize: 30)
        filtered.predicate = NSPredicate(format: "value == 3")
        let plain: NSFetchRequest<NSManagedObject> = Self.request(batchSize: 0)
        plain.predicate = filtered.predicate
        let expected = try store.newContext().fetch(plain).map { $0.value(forKey: "uid") as? Int64 }
        let batched = try context.fetch(filtered).map { $0.value(forKey: "uid") as? Int64 }
        #expect(batched == expected)

        // Unsaved changes for the entity: a plain fetch merges them.
        insertObject("Item", ["uid": Int64(1_000), "value": Int32(3)], into: context)
        #expect(try context.fetch(filtered).count == expected.count + 1)
    }
}
