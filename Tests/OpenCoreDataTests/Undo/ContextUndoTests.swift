import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// A context's undo: `processPendingChanges()` registers undo for the changes since its last call,
/// and `undo()`/`redo()` revert and reapply inserts, updates, deletes and relationship changes,
/// inverses included (Apple's documented semantics).
@Suite("NSManagedObjectContext undo")
struct ContextUndoTests {
    /// A saved department "Apps" with employee Ann, in a context with an undo manager that groups
    /// explicitly (the tests open and close groups as an app's events would).
    private func fixture() throws -> (context: NSManagedObjectContext, undo: UndoManager, apps: NSManagedObject, ann: NSManagedObject) {
        let coordinator = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSInMemoryStoreType)
        let context = StoreHarness.context(coordinator)
        let apps = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
        apps.setValue("Apps", forKey: "name")
        let ann = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        ann.setValue("Ann", forKey: "name")
        ann.setValue(apps, forKey: "department")
        try context.save()
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        return (context, undoManager, apps, ann)
    }

    /// Runs `body` in an undo group, as one event of an app.
    private func event(_ undoManager: UndoManager, _ body: () -> Void) {
        undoManager.beginUndoGrouping()
        body()
        undoManager.endUndoGrouping()  // its checkpoint makes the context record the changes
    }

    @Test func thereIsNoUndoManagerByDefault() throws {
        let context = try makeContext(model: TestModels.company())
        #expect(context.undoManager == nil)
        context.undo()  // nothing to do
        context.redo()
    }

    /// The context is the target of its undo operations and owns its undo manager; the manager does
    /// not retain its targets (Apple), so a dropped context is freed.
    @Test func aContextWithUndoIsFreedWhenDropped() throws {
        weak var weakContext: NSManagedObjectContext?
        try {
            let (context, undoManager, _, ann) = try fixture()
            weakContext = context
            event(undoManager) { ann.setValue("Anna", forKey: "name") }
            #expect(undoManager.canUndo)
            context.reset()  // the objects' own cycle (Apple's documented behaviour) is not at issue here
        }()
        #expect(weakContext == nil)
    }

    @Test func anAttributeChangeIsUndoneAndRedone() throws {
        let (context, undoManager, _, ann) = try fixture()
        event(undoManager) { ann.setValue("Anna", forKey: "name") }
        #expect(undoManager.canUndo)
        context.undo()
        #expect(ann.value(forKey: "name") as? String == "Ann")
        #expect(undoManager.canRedo)
        context.redo()
        #expect(ann.value(forKey: "name") as? String == "Anna")
        #expect(context.updatedObjects == [ann])
    }

    @Test func anInsertIsUndoneAndRedone() throws {
        let (context, undoManager, apps, _) = try fixture()
        var bob: NSManagedObject!
        event(undoManager) {
            bob = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            bob.setValue("Bob", forKey: "name")
            bob.setValue(apps, forKey: "department")
        }
        context.undo()
        #expect(!context.insertedObjects.contains(bob))
        #expect(bob.managedObjectContext == nil)
        #expect((apps.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 1, "the inverse lost Bob too")
        context.redo()
        #expect(context.insertedObjects == [bob])
        #expect(bob.managedObjectContext === context)
        #expect((apps.value(forKey: "employees") as? Set<NSManagedObject>)?.contains(bob) == true)
        try context.save()
        let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(Set(fetched.map { $0.value(forKey: "name") as! String }) == ["Ann", "Bob"])
    }

    @Test func aDeleteAndItsNullifiedInverseAreUndoneAndRedone() throws {
        let (context, undoManager, apps, ann) = try fixture()
        event(undoManager) { context.delete(ann) }
        #expect((apps.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true, "the delete rule ran")
        context.undo()
        #expect(!ann.isDeleted)
        #expect(context.deletedObjects.isEmpty)
        #expect(ann.value(forKey: "department") as? NSManagedObject === apps)
        #expect((apps.value(forKey: "employees") as? Set<NSManagedObject>) == [ann])
        context.redo()
        #expect(ann.isDeleted)
        #expect(context.deletedObjects == [ann])
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 0)
    }

    @Test func aRelationshipChangeIsUndoneOnBothSides() throws {
        let (context, undoManager, apps, ann) = try fixture()
        var books: NSManagedObject!
        event(undoManager) {
            books = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
            books.setValue("Books", forKey: "name")
        }
        event(undoManager) { ann.setValue(books, forKey: "department") }
        #expect((apps.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        context.undo()
        #expect(ann.value(forKey: "department") as? NSManagedObject === apps)
        #expect((apps.value(forKey: "employees") as? Set<NSManagedObject>) == [ann])
        #expect((books.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(books.managedObjectContext === context, "only the last group was undone")
        context.undo()
        #expect(books.managedObjectContext == nil)
        context.redo()
        context.redo()
        #expect(ann.value(forKey: "department") as? NSManagedObject === books)
        #expect((books.value(forKey: "employees") as? Set<NSManagedObject>) == [ann])
    }

    /// Apple: undoing a deletion after the deletion was saved inserts the object again, with the
    /// values and relationships it had; the next save writes it back. Redo deletes it again.
    @Test func aSavedDeletionIsUndoneAsAnInsertThatTheNextSaveWrites() throws {
        let (context, undoManager, apps, ann) = try fixture()
        event(undoManager) { context.delete(ann) }
        try context.save()
        #expect(ann.managedObjectContext == nil)
        context.undo()
        #expect(ann.managedObjectContext === context)
        #expect(context.insertedObjects == [ann])
        #expect(ann.value(forKey: "name") as? String == "Ann")
        #expect(ann.value(forKey: "department") as? NSManagedObject === apps)
        #expect(apps.value(forKey: "employees") as? Set<NSManagedObject> == [ann])
        try context.save()
        let reader = StoreHarness.context(try #require(context.persistentStoreCoordinator))
        let employees = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(employees.map { $0.value(forKey: "name") as? String } == ["Ann"])
        #expect((employees.first?.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String == "Apps")
        context.redo()
        #expect(ann.isDeleted)
        #expect(apps.value(forKey: "employees") as? Set<NSManagedObject> == [])
    }

    @Test func aChangeSavedIsUndoneAsAnUnsavedChange() throws {
        let (context, undoManager, _, ann) = try fixture()
        event(undoManager) { ann.setValue("Anna", forKey: "name") }
        try context.save()
        context.undo()
        #expect(ann.value(forKey: "name") as? String == "Ann")
        #expect(context.hasChanges, "Apple: undo after a save makes the context dirty again")
        try context.save()
        let other = StoreHarness.context(context.persistentStoreCoordinator!)
        let fetched = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(fetched.first?.value(forKey: "name") as? String == "Ann")
    }

    @Test func changesBeforeTheUndoManagerAreNotUndone() throws {
        let (context, _, _, ann) = try fixture()
        context.undoManager = nil
        ann.setValue("Anna", forKey: "name")
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        event(undoManager) { ann.setValue("Annie", forKey: "name") }
        context.undo()
        #expect(ann.value(forKey: "name") as? String == "Anna")
        #expect(!undoManager.canUndo)
    }

    @Test func groupingByEventKeepsAnEventsChangesTogether() throws {
        let (context, _, apps, ann) = try fixture()
        let undoManager = UndoManager()  // groups by event; this thread's run loop never ends the event
        context.undoManager = undoManager
        ann.setValue("Anna", forKey: "name")
        context.processPendingChanges()
        #expect(undoManager.groupingLevel == 1, "the first registration opened the event's group")
        apps.setValue("Applications", forKey: "name")
        context.undo()  // records the pending change, closes the group and undoes it
        #expect(ann.value(forKey: "name") as? String == "Ann")
        #expect(apps.value(forKey: "name") as? String == "Apps")
    }

    @Test func pendingChangesAreRecordedWhenTheUndoManagerIsAskedDirectly() throws {
        let (context, undoManager, _, ann) = try fixture()
        ann.setValue("Anna", forKey: "name")  // no processPendingChanges(): the checkpoint records it
        undoManager.groupsByEvent = true
        undoManager.undo()
        #expect(ann.value(forKey: "name") as? String == "Ann")
        ann.setValue("Annie", forKey: "name")
        #expect(!undoManager.canRedo, "a new change clears the redo stack (canRedo records pending changes first)")
        withExtendedLifetime(context) {}
    }

    @Test func rollbackEmptiesTheUndoStack() throws {
        let (context, undoManager, _, ann) = try fixture()
        event(undoManager) { ann.setValue("Anna", forKey: "name") }
        context.rollback()
        #expect(!undoManager.canUndo)
        #expect(ann.value(forKey: "name") as? String == "Ann")
    }

    @Test func disabledRegistrationRecordsNothing() throws {
        let (context, undoManager, _, ann) = try fixture()
        undoManager.disableUndoRegistration()
        event(undoManager) { ann.setValue("Anna", forKey: "name") }
        undoManager.enableUndoRegistration()
        event(undoManager) { ann.setValue("Annie", forKey: "name") }
        context.undo()
        #expect(ann.value(forKey: "name") as? String == "Anna")
        #expect(!undoManager.canUndo)
    }

    @Test func snapshotEventsTellWhatWasUndone() throws {
        final class Probe: NSManagedObject {
            var events: [String] = []
            override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
                super.awake(fromSnapshotEvents: flags)
                if flags.contains(.undoUpdate) { events.append("undoUpdate") }
                if flags.contains(.undoInsertion) { events.append("undoInsertion") }
                if flags.contains(.undoDeletion) { events.append("undoDeletion") }
            }
        }
        let entity = NSEntityDescription(name: "Probe", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        entity.managedObjectClassName = String(reflecting: Probe.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let context = try makeContext(model: model)
        let probe = Probe(context: context)
        try context.save()
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        event(undoManager) { probe.setValue("x", forKey: "name") }
        context.undo()
        event(undoManager) { context.delete(probe) }
        context.undo()
        var other: Probe!
        event(undoManager) { other = Probe(context: context) }
        context.undo()
        #expect(other.events == ["undoInsertion"])
        #expect(probe.events == ["undoUpdate", "undoDeletion"])
    }
}
