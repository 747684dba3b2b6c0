import Foundation
import Synchronization

// Context notifications: names, user-info keys, and ObjectsDidChange, which reports the changes of
// each event (the work between two calls of `processPendingChanges()`), coalesced.

extension Notification.Name {
    /// Posted after a context saves; user info holds `inserted`, `updated` and `deleted` sets.
    ///
    /// Related Core Data documentation: [NSManagedObjectContextDidSave](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsmanagedobjectcontextdidsave)
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagedObjectContextDidSaveNotification")
    /// Posted before a context saves (no user info).
    ///
    /// Related Core Data documentation: [NSManagedObjectContextWillSave](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsmanagedobjectcontextwillsave)
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagedObjectContextWillSaveNotification")
    /// Posted by `processPendingChanges()` when a context's registered objects changed since the
    /// last time: user info holds the sets under ``NSInsertedObjectsKey``, ``NSUpdatedObjectsKey``,
    /// ``NSDeletedObjectsKey``, ``NSRefreshedObjectsKey``, ``NSInvalidatedObjectsKey``, and
    /// ``NSInvalidatedAllObjectsKey`` (after `reset()`), only the keys that have objects.
    ///
    /// Related Core Data documentation: [NSManagedObjectContextObjectsDidChange](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsmanagedobjectcontextobjectsdidchange)
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name("NSManagedObjectContextObjectsDidChangeNotification")
    /// Posted after a context saves, with the object IDs saved (``NSInsertedObjectIDsKey`` and its
    /// siblings) instead of the objects.
    ///
    /// Related Core Data documentation: [NSManagedObjectContextDidSaveObjectIDs](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsmanagedobjectcontextdidsaveobjectids)
    public static let NSManagedObjectContextDidSaveObjectIDs = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted after a context merged changes (`mergeChanges(fromContextDidSave:)` and its
    /// relatives), with the object IDs merged.
    ///
    /// Related Core Data documentation: [NSManagedObjectContextDidMergeChangesObjectIDs](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsmanagedobjectcontextdidmergechangesobjectids)
    public static let NSManagedObjectContextDidMergeChangesObjectIDs = Notification.Name("NSManagedObjectContextDidMergeChangesObjectIDsNotification")
}

/// User-info key for inserted objects in context notifications.
///
/// Related Core Data documentation: [NSInsertedObjectsKey](https://developer.apple.com/documentation/coredata/nsinsertedobjectskey)
public let NSInsertedObjectsKey = "inserted"
/// User-info key for updated objects in context notifications.
///
/// Related Core Data documentation: [NSUpdatedObjectsKey](https://developer.apple.com/documentation/coredata/nsupdatedobjectskey)
public let NSUpdatedObjectsKey = "updated"
/// User-info key for deleted objects in context notifications.
///
/// Related Core Data documentation: [NSDeletedObjectsKey](https://developer.apple.com/documentation/coredata/nsdeletedobjectskey)
public let NSDeletedObjectsKey = "deleted"
/// User-info key for objects that were refreshed (not changed in this context).
///
/// Related Core Data documentation: [NSRefreshedObjectsKey](https://developer.apple.com/documentation/coredata/nsrefreshedobjectskey)
public let NSRefreshedObjectsKey = "refreshed"
/// User-info key for objects that were invalidated.
///
/// Related Core Data documentation: [NSInvalidatedObjectsKey](https://developer.apple.com/documentation/coredata/nsinvalidatedobjectskey)
public let NSInvalidatedObjectsKey = "invalidated"
/// User-info key saying that every object of the context was invalidated (`reset()`): its value is
/// an array of the object IDs the context held.
///
/// Related Core Data documentation: [NSInvalidatedAllObjectsKey](https://developer.apple.com/documentation/coredata/nsinvalidatedallobjectskey)
public let NSInvalidatedAllObjectsKey = "invalidatedAll"
/// User-info key for inserted object IDs (object-ID notifications, `mergeChanges(fromRemoteContextSave:into:)`).
///
/// Related Core Data documentation: [NSInsertedObjectIDsKey](https://developer.apple.com/documentation/coredata/nsinsertedobjectidskey)
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// User-info key for updated object IDs.
///
/// Related Core Data documentation: [NSUpdatedObjectIDsKey](https://developer.apple.com/documentation/coredata/nsupdatedobjectidskey)
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// User-info key for deleted object IDs.
///
/// Related Core Data documentation: [NSDeletedObjectIDsKey](https://developer.apple.com/documentation/coredata/nsdeletedobjectidskey)
public let NSDeletedObjectIDsKey = "deleted_objectIDs"
/// User-info key for refreshed object IDs.
///
/// Related Core Data documentation: [NSRefreshedObjectIDsKey](https://developer.apple.com/documentation/coredata/nsrefreshedobjectidskey)
public let NSRefreshedObjectIDsKey = "refreshed_objectIDs"
/// User-info key for invalidated object IDs.
///
/// Related Core Data documentation: [NSInvalidatedObjectIDsKey](https://developer.apple.com/documentation/coredata/nsinvalidatedobjectidskey)
public let NSInvalidatedObjectIDsKey = "invalidated_objectIDs"

extension NSManagedObjectContext {
    /// The newer name of ``Foundation/NSNotification/Name/NSManagedObjectContextWillSave`` (the same notification).
    ///
    /// Related Core Data documentation: [willSaveObjectsNotification](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/willsaveobjectsnotification)
    public static let willSaveObjectsNotification = Notification.Name.NSManagedObjectContextWillSave
    /// The newer name of ``Foundation/NSNotification/Name/NSManagedObjectContextDidSave`` (the same notification).
    ///
    /// Related Core Data documentation: [didSaveObjectsNotification](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/didsaveobjectsnotification)
    public static let didSaveObjectsNotification = Notification.Name.NSManagedObjectContextDidSave
    /// The newer name of ``Foundation/NSNotification/Name/NSManagedObjectContextObjectsDidChange`` (the same notification).
    ///
    /// Related Core Data documentation: [didChangeObjectsNotification](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/didchangeobjectsnotification)
    public static let didChangeObjectsNotification = Notification.Name.NSManagedObjectContextObjectsDidChange
    /// The newer name of ``Foundation/NSNotification/Name/NSManagedObjectContextDidSaveObjectIDs`` (the same notification).
    ///
    /// Related Core Data documentation: [didSaveObjectIDsNotification](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/didsaveobjectidsnotification)
    public static let didSaveObjectIDsNotification = Notification.Name.NSManagedObjectContextDidSaveObjectIDs
    /// The newer name of ``Foundation/NSNotification/Name/NSManagedObjectContextDidMergeChangesObjectIDs`` (the same notification).
    ///
    /// Related Core Data documentation: [didMergeChangesObjectIDsNotification](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/didmergechangesobjectidsnotification)
    public static let didMergeChangesObjectIDsNotification = Notification.Name.NSManagedObjectContextDidMergeChangesObjectIDs

