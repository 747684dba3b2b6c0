import Foundation
import Synchronization

/// Merging another context's saved changes: `mergeChanges(fromContextDidSave:)`, the class method
/// `mergeChanges(fromRemoteContextSave:into:)`, and `automaticallyMergesChangesFromParent` for
/// contexts whose parent is their coordinator (siblings).
///
/// Every form comes down to ``NSManagedObjectContext/_mergeChanges(_:)`` with the object IDs saved,
/// run on the receiving context's queue:
/// - inserted: registered as faults (Apple: "faults in any newly-inserted objects"), reported in
///   ObjectsDidChange under `NSInsertedObjectsKey`;
/// - updated: only objects the receiver has registered. Unchanged ones turn into faults that load
///   again in batches on next access; ones with unsaved changes are refreshed keeping those changes
///   (`refresh(_:mergeChanges: true)`). Both are reported under `NSRefreshedObjectsKey`;
/// - deleted: registered objects leave the context as after a save of their deletion (their
///   unsaved changes dropped), reported under `NSDeletedObjectsKey`.
/// Objects the receiver has not registered are not faulted in, inserted ones aside. Then the
/// receiver posts ObjectsDidChange and `didMergeChangesObjectIDsNotification`.
extension NSManagedObjectContext {
    /// Object IDs saved by another context, to merge (``_mergeChanges(_:)``).
    package struct MergedChanges: Sendable {
        package var inserted: [NSManagedObjectID] = []
        package var updated: [NSManagedObjectID] = []
        package var deleted: [NSManagedObjectID] = []
        /// IDs whose objects are invalidated (turned into faults and reported under
        /// `NSInvalidatedObjectsKey`).
        package var invalidated: [NSManagedObjectID] = []

        package init(inserted: [NSManagedObjectID] = [], updated: [NSManagedObjectID] = [],
                     deleted: [NSManagedObjectID] = [], invalidated: [NSManagedObjectID] = []) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
            self.invalidated = invalidated
        }

