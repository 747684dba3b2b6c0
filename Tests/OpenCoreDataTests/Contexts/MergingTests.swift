import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Merging another context's save: `mergeChanges(fromContextDidSave:)`,
/// `mergeChanges(fromRemoteContextSave:into:)` and `automaticallyMergesChangesFromParent` between
/// siblings on one coordinator. Apple: the merge "refreshes any objects which have been updated in
/// the other context, faults in any newly-inserted objects, and invokes delete(_:) on those which
/// have been deleted"; the merged objects come in the receiver's ObjectsDidChange.
@Suite("Merging between contexts")
struct MergingTests {
    /// Saved: departments D (budget 1) and D2, employee E; `reader` has D (loaded) and E registered,
    /// not D2.
    private struct Fixture {
        let store: TestStore
        let writer: NSManagedObjectContext
        let reader: NSManagedObjectContext
        let d: NSManagedObjectID, d2: NSManagedObjectID, e: NSManagedObjectID
        let readerD: NSManagedObject, readerE: NSManagedObject

        init() throws {
            let store = try TestStore(NSSQLiteStoreType)
            let writer = store.newContext(), reader = store.newContext()
            let (d, d2, e) = try writer.performAndWait {
                let d = insertObject("Department", ["name": "D", "budget": 1.0], into: writer)
                let d2 = insertObject("Department", ["name": "D2"], into: writer)
                let e = insertObject("Employee", ["name": "E"], into: writer)
                try writer.save()
                return (d.objectID, d2.objectID, e.objectID)
            }
            let (readerD, readerE) = try reader.performAndWait {
                (try reader.existingObject(with: d), reader.object(with: e))
            }
            (self.store, self.writer, self.reader) = (store, writer, reader)
            (self.d, self.d2, self.e, self.readerD, self.readerE) = (d, d2, e, readerD, readerE)
        }

        /// Saves in `writer`: inserts N, sets D's and D2's budgets, deletes E; returns the did-save
        /// notification and N's ID.
        func writerSaves() throws -> (Notification, NSManagedObjectID) {
            let didSave = NotificationRecorder(.NSManagedObjectContextDidSave, object: writer)
            let n: NSManagedObjectID = try writer.performAndWait {
                let n = insertObject("Department", ["name": "N"], into: writer)
                try writer.existingObject(with: d).setValue(2.0, forKey: "budget")
                try writer.existingObject(with: d2).setValue(5.0, forKey: "budget")
                writer.delete(try writer.existingObject(with: e))
                try writer.save()
                return n.objectID
            }
            return (try #require(didSave.last), n)
        }
    }

    @Test func aDidSaveMergesInsertsUpdatesAndDeletesIntoASiblingOnItsQueue() throws {
        let f = try Fixture()
        let (note, n) = try f.writerSaves()
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: f.reader)
        let merged = NotificationRecorder(.NSManagedObjectContextDidMergeChangesObjectIDs, object: f.reader)
        f.reader.perform { f.reader.mergeChanges(fromContextDidSave: note) }  // the reader's own queue
        #expect(changes.wait())
        let change = try #require(changes.last)
        try f.reader.performAndWait {
            // Inserted: faulted in (registered) and reported inserted.
            let inserted = try #require(f.reader.registeredObject(for: n))
            #expect(change.objects(NSInsertedObjectsKey) == [inserted])
            // Updated and registered: refreshed, with the new value.
            #expect(change.objects(NSRefreshedObjectsKey) == [f.readerD])
            #expect(f.readerD.value(forKey: "budget") as? Double == 2.0)
            // Updated, not registered: not faulted in.
            #expect(f.reader.registeredObject(for: f.d2) == nil)
            // Deleted and registered: gone from the context, reported deleted.
            #expect(change.objects(NSDeletedObjectsKey) == [f.readerE])
            #expect(f.reader.registeredObject(for: f.e) == nil)
            #expect(!f.reader.hasChanges)  // nothing to save: the deletion is the writer's
        }
        #expect(change.objects(NSUpdatedObjectsKey).isEmpty)
        let ids = try #require(merged.last?.userInfo)
        #expect(ids[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID> == [n])
        #expect(ids[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID> == [f.d])
        #expect(ids[NSDeletedObjectIDsKey] as? Set<NSManagedObjectID> == [f.e])
        #expect(NSManagedObjectContext.didMergeChangesObjectIDsNotification == .NSManagedObjectContextDidMergeChangesObjectIDs)
    }

