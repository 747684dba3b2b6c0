import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// `NSManagedObjectContextObjectsDidChange`, posted by `processPendingChanges()` with the changes
/// since the last one, coalesced (Apple: "posts only when there are changes to the context's
/// registered managed objects. It doesn't post when a fetch adds managed objects").
@Suite("ObjectsDidChange")
struct ObjectsDidChangeTests {
    /// A context with one saved department and one saved employee in it.
    private func savedGraph() throws -> (TestStore, NSManagedObjectContext, NSManagedObject, NSManagedObject) {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let department = insertObject("Department", ["name": "A", "budget": 1.0], into: context)
        let employee = insertObject("Employee", ["name": "E"], into: context)
        try context.save()
        return (store, context, department, employee)
    }

    @Test func insertedUpdatedAndDeletedOfOneEventComeInOneNotification() throws {
        let (store, context, department, employee) = try savedGraph()
        _ = store
        let recorder = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        let newDepartment = insertObject("Department", ["name": "B"], into: context)
        department.setValue(2.0, forKey: "budget")
        context.delete(employee)
        #expect(recorder.count == 0)  // nothing until the event ends
        context.processPendingChanges()
        #expect(recorder.count == 1)
        let note = try #require(recorder.last)
        #expect(note.object as? NSManagedObjectContext === context)
        #expect(note.keys == [NSDeletedObjectsKey, NSInsertedObjectsKey, NSUpdatedObjectsKey].sorted())
        #expect(note.objects(NSInsertedObjectsKey) == [newDepartment])
        #expect(note.objects(NSUpdatedObjectsKey) == [department])
        #expect(note.objects(NSDeletedObjectsKey) == [employee])
        // The newer names are the same notification and keys.
        #expect(NSManagedObjectContext.didChangeObjectsNotification == .NSManagedObjectContextObjectsDidChange)
        #expect(note.objects(NSManagedObjectContext.NotificationKey.insertedObjects.rawValue) == [newDepartment])
    }

