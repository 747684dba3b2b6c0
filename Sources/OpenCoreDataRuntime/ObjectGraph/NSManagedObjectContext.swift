import Foundation

/// The concurrency types of a context, under Apple's older name.
///
/// - Note: Linux: one type serves both of Apple's spellings, this enum's cases
///   (`.privateQueueConcurrencyType`) and the newer structure's (`.privateQueue`).
///
/// Related Core Data documentation: [NSManagedObjectContextConcurrencyType](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontextconcurrencytype)
public typealias NSManagedObjectContextConcurrencyType = NSManagedObjectContext.ConcurrencyType

/// A scratchpad of managed objects: it tracks changes, keeps one instance per object, and saves.
///
/// ```swift
/// let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
/// context.persistentStoreCoordinator = coordinator
/// try await context.perform {
///     let mood = Mood(context: context)
///     mood.date = Date()
///     try context.save()
/// }
/// ```
///
/// - Note: Linux: `performAndWait` on a main-queue context runs the block on the calling thread
///   under the context's lock instead of hopping to the main thread (a command-line program or
///   server often has no main run loop). `perform` still runs main-queue blocks on the main queue.
///
/// Related Core Data documentation: [NSManagedObjectContext](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext)
///
/// `@unchecked Sendable` invariant: mutable state is touched only inside `perform`/`performAndWait`
/// (serialized by `executionLock`) or by the one thread that owns a confined context, as on Apple.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    /// How a context runs its work.
    ///
    /// Related Core Data documentation: [NSManagedObjectContextConcurrencyType](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontextconcurrencytype)
    public enum ConcurrencyType: UInt, Sendable {
        @available(*, deprecated, message: "Use another concurrency type.")
        case confinementConcurrencyType = 0
        case privateQueueConcurrencyType = 1
        case mainQueueConcurrencyType = 2

        /// The newer Swift spelling of ``privateQueueConcurrencyType``.
        ///
        /// Related Core Data documentation: [privateQueue](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/concurrencytype/privatequeue)
        public static let privateQueue = ConcurrencyType.privateQueueConcurrencyType
        /// The newer Swift spelling of ``mainQueueConcurrencyType``.
        ///
        /// Related Core Data documentation: [mainQueue](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/concurrencytype/mainqueue)
        public static let mainQueue = ConcurrencyType.mainQueueConcurrencyType
    }

    /// The context's concurrency type.
    public let concurrencyType: ConcurrencyType
    /// Developer information kept with the context (Core Data does not read it).
    ///
    /// Related Core Data documentation: [userInfo](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/userinfo)
    public let userInfo = NSMutableDictionary()
    /// The coordinator whose stores the context reads and saves. For a child context (one with a
    /// ``parent``) it is the root context's coordinator; setting it makes the context a root again
    /// (its `parent` becomes `nil`).
    ///
    /// Related Core Data documentation: [persistentStoreCoordinator](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/persistentstorecoordinator)
    // Read for every object created with `init(context:)`: no run-time exclusivity check (see `registry`).
    @exclusivity(unchecked) open var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        didSet { _parentContext = nil }  // a context has a coordinator or a parent, not both (``parent`` sets it again)
    }
    /// The parent context, or `nil` for a context on a coordinator (see `NSManagedObjectContext+NestedContexts.swift`).
    // Read once per fetch, fault, save and ID request: no run-time exclusivity check.
    @exclusivity(unchecked) package var _parentContext: NSManagedObjectContext?
    /// What this context keeps for its child contexts: `nil` until a child asks it for something
    /// (see ``NestedContextIDs``).
    @exclusivity(unchecked) package var _childIDs: NestedContextIDs?
    /// A name for debugging.
    open var name: String?
    /// Recorded for persistent history (not written yet on Linux).
    open var transactionAuthor: String?
    /// Whether registered objects are kept alive while unchanged (default `false`).
    // Read for every registered object: no run-time exclusivity check (used on the context's queue only).
    @exclusivity(unchecked) open var retainsRegisteredObjects: Bool = false
    /// Whether the changes its parent saves merge into the context automatically, on its queue
    /// (default `false`); see `NSManagedObjectContext+Merging.swift`.
    ///
    /// Related Core Data documentation: [automaticallyMergesChangesFromParent](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/automaticallymergeschangesfromparent)
    open var automaticallyMergesChangesFromParent: Bool = false {
        didSet { if automaticallyMergesChangesFromParent != oldValue { AutomaticMerging.update(self, merges: automaticallyMergesChangesFromParent) } }
    }
    /// How long (seconds) a fault may fire from the row a fetch cached for it instead of reading
    /// the store; negative (the default) means no limit, zero means always read the store. See
    /// `NSManagedObjectContext+Refreshing.swift`.
    ///
    /// Related Core Data documentation: [stalenessInterval](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/stalenessinterval)
    open var stalenessInterval: TimeInterval = -1 {
        didSet { _link.stalenessInterval = stalenessInterval }
    }
    /// Whether faults for deleted rows become empty objects instead of raising.
    open var shouldDeleteInaccessibleFaults: Bool = true
    /// The policy that resolves conflicts at save: an ``NSMergePolicy`` (default ``NSMergePolicy/error``).
    /// A value that is not an `NSMergePolicy` acts as the error policy.
    ///
    /// Related Core Data documentation: [mergePolicy](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/mergepolicy)
    open var mergePolicy: Any = NSMergePolicy.error
    /// Whether ``processPendingChanges()`` applies the delete rules of deleted objects (default
    /// `true`); when `false` they run only when the context saves.
    ///
    /// Related Core Data documentation: [propagatesDeletesAtEndOfEvent](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/propagatesdeletesatendofevent)
    open var propagatesDeletesAtEndOfEvent: Bool = true

    package let executionLock = RecursiveLock()
    package let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Registered objects by ID: weak unless the object has changes (then also in a change set).
    /// An object leaves it in its `deinit` (see `ObjectRegistry`).
    package let registry = ObjectRegistry()
    /// What the context's objects hold to reach it (see ``ContextLink``).
    package let _link: ContextLink
    // The change sets are used on the context's queue only and never by two overlapping accesses:
    // they opt out of run-time exclusivity checks (see NSManagedObject).
    @exclusivity(unchecked) package var inserted = ObjectTable(.inserted)
    /// Objects with changes noted since the last save; kept in the link (``ContextLink/changed``),
    /// where an object's change reaches it without loading the context through a weak reference.
    package var changed: ObjectTable {
        _read { yield _link.changed }
        _modify { yield &_link.changed }
    }
    @exclusivity(unchecked) package var deleted = ObjectTable(.deleted)
    /// Objects deleted whose delete rules have not run yet, in deletion order (see
    /// `NSManagedObjectContext+DeletePropagation.swift`); `neverSaved` marks inserted objects.
    @exclusivity(unchecked) package var _pendingDeletes: [(object: NSManagedObject, neverSaved: Bool)] = []
    /// Whether `_pendingDeletes` is being worked through (a delete made meanwhile joins the list).
    @exclusivity(unchecked) package var _isPropagatingDeletes = false
    /// The last fetch's request copy, emptied, for the next fetch to fill (see ``prepared(_:)``);
    /// used inside `performAndWait` only.
    @exclusivity(unchecked) package var _spareFetchRequest: NSFetchRequest<any NSFetchRequestResult>?
    /// Strong references kept when `retainsRegisteredObjects` is on.
    private var retained: [ObjectIdentifier: NSManagedObject] = [:]
    /// The values of fetched properties read so far (see `NSManagedObject+FetchedProperties.swift`).
    package let _fetchedPropertyCache = FetchedPropertyCache()
    /// The undo manager and what it needs, while there is one (`NSManagedObjectContext+Undo.swift`).
    package final var _undoState: ContextUndoState?
    /// What ObjectsDidChange reported since the last save (`NSManagedObjectContext+Notifications.swift`).
    @exclusivity(unchecked) package var _changeLog = ObjectChangeLog()
    /// Automatic merges scheduled on the queue and not run yet (`NSManagedObjectContext+Merging.swift`).
    package let _pendingMerges = PendingMerges()

    /// Creates a context of the given concurrency type.
    ///
    /// Related Core Data documentation: [init(concurrencyType:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/init(concurrencytype:))
    public init(concurrencyType ct: ConcurrencyType) {
        concurrencyType = ct
        queue = ct == .mainQueueConcurrencyType ? .main : DispatchQueue(label: "OpenCoreData.NSManagedObjectContext")
        _link = ContextLink(registry: registry)
        super.init()
        _link.attach(self)
        if ct != .mainQueueConcurrencyType { queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self)) }
        if let observe = ContextLink.creationObserver.withLock({ $0 }) { observe(_link) }
    }

    /// Creates a context of the given concurrency type (`.privateQueue` or `.mainQueue`): the newer
    /// Swift spelling of ``init(concurrencyType:)``.
    ///
    /// Related Core Data documentation: [init(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/init(_:))
    public convenience init(_ type: ConcurrencyType) {
        self.init(concurrencyType: type)
    }

    deinit {
        _link.detach()  // the changed objects, held by the link, go with the context as before
    }

    // MARK: Registered objects

    /// Every object the context holds, with or without changes.
    ///
    /// - Note: Inside a `perform`/`performAndWait` block the set is built once and then kept up to
    ///   date, so asking for it again costs nothing; its objects stay alive until the block ends, as
    ///   with the autoreleased set Apple returns.
    open var registeredObjects: Set<NSManagedObject> {
        _assertOnQueue("registeredObjects")
        return registry.objects()
    }
    /// Objects inserted and not saved.
    open var insertedObjects: Set<NSManagedObject> { Set(inserted.values) }
    /// Objects with unsaved changes (not inserted or deleted ones).
    open var updatedObjects: Set<NSManagedObject> { Set(changed.values.filter { $0.isUpdated }) }
    /// Objects deleted and not saved.
    open var deletedObjects: Set<NSManagedObject> { Set(deleted.values) }
    /// Whether the context has unsaved changes.
    open var hasChanges: Bool { !inserted.isEmpty || !deleted.isEmpty || changed.values.contains { $0.isUpdated } }

    /// The registered object with `objectID`, if any.
    open func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? { registry.object(for: objectID) }

    /// The object with `objectID`: the registered instance, or a new fault.
    ///
    /// Related Core Data documentation: [object(with:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/object(with:))
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        _assertOnQueue("object(with:)")
        if let object = registry.object(for: objectID) { return object }
        let object = NSManagedObject.makeFault(class: objectID.entity.layout.managedObjectClass, objectID: objectID, context: self)
        register(object)
        return object
    }

    /// The object with `objectID`, loaded; throws if no store holds it. In a child context the
    /// values are the parent's (its unsaved changes included), and an ancestor's temporary ID works.
    ///
    /// Related Core Data documentation: [existingObject(with:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/existingobject(with:))
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        _assertOnQueue("existingObject(with:)")
        if let object = registry.object(for: objectID), !object.isFault { return object }
        if objectID.isTemporaryID, _parentContext == nil {  // a child asks its parent (an ancestor's new object)
            throw OpenCoreDataError(.managedObjectReferentialIntegrity, "no object with this temporary ID is registered", entityName: objectID.entity.name, objectID: objectID)
        }
        let node = try _newValues(for: objectID)
        // The node's ID: a child's object whose parent saved it since takes its permanent ID.
        let object = self.object(with: node.objectID)
        object._fulfill(values: node.slotValues, version: Int64(node.version))
        return object
    }

    /// Registers an object the context did not hold (a new fault or a fetched row).
    package func register(_ object: NSManagedObject) {
        object._context = self
        _addToRegistry(object)
    }

    /// `register(_:)` for an object whose `_context` is already this context (a fault just made
    /// for it): storing the weak reference again cost about 80 instructions per fetched row.
    private func _addToRegistry(_ object: NSManagedObject) {
        registry.register(object)
        if retainsRegisteredObjects { retained[ObjectIdentifier(object)] = object }
    }

    /// The object for a fetched row: the registered instance (filled if it was a fault) or a new one.
    ///
    /// Stores call this to hand rows to the context without a second round trip.
    package func _registerFetchedObject(objectID: NSManagedObjectID, values: consuming RowValues, version: Int64,
                                        asFault: Bool) -> NSManagedObject {
        if let object = registry.object(for: objectID) {
            return _refetched(object, values: values, version: version, asFault: asFault)
        }
        let object = NSManagedObject.makeFault(class: objectID.entity.layout.managedObjectClass, objectID: objectID, context: self)
        return _fetchedNew(object, values: values, version: version, asFault: asFault)
    }

    /// `_registerFetchedObject` for a row whose ID is made only if asked for: `offer` names the row
    /// (its entity and key set for this row), `layout` is its entity's. Inlined into the fetch's row
    /// loop, its one caller (called, it cost about 38 instructions a row more, callgrind case 2).
    @inline(__always)
    package func _registerFetchedRow(_ offer: FaultConstruction.RowOffer, layout: EntityLayout,
                                     values: consuming RowValues, version: Int64, asFault: Bool,
                                     registration: inout FetchRegistration) -> NSManagedObject {
        if let expected = registration.expectedFilings, registry.filingCount == expected {
            let object = NSManagedObject.makeFault(class: layout.managedObjectClass, row: offer, context: self)
            // The object's initializer may be the app's, and it may have filed objects.
            if registry.filingCount == expected {
                registration.expectedFilings = expected &+ 1
                return _fetchedNew(object, values: values, version: version, asFault: asFault)
            }
            registration.expectedFilings = nil
            if let found = registry.object(store: offer.store, root: layout.rootID, key: offer.key) {
                return _refetched(found, values: values, version: version, asFault: asFault)  // `object` unused
            }
            return _fetchedNew(object, values: values, version: version, asFault: asFault)
        }
        registration.expectedFilings = nil
        if let object = registry.object(store: offer.store, root: layout.rootID, key: offer.key) {
            return _refetched(object, values: values, version: version, asFault: asFault)
        }
        let object = NSManagedObject.makeFault(class: layout.managedObjectClass, row: offer, context: self)
        return _fetchedNew(object, values: values, version: version, asFault: asFault)
    }

    /// What a fetch's row loop knows of the registry, for
    /// ``_registerFetchedRow(_:layout:values:version:asFault:registration:)``.
    ///
    /// A fetch's rows are distinct rows of one table (its SQL joins only to-one relationships), so
    /// while no object but the fetch's own new ones has been filed since the fetch found the
    /// registry empty, no row can have a registered object: the row is not looked up (a lock and a
    /// probe, about 110 instructions a row, callgrind case 2; and a lookup of case 4). Any other
    /// filing (an app's `awakeFromFetch` or initializer fetching, say) shows in the registry's
    /// count, and from then on every row is looked up.
    package struct FetchRegistration {
        /// The registry's filing count if only this fetch's new objects were filed since it began;
        /// `nil` when rows must be looked up.
        fileprivate var expectedFilings: UInt?
    }

    /// The registration state of a fetch about to hand over its rows.
    package func _beginFetchRegistration() -> FetchRegistration {
        FetchRegistration(expectedFilings: registry.isEmpty ? registry.filingCount : nil)
    }

    /// A registered object a fetch returned again: filled with the row if it is a fault.
    private func _refetched(_ object: NSManagedObject, values: consuming RowValues, version: Int64,
                            asFault: Bool) -> NSManagedObject {
        if object._isFault {
            object._version = version
            object._takeFetchedRow(values, asFault: asFault)
        } else if _changeLog.refreshesRefetchedObjects {
            _refreshFromRefetch(object, values: values, version: version)
        }
        return object
    }

    /// A fault just made for a fetched row: given the row and registered.
    private func _fetchedNew(_ object: NSManagedObject, values: consuming RowValues, version: Int64,
                             asFault: Bool) -> NSManagedObject {
        object._version = version
        _addToRegistry(object)
        object._takeFetchedRow(values, asFault: asFault)
        return object
    }

    /// Replaces an object's temporary ID with a permanent one.
    package func _changeID(of object: NSManagedObject, to newID: NSManagedObjectID) {
        registry.changeKey(of: object, from: object._objectID, to: newID)
        object._objectID = newID
    }

    // MARK: Changes

    /// Registers `object` as inserted; it is saved at the next `save()`.
    ///
    /// Related Core Data documentation: [insert(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/insert(_:))
    open func insert(_ object: NSManagedObject) {
        _assertOnQueue("insert(_:)")
        if let owner = object._context, owner !== self {
            reportMisuse("insert(_:): the object belongs to another context")
            return
        }
        if deleted.contains(object) {  // re-inserting a deleted object undeletes it
            deleted.remove(object)
            object._isDeleted = false
            return
        }
        if object._isDeleted, object._contextLink === _link {  // a new object deleted, its rules not run yet
            object._isDeleted = false
            object._isInserted = true
            inserted.insert(object)
            return
        }
        guard !inserted.contains(object), object._hasTemporaryID else { return }
        inserted.insert(object)
        object._isInserted = true
        object._isDeleted = false  // an unsaved object deleted and inserted again
        register(object)
        if !object._didAwakeFromInsert { object._didAwakeFromInsert = true; object.awakeFromInsert() }
    }

    /// Marks `object` as deleted: it is removed from its store at the next save (an inserted object
    /// that was never saved is simply dropped). The delete rules of its relationships run in
    /// ``processPendingChanges()`` (or at save), as on Apple: until then the related objects still
    /// point at it, and objects it cascades to are not deleted yet.
    ///
    /// Related Core Data documentation: [delete(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/delete(_:))
    open func delete(_ object: NSManagedObject) {
        _assertOnQueue("delete(_:)")
        _markDeleted(object)
    }

    /// Processes pending changes: applies the delete rules of the objects deleted since the last
    /// call (cascading, nullifying), unless ``propagatesDeletesAtEndOfEvent`` is off, then posts
    /// `NSManagedObjectContextObjectsDidChange` if anything changed since the last call.
    ///
    /// - Note: Linux: there is no AppKit event loop to call it at the end of each event; it runs at
    ///   the end of each `perform(_:)` block and at save, and whenever you call it.
    ///
    /// Related Core Data documentation: [processPendingChanges()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/processpendingchanges())
    open func processPendingChanges() {
        _assertOnQueue("processPendingChanges()")
        if propagatesDeletesAtEndOfEvent { _propagatePendingDeletes() }
        if _undoState != nil { _registerUndoForPendingChanges() }
        _endChangeEvent()
    }

    /// Discards all unsaved changes.
    ///
    /// Related Core Data documentation: [rollback()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/rollback())
    open func rollback() {
        _assertOnQueue("rollback()")
        _undoDiscardAll()
        _noteRollback()
        _discardPendingDeletes()
        for object in inserted.values {
            registry.remove(object._objectID)
            object._isInserted = false
            object._context = nil
            object._dropRelationshipsOnLeaving()
        }
        let restored = Array(changed.values) + Array(deleted.values)
        for object in restored {
            object._isDeleted = false
            object._clearChangedSlots()
            if let snapshot = object._snapshot, !object._isFault { object._values = snapshot }
        }
        inserted.removeAll()
        changed.removeAll()
        deleted.removeAll()
        for object in restored where !object._isFault { object.awake(fromSnapshotEvents: .rollback) }
        _endChangeEvent()
    }

    /// Forgets every object; the objects the context held become unusable.
    ///
    /// Related Core Data documentation: [reset()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/reset())
    open func reset() {
        _assertOnQueue("reset()")
        // Emptied first, while `objects` holds every live object: an object released after it
        // left has nothing to remove.
        _undoDiscardAll()
        let objects = registry.liveObjects()
        _noteReset(objects)
        registry.removeAll()
        for object in objects {
            object._context = nil
            object._turnIntoFaultForReset()
        }
        _childIDs = nil  // children holding this context's old temporary IDs cannot reach them either, as on Apple
        _pendingDeletes.removeAll()
        inserted.removeAll()
        changed.removeAll()
        deleted.removeAll()
        retained.removeAll()
        _endChangeEvent()
    }

    /// Updates `object` from its store (a child context: from its parent, whose unsaved changes it sees).
    ///
    /// With `flag` off the object turns into a fault: its values and unsaved changes are dropped
    /// (the objects it referenced are released unless something else holds them) and the next
    /// access reads the store. With `flag` on, an object that is not a fault reads the store's
    /// current values and re-applies its unsaved changes on top; relationships it did not change
    /// reload on next access. Inserted objects are left alone.
    ///
    /// - Note: Linux: as on Apple, dropping the changes of one side of a relationship leaves its
    ///   inverse as it is.
    ///
    /// Related Core Data documentation: [refresh(_:mergeChanges:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/refresh(_:mergechanges:))
    open func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        _assertOnQueue("refresh(_:mergeChanges:)")
        guard object._contextLink === _link, !object._isInserted else { return }
        if flag {
            guard !object._isFault, let node = try? _newValues(for: object._objectID) else { return }
            _applyRefreshedValues(to: object, values: node.slotValues, version: Int64(node.version))
            return
        }
        changed.remove(object)
        if !object._isFault { _noteRefreshed(object) }
        object._turnIntoFault()
    }

    /// Refreshes every registered object: unchanged ones turn into faults, changed ones merge
    /// their changes with the store's values (`refresh(_:mergeChanges: true)`).
    ///
    /// Related Core Data documentation: [refreshAllObjects()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/refreshallobjects())
    open func refreshAllObjects() {
        _assertOnQueue("refreshAllObjects()")
        for object in registry.liveObjects() {
            guard !object._isInserted else { continue }
            if object.hasChanges { refresh(object, mergeChanges: true) } else { refresh(object, mergeChanges: false) }
        }
    }

    /// Replaces temporary IDs of `objects` with permanent ones from their stores. In a child context
    /// the root's coordinator assigns them, and ancestors holding the same new objects (saved into
    /// them) change their IDs too; an ID an ancestor made permanent already is reused.
    ///
    /// Related Core Data documentation: [obtainPermanentIDs(for:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/obtainpermanentids(for:))
    open func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        _assertOnQueue("obtainPermanentIDs(for:)")
        // A save's inserted objects all have temporary IDs: the list itself, not a filtered copy
        // (a retain and a release an object).
        let temporary = objects.allSatisfy(\._hasTemporaryID) ? objects : objects.filter { $0._hasTemporaryID }
        guard !temporary.isEmpty else { return }
        // A context that handed temporary IDs to children notes what they become (+NestedContexts.swift).
        let handedOut = _childIDs?.handedOut(among: temporary)
        if let parent = _parentContext {
            try _obtainPermanentIDs(throughParent: parent, for: temporary)
        } else {
            try _obtainPermanentIDsFromCoordinator(for: temporary)
        }
        if let handedOut, !handedOut.isEmpty { _childIDs?.noteReassigned(handedOut) }
    }

    /// ``obtainPermanentIDs(for:)`` for objects with temporary IDs, from the coordinator's stores.
    package func _obtainPermanentIDsFromCoordinator(for temporary: [NSManagedObject]) throws {
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        let identities: [NSPersistentStoreCoordinator.PermanentIdentity]
        switch try coordinator._obtainPermanentIdentities(for: temporary) {
        case .rows(let keys, let store):
            registry.changeKeys(of: temporary, toRows: keys, of: store)
            return
        case .each(let each):
            identities = each
        }
        // Rows of one store move in the registry together (one lock, the pages in turn).
        var rowObjects: [NSManagedObject] = []
        var rowKeys: [Int64] = []
        var rowStore: ObjectIDStore?
        func moveRows() {
            guard let store = rowStore, !rowObjects.isEmpty else { return }
            registry.changeKeys(of: rowObjects, toRows: rowKeys, of: store)
            rowObjects.removeAll(keepingCapacity: true)
            rowKeys.removeAll(keepingCapacity: true)
        }
        for (object, identity) in zip(temporary, identities) {
            switch identity {
            case .id(let id):
                _changeID(of: object, to: id)
            case .row(let key, let store):
                if store !== rowStore { moveRows(); rowStore = store }
                rowObjects.append(object)
                rowKeys.append(key)
            }
        }
        moveRows()
    }

    // MARK: Faults

    /// Fills a fault from its store. A row that is gone leaves the object empty and is logged
    /// (Apple raises "could not fulfill a fault").
    ///
    /// A child context's faults take their parent's values, its unsaved changes included.
    package func _fulfillFault(_ object: NSManagedObject) {
        guard persistentStoreCoordinator != nil || _parentContext != nil else { return }
        do {
            let node = try _newValues(for: object._objectID)
            object._fulfill(values: node.slotValues, version: Int64(node.version))
        } catch {
            reportMisuse("could not fulfill a fault for \(object._objectID): \(error)")
            object._values = RowValues(for: object._layout)
            object._isFault = false
        }
    }

    /// Loads the destinations of a to-many relationship from the store.
    ///
    /// Objects deleted and not saved stay in the list: their delete rules already took them out of
    /// every loaded inverse they had to leave (nullify, cascade), so those still here are kept by a
    /// no-action or deny rule, and a rollback that undeletes them finds the list right.
    /// In a child context an object with a temporary ID that it did not insert is an ancestor's new
    /// object: its destinations come from the parent.
    package func _loadToMany(_ relationship: NSRelationshipDescription, of object: NSManagedObject, asSaved: Bool = false) -> [NSManagedObject] {
        if object._hasTemporaryID, _parentContext == nil || object._isInserted { return [] }
        guard persistentStoreCoordinator != nil || _parentContext != nil else { return [] }
        do {
            let value = try _newValue(forRelationship: relationship, of: object._objectID)
            var objects = NSIncrementalStore._relationshipIDs(in: value).map { self.object(with: $0) }
            // The store's list less the objects this context moved elsewhere and has not saved
            // (unless the list as saved is asked for): when a merge (or a refresh) turned `object`
            // into a fault after another context saved, the list it loads must agree with this
            // context's unsaved to-one changes.
            if !asSaved, !changed.isEmpty, let inverse = relationship.inverseRelationship, !inverse.isToMany {
                objects.removeAll { $0._hasUnsavedToOne(inverse, otherThan: object) }
            }
            // (A child's faults fire through its parent one by one: batches are fetches from the stores.)
            if _parentContext == nil, let destination = relationship.destinationEntity { _batchFaults(objects, entity: destination) }
            return objects
        } catch {
            reportMisuse("could not load relationship \(relationship.name) of \(object._objectID): \(error)")
            return []
        }
    }

    package func noCoordinator() -> OpenCoreDataError {
        OpenCoreDataError(.coreDataError, "the context has no persistent store coordinator")
    }
}