    /// The keys of context notifications' user info; each raw value is the key's string
    /// (``insertedObjects`` is ``NSInsertedObjectsKey``, and so on).
    ///
    /// ```swift
    /// let inserted = note.userInfo?[NSManagedObjectContext.NotificationKey.insertedObjects.rawValue] as? Set<NSManagedObject>
    /// ```
    ///
    /// Related Core Data documentation: [NSManagedObjectContext.NotificationKey](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/notificationkey)
    public enum NotificationKey: String, Sendable {
        /// The query generation token of a did-save notification (`NSManagedObjectContextQueryGenerationKey`).
        case queryGeneration = "newQueryGeneration"
        case invalidatedAllObjects = "invalidatedAll"
        case insertedObjects = "inserted"
        case updatedObjects = "updated"
        case deletedObjects = "deleted"
        case refreshedObjects = "refreshed"
        case invalidatedObjects = "invalidated"
        case insertedObjectIDs = "inserted_objectIDs"
        case updatedObjectIDs = "updated_objectIDs"
        case deletedObjectIDs = "deleted_objectIDs"
        case refreshedObjectIDs = "refreshed_objectIDs"
        case invalidatedObjectIDs = "invalidated_objectIDs"
    }
}

/// What a context has reported in ObjectsDidChange since it last saved, and what it noted for the
/// next report that its change tables do not show (refreshes, merges, invalidations).
///
/// Nothing here is touched by inserting, changing, fetching or faulting: the next report is worked
/// out from the context's inserted, changed and deleted tables when `processPendingChanges()` runs,
/// against what was reported before. A context with no changes since its save and nothing noted
/// returns at once, so events that change nothing (fetches, faults) cost nothing.
package struct ObjectChangeLog {
    /// The inserted sets reported since the last save, as they were posted (kept, not copied).
    var reportedInserted: [Set<NSManagedObject>] = []
    /// The deleted sets reported since the last save.
    var reportedDeleted: [Set<NSManagedObject>] = []
    /// The change count (``NSManagedObject/_notifiedChangeCount``) of each updated object when it
    /// was reported, so a later change reports it again.
    var reportedUpdates: [ObjectTableKey: Int] = [:]
    /// The updated sets reported during a save, as posted: a successful save forgets them right
    /// after, so no counts are kept for them (a table of 100,000 counts for a save of 100,000
    /// objects); a failed save turns them into counts (``keepCountsOfSaveReports()``). An object
    /// in them is not reported updated again during the save.
    var reportedUpdatedDuringSave: [Set<NSManagedObject>] = []
    /// Objects refreshed since the last report (`refresh(_:mergeChanges:)`, merges), held weakly:
    /// turning objects into faults is how an app lets go of their memory (`refreshAllObjects()`),
    /// and one released meanwhile is in no observer's hands to report.
    var refreshed: [WeakObject] = []
    /// Objects a merge refreshed, held strongly: the merge posts them at once
    /// (``NSManagedObjectContext/_mergeChanges(_:)`` ends its event itself), and a weak reference
    /// would give each object a side table, which slows every later retain and release of it.
    var mergedRefreshed: [NSManagedObject] = []
    /// Saved objects another context inserted, merged in since the last report.
    var mergedInserted: [NSManagedObject] = []
    /// Saved objects another context deleted, merged in since the last report.
    var mergedDeleted: [NSManagedObject] = []
    /// Objects invalidated since the last report.
    var invalidated: [NSManagedObject] = []
    /// The IDs of the objects `reset()` forgot, if it ran since the last report.
    var invalidatedAll: [NSManagedObjectID]?
    /// Whether a save is under way: its reports are not remembered for updates.
    var isSaving = false
    /// What the ObjectsDidChange at the start of a save posted, if it was the whole of the tables.
    var saveReport: NSManagedObjectContext.ReportedChanges?
    /// Whether a fetch with `shouldRefreshRefetchedObjects` is running: objects it finds loaded
    /// take its rows (and are reported refreshed).
    var refreshesRefetchedObjects = false

    /// Whether anything was reported since the save or noted for the next report.
    var isEmpty: Bool {
        reportedInserted.isEmpty && reportedDeleted.isEmpty && reportedUpdates.isEmpty && reportedUpdatedDuringSave.isEmpty
            && hasNothingNoted
    }

    /// Whether nothing is noted for the next report besides the change tables.
    var hasNothingNoted: Bool {
        refreshed.isEmpty && mergedRefreshed.isEmpty && mergedInserted.isEmpty && mergedDeleted.isEmpty && invalidated.isEmpty && invalidatedAll == nil
    }

    func wasReportedInserted(_ object: NSManagedObject) -> Bool {
        reportedInserted.contains { $0.contains(object) }
    }

    func wasReportedDeleted(_ object: NSManagedObject) -> Bool {
        reportedDeleted.contains { $0.contains(object) }
    }

    /// Keeps a posted set; many small ones are joined now and then, so a lookup stays a few probes.
    static func keep(_ set: Set<NSManagedObject>, in sets: inout [Set<NSManagedObject>]) {
        guard !set.isEmpty else { return }
        sets.append(set)
        if sets.count > 8 {
            var joined = Set<NSManagedObject>()
            for each in sets { joined.formUnion(each) }
            sets = [joined]
        }
    }

    /// Forgets everything reported (after a save, a rollback, a reset).
    mutating func forgetReported() {
        reportedInserted.removeAll()
        reportedDeleted.removeAll()
        reportedUpdates.removeAll()
        reportedUpdatedDuringSave.removeAll()
    }

    /// After a failed save: the updated objects its reports named keep their counts, so they are
    /// reported again only when they change again.
    mutating func keepCountsOfSaveReports() {
        for set in reportedUpdatedDuringSave {
            for object in set { reportedUpdates[ObjectTableKey(id: ObjectIdentifier(object))] = object._notifiedChangeCount }
        }
        reportedUpdatedDuringSave.removeAll()
    }
}

/// A weak reference to an object, for lists that must not keep objects alive.
package struct WeakObject {
    weak var object: NSManagedObject?
    init(_ object: NSManagedObject) { self.object = object }
}

extension NSManagedObjectContext {
    /// Ends an event: posts ObjectsDidChange with what changed since the last one, if anything did.
    ///
    /// Inserted: objects inserted since, not deleted again (an object inserted and deleted within
    /// one event is in neither set). Deleted: objects deleted since, and objects reported inserted
    /// earlier that were deleted before being saved. Updated: registered objects that are not
    /// deleted whose values changed since they were last reported (new objects after the event that
    /// reported them inserted). Refreshed: objects
    /// refreshed or merged in since, that are not in another set.
    package func _endChangeEvent() {
        if inserted.isEmpty && deleted.isEmpty && changed.isEmpty && _changeLog.isEmpty { return }
        // A save's later round (after `willSave()`) whose tables are as its first report posted them
        // whole, with nothing noted or counted since: every object would be found in the reported
        // sets (a hash lookup each, 10% of a save of new objects), and nothing would be posted.
        if _changeLog.isSaving, _changeLog.reportedUpdates.isEmpty, _changeLog.hasNothingNoted,
            let report = _changeLog.saveReport, report.mutations == _tableMutations
        {
            return
        }
        // Whether the report is the whole of the tables (nothing reported or noted before it).
        let reportsEverything = _changeLog.isEmpty
        var log = _changeLog
        _changeLog = ObjectChangeLog()
        _changeLog.isSaving = log.isSaving
        // Sized for the tables when they are reported whole (a save's changes: fewer probes
        // that compare objects, see `notificationSet(_:)`).
        var insertedSet = Set<NSManagedObject>(minimumCapacity: reportsEverything ? inserted.count * 2 : 0)
        var deletedSet = Set<NSManagedObject>(minimumCapacity: reportsEverything ? deleted.count * 2 : 0)
        var updatedSet = Set<NSManagedObject>(minimumCapacity: reportsEverything ? changed.count * 2 : 0)

        let checksInserted = !log.reportedInserted.isEmpty
        let checksUpdates = !log.reportedUpdates.isEmpty
        for object in inserted.values {
            if checksInserted && log.wasReportedInserted(object) {
                // Reported inserted in an earlier event and changed since: updated, as on Apple
                // (an editor's changes to a new, unsaved object reach a fetched results controller).
                if checksUpdates, let count = log.reportedUpdates[ObjectTableKey(id: ObjectIdentifier(object))],
                    count != object._notifiedChangeCount
                {
                    updatedSet.insert(object)
                }
                continue
            }
            insertedSet.insert(object)
        }
        let checksDeleted = !log.reportedDeleted.isEmpty
        for object in deleted.values where !checksDeleted || !log.wasReportedDeleted(object) {
            deletedSet.insert(object)
        }
        // Reported as inserted, then deleted before a save: gone from the tables, reported deleted.
        for set in log.reportedInserted {
            for object in set where !object._isInserted && !inserted.contains(object) {
                // (Still reported inserted if it was inserted again, as a new object.)
                deletedSet.insert(object)
            }
        }
        // What the tables showed is remembered as reported; merged objects are saved ones, which
        // the tables never show, so they are not.
        ObjectChangeLog.keep(insertedSet, in: &log.reportedInserted)
        ObjectChangeLog.keep(deletedSet, in: &log.reportedDeleted)
        for object in log.mergedInserted where object._contextLink === _link && !object._isDeleted { insertedSet.insert(object) }
        for object in log.mergedDeleted { deletedSet.insert(object) }

        let checksSaveUpdates = !log.reportedUpdatedDuringSave.isEmpty
        for object in changed.values where object.isUpdated {
            if checksUpdates, log.reportedUpdates[ObjectTableKey(id: ObjectIdentifier(object))] == object._notifiedChangeCount { continue }
            if checksSaveUpdates, log.reportedUpdatedDuringSave.contains(where: { $0.contains(object) }) { continue }
            updatedSet.insert(object)
        }
        // Sized for its objects: a set compares its element at every probe (it keeps no hashes),
        // and `NSObject`'s `==` boxes its argument, so a fuller table costs a merge much more.
        var refreshedSet = Set<NSManagedObject>(minimumCapacity: (log.refreshed.count + log.mergedRefreshed.count) * 2)
        let checksOthers = !updatedSet.isEmpty || !deletedSet.isEmpty || !insertedSet.isEmpty
        func noteRefreshed(_ object: NSManagedObject) {
            if checksOthers, updatedSet.contains(object) || deletedSet.contains(object) || insertedSet.contains(object) { return }
            refreshedSet.insert(object)
        }
        for case let object? in log.refreshed.lazy.map(\.object) { noteRefreshed(object) }
        for object in log.mergedRefreshed where object._contextLink === _link { noteRefreshed(object) }
        var invalidatedSet = Set<NSManagedObject>()
        for object in log.invalidated { invalidatedSet.insert(object) }

        // What is remembered for the next event.
        log.refreshed.removeAll()
        log.mergedRefreshed.removeAll()
        log.mergedInserted.removeAll()
        log.mergedDeleted.removeAll()
        log.invalidated.removeAll()
        let invalidatedAll = log.invalidatedAll
        log.invalidatedAll = nil
        if log.isSaving {
            ObjectChangeLog.keep(updatedSet, in: &log.reportedUpdatedDuringSave)
        } else {
            for object in updatedSet { log.reportedUpdates[ObjectTableKey(id: ObjectIdentifier(object))] = object._notifiedChangeCount }
            // New objects too, so a later change reports them updated. Not during a save, which
            // reports its new objects once and forgets them (no table for a large import's objects).
            for object in insertedSet where object._isInserted {
                log.reportedUpdates[ObjectTableKey(id: ObjectIdentifier(object))] = object._notifiedChangeCount
            }
        }
        log.isSaving = _changeLog.isSaving
        _changeLog = log

        var info: [AnyHashable: Any] = [:]
        if !insertedSet.isEmpty { info[NSInsertedObjectsKey] = insertedSet }
        if !updatedSet.isEmpty { info[NSUpdatedObjectsKey] = updatedSet }
        if !deletedSet.isEmpty { info[NSDeletedObjectsKey] = deletedSet }
        if !refreshedSet.isEmpty { info[NSRefreshedObjectsKey] = refreshedSet }
        if !invalidatedSet.isEmpty { info[NSInvalidatedObjectsKey] = invalidatedSet }
        if let invalidatedAll { info[NSInvalidatedAllObjectsKey] = invalidatedAll }
        guard !info.isEmpty else { return }
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info)
        if reportsEverything, log.isSaving {
            _changeLog.saveReport = ReportedChanges(inserted: insertedSet, updated: updatedSet, deleted: deletedSet,
                                                    mutations: _tableMutations)
        }
    }