    @Test func aMergeKeepsTheReceiversUnsavedChanges() throws {
        let f = try Fixture()
        f.reader.performAndWait { f.readerD.setValue("local", forKey: "name") }
        let (note, _) = try f.writerSaves()
        f.reader.performAndWait {
            f.reader.mergeChanges(fromContextDidSave: note)
            #expect(f.readerD.value(forKey: "name") as? String == "local")
            #expect(f.readerD.value(forKey: "budget") as? Double == 2.0)
            #expect(f.readerD.hasChanges)
        }
        // The receiver's own change still saves, over the merged row.
        try f.reader.performAndWait { try f.reader.save() }
        let check = f.store.newContext()
        try check.performAndWait {
            let d = try check.existingObject(with: f.d)
            #expect(d.value(forKey: "name") as? String == "local")
            #expect(d.value(forKey: "budget") as? Double == 2.0)
        }
    }

    @Test func aRemoteSaveMergesObjectIDsAndURIs() throws {
        let f = try Fixture()
        _ = try f.writerSaves()  // the rows changed; the reader has not heard of it
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: f.reader)
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [
            NSUpdatedObjectsKey: [f.d.uriRepresentation()],  // a URI
            NSDeletedObjectIDsKey: Set([f.e]),  // an object-ID key with a set of IDs
        ], into: [f.reader])
        let change = try #require(changes.last)
        #expect(change.objects(NSRefreshedObjectsKey) == [f.readerD])
        #expect(change.objects(NSDeletedObjectsKey) == [f.readerE])
        f.reader.performAndWait {
            #expect(f.readerD.value(forKey: "budget") as? Double == 2.0)
            #expect(f.reader.registeredObject(for: f.e) == nil)
        }
    }

    @Test func automaticMergingReachesAMainQueueContextThroughTheMainQueue() async throws {
        let store = try TestStore(NSSQLiteStoreType)
        let view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = store.coordinator
        view.automaticallyMergesChangesFromParent = true
        let mainKey = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: mainKey, value: 1)
        let onMain = Locked<[Bool]>([])
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: view, queue: nil) { _ in
            onMain.withLock { $0.append(DispatchQueue.getSpecific(key: mainKey) == 1) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: view)
        let background = store.newContext()
        let id: NSManagedObjectID = try await background.perform {
            let department = insertObject("Department", ["name": "bg"], into: background)
            try background.save()
            return department.objectID
        }
        // The merge is queued on the main queue, which the test runner drains while this waits.
        for _ in 0..<500 where changes.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(changes.count == 1)
        #expect(onMain.withLock { $0 } == [true])
        let inserted = changes.last?.objects(NSInsertedObjectsKey) ?? []
        #expect(inserted.map(\.objectID) == [id])
        view.automaticallyMergesChangesFromParent = false
    }

    @Test func automaticMergingReachesAPrivateSiblingAndSkipsOthers() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let merging = store.newContext()
        merging.automaticallyMergesChangesFromParent = true
        let bystander = store.newContext()  // does not merge automatically
        let otherStore = try TestStore(NSSQLiteStoreType)
        let elsewhere = otherStore.newContext()  // merges, but on another coordinator
        elsewhere.automaticallyMergesChangesFromParent = true
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: merging)
        let bystanderChanges = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: bystander)
        let elsewhereChanges = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: elsewhere)
        let writer = store.newContext()
        let department = try writer.performAndWait {
            let department = insertObject("Department", ["name": "x"], into: writer)
            try writer.save()
            return department
        }
        #expect(changes.wait())
        #expect(changes.last?.objects(NSInsertedObjectsKey).map(\.objectID) == [department.objectID])
        // The merging context has the row; an update is merged as a refresh.
        let registered = merging.performAndWait { () -> NSManagedObject? in
            let object = merging.registeredObject(for: department.objectID)
            _ = object?.value(forKey: "name")  // loaded, so that the update refreshes it
            return object
        }
        try writer.performAndWait {
            department.setValue("y", forKey: "name")
            try writer.save()
        }
        #expect(changes.wait())
        #expect(changes.count == 2)
        if registered != nil { #expect(changes.last?.objects(NSRefreshedObjectsKey).map(\.objectID) == [department.objectID]) }
        merging.performAndWait {
            if let registered { #expect(registered.value(forKey: "name") as? String == "y") }
        }
        #expect(bystanderChanges.count == 0)
        #expect(elsewhereChanges.count == 0)
        merging.automaticallyMergesChangesFromParent = false
        elsewhere.automaticallyMergesChangesFromParent = false
    }

    /// Apple's `performAndWait` runs on the context's queue after the blocks queued before it,
    /// automatic merges among them: a `performAndWait` that starts after a sibling's save sees the
    /// save, even while the merge's block has not run yet. Here the merging context's queue is
    /// held busy (a block that does not take the context, waiting on a semaphore) until after the
    /// `performAndWait`, so the merge's block is still queued when it runs.
    @Test func performAndWaitAfterASiblingsSaveSeesItsMerge() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let merging = store.newContext()
        merging.automaticallyMergesChangesFromParent = true
        defer { merging.automaticallyMergesChangesFromParent = false }
        let writer = store.newContext()
        let department = try writer.performAndWait {
            let department = insertObject("Department", ["name": "x"], into: writer)
            try writer.save()
            return department
        }
        let held = try merging.performAndWait {
            let object = try merging.existingObject(with: department.objectID)
            _ = object.value(forKey: "name")
            return object
        }
        let busy = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        merging.queue.async { started.signal(); busy.wait() }
        started.wait()
        try writer.performAndWait {
            department.setValue("y", forKey: "name")
            try writer.save()
        }
        merging.performAndWait {
            #expect(held.value(forKey: "name") as? String == "y")
        }
        busy.signal()
        merging.performAndWait {}
        #expect(held.value(forKey: "name") as? String == "y", "merged once")
    }

    /// A child that merges automatically gets what a sibling child saves into their parent
    /// context (Apple: "changes saved to its persistent store coordinator or parent context"); a
    /// context on the coordinator does not, since that save went no further than the parent.
    @Test func automaticMergingReachesASiblingChildThroughTheirParent() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let parent = store.newContext()
        let department = try parent.performAndWait {
            let department = insertObject("Department", ["name": "x"], into: parent)
            try parent.save()
            return department.objectID
        }
        let merging = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        merging.parent = parent
        merging.automaticallyMergesChangesFromParent = true
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.parent = parent
        let onCoordinator = store.newContext()
        onCoordinator.automaticallyMergesChangesFromParent = true
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: merging)
        let coordinatorChanges = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: onCoordinator)
        let registered = try merging.performAndWait {
            let object = try merging.existingObject(with: department)
            #expect(object.value(forKey: "name") as? String == "x")
            return object
        }
        let inserted = try writer.performAndWait {
            try writer.existingObject(with: department).setValue("y", forKey: "name")
            let inserted = insertObject("Department", ["name": "new"], into: writer)
            try writer.save()
            return inserted.objectID
        }
        #expect(changes.wait())
        #expect(changes.last?.objects(NSRefreshedObjectsKey).map(\.objectID) == [department])
        #expect(changes.last?.objects(NSInsertedObjectsKey).map(\.objectID) == [inserted])
        merging.performAndWait {
            #expect(registered.value(forKey: "name") as? String == "y", "the parent's unsaved value, merged")
            #expect(merging.object(with: inserted).value(forKey: "name") as? String == "new")
        }
        #expect(coordinatorChanges.count == 0, "the child's save did not reach the store")
        merging.automaticallyMergesChangesFromParent = false
        onCoordinator.automaticallyMergesChangesFromParent = false
    }
}
