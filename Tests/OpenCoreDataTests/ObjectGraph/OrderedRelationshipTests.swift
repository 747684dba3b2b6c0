import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Index-based changes to ordered to-many relationships (`mutableOrderedSetValue(forKey:)`).
@Suite("Ordered relationships")
struct OrderedRelationshipTests {
    private func uids(_ object: NSManagedObject) -> [Int64] {
        ((object.value(forKey: "list") as? NSOrderedSet)?.array ?? []).compactMap {
            ($0 as? NSManagedObject)?.value(forKey: "uid") as? Int64
        }
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func indexOperationsAreSavedInOrder(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": 0], into: context)
        let items = (1...6).map { insertObject("Item", ["uid": Int64($0)], into: context) }
        let list = owner.mutableOrderedSetValue(forKey: "list")
        for item in items[0..<4] { list.add(item) }
        #expect(uids(owner) == [1, 2, 3, 4])

        list.insert(items[4], at: 0)
        list.insert(items[0], at: 3)  // already there: ignored, as by NSMutableOrderedSet
        #expect(uids(owner) == [5, 1, 2, 3, 4])
        #expect(items[4].value(forKey: "listOwner") as? NSManagedObject === owner, "the inverse follows")
        list.removeObject(at: 1)
        #expect(uids(owner) == [5, 2, 3, 4])
        #expect(items[0].value(forKey: "listOwner") == nil)
        list.replaceObject(at: 2, with: items[5])
        #expect(uids(owner) == [5, 2, 6, 4])
        #expect(items[2].value(forKey: "listOwner") == nil)
        list.moveObjects(at: IndexSet([0, 2]), to: 1)
        #expect(uids(owner) == [2, 5, 6, 4])
        list.exchangeObject(at: 0, withObjectAt: 3)
        #expect(uids(owner) == [4, 5, 6, 2])
        #expect(list.index(of: items[5]) == 2)
        #expect(list.index(of: items[0]) == NSNotFound)
        #expect(list.object(at: 1) === items[4])
        #expect(list.firstObject === items[3] && list.lastObject === items[1])
        #expect(context._checkInvariants().isEmpty)
        try context.save()

        list.moveObjects(at: IndexSet(integer: 3), to: 0)
        try context.save()
        let reader = store.newContext()
        #expect(uids(reader.object(with: owner.objectID)) == [2, 4, 5, 6])
        if storeType == NSSQLiteStoreType {
            let raw = try RawDatabase(try #require(store.url))
            let column = try #require(try raw.rows("PRAGMA table_info(ZITEM)").compactMap { $0[1] as? String }
                .first { $0.hasPrefix("Z_FOK_") })
            let rows = try raw.rows("SELECT ZUID FROM ZITEM WHERE \(column) IS NOT NULL ORDER BY \(column)")
            #expect(rows.map { $0[0] as? Int64 } == [2, 4, 5, 6], "Z_FOK_ holds the order")
        }
    }
}