        package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && invalidated.isEmpty }

        /// The IDs of a did-save notification's user info (objects, or object IDs, or URIs resolved
        /// through `coordinator`), under the object keys and the object-ID keys.
        package init(userInfo: [AnyHashable: Any], coordinator: NSPersistentStoreCoordinator?) {
            func ids(_ keys: String...) -> [NSManagedObjectID] {
                var result: [NSManagedObjectID] = []
                for key in keys { result += Self.objectIDs(in: userInfo[key], coordinator: coordinator) }
                return result
            }
            inserted = ids(NSInsertedObjectsKey, NSInsertedObjectIDsKey)
            updated = ids(NSUpdatedObjectsKey, NSUpdatedObjectIDsKey, NSRefreshedObjectsKey, NSRefreshedObjectIDsKey)
            deleted = ids(NSDeletedObjectsKey, NSDeletedObjectIDsKey)
            invalidated = ids(NSInvalidatedObjectsKey, NSInvalidatedObjectIDsKey)
        }

        /// The object IDs in a user-info value: a set or array of objects, IDs or URIs; anything
        /// else (and URIs no store of `coordinator` knows) is skipped.
        static func objectIDs(in value: Any?, coordinator: NSPersistentStoreCoordinator?) -> [NSManagedObjectID] {
            let elements: [Any]
            switch value {
            case nil: return []
            case let set as Set<NSManagedObject>: return set.map(\.objectID)
            case let set as Set<NSManagedObjectID>: return Array(set)
            case let array as [NSManagedObject]: return array.map(\.objectID)
            case let array as [NSManagedObjectID]: return array
            case let set as NSSet: elements = set.allObjects
            case let array as NSArray: elements = array.map { $0 }
            case let set as Set<AnyHashable>: elements = set.map(\.base)
            case let array as [Any]: elements = array
            default: return []
            }
            return elements.compactMap { element in
                switch element {
                case let object as NSManagedObject: return object.objectID
                case let id as NSManagedObjectID: return id
                case let url as URL: return coordinator?.managedObjectID(forURIRepresentation: url)
                case let url as NSURL: return coordinator?.managedObjectID(forURIRepresentation: url as URL)
                case let string as String: return URL(string: string).flatMap { coordinator?.managedObjectID(forURIRepresentation: $0) }
                default: return nil
                }
            }
        }
    }

    /// Merges the changes of another context's did-save notification into this context.
    ///
    /// Inserted objects are registered as faults, registered objects that were updated are
    /// refreshed (keeping this context's unsaved changes to them), and registered objects that were
    /// deleted leave the context; then ObjectsDidChange reports them (inserted, refreshed, deleted)
    /// and `didMergeChangesObjectIDsNotification` is posted. Objects this context has not
    /// registered are not faulted in, inserted ones aside. The user info may also hold object IDs
    /// (`NSInsertedObjectIDsKey` and its siblings).
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: background, queue: nil) { note in
    ///     viewContext.perform { viewContext.mergeChanges(fromContextDidSave: note) }
    /// }
    /// ```
    ///
    /// Related Core Data documentation: [mergeChanges(fromContextDidSave:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/mergechanges(fromcontextdidsave:))
    public func mergeChanges(fromContextDidSave notification: Notification) {
        guard let userInfo = notification.userInfo else { return }
        let changes = MergedChanges(userInfo: userInfo, coordinator: persistentStoreCoordinator)
        performAndWait { _mergeChanges(changes) }
    }

    /// Merges changes saved elsewhere (another coordinator, another process, a batch request) into
    /// each of `contexts`, on each context's queue: `changeNotificationData` holds sets or arrays of
    /// object IDs or their URIs under `NSInsertedObjectsKey`, `NSUpdatedObjectsKey` and
    /// `NSDeletedObjectsKey` (or the object-ID keys, `NSInsertedObjectIDsKey` and its siblings).
    ///
    /// Related Core Data documentation: [mergeChanges(fromRemoteContextSave:into:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/mergechanges(fromremotecontextsave:into:))
    public class func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]) {
        for context in contexts {
            let changes = MergedChanges(userInfo: changeNotificationData, coordinator: context.persistentStoreCoordinator)
            context.performAndWait { context._mergeChanges(changes) }
        }
    }

    /// Merges saved changes into this context (see the extension's documentation); call it on the
    /// context's queue. The entry point of every merge, automatic merging from a parent context
    /// included.
    package func _mergeChanges(_ changes: MergedChanges) {
        guard !changes.isEmpty else { return }
        // The IDs merged, for didMergeChangesObjectIDsNotification.
        var insertedIDs: [NSManagedObjectID] = []
        var refreshedIDs: [NSManagedObjectID] = []
        var deletedIDs: [NSManagedObjectID] = []
        var invalidatedIDs: [NSManagedObjectID] = []

        var mergedDeletions: [NSManagedObject] = []
        for id in changes.deleted {
            guard let object = registry.object(for: id) else { continue }
            mergedDeletions.append(object)
            deletedIDs.append(id)
        }
        if !mergedDeletions.isEmpty {
            _detachDeletions(mergedDeletions, merged: true)
            for object in mergedDeletions { _forgetMergedDeletion(object) }
            _changeLog.mergedDeleted.append(contentsOf: mergedDeletions)
        }
        // Unchanged loaded objects turned into faults, by entity: most merges are of one entity,
        // whose list is kept aside from the table (no lookup an object).
        // They are plain faults now (no snapshot, batch or temporary ID), with their IDs at hand.
        var faults: (entity: NSEntityDescription, objects: [NSManagedObject], ids: [NSManagedObjectID])?
        var otherFaults: [ObjectIdentifier: (NSEntityDescription, [NSManagedObject], [NSManagedObjectID])] = [:]
        // Changed objects last: their merged to-many relationships ask which members point back,
        // and the unchanged members must have turned into faults (taking the store's values) first.
        var changedObjects: [NSManagedObject] = []
        refreshedIDs.reserveCapacity(changes.updated.count)
        _changeLog.mergedRefreshed.reserveCapacity(_changeLog.mergedRefreshed.count + changes.updated.count)
        for id in changes.updated {
            guard let object = registry.object(for: id), !object._isInserted else { continue }
            if object.hasChanges {
                changedObjects.append(object)
            } else if !object._isFault {
                // `refresh(_:mergeChanges: false)` for an object with no changes: it loads again on
                // next access, in batches.
                changed.remove(object)
                object._turnIntoFault()
                let entity = object.entity
                if faults == nil { faults = (entity, [], []) }
                if faults?.entity === entity {
                    faults?.objects.append(object)
                    faults?.ids.append(id)
                } else {
                    otherFaults[ObjectIdentifier(entity), default: (entity, [], [])].1.append(object)
                    otherFaults[ObjectIdentifier(entity)]?.2.append(id)
                }
                _changeLog.mergedRefreshed.append(object)
            } else {
                _changeLog.mergedRefreshed.append(object)
            }
            refreshedIDs.append(id)
        }
        for object in changedObjects { refresh(object, mergeChanges: true) }
        if let faults { _batchFaults(faults.objects, ids: faults.ids, entity: faults.entity) }
        for (entity, objects, ids) in otherFaults.values { _batchFaults(objects, ids: ids, entity: entity) }
        // A temporary ID names an object only a parent context holds: a child finds it through
        // its parent; a context on the coordinator could not.
        for id in changes.inserted where !id.isTemporaryID || _parentContext != nil {
            if registry.object(for: id) != nil { continue }
            _changeLog.mergedInserted.append(object(with: id))
            insertedIDs.append(id)
        }
        for id in changes.invalidated {
            guard let object = registry.object(for: id), !object._isInserted else { continue }
            changed.remove(object)
            object._turnIntoFault()
            _changeLog.invalidated.append(object)
            invalidatedIDs.append(id)
        }
        processPendingChanges()
        var info: [AnyHashable: Any] = [:]
        if !insertedIDs.isEmpty { info[NSInsertedObjectIDsKey] = Self._sparseSet(insertedIDs) }
        if !refreshedIDs.isEmpty { info[NSUpdatedObjectIDsKey] = Self._sparseSet(refreshedIDs) }
        if !deletedIDs.isEmpty { info[NSDeletedObjectIDsKey] = Self._sparseSet(deletedIDs) }
        if !invalidatedIDs.isEmpty { info[NSInvalidatedObjectIDsKey] = Self._sparseSet(invalidatedIDs) }
        guard !info.isEmpty else { return }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidMergeChangesObjectIDs, object: self, userInfo: info)
    }

    /// A set of `ids` in a table twice their count: a set compares its element at every probe (it
    /// keeps no hashes) and `NSObject`'s `==` boxes its argument, so `Set(ids)`'s fuller table
    /// costs about twice as much to build.
    private static func _sparseSet(_ ids: [NSManagedObjectID]) -> Set<NSManagedObjectID> {
        var set = Set<NSManagedObjectID>(minimumCapacity: ids.count * 2)
        for id in ids { set.insert(id) }
        return set
    }

    /// A registered object whose row another context deleted: it leaves this context as after a
    /// save of its deletion here (unsaved changes dropped, turned into a fault).
    private func _forgetMergedDeletion(_ object: NSManagedObject) {
        inserted.remove(object)
        changed.remove(object)
        deleted.remove(object)
        object._isInserted = false
        object._isDeleted = false
        registry.remove(object)
        object._turnIntoFault()
        object._context = nil
    }

    /// Takes deleted objects out of the relationships of the loaded objects here that hold them,
    /// as the store's rows no longer point at them. For a merge's deletions (`merged`): Most such objects are in the save's updated set
    /// and refresh anyway; the others hold a deleted object through a change of this context: an
    /// object inserted here, or pushed by a child, that the deleted object was moved into. Those
    /// would keep listing, and handing out, an object whose row is gone. The holders' change
    /// records are left as they are: a merge makes no change of this context's (`hasChanges` stays
    /// what it was). No fault fires and no relationship loads.
    ///
    /// A loaded deleted object names its destinations; a fault does not, so for faults every
    /// loaded object's relationships here are looked through (once a merge, only when a deleted
    /// object is a fault here).
    ///
    /// A save calls it too, for the deletions it saved (`merged` false): their delete rules took
    /// them out of the lists that held them then, but a list can have taken one in since, from the
    /// store, when a merge moved the deleted object there. A no-action relationship's destinations
    /// keep pointing at the object, as Apple documents, so those are left as they are.
    package func _detachDeletions(_ objects: [NSManagedObject], merged: Bool) {
        var faults: [NSManagedObject] = []
        for object in objects {
            if object._isFault {
                if merged { faults.append(object) }
                continue
            }
            for slot in object._layout.relationshipSlots {
                let relationship = object._layout.relationships[slot]!
                guard let inverse = relationship.inverseRelationship,
                      merged || relationship.deleteRule != .noActionDeleteRule else { continue }
                let destinations: [NSManagedObject]
                switch object._values[slot] {
                case let list as ManagedObjectList: destinations = list.objects
                case let destination as NSManagedObject: destinations = [destination]
                case let id as NSManagedObjectID: destinations = registry.object(for: id).map { [$0] } ?? []
                default: destinations = []
                }
                for destination in destinations where destination._contextLink === _link && !destination._isFault {
                    guard let inverseSlot = destination._layout.indexByName[inverse.name] else { continue }
                    destination._dropDeletions([object], slot: inverseSlot)
                }
            }
        }
        guard !faults.isEmpty else { return }
        let set = Set(faults.map(ObjectIdentifier.init))
        for holder in registry.liveObjects() where !holder._isFault {
            for slot in holder._layout.relationshipSlots { holder._dropDeletions(faults, slot: slot, set: set) }
        }
    }

    /// Schedules ``_mergeChanges(_:)`` on this context's queue (for a main-queue context, the main
    /// queue): how automatic merging delivers a save. For the lead's wiring of a context parent too.
    ///
    /// The changes wait in ``PendingMerges``: a `performAndWait` that starts before the scheduled
    /// block has run merges them first (see `runAsCurrent`), as on Apple, where `performAndWait`
    /// runs on the context's queue after the blocks queued before it.
    package func _mergeChangesAutomatically(_ changes: MergedChanges) {
        guard !changes.isEmpty else { return }
        _pendingMerges.append(changes)
        perform { [self] in _runPendingMerges() }
    }

    /// Merges every save waiting in ``PendingMerges``, in the order they were saved; on the
    /// context's queue, holding its lock.
    package func _runPendingMerges() {
        for changes in _pendingMerges.takeAll() { _mergeChanges(changes) }
    }
}