    @Test func nothingIsPostedWhenNothingChanged() throws {
        let (store, _, _, _) = try savedGraph()
        let context = store.newContext()
        let recorder = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))
        _ = fetched.first?.value(forKey: "name")  // a fetch and a fault are not changes
        context.processPendingChanges()
        #expect(recorder.count == 0)
        fetched.first?.setValue(5.0, forKey: "budget")
        context.processPendingChanges()
        #expect(recorder.count == 1)
        context.processPendingChanges()  // reported already: nothing new
        #expect(recorder.count == 1)
    }

    @Test func anObjectInsertedAndDeletedInOneEventIsInNeitherSet() throws {
        let (store, context, department, _) = try savedGraph()
        _ = store
        let recorder = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        let transient = insertObject("Department", ["name": "T"], into: context)
        context.delete(transient)
        context.processPendingChanges()
        #expect(recorder.count == 0)
        // Changed twice in one event: reported once, as updated; an inserted object changed is inserted only.
        department.setValue(3.0, forKey: "budget")
        department.setValue(4.0, forKey: "budget")
        let fresh = insertObject("Department", ["name": "F"], into: context)
        fresh.setValue(9.0, forKey: "budget")
        context.processPendingChanges()
        #expect(recorder.count == 1)
        #expect(recorder.last?.objects(NSUpdatedObjectsKey) == [department])
        #expect(recorder.last?.objects(NSInsertedObjectsKey) == [fresh])
    }

    @Test func eachEventReportsOnlyItsOwnChanges() throws {
        let (store, context, department, _) = try savedGraph()
        _ = store
        let recorder = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        let inserted = insertObject("Department", ["name": "N"], into: context)
        context.processPendingChanges()
        #expect(recorder.last?.objects(NSInsertedObjectsKey) == [inserted])
        department.setValue(7.0, forKey: "budget")
        context.processPendingChanges()
        #expect(recorder.count == 2)
        #expect(recorder.last?.keys == [NSUpdatedObjectsKey])  // the insert was reported already
        department.setValue(8.0, forKey: "budget")  // changed again: reported again
        context.processPendingChanges()
        #expect(recorder.count == 3)
        #expect(recorder.last?.objects(NSUpdatedObjectsKey) == [department])
        // Reported inserted, then deleted before any save: reported deleted.
        context.delete(inserted)
        context.processPendingChanges()
        #expect(recorder.count == 4)
        #expect(recorder.last?.keys == [NSDeletedObjectsKey])
        #expect(recorder.last?.objects(NSDeletedObjectsKey) == [inserted])
    }

    @Test func refreshReportsRefreshedAndResetReportsInvalidatedAll() throws {
        let (store, context, department, employee) = try savedGraph()
        _ = store
        let recorder = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        context.refresh(department, mergeChanges: false)
        context.processPendingChanges()
        #expect(recorder.count == 1)
        #expect(recorder.last?.keys == [NSRefreshedObjectsKey])
        #expect(recorder.last?.objects(NSRefreshedObjectsKey) == [department])
        let ids = Set([department.objectID, employee.objectID])
        context.reset()
        #expect(recorder.count == 2)
        #expect(recorder.last?.keys == [NSInvalidatedAllObjectsKey])
        let invalidated = recorder.last?.userInfo?[NSInvalidatedAllObjectsKey] as? [NSManagedObjectID] ?? []
        #expect(Set(invalidated) == ids)
    }

    @Test func rollbackReportsDiscardedInsertsAsDeletedAndRestoredObjectsAsRefreshed() throws {
        let (store, context, department, _) = try savedGraph()
        _ = store
        let recorder = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        let inserted = insertObject("Department", ["name": "R"], into: context)
        department.setValue(6.0, forKey: "budget")
        context.processPendingChanges()
        context.rollback()  // Apple does not document the keys: these keep an observer's list right
        #expect(recorder.count == 2)
        #expect(recorder.last?.objects(NSDeletedObjectsKey) == [inserted])
        #expect(recorder.last?.objects(NSRefreshedObjectsKey) == [department])
    }

    @Test func aSavePostsObjectsDidChangeThenWillSaveThenDidSave() throws {
        let (store, context, department, employee) = try savedGraph()
        _ = store
        let order = Locked<[String]>([])
        let names: [(Notification.Name, String)] = [
            (.NSManagedObjectContextObjectsDidChange, "change"), (.NSManagedObjectContextWillSave, "willSave"),
            (.NSManagedObjectContextDidSave, "didSave"),
        ]
        let tokens = names.map { name, label in
            NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { _ in order.withLock { $0.append(label) } }
        }
        defer { tokens.forEach(NotificationCenter.default.removeObserver) }
        let didSave = NotificationRecorder(.NSManagedObjectContextDidSave, object: context)
        let inserted = insertObject("Department", ["name": "S"], into: context)
        department.setValue(11.0, forKey: "budget")
        context.delete(employee)
        try context.save()
        #expect(order.withLock { $0 } == ["change", "willSave", "didSave"])
        let note = try #require(didSave.last)
        #expect(note.objects(NSInsertedObjectsKey) == [inserted])
        #expect(note.objects(NSUpdatedObjectsKey) == [department])
        #expect(note.objects(NSDeletedObjectsKey) == [employee])
        // After the save nothing is pending: the next event reports only what is new.
        order.withLock { $0.removeAll() }
        context.processPendingChanges()
        #expect(order.withLock { $0 }.isEmpty)
    }

    /// The did-save lists every object saved, also when earlier events reported some of them (its
    /// sets are then not the save's ObjectsDidChange's) and when willSave changed more.
    @Test func theDidSaveListsEveryObjectSavedWhateverWasReportedBefore() throws {
        let (store, context, department, employee) = try savedGraph()
        _ = store
        let didSave = NotificationRecorder(.NSManagedObjectContextDidSave, object: context)
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        let first = insertObject("Department", ["name": "1"], into: context)
        department.setValue(20.0, forKey: "budget")
        context.processPendingChanges()  // reported now
        let second = insertObject("Department", ["name": "2"], into: context)
        employee.setValue("F", forKey: "name")
        try context.save()
        #expect(changes.count == 2)
        #expect(changes.last?.objects(NSInsertedObjectsKey) == [second])
        #expect(changes.last?.objects(NSUpdatedObjectsKey) == [employee])
        let note = try #require(didSave.last)
        #expect(note.objects(NSInsertedObjectsKey) == [first, second])
        #expect(note.objects(NSUpdatedObjectsKey) == [department, employee])
        #expect(note.objects(NSDeletedObjectsKey).isEmpty)
    }

    @Test func aSavePostsDidSaveObjectIDsWhenAskedFor() throws {
        let (store, context, department, employee) = try savedGraph()
        _ = store
        let ids = NotificationRecorder(.NSManagedObjectContextDidSaveObjectIDs, object: context)
        department.setValue(12.0, forKey: "budget")
        try context.save()
        #expect(ids.count == 0, "off by default on Linux (see linux-differences.md)")
        NSManagedObjectContext.postsDidSaveObjectIDsNotification = true
        defer { NSManagedObjectContext.postsDidSaveObjectIDsNotification = false }
        let inserted = insertObject("Department", ["name": "I"], into: context)
        department.setValue(13.0, forKey: "budget")
        context.delete(employee)
        try context.save()
        let info = try #require(ids.last?.userInfo)
        #expect(info[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID> == [inserted.objectID])
        #expect(info[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID> == [department.objectID])
        #expect(info[NSDeletedObjectIDsKey] as? Set<NSManagedObjectID> == [employee.objectID])
        #expect(!inserted.objectID.isTemporaryID)
        #expect(NSManagedObjectContext.didSaveObjectIDsNotification == .NSManagedObjectContextDidSaveObjectIDs)
    }

    @Test func aPerformBlockEndsTheEventOnTheContextsQueue() throws {
        let (store, context, _, _) = try savedGraph()
        _ = store
        let seen = Locked<(inserted: Int, onMainThread: Bool)?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { note in
            seen.withLock { $0 = (note.objects(NSInsertedObjectsKey).count, Thread.isMainThread) }
            arrived.signal()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        context.perform { insertObject("Department", ["name": "P"], into: context) }  // no processPendingChanges() here
        #expect(arrived.wait(timeout: .now() + 5) == .success)
        let result = seen.withLock { $0 }
        #expect(result?.inserted == 1)
        #expect(result?.onMainThread == false)  // a private-queue context posts on its own queue
    }
}
