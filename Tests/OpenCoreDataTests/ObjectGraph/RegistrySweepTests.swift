import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// The registry drops the entries of objects the app let go (each leaves it in its `deinit`), so
/// fetching and dropping results again and again keeps it bounded, and uniquing holds for the objects
/// kept. (Internal bookkeeping: Apple documents none of it.)
@Suite("Registry sweeps around fetches")
struct RegistrySweepTests {
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func fetchingAndDroppingResultsKeepsTheRegistryBounded(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let seeding = store.newContext()
        for uid in 0..<5_000 { insertObject("Item", ["uid": Int64(uid)], into: seeding) }
        try seeding.save()

        let context = store.newContext()
        var kept: [NSManagedObject] = []
        for window in 0..<10 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
            request.fetchOffset = window * 500
            request.fetchLimit = 500
            do {
                let results = try context.fetch(request)
                #expect(results.count == 500)
                #expect(results.first?.value(forKey: "uid") as? Int64 == Int64(window * 500))
                if window == 0 { kept = Array(results.prefix(3)) }
            }
            // Ten windows of 500 distinct rows, each dropped: without sweeps the registry would
            // reach 5,000 entries. (The in-memory store registers every row of the entity while it
            // filters and pages, so there the bound is the store's row count.)
            let bound = storeType == NSSQLiteStoreType ? 2_048 : 5_000
            #expect(context.performAndWait { context.registry.count } <= bound, "window \(window)")
        }
        // Objects the app kept are still the registered ones (uniquing survives the sweeps).
        for object in kept { #expect(context.registeredObject(for: object.objectID) === object) }
        let again = NSFetchRequest<NSManagedObject>(entityName: "Item")
        again.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
        again.fetchLimit = 3
        let refetched = try context.fetch(again)
        #expect(zip(refetched, kept).allSatisfy { $0 === $1 })
        withExtendedLifetime(store) {}  // contexts hold their coordinator weakly
    }
}
