import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Cascade delete of a large tree in one save.
@Suite("Cascade delete of a large tree")
struct CascadeDeleteTests {
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func tenThousandObjectTreeInOneSave(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let writer = store.newContext()
        // A root, 99 children, 100 grandchildren each: 10,000 items.
        let root = insertObject("Item", ["uid": Int64(0)], into: writer)
        var uid: Int64 = 1
        for _ in 0..<99 {
            let child = insertObject("Item", ["uid": uid, "parent": root], into: writer)
            uid += 1
            for _ in 0..<100 {
                insertObject("Item", ["uid": uid, "parent": child], into: writer)
                uid += 1
            }
        }
        try writer.save()
        let rootID = root.objectID

        // A fresh context: the root is a fault and no relationship is loaded.
        let context = store.newContext()
        let clock = ContinuousClock()
        let start = clock.now
        context.delete(context.object(with: rootID))
        #expect(context.deletedObjects.count == 1, "the cascade runs when changes are processed")
        context.processPendingChanges()
        #expect(context.deletedObjects.count == 10_000)
        try context.save()
        let elapsed = clock.now - start
        print("cascade delete of 10,000 objects on \(storeType): \(elapsed)")

        let reader = store.newContext()
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
    }
}
