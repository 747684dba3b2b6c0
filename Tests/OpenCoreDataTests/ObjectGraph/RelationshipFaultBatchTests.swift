import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// The first destination of a to-many relationship to fire loads its batch's rows as snapshots:
/// the others stay faults (Apple: a fault's `isFault` is true until it fires) and fire from their
/// row without going to the store, as Apple's faults do when their row is in the row cache. Apple
/// fires each on its own, a statement each (its documentation on faulting says "firing faults
/// individually can be inefficient"); which destinations share a statement is not observable
/// through the API but for the statements run.
@Suite("To-many destination faults load in batches")
struct RelationshipFaultBatchTests {
    /// An owner with `count` items (uid 1...count), saved.
    private func seeded(items count: Int) throws -> TestStore {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": Int64(0)], into: context)
        for uid in 1...count { insertObject("Item", ["uid": Int64(uid), "owner": owner], into: context) }
        try context.save()
        return store
    }

    private func owner(_ context: NSManagedObjectContext) throws -> NSManagedObject {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        return try #require(try context.fetch(request).first)
    }

    @Test func theFirstToFireLoadsItsBatchAndTheOthersStayFaults() throws {
        let store = try seeded(items: 30)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        let items = try #require(try owner(context).value(forKey: "items") as? Set<NSManagedObject>)
        let allFaults = items.allSatisfy { $0.isFault }
        #expect(items.count == 30 && allFaults)

        statements = []
        let first = try #require(items.first)
        #expect(first.value(forKey: "uid") as? Int64 != nil)
        #expect(statements.count == 1, "one statement for the batch: \(statements)")
        #expect(!first.isFault)
        let othersAreFaults = items.filter { $0 !== first }.allSatisfy { $0.isFault }
        #expect(othersAreFaults, "the others are faults until used")

        let uids = Set(items.compactMap { $0.value(forKey: "uid") as? Int64 })
        #expect(uids == Set(1...30))
        #expect(statements.count == 1, "the others fired from their rows: \(statements)")
        #expect(!context.hasChanges)
    }

    @Test func aBatchHoldsAHundredDestinations() throws {
        let store = try seeded(items: 250)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        let items = try #require(try owner(context).value(forKey: "items") as? Set<NSManagedObject>)
        statements = []
        #expect(Set(items.compactMap { $0.value(forKey: "uid") as? Int64 }) == Set(1...250))
        #expect(statements.count == 3, "250 destinations, batches of 100: \(statements.count) statements")
    }

    @Test func aDestinationChangedBeforeTheBatchLoadsKeepsItsChange() throws {
        let store = try seeded(items: 5)
        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "uid == 3")
        let third = try #require(try context.fetch(request).first)
        third.setValue(Int64(33), forKey: "uid")

        let items = try #require(try owner(context).value(forKey: "items") as? Set<NSManagedObject>)
        let other = try #require(items.first { $0 !== third })
        _ = other.value(forKey: "uid")  // loads the batch of the faults (not `third`)
        #expect(third.value(forKey: "uid") as? Int64 == 33)
        #expect(third.hasChanges)
        #expect(Set(items.compactMap { $0.value(forKey: "uid") as? Int64 }) == [1, 2, 33, 4, 5])
    }
}

/// `isEqual(_:)` reads an ID boxed as `Any` or as `NSObject` (what `NSObject`'s `==` passes, and
/// so every dictionary and set of IDs) where it lies; the result must be the cast's.
@Suite("Object ID equality through its boxes")
struct ObjectIDEqualityTests {
    @Test func equalIDsMatchHoweverTheOtherIsBoxed() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": Int64(1)], into: context)
        let other = insertObject("Owner", ["uid": Int64(2)], into: context)
        try context.save()
        let id = owner.objectID
        let same = try #require(store.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation()))
        #expect(same !== id)
        #expect(id.isEqual(same as Any) && id.isEqual(same as NSObject) && id == same)
        #expect(!id.isEqual(other.objectID as Any) && !id.isEqual(other.objectID as NSObject))
        #expect(!id.isEqual(nil) && !id.isEqual("x") && !id.isEqual(NSObject()) && !id.isEqual(owner))
        let table: [NSManagedObjectID: String] = [id: "owner"]
        #expect(table[same] == "owner")
        #expect(ObjectIDKey(id) == ObjectIDKey(same) && ObjectIDKey(id).hashValue == ObjectIDKey(same).hashValue)
        #expect(ObjectIDKey(id) != ObjectIDKey(other.objectID))
    }
}

/// `SELF IN ids` with an array of IDs (how a batch of faults loads) finds exactly the rows of the
/// fetched entity among them, on every store: the in-memory store looks them up rather than
/// testing every row.
@Suite("SELF IN object IDs")
struct SelfInObjectIDsTests {
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func findsExactlyTheListedRowsOfTheEntity(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let items = (1...6).map { insertObject("Item", ["uid": Int64($0)], into: context) }
        let owner = insertObject("Owner", ["uid": Int64(100)], into: context)
        try context.save()
        context.delete(items[5])
        try context.save()

        let reader = store.newContext()
        // A repeat, a deleted row and an owner among them.
        let ids = [items[1], items[3], items[1], items[5], owner, items[0]].map(\.objectID)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "SELF IN %@", ids)
        let uids = try reader.fetch(request).compactMap { $0.value(forKey: "uid") as? Int64 }
        #expect(uids.sorted() == [1, 2, 4])
    }
}
