import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Nested contexts as Apple documents them: "When you save changes in a context, the changes are
/// only committed one store up. If you save a child context, changes are pushed to its parent."
/// (NSManagedObjectContext, Parent store), and a child's fetches see its parent's unsaved changes.
@Suite("Nested contexts: saving one level up, reading through the parent")
struct NestedContextTests {
    // MARK: parent and persistentStoreCoordinator

    @Test func parentSetsTheRootsCoordinatorAndACoordinatorClearsTheParent() throws {
        let stack = try NestedStack()
        let child = stack.child()
        let grandchild = stack.child(of: child)
        #expect(child.parent === stack.root)
        #expect(grandchild.parent === child)
        #expect(grandchild.persistentStoreCoordinator === stack.root.persistentStoreCoordinator)
        #expect(stack.root.parent == nil)
        child.parent = grandchild  // a cycle: refused
        #expect(child.parent === stack.root)
        grandchild.persistentStoreCoordinator = stack.root.persistentStoreCoordinator
        #expect(grandchild.parent == nil, "a context has a parent or a coordinator")
    }

    // MARK: Saving

    @Test func childSaveGoesIntoTheParentAndNoFurther() throws {
        let stack = try NestedStack()
        let child = stack.child()
        let added = country(616, in: child)
        let temporaryID = added.objectID
        try child.save()

        #expect(!child.hasChanges)
        #expect(stack.root.hasChanges)
        #expect(stack.root.insertedObjects.count == 1)
        let inRoot = try #require(stack.root.insertedObjects.first)
        #expect(inRoot.objectID == temporaryID, "the parent's object keeps the child's temporary ID")
        #expect(inRoot.objectID.isTemporaryID)
        #expect(code(inRoot) == 616)
        #expect(try stack.storedCodes() == [], "a second coordinator sees nothing until the parent saves")

        try stack.root.save()
        #expect(try stack.storedCodes() == [616])
        #expect(!inRoot.objectID.isTemporaryID)
        // As on Apple the child's object keeps its temporary ID; it still reaches the parent's object.
        #expect(added.objectID.isTemporaryID)
        child.refresh(added, mergeChanges: false)
        #expect(code(added) == 616, "a child's fault for a new object its parent has saved since fires")
        added.setValue(Int16(617), forKey: "numericISO3166Code")
        try child.save()
        #expect(code(inRoot) == 617 && inRoot.isUpdated, "the child's update reaches the saved object")
        try stack.root.save()
        #expect(try stack.storedCodes() == [617])
    }

    /// Apple's child objects keep their temporary IDs after the parent saves, and a fetch there can
    /// return a second instance under the permanent ID. Here the child's object takes the permanent
    /// ID when the parent next names it (a fetch, a fault, a relationship), and stays one instance
    /// (a difference, docs/linux-differences.md).
    @Test func aChildsNewObjectStaysOneInstanceAfterTheParentSaves() throws {
        let stack = try NestedStack()
        let child = stack.child()
        let grandchild = stack.child(of: child)
        let added = country(5, in: grandchild)
        try grandchild.save()
        let inChild = try #require(child.insertedObjects.first)  // (held here: unchanged, the child holds it weakly)
        try child.save()
        try stack.root.save()
        #expect(added.objectID.isTemporaryID && inChild.objectID.isTemporaryID)

        let fetched = try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Country"))
        #expect(fetched.count == 1)
        #expect(fetched.first === inChild, "the child's instance, not a second one")
        #expect(!inChild.objectID.isTemporaryID)
        #expect(try grandchild.fetch(NSFetchRequest<NSManagedObject>(entityName: "Country")).first === added)
        #expect(added.objectID == inChild.objectID)
        #expect(try grandchild.existingObject(with: added.objectID) === added)
    }

    @Test func grandchildSavesReachTheStoreOneLevelAtATime() throws {
        let stack = try NestedStack()
        let child = stack.child()
        let grandchild = stack.child(of: child)
        let poland = country(616, in: grandchild)
        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: grandchild)
        mood.setValue(Date(timeIntervalSinceReferenceDate: 5), forKey: "date")
        mood.setValue(poland, forKey: "country")
        try grandchild.save()
        #expect(child.insertedObjects.count == 2)
        #expect(!stack.root.hasChanges)