    /// The mutation counts of the three change tables.
    package var _tableMutations: [UInt] { [inserted.mutations, changed.mutations, deleted.mutations] }

    /// What one ObjectsDidChange reported when it was the whole of the change tables, with the
    /// tables' mutation counts then: a save whose tables are still as they were posts the same
    /// sets in its did-save instead of building them again (a set of 100,000 objects is about as
    /// long to build as a tenth of the save).
    package struct ReportedChanges {
        let inserted: Set<NSManagedObject>
        let updated: Set<NSManagedObject>
        let deleted: Set<NSManagedObject>
        let mutations: [UInt]
    }

    /// Notes a refreshed object for the next ObjectsDidChange.
    package func _noteRefreshed(_ object: NSManagedObject) {
        _changeLog.refreshed.append(WeakObject(object))
    }

    /// Before `rollback()` discards the changes: objects reported inserted are reported deleted, and
    /// objects reported updated or deleted are reported refreshed, in the next ObjectsDidChange
    /// (Apple does not document the keys a rollback uses).
    package func _noteRollback() {
        var log = _changeLog
        for set in log.reportedInserted { log.mergedDeleted.append(contentsOf: set) }
        for set in log.reportedDeleted { log.refreshed.append(contentsOf: set.map(WeakObject.init)) }
        for object in changed.values where object.isUpdated { log.refreshed.append(WeakObject(object)) }
        log.forgetReported()
        _changeLog = log
    }