/// What a context's objects hold instead of a weak reference to the context each: the context
/// (weakly, so objects outlive it as on Apple) and its registry (strongly, so an object released
/// after its context can still leave the table, which stays valid for as long as any object holds
/// this link).
///
/// One weak reference here instead of one per object: forming a weak reference to the context
/// for each fetched row, and loading it (with a retain and release on the context's side table)
/// in each object's `deinit`, cost about 4% of case 2's wall time (`perf`).
///
/// `@unchecked Sendable` invariant: `context` is written once, by the context's initializer.
package final class ContextLink: @unchecked Sendable {
    @exclusivity(unchecked) package private(set) weak var context: NSManagedObjectContext?
    package let registry: ObjectRegistry
    /// The context's changed objects (its `changed`), used on its queue only. Here so that noting
    /// an object's change does not load the context through the weak reference: that was a weak
    /// load and two slow reference-count operations (the context has a side table) per change.
    @exclusivity(unchecked) package var changed = ObjectTable(.changed)
    /// Whether the context is alive; its `deinit` clears it (and `changed`), so an object that
    /// outlives its context records nothing here.
    @exclusivity(unchecked) package private(set) var isAttached = false
    /// The context's `stalenessInterval`, here so a fault reads it without loading the context.
    @exclusivity(unchecked) package var stalenessInterval: TimeInterval = -1
    /// When each fault's cached row was read, while `stalenessInterval` is not negative
    /// (`NSManagedObjectContext+Refreshing.swift`).
    @exclusivity(unchecked) package var rowTimes: [ObjectTableKey: TimeInterval] = [:]
    /// The query generation the context is pinned to (`NSQueryGenerationToken.swift`), here so a
    /// store finds it from the context a request carries; `nil` when it is not pinned.
    @exclusivity(unchecked) package var queryGeneration: NSQueryGenerationToken?
    /// Whether the context ever cached a fetched property's value, so an object turning into a
    /// fault skips the cache (reached through the context's weak reference) until it did.
    @exclusivity(unchecked) package var cachesFetchedProperties = false

    /// Called with each new context's link while set. Test support sets it to break, at exit, the
    /// relationship cycles that tests leave behind, so that LeakSanitizer reports only real leaks
    /// (`Tests/OpenCoreDataTestSupport/ReferenceCycles.swift`). Nil otherwise.
    package static let creationObserver = Locked<(@Sendable (ContextLink) -> Void)?>(nil)

    init(registry: ObjectRegistry) { self.registry = registry }

    func attach(_ context: NSManagedObjectContext) {
        self.context = context
        isAttached = true
    }

    /// Called by the context's `deinit`: releases the changed objects (which hold this link).
    func detach() {
        isAttached = false
        changed = ObjectTable(.changed)
    }

    /// Notes that `object`, registered in this link's context, has changed.
    @inline(__always)
    func noteChanged(_ object: NSManagedObject) {
        if isAttached { changed.insert(object) }
    }
}