        try child.save()
        #expect(stack.root.insertedObjects.count == 2)
        let rootMood = try #require(stack.root.insertedObjects.first { $0.entity.name == "Mood" })
        let rootCountry = try #require(rootMood.value(forKey: "country") as? NSManagedObject)
        #expect(rootCountry.managedObjectContext === stack.root && code(rootCountry) == 616)
        #expect((rootCountry.value(forKey: "moods") as? Set<NSManagedObject>) == [rootMood], "both sides of the relationship arrive")
        #expect(try stack.storedCodes() == [])

        try stack.root.save()
        #expect(try stack.storedCodes() == [616])
        let other = try makeContext(model: stack.model, storeType: NSSQLiteStoreType, at: stack.url)
        let moods = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Mood"))
        #expect(moods.count == 1)
        #expect((moods.first?.value(forKey: "country") as? NSManagedObject).map(code) == 616)
    }

    @Test func childDeletesAndRelationshipChangesArriveAsTheParentsUnsavedChanges() throws {
        let stack = try NestedStack()
        let ids = try stack.saveCountries([1, 2])
        let child = stack.child()
        let first = child.object(with: ids[0])
        let second = child.object(with: ids[1])
        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: child)
        mood.setValue(Date(), forKey: "date")
        mood.setValue(first, forKey: "country")
        try child.save()
        mood.setValue(second, forKey: "country")
        child.delete(first)
        try child.save()

        let rootFirst = stack.root.object(with: ids[0])
        let rootSecond = stack.root.object(with: ids[1])
        #expect(stack.root.deletedObjects == [rootFirst])
        #expect(stack.root.updatedObjects.contains(rootSecond))
        #expect((rootSecond.value(forKey: "moods") as? Set<NSManagedObject>)?.count == 1)
        try stack.root.save()
        #expect(try stack.storedCodes() == [2])
    }

    @Test func childDeletesAParentsNewObject() throws {
        let stack = try NestedStack()
        let added = country(9, in: stack.root)
        let child = stack.child()
        child.delete(child.object(with: added.objectID))
        try child.save()
        #expect(added.isDeleted)
        stack.root.processPendingChanges()
        #expect(stack.root.insertedObjects.isEmpty, "a new object deleted before it was saved is dropped")
        try stack.root.save()
        #expect(try stack.storedCodes() == [])
    }

    /// Apple documents `awakeFromInsert()` as called once in an object's life: the parent's copy of
    /// a child's new object has its values and is not awoken again (our reading; see
    /// docs/linux-differences.md).
    @Test func aPushedNewObjectIsNotAwokenFromInsertAgain() throws {
        let root = try makeContext(model: LifecycleProbe.model())
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = root
        let probe = LifecycleProbe(context: child)
        probe.name = "pushed"
        #expect(probe.events == ["awakeFromInsert"])
        try child.save()
        let inRoot = try #require(root.insertedObjects.first as? LifecycleProbe)
        #expect(inRoot !== probe)
        #expect(inRoot.name == "pushed")
        #expect(!inRoot.events.contains("awakeFromInsert"))
        try root.save()
        #expect(inRoot.events.contains("didSave"))
    }

    // MARK: Reading through the parent

    @Test func childFetchesSeeTheParentsInsertsUpdatesAndDeletes() throws {
        let stack = try NestedStack()
        let ids = try stack.saveCountries([1, 2, 3])
        country(4, in: stack.root)
        stack.root.object(with: ids[1]).setValue(Int16(20), forKey: "numericISO3166Code")
        stack.root.delete(stack.root.object(with: ids[2]))
        let child = stack.child()

        #expect(try fetchedCodes(child) == [1, 4, 20])
        #expect(try fetchedCodes(child, "numericISO3166Code > 10") == [20], "the predicate sees the parent's values")
        #expect(try fetchedCodes(child, pending: false) == [1, 2, 3], "includesPendingChanges off: the stores' rows")
        #expect(try countedCountries(child) == 3)
        #expect(try countedCountries(child, "numericISO3166Code < 10") == 2)
        #expect(try countedCountries(child, "numericISO3166Code < 10", pending: false) == 3)

        // The child's own changes on top of the parent's.
        country(5, in: child)
        child.delete(child.object(with: ids[0]))
        #expect(try fetchedCodes(child) == [4, 5, 20])
        #expect(try countedCountries(child, "numericISO3166Code < 10") == 2)

        let grandchild = stack.child(of: child)
        #expect(try fetchedCodes(grandchild) == [4, 5, 20], "a grandchild sees every ancestor's unsaved changes")
        #expect(try countedCountries(grandchild, "numericISO3166Code < 10") == 2)
        #expect(try fetchedCodes(stack.child()) == [1, 4, 20], "a sibling does not see the child's")
        try child.save()
        #expect(try fetchedCodes(stack.child()) == [4, 5, 20])
        #expect(try fetchedCodes(stack.child(), pending: false) == [1, 2, 3])
    }

    @Test func childFetchesIDsAndLimitsThroughTheParent() throws {
        let stack = try NestedStack()
        try stack.saveCountries([1, 2, 3])
        let added = country(0, in: stack.root)
        let child = stack.child()
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Country")
        request.resultType = .managedObjectIDResultType
        request.sortDescriptors = [NSSortDescriptor(key: "numericISO3166Code", ascending: true)]
        request.fetchLimit = 2
        let ids = try child.fetch(request)
        #expect(ids.count == 2)
        #expect(ids.first == added.objectID, "the parent's new object, by its temporary ID")
    }

    /// Batches and prefetching would read the stores past the parent: a child loads every object
    /// (and `fetchBatched` gives them all) with the parent's values.
    @Test func childBatchedAndPrefetchingFetchesSeeTheParentsValues() throws {
        let stack = try NestedStack()
        let ids = try stack.saveCountries([1, 2, 3])
        stack.root.object(with: ids[0]).setValue(Int16(10), forKey: "numericISO3166Code")
        let child = stack.child()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Country")
        request.sortDescriptors = [NSSortDescriptor(key: "numericISO3166Code", ascending: true)]
        request.fetchBatchSize = 2
        request.relationshipKeyPathsForPrefetching = ["moods"]
        #expect(try child.fetch(request).map(code) == [2, 3, 10])
        #expect(try child.fetchBatched(request).map(code) == [2, 3, 10])
    }

    @Test func childFaultsTakeTheParentsUnsavedValues() throws {
        let stack = try NestedStack()
        let ids = try stack.saveCountries([1])
        let rootCountry = stack.root.object(with: ids[0])
        rootCountry.setValue(Int16(99), forKey: "numericISO3166Code")
        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: stack.root)
        mood.setValue(Date(timeIntervalSinceReferenceDate: 7), forKey: "date")
        mood.setValue(rootCountry, forKey: "country")

        let child = stack.child()
        let fault = child.object(with: ids[0])
        #expect(fault.isFault)
        #expect(code(fault) == 99, "the parent's unsaved value, not the store's 1")
        let moods = try #require(fault.value(forKey: "moods") as? Set<NSManagedObject>)
        #expect(moods.count == 1)
        #expect(moods.first?.objectID == mood.objectID && moods.first?.objectID.isTemporaryID == true)
        #expect(moods.first?.value(forKey: "date") as? Date == Date(timeIntervalSinceReferenceDate: 7))
        #expect((moods.first?.value(forKey: "country") as? NSManagedObject) === fault)

        // A destination the parent deleted is not among the child's, even before its delete rules run.
        let kept = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: stack.root)
        kept.setValue(Date(), forKey: "date")
        kept.setValue(rootCountry, forKey: "country")
        stack.root.delete(mood)
        let otherChild = stack.child()
        let later = otherChild.object(with: ids[0])
        #expect((later.value(forKey: "moods") as? Set<NSManagedObject>)?.map(\.objectID) == [kept.objectID])
    }

    // MARK: IDs

    @Test func anAncestorsTemporaryIDsWorkInDescendants() throws {
        let stack = try NestedStack()
        let added = country(42, in: stack.root)
        let grandchild = stack.child(of: stack.child())
        let fault = grandchild.object(with: added.objectID)
        #expect(code(fault) == 42)
        #expect(!fault.isInserted, "the parent's insert, not the grandchild's")
        #expect(code(try grandchild.existingObject(with: added.objectID)) == 42)

        let unknown = country(1, in: stack.child())  // a sibling's new object the parent never saw
        #expect(throws: OpenCoreDataError.self) { try grandchild.existingObject(with: unknown.objectID) }
        stack.root.delete(added)
        #expect(throws: OpenCoreDataError.self) { try stack.child(of: stack.child()).existingObject(with: added.objectID) }
    }

    @Test func obtainPermanentIDsInAChildComesFromTheRootAndReachesTheAncestors() throws {
        let stack = try NestedStack()
        let child = stack.child()
        let early = country(1, in: child)
        try child.obtainPermanentIDs(for: [early])
        #expect(!early.objectID.isTemporaryID)
        try child.save()
        let rootEarly = try #require(stack.root.registeredObject(for: early.objectID), "the parent's object has the same permanent ID")
        #expect(rootEarly.isInserted)

        // Saved into the parent first, made permanent afterwards: the parent learns the new ID.
        let late = country(2, in: child)
        let temporaryID = late.objectID
        try child.save()
        try child.obtainPermanentIDs(for: [late])
        #expect(!late.objectID.isTemporaryID)
        #expect(stack.root.registeredObject(for: late.objectID).map(code) == 2)
        #expect(stack.root.registeredObject(for: temporaryID) == nil)

        try stack.root.save()
        #expect(try stack.storedCodes() == [1, 2])
        #expect(rootEarly.objectID == early.objectID, "the store keeps the key the child obtained")
        let other = try makeContext(model: stack.model, storeType: NSSQLiteStoreType, at: stack.url)
        let otherID = try #require(other.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: late.objectID.uriRepresentation()))
        #expect(code(try other.existingObject(with: otherID)) == 2)

        // A grandchild's object that its grandparent made permanent takes that ID.
        let grandchild = stack.child(of: child)
        let deep = country(3, in: grandchild)
        try grandchild.save()
        try child.save()
        try stack.root.save()
        try grandchild.obtainPermanentIDs(for: [deep])
        let stored = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Country")).first { code($0) == 3 }
        #expect(deep.objectID.uriRepresentation() == stored?.objectID.uriRepresentation(), "the ID the root's save gave it")
    }

    // MARK: rollback, reset, refresh

    @Test func rollbackResetAndRefreshInAChildUseTheParentsValues() throws {
        let stack = try NestedStack()
        let ids = try stack.saveCountries([1])
        let rootCountry = stack.root.object(with: ids[0])
        rootCountry.setValue(Int16(99), forKey: "numericISO3166Code")
        let child = stack.child()
        let inChild = child.object(with: ids[0])
        inChild.setValue(Int16(5), forKey: "numericISO3166Code")
        child.rollback()
        #expect(code(inChild) == 99, "rollback returns to what the child read from its parent")
        #expect(!child.hasChanges)

        rootCountry.setValue(Int16(50), forKey: "numericISO3166Code")
        child.refresh(inChild, mergeChanges: false)
        #expect(inChild.isFault)
        #expect(code(inChild) == 50, "a refreshed object re-reads its parent")

        let later = Date(timeIntervalSinceReferenceDate: 1000)
        inChild.setValue(later, forKey: "updatedAt")
        rootCountry.setValue(Int16(60), forKey: "numericISO3166Code")
        child.refresh(inChild, mergeChanges: true)
        #expect(code(inChild) == 60)
        #expect(inChild.value(forKey: "updatedAt") as? Date == later, "the child's change is kept on top")

        let added = country(7, in: child)
        child.reset()
        #expect(child.registeredObjects.isEmpty && !child.hasChanges)
        #expect(added.managedObjectContext == nil)
        #expect(try fetchedCodes(child) == [60])
        #expect(stack.root.insertedObjects.isEmpty, "nothing reached the parent")
    }
}