/// Saves scheduled to merge into a context automatically and not merged yet. `isEmpty` is one
/// atomic load, for `performAndWait`'s check.
package final class PendingMerges: Sendable {
    private let list = Locked<[NSManagedObjectContext.MergedChanges]>([])
    private let count = Atomic<Int>(0)

    package init() {}

    package var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }

    func append(_ changes: NSManagedObjectContext.MergedChanges) {
        list.withLock { list in
            list.append(changes)
            count.store(list.count, ordering: .releasing)
        }
    }

    func takeAll() -> [NSManagedObjectContext.MergedChanges] {
        guard !isEmpty else { return [] }
        return list.withLock { list in
            defer { list.removeAll(); count.store(0, ordering: .releasing) }
            return list
        }
    }
}

// MARK: Automatic merging from the parent (the coordinator or a context)

/// The contexts with `automaticallyMergesChangesFromParent` on, held weakly, so that a save finds
/// the siblings to deliver its changes to. A save looks here only while the list is not empty.
package enum AutomaticMerging {
    private struct Entry {
        weak var context: NSManagedObjectContext?
    }

    private static let entries = Locked<[Entry]>([])
    /// Whether any context was ever registered, read without the lock (a save that misses a context
    /// turned on at that very moment delivers to it from the next save on): a save in a program
    /// that never merges automatically takes no lock for this.
    private static let anyRegistered = Atomic<Bool>(false)

    /// Called when a context's `automaticallyMergesChangesFromParent` is set.
    package static func update(_ context: NSManagedObjectContext, merges: Bool) {
        entries.withLock { entries in
            entries.removeAll { $0.context == nil || $0.context === context }
            if merges { entries.append(Entry(context: context)) }
            if merges { anyRegistered.store(true, ordering: .releasing) }
        }
    }

    /// The contexts on `coordinator`, other than `saver`, that merge automatically and share
    /// `saver`'s parent: the coordinator (no parent context), or the same parent context, into
    /// which `saver`'s save went.
    package static func siblings(of saver: NSManagedObjectContext, on coordinator: NSPersistentStoreCoordinator) -> [NSManagedObjectContext] {
        guard anyRegistered.load(ordering: .acquiring) else { return [] }
        return entries.withLock { entries in
            entries.compactMap(\.context).filter { context in
                context !== saver && context.persistentStoreCoordinator === coordinator
                    && context._parentContext === saver._parentContext
            }
        }
    }
}

extension NSManagedObjectContext {
    /// After a save (to the stores, or into the parent context): schedules the merge of its changes
    /// into every sibling that merges automatically (see ``AutomaticMerging/siblings(of:on:)``).
    /// The IDs are made here, on the saving context's queue, only when there is such a sibling.
    package func _deliverToAutomaticMergers(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        guard let coordinator = persistentStoreCoordinator else { return }
        let receivers = AutomaticMerging.siblings(of: self, on: coordinator)
        guard !receivers.isEmpty else { return }
        let changes = MergedChanges(inserted: inserted.map(\.objectID), updated: updated.map(\.objectID), deleted: deleted.map(\.objectID))
        for receiver in receivers { receiver._mergeChangesAutomatically(changes) }
    }
}