    /// At `reset()`: the next ObjectsDidChange says every object was invalidated.
    package func _noteReset(_ objects: [NSManagedObject]) {
        var log = ObjectChangeLog()
        log.isSaving = _changeLog.isSaving
        log.refreshesRefetchedObjects = _changeLog.refreshesRefetchedObjects
        log.invalidatedAll = objects.map { $0._objectID }
        _changeLog = log
    }
}

// MARK: Object-ID notifications of a save

extension NSManagedObjectContext {
    private static let _postsDidSaveObjectIDs = Atomic<Bool>(false)

    /// Whether a save posts ``didSaveObjectIDsNotification`` (default `false`).
    ///
    /// - Note: Linux only. Apple always posts it. Foundation on Linux cannot tell whether anything
    ///   observes a notification, and this one needs the ID of every saved object, which a save
    ///   otherwise never makes (about a sixth of the time of a save of 100,000 new objects), so it
    ///   is posted only when asked for:
    ///
    /// ```swift
    /// NSManagedObjectContext.postsDidSaveObjectIDsNotification = true
    /// ```
    public static var postsDidSaveObjectIDsNotification: Bool {
        get { _postsDidSaveObjectIDs.load(ordering: .relaxed) }
        set { _postsDidSaveObjectIDs.store(newValue, ordering: .relaxed) }
    }

    /// After a save, if asked for (``postsDidSaveObjectIDsNotification``): posts
    /// ``didSaveObjectIDsNotification`` with the saved objects' IDs, only the keys that have some.
    package func _postDidSaveObjectIDs(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        guard Self.postsDidSaveObjectIDsNotification else { return }
        var info: [AnyHashable: Any] = [:]
        if !inserted.isEmpty { info[NSInsertedObjectIDsKey] = Set(inserted.map { $0._objectID }) }
        if !updated.isEmpty { info[NSUpdatedObjectIDsKey] = Set(updated.map { $0._objectID }) }
        if !deleted.isEmpty { info[NSDeletedObjectIDsKey] = Set(deleted.map { $0._objectID }) }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSaveObjectIDs, object: self, userInfo: info)
    }
}
