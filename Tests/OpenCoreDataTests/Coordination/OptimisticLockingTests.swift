import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Records the snapshot events it is woken with.
final class MergeEventProbe: NSManagedObject {
    var events: [NSSnapshotEventType] = []
    override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
        super.awake(fromSnapshotEvents: flags)
        events.append(flags)
    }

    static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription(name: "Probe", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType)
        ])
        entity.managedObjectClassName = String(reflecting: MergeEventProbe.self)
        entity.uniquenessConstraints = [["name"]]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

/// Optimistic locking between two contexts on one store: a save over a row that changed since
/// the context read it is a merge conflict (`Z_OPT` in SQLite, the row version in memory), and
/// the context's merge policy resolves it before the save is retried.
@Suite("Optimistic locking")
struct OptimisticLockingTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// Sales (budget 100.5) is saved; contexts A and B read it; B renames it "B", sets the budget to
    /// 2 and saves; A renames it "A" and saves under `policy`. With `throughSecondCoordinator`, B is
    /// on a second coordinator on the same file (SQLite only; `TwoCoordinatorConflictTests`).
    static func conflictingSave(_ storeType: String, policy: NSMergePolicy, throughSecondCoordinator: Bool = false) throws
        -> (store: TestStore, a: NSManagedObject, context: NSManagedObjectContext, result: Result<Void, any Error>)
    {
        let store = try TestStore(storeType)
        let seed = store.newContext()
        insertObject("Department", ["name": "Sales", "budget": 100.5], into: seed)
        try seed.save()
        let contextA = store.newContext()
        contextA.mergePolicy = policy
        let other = throughSecondCoordinator ? try store.secondCoordinator() : nil
        let contextB = other.map(StoreHarness.context) ?? store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        let a = try #require(try contextA.fetch(request).first)
        _ = a.value(forKey: "name")
        try contextB.performAndWait {
            let b = try #require(try contextB.fetch(request).first)
            b.setValue("B", forKey: "name")
            b.setValue(2.0, forKey: "budget")
            try contextB.save()
        }
        if let other { StoreHarness.close(other) }
        a.setValue("A", forKey: "name")
        let result = Result { try contextA.save() }
        return (store, a, contextA, result)
    }

    private func conflictingSave(_ storeType: String, policy: NSMergePolicy) throws
        -> (store: TestStore, a: NSManagedObject, context: NSManagedObjectContext, result: Result<Void, any Error>)
    {
        try Self.conflictingSave(storeType, policy: policy)
    }

    private func storedDepartment(_ store: TestStore) throws -> (String?, Double?) {
        let context = store.newContext()
        let rows = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))
        #expect(rows.count == 1)
        return (rows.first?.value(forKey: "name") as? String, rows.first?.value(forKey: "budget") as? Double)
    }

    /// The error policy throws `managedObjectMerge` (133020, as on Apple) with one `NSMergeConflict`
    /// under "conflictList" (Apple's `NSPersistentStoreSaveConflictsErrorKey`); B's row stays.
    @Test(arguments: storeTypes)
    func errorPolicyThrowsWithTheMergeConflict(storeType: String) throws {
        let (store, a, context, result) = try conflictingSave(storeType, policy: .error)
        #expect(throws: OpenCoreDataError.self) { try result.get() }
        guard case .failure(let failure) = result, let error = failure as? OpenCoreDataError else { return }
        #expect(error.code == .managedObjectMerge)
        #expect((error as NSError).code == NSManagedObjectMergeError)
        let list = (error as NSError).userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [Any] ?? []
        let conflict = try #require(list.first as? NSMergeConflict)
        #expect(list.count == 1)
        #expect(conflict.sourceObject === a)
        #expect(conflict.oldVersionNumber == 1)
        #expect(conflict.newVersionNumber == 2)
        #expect(conflict.objectSnapshot?["name"] as? String == "A")
        #expect(conflict.cachedSnapshot?["name"] as? String == "Sales")
        #expect(conflict.persistedSnapshot?["name"] as? String == "B")
        #expect(conflict.persistedSnapshot?["budget"] as? Double == 2)
        #expect(conflict.persistedSnapshot?["employees"] == nil)  // no to-many relationships in snapshots
        #expect(try storedDepartment(store) == ("B", 2))
        #expect(context.hasChanges)
        #expect(a.value(forKey: "name") as? String == "A")
    }

    /// Store trump: the store's values win for every property the store changed (both changed
    /// `name`: "B"; only the store changed `budget`: 2).
    @Test(arguments: storeTypes)
    func storeTrumpTakesTheStoresChanges(storeType: String) throws {
        let (store, a, context, result) = try conflictingSave(storeType, policy: .mergeByPropertyStoreTrump)
        try result.get()
        #expect(try storedDepartment(store) == ("B", 2))
        #expect(a.value(forKey: "name") as? String == "B")
        try saveAgain(a, context, store)
    }

    /// Object trump: our changed property wins (`name`: "A"); the store's other change stays
    /// (`budget`: 2).
    @Test(arguments: storeTypes)
    func objectTrumpKeepsOurChangesAndTheStoresOthers(storeType: String) throws {
        let (store, a, context, result) = try conflictingSave(storeType, policy: .mergeByPropertyObjectTrump)
        try result.get()
        #expect(try storedDepartment(store) == ("A", 2))
        #expect(a.value(forKey: "budget") as? Double == 2)
        try saveAgain(a, context, store)
    }

    /// Overwrite: the whole in-memory object is written, including the stale budget it read.
    @Test(arguments: storeTypes)
    func overwriteWritesTheWholeObject(storeType: String) throws {
        let (store, a, context, result) = try conflictingSave(storeType, policy: .overwrite)
        try result.get()
        #expect(try storedDepartment(store) == ("A", 100.5))
        try saveAgain(a, context, store)
    }

    /// Rollback: our changes are dropped and the object takes the store's values.
    @Test(arguments: storeTypes)
    func rollbackDropsOurChanges(storeType: String) throws {
        let (store, a, context, result) = try conflictingSave(storeType, policy: .rollback)
        try result.get()
        #expect(try storedDepartment(store) == ("B", 2))
        #expect(a.value(forKey: "name") as? String == "B")
        #expect(!a.hasChanges)
        #expect(!context.hasChanges)
        try saveAgain(a, context, store)
    }

    /// After a resolved conflict the object carries the row's version: the next save from the
    /// same context goes through without a conflict, even under the error policy.
    private func saveAgain(_ a: NSManagedObject, _ context: NSManagedObjectContext, _ store: TestStore) throws {
        context.mergePolicy = NSMergePolicy.error
        a.setValue("Again", forKey: "name")
        try context.save()
        #expect(try storedDepartment(store).0 == "Again")
    }

    /// An object a merge policy changed gets `awake(fromSnapshotEvents: .mergePolicy)`: the source
    /// of a resolved optimistic-locking conflict, and the object a constraint conflict keeps.
    @Test(arguments: storeTypes)
    func resolvedObjectsAwakeWithTheMergePolicyEvent(storeType: String) throws {
        let store = try TestStore(storeType, model: MergeEventProbe.model())
        let seed = store.newContext()
        insertObject("Probe", ["name": "one"], into: seed)
        try seed.save()
        let contextA = store.newContext()
        let contextB = store.newContext()
        contextA.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        let request = NSFetchRequest<MergeEventProbe>(entityName: "Probe")
        let a = try #require(try contextA.fetch(request).first)
        let b = try #require(try contextB.fetch(request).first)
        b.setValue("two", forKey: "name")
        try contextB.save()
        a.setValue("three", forKey: "name")
        try contextA.save()
        #expect(a.events == [.mergePolicy])

        insertObject("Probe", ["name": "three"], into: contextA)
        try contextA.save()
        #expect(a.events == [.mergePolicy, .mergePolicy])
        #expect(try store.newContext().count(for: request) == 1)
    }

    /// Deleting an object whose row changed underneath is a conflict too; under a resolving
    /// policy the deletion goes ahead. (Whether Apple's rollback policy would undo the deletion
    /// instead is not documented.)
    @Test(arguments: storeTypes)
    func deletionOverAChangedRow(storeType: String) throws {
        let store = try TestStore(storeType)
        let seed = store.newContext()
        insertObject("Department", ["name": "Sales"], into: seed)
        try seed.save()
        let contextA = store.newContext()
        let contextB = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        let a = try #require(try contextA.fetch(request).first)
        let b = try #require(try contextB.fetch(request).first)
        b.setValue("B", forKey: "name")
        try contextB.save()
        contextA.delete(a)
        let error = try #require(throws: OpenCoreDataError.self) { try contextA.save() }
        #expect(error.code == .managedObjectMerge)
        #expect((error.conflictList.first as? NSMergeConflict)?.sourceObject === a)
        #expect(try store.newContext().count(for: request) == 1)
        contextA.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try contextA.save()
        #expect(try store.newContext().count(for: request) == 0)
    }

    /// The same for an entity without relationships, whose deleted objects have no delete rule to
    /// run (their faults are not fired for one): fetched with its values or as a bare fault, the
    /// object's row version is still checked at the save.
    @Test(arguments: storeTypes, [true, false])
    func deletionOverAChangedRowOfAnEntityWithoutRelationships(storeType: String, withValues: Bool) throws {
        let store = try TestStore(storeType)
        let seed = store.newContext()
        insertObject("Item", ["int16": Int16(1)], into: seed)
        try seed.save()
        let contextA = store.newContext()
        let contextB = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.includesPropertyValues = withValues
        let a = try #require(try contextA.fetch(request).first)
        let b = try #require(try contextB.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).first)
        contextA.delete(a)
        contextA.processPendingChanges()
        b.setValue(Int16(2), forKey: "int16")
        try contextB.save()
        let error = try #require(throws: OpenCoreDataError.self) { try contextA.save() }
        #expect(error.code == .managedObjectMerge)
        #expect(try store.newContext().count(for: request) == 1)
    }

    /// An update over a row another context deleted is not resolved (there is no row to merge
    /// with): the save throws 133020 with a conflict whose `newVersionNumber` is 0.
    @Test(arguments: storeTypes)
    func updateOverADeletedRowStaysAConflict(storeType: String) throws {
        let store = try TestStore(storeType)
        let seed = store.newContext()
        insertObject("Department", ["name": "Sales"], into: seed)
        try seed.save()
        let contextA = store.newContext()
        let contextB = store.newContext()
        contextA.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        let a = try #require(try contextA.fetch(request).first)
        let b = try #require(try contextB.fetch(request).first)
        contextB.delete(b)
        try contextB.save()
        a.setValue("A", forKey: "name")
        let error = try #require(throws: OpenCoreDataError.self) { try contextA.save() }
        #expect(error.code == .managedObjectMerge)
        let conflict = try #require(error.conflictList.first as? NSMergeConflict)
        #expect(conflict.newVersionNumber == 0)
        #expect(conflict.persistedSnapshot == nil)
        #expect(try store.newContext().count(for: request) == 0)
    }
}
