import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// `fetchBatched(_:)`: the lazily loading result Apple's batched `fetch(_:)` returns on its
/// platforms (a `_PFBatchFaultingArray` bridged to `[T]`), as a collection.
@Suite("Batched fetch results")
struct BatchedFetchResultsTests {
    private static func model() -> NSManagedObjectModel { BatchedFetchTests.model() }
    private func seed(_ store: TestStore, count: Int) throws { try BatchedFetchTests.seed(store, count: count) }

    private func request<T>(batchSize: Int, ascending: Bool = true) -> NSFetchRequest<T> {
        BatchedFetchTests.request(batchSize: batchSize, ascending: ascending)
    }

    @Test func loadsOneBatchPerStatementAndKeepsOnlyRecentBatches() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        try seed(store, count: 1_000)
        let item = store.model.entitiesByName["Item"]!
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        let results = try context.fetchBatched(request(batchSize: 100) as NSFetchRequest<TrackedObject>)
        #expect(results.count == 1_000)
        #expect(results.batchSize == 100)
        #expect(statements.count == 1, "only the identities: \(statements)")
        #expect(LifetimeTracker.live(item) == 0, "no object made before one is read")

        #expect(results[0].value(forKey: "uid") as? Int64 == 0)
        #expect(statements.count == 2)
        #expect(!results[99].isFault, "the whole batch loaded with its values")
        #expect(statements.count == 2)
        #expect((0..<100).allSatisfy { results[$0]._lazyRowKey != nil }, "matched to their rows without making IDs")
        var peak = 0
        for (index, object) in results.enumerated() {
            #expect(object.value(forKey: "uid") as? Int64 == Int64(index))
            peak = max(peak, LifetimeTracker.live(item))
        }
        #expect(statements.count == 11, "one statement per batch of 100")
        #expect(statements[1].contains("BETWEEN"), "a batch of consecutive keys is a range: \(statements[1])")
        #expect(peak <= 300, "objects of older batches are released: \(peak) alive at most")
        #expect(LifetimeTracker.live(item) <= 200)
        #expect(results[0].value(forKey: "value") as? Int32 == 0, "an older batch loads again when read")
        #expect(statements.count == 12)
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func matchesAPlainFetch(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try seed(store, count: 250)
        let context = store.newContext()
        let filtered: NSFetchRequest<NSManagedObject> = request(batchSize: 30, ascending: false)
        filtered.predicate = NSPredicate(format: "value == 3 OR uid < 5")
        let plain: NSFetchRequest<NSManagedObject> = request(batchSize: 0, ascending: false)
        plain.predicate = filtered.predicate
        let expected = try store.newContext().fetch(plain).map { $0.value(forKey: "uid") as? Int64 }
        let batched = try context.fetchBatched(filtered)
        #expect(batched.map { $0.value(forKey: "uid") as? Int64 } == expected)
        #expect(batched.last?.value(forKey: "uid") as? Int64 == 0, "random access into the last batch")
        // The same object for the same row while the app holds it (one object per row per context).
        #expect(batched.count > 30)

        // A limit and an offset apply to the identities, as to a plain fetch.
        for paged in [filtered, plain] {
            paged.fetchLimit = 25
            paged.fetchOffset = 3
        }
        let page = try context.fetchBatched(filtered).map { $0.value(forKey: "uid") as? Int64 }
        #expect(page == Array(expected[3..<28]))
        #expect(try context.fetch(plain).map { $0.value(forKey: "uid") as? Int64 } == page)
        for whole in [filtered, plain] {
            whole.fetchLimit = 0
            whole.fetchOffset = 0
        }
        let held = batched[3]
        _ = batched[batched.count - 1]
        _ = batched[30]
        #expect(batched[3] === held)
        #expect(try context.fetch(plain)[3] === held)
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func pendingChangesAndNoBatchSizeFetchAtOnce(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try seed(store, count: 40)
        let context = store.newContext()
        let all = try context.fetchBatched(request(batchSize: 0) as NSFetchRequest<NSManagedObject>)
        #expect(all.count == 40)
        #expect(all.batchSize == 0)

        // Unsaved changes for the entity: merged, as a plain fetch merges them (Apple documents that
        // a fetch includes pending changes; whether its batched array does is not documented).
        insertObject("Item", ["uid": Int64(-1), "value": Int32(3)], into: context)
        let merged = try context.fetchBatched(request(batchSize: 10) as NSFetchRequest<NSManagedObject>)
        #expect(merged.count == 41)
        #expect(merged.first?.value(forKey: "uid") as? Int64 == -1)
        #expect(merged.first?.isInserted == true)
    }

    @Test func aRowDeletedAfterTheFetchStaysAnUnfulfilledFault() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        try seed(store, count: 30)
        let context = store.newContext()
        let results = try context.fetchBatched(request(batchSize: 10) as NSFetchRequest<NSManagedObject>)
        let other = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "uid == 15")
        for object in try other.fetch(request) { other.delete(object) }
        try other.save()

