import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// When delete rules run: Apple defers them from `delete(_:)` to `processPendingChanges()` (called at
/// the end of the event, of each `perform(_:)` block, and by `save()`), or to the save alone when
/// `propagatesDeletesAtEndOfEvent` is off. Expectations from Apple's documentation of
/// `propagatesDeletesAtEndOfEvent`, `perform(_:)` ("encapsulates ... a call to processPendingChanges")
/// and `prepareForDeletion()` ("custom propagation before relationships are torn down"). When
/// exactly Apple calls `prepareForDeletion()` is not documented: here at `delete(_:)`, and for an
/// object a cascade reaches when the cascade marks it (before its own rules run).
@Suite("Delete propagation")
struct DeletePropagationTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// A saved owner with two items (cascade), a tag (nullify on the owner's side) and a guarded item.
    private func savedOwner(_ store: TestStore) throws -> (owner: NSManagedObjectID, items: [NSManagedObjectID], tag: NSManagedObjectID) {
        let writer = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: writer)
        let items = (0..<2).map { insertObject("Item", ["uid": Int64(10 + $0), "owner": owner], into: writer) }
        let tag = insertObject("Tag", ["uid": 20], into: writer)
        owner.mutableSetValue(forKey: "tags").add(tag)
        try writer.save()
        return (owner.objectID, items.map(\.objectID), tag.objectID)
    }

    @Test(arguments: storeTypes)
    func rulesRunWhenChangesAreProcessed(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let ids = try savedOwner(store)
        let context = store.newContext()
        let owner = context.object(with: ids.owner)
        let items = ids.items.map { context.object(with: $0) }
        let tag = context.object(with: ids.tag)
        #expect(items.allSatisfy { $0.value(forKey: "owner") as? NSManagedObject === owner })

        context.delete(owner)
        #expect(owner.isDeleted)
        #expect(context.deletedObjects == [owner], "cascaded objects are not deleted yet")
        #expect(items.allSatisfy { !$0.isDeleted && $0.value(forKey: "owner") as? NSManagedObject === owner },
                "related objects still point at the deleted object")
        #expect((tag.value(forKey: "owners") as? Set<NSManagedObject>) == [owner])
        #expect(context._checkInvariants().isEmpty)

        context.processPendingChanges()
        #expect(context.deletedObjects == Set([owner] + items))
        #expect(items.allSatisfy { $0.isDeleted && $0.value(forKey: "owner") == nil })
        #expect((tag.value(forKey: "owners") as? Set<NSManagedObject>)?.isEmpty == true, "nullified")
        #expect(context._checkInvariants().isEmpty)
        try context.save()
        let reader = store.newContext()
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Tag")) == 1)
    }

    @Test(arguments: storeTypes)
    func saveRunsTheRulesEvenWhenEndOfEventPropagationIsOff(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let ids = try savedOwner(store)
        let context = store.newContext()
        context.propagatesDeletesAtEndOfEvent = false
        let owner = context.object(with: ids.owner)
        context.delete(owner)
        context.processPendingChanges()
        #expect(context.deletedObjects == [owner], "processPendingChanges leaves deletes to the save")
        try context.save()
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
    }

    @Test(arguments: storeTypes)
    func performProcessesPendingChangesAtTheEndOfTheBlock(storeType: String) async throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let ids = try savedOwner(store)
        let context = store.newContext()
        let counts: (Int, Int) = await withCheckedContinuation { continuation in
            context.perform {
                context.delete(context.object(with: ids.owner))
                let during = context.deletedObjects.count
                context.perform { continuation.resume(returning: (during, context.deletedObjects.count)) }
            }
        }
        #expect(counts.0 == 1)
        #expect(counts.1 == 3, "the owner and its two items, after the first block")
    }

    @Test(arguments: storeTypes)
    func rollbackBeforeProcessingRestoresEverything(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let ids = try savedOwner(store)
        let context = store.newContext()
        let owner = context.object(with: ids.owner)
        let fresh = insertObject("Item", ["uid": 30, "owner": owner], into: context)
        context.delete(fresh)
        #expect(!context.insertedObjects.contains(fresh), "a new object leaves insertedObjects at once")
        context.delete(owner)
        context.rollback()
        #expect(!owner.isDeleted && context.deletedObjects.isEmpty && !context.hasChanges)
        #expect(fresh.managedObjectContext == nil, "the unsaved object is discarded, as inserted objects are")
        context.processPendingChanges()
        #expect(context.deletedObjects.isEmpty, "nothing left to propagate")
        #expect((owner.value(forKey: "items") as? Set<NSManagedObject>)?.count == 2)
    }

    @Test(arguments: storeTypes)
    func reinsertingBeforeProcessingUndeletes(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: context)
        let item = insertObject("Item", ["uid": 2, "owner": owner], into: context)
        context.delete(owner)
        context.insert(owner)
        context.processPendingChanges()
        #expect(!owner.isDeleted && !item.isDeleted && context.insertedObjects == [owner, item])
        #expect(item.value(forKey: "owner") as? NSManagedObject === owner)
        try context.save()
    }

    @Test func prepareForDeletionRunsOnceWhileRelationshipsAreIntact() throws {
        let model = TestModels.graph()
        model.entitiesByName["Item"]!.managedObjectClassName = NSStringFromClass(PreparationCountingItem.self)
        let store = try TestStore(NSInMemoryStoreType, model: model)
        let context = store.newContext()
        let parent = insertObject("Item", ["uid": 1], into: context)
        insertObject("Item", ["uid": 2, "parent": parent], into: context)
        try context.save()
        PreparationCountingItem.calls = []
        context.delete(parent)
        context.delete(parent)
        #expect(PreparationCountingItem.calls.map(\.uid) == [1], "at delete(_:), once")
        context.processPendingChanges()
        context.processPendingChanges()
        #expect(PreparationCountingItem.calls.map(\.uid) == [1, 2], "the child when the cascade reaches it")
        #expect(PreparationCountingItem.calls.last?.parentWasSet == true, "before the child's relationships are torn down")
    }

    /// A chain Item 0 → 1 → … (each the only subitem of the previous, cascade) deleted from its
    /// head: the rules run from a work list, so the depth costs no stack (recursion overflowed the
    /// stack long before 50,000). `OCD_STRESS=1` makes the chain 100,000 long.
    @Test(arguments: storeTypes)
    func cascadeThroughAVeryDeepChain(storeType: String) throws {
        let depth = ProcessInfo.processInfo.environment["OCD_STRESS"] != nil ? 100_000 : 50_000
        let store = try TestStore(storeType, model: TestModels.graph())
        let writer = store.newContext()
        let head = insertObject("Item", ["uid": Int64(0)], into: writer)
        var previous = head
        for uid in 1..<depth {
            previous = insertObject("Item", ["uid": Int64(uid), "parent": previous], into: writer)
        }
        try writer.save()
        let clock = ContinuousClock()
        let start = clock.now
        let context = store.newContext()
        context.delete(context.object(with: head.objectID))
        context.processPendingChanges()
        #expect(context.deletedObjects.count == depth)
        try context.save()
        print("cascade through a \(depth)-deep chain on \(storeType): \(clock.now - start)")
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
    }
}

/// Records `prepareForDeletion()` calls and whether the object's parent was still set at that moment.
final class PreparationCountingItem: NSManagedObject {
    nonisolated(unsafe) static var calls: [(uid: Int64, parentWasSet: Bool)] = []
    override func prepareForDeletion() {
        Self.calls.append((value(forKey: "uid") as? Int64 ?? -1, value(forKey: "parent") != nil))
    }
}