        #expect(results.count == 30, "identities recorded when the fetch ran")
        #expect(results[14].value(forKey: "uid") as? Int64 == 14)
        #expect(results[15].isFault, "no row to fulfil it")
        #expect(results[16].value(forKey: "uid") as? Int64 == 16)
    }

    @Test func prefetchesRelationshipsPerBatch() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let setUp = store.newContext()
        for uid in 0..<20 {
            let owner = insertObject("Owner", ["uid": Int64(uid)], into: setUp)
            let item = insertObject("Item", ["uid": Int64(uid)], into: setUp)
            item.setValue(owner, forKey: "owner")
        }
        try setUp.save()
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        let request: NSFetchRequest<NSManagedObject> = request(batchSize: 10)
        request.relationshipKeyPathsForPrefetching = ["owner"]
        let results = try context.fetchBatched(request)
        _ = results[0]
        let afterFirstBatch = statements.count
        #expect(afterFirstBatch > 2, "the batch and its owners")
        let owners = results[0..<10].map { $0.value(forKey: "owner") as? NSManagedObject }
        #expect(owners.allSatisfy { $0?.isFault == false }, "owners prefetched with their batch")
        #expect(owners.map { $0?.value(forKey: "uid") as? Int64 } == (0..<10).map { Int64($0) })
        #expect(statements.count == afterFirstBatch, "no statement per owner")
    }

    @Test func referencesKeepIDsAStoreGaveAndMixedEntities() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        try seed(store, count: 3)
        let context = store.newContext()
        insertObject("Tag", ["uid": Int64(9)], into: context)
        try context.save()
        let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).map(\.objectID)
        let tags = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag")).map(\.objectID)
        let mixed = [items[0], tags[0], items[1], items[2]]
        let references = ObjectReferences(gathering: mixed)
        #expect((0..<references.count).map(references.objectID(at:)) == mixed)

        // Two stores' answers (references, and IDs) gathered in order, as the coordinator combines them.
        var first = ObjectReferences()
        first.append(items[0])
        first.append(tags[0])
        var second = ObjectReferences()
        second.append(items[1])
        let gathered = ObjectReferences(gathering: [first, second, items[2]])
        #expect((0..<gathered.count).map(gathered.objectID(at:)) == mixed)

        // A reference that is not a primary key (a custom store's): every ID is kept as it is.
        let custom = NSManagedObjectID(
            entity: items[0].entity, store: items[0].persistentStore, reference: .string("custom"))
        let withCustom = ObjectReferences(gathering: mixed + [custom])
        #expect((0..<withCustom.count).map(withCustom.objectID(at:)) == mixed + [custom])
    }

    @Test func consecutiveKeysAreARangeOthersAList() {
        #expect(SQLiteQuery.consecutiveRange([3, 4, 5, 6]) == 3...6)
        #expect(SQLiteQuery.consecutiveRange([9, 8, 7]) == 7...9)
        #expect(SQLiteQuery.consecutiveRange([5]) == 5...5)
        #expect(SQLiteQuery.consecutiveRange([3, 5, 4, 6]) == nil, "same span, not in order")
        #expect(SQLiteQuery.consecutiveRange([3, 4, 4, 6]) == nil)
        #expect(SQLiteQuery.consecutiveRange([1, 3]) == nil)
        #expect(SQLiteQuery.consecutiveRange([Int64.max, Int64.min]) == nil)
        #expect(SQLiteQuery.consecutiveRange([]) == nil)
    }

    /// `SELF IN` a list of consecutive keys gives what the list gives, rows deleted in between included.
    @Test func aRangeOfKeysMatchesTheList() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        try seed(store, count: 40)
        let context = store.newContext()
        let all = try context.fetch(request(batchSize: 0) as NSFetchRequest<NSManagedObject>)
        let ids = all[5..<25].map(\.objectID)
        for object in all[10..<12] { context.delete(object) }
        try context.save()
        let fetch = NSFetchRequest<NSManagedObject>(entityName: "Item")
        fetch.predicate = NSPredicate(format: "SELF IN %@", ids)
        fetch.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
        let uids = try context.fetch(fetch).map { $0.value(forKey: "uid") as? Int64 }
        let expected: [Int64?] = (5..<25).filter { $0 != 10 && $0 != 11 }.map { Int64($0) }
        #expect(uids == expected)
        fetch.predicate = NSPredicate(format: "NOT (SELF IN %@)", ids)
        let outside = try context.fetch(fetch).count
        #expect(outside == 40 - 2 - 18)
    }
}
