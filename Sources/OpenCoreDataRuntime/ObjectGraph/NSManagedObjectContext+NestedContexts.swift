import Foundation

/// Nested contexts: a context whose ``NSManagedObjectContext/parent`` is another context gets its
/// rows from that context and saves into it, one level up.
///
/// A context asks one of two things for rows, through the same three requests (this protocol):
/// its coordinator (the stores' rows) or its parent context (the parent's objects as they are in
/// memory, unsaved changes included, and through the parent its own source, up to the root's
/// coordinator). Fetch, fault, count and relationship code asks
/// ``NSManagedObjectContext/_executeSourceFetch(_:)``, ``NSManagedObjectContext/_newValues(for:)``
/// and ``NSManagedObjectContext/_newValue(forRelationship:of:)``, which branch once on the parent:
/// a context on a coordinator calls it directly, as before nesting existed. No store type is
/// special-cased: the parent answers from its objects and passes the rest to its own source.
///
/// Locks: a child runs the parent's side inside the parent's `performAndWait` while holding its
/// own, always in that order (child, then parent), and a parent never waits for a child, so
/// chains of any depth cannot deadlock.
package protocol NestedContextSource: AnyObject {
    /// The values of `objectID` (to-one relationships as object IDs, to-many ones left out).
    func newValues(for objectID: NSManagedObjectID, context: NSManagedObjectContext) throws -> NSIncrementalStoreNode
    /// The destination IDs of a to-many relationship of `objectID`.
    func newValue(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID,
                  context: NSManagedObjectContext) throws -> Any
    /// A fetch whose objects are registered in `context`.
    func _executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, with context: NSManagedObjectContext) throws
        -> FetchResults
}

extension NSPersistentStoreCoordinator: NestedContextSource {}

extension NSManagedObjectContext: NestedContextSource {}

/// What a parent context keeps for its children: the temporary IDs of its new objects that a child
/// holds (it fetched them, faulted them, or inserted them and saved), and the permanent IDs those
/// became when this context obtained permanent IDs (at its save). A child's object keeps the
/// temporary ID after its parent saves, as on Apple; through this table it still reaches its
/// parent's object (its faults fire, its later changes save into the right object).
///
/// An entry is kept until the context is reset: a child that obtains permanent IDs before it saves
/// (``NSManagedObjectContext/obtainPermanentIDs(for:)``, Apple's usual advice) adds none.
///
/// Not `Sendable`: used on the parent's queue only.
package final class NestedContextIDs {
    private var handedOut: Set<NSManagedObjectID> = []
    private var reassigned: [NSManagedObjectID: NSManagedObjectID] = [:]
    /// `reassigned` the other way: the temporary ID each permanent one replaced.
    private var former: [NSManagedObjectID: NSManagedObjectID] = [:]

    /// Notes that a child holds `id` (a temporary ID of this context).
    func noteHandedOut(_ id: NSManagedObjectID) {
        if id.isTemporaryID { handedOut.insert(id) }
    }

    /// The objects among `objects` whose temporary IDs a child holds, with those IDs.
    package func handedOut(among objects: [NSManagedObject]) -> [(NSManagedObject, NSManagedObjectID)] {
        guard !handedOut.isEmpty else { return [] }
        return objects.compactMap { object in
            let id = object.objectID
            return handedOut.contains(id) ? (object, id) : nil
        }
    }

    /// Notes the permanent IDs that `objects`' temporary IDs became.
    package func noteReassigned(_ objects: [(NSManagedObject, NSManagedObjectID)]) {
        for (object, old) in objects where !object._hasTemporaryID {
            handedOut.remove(old)
            reassigned[old] = object.objectID
            former[object.objectID] = old
        }
    }

    /// For the IDs among `ids` that replaced temporary IDs a child holds, the pairs (old, new).
    func reassignments(among ids: [NSManagedObjectID]) -> [(old: NSManagedObjectID, new: NSManagedObjectID)] {
        guard !former.isEmpty else { return [] }
        return ids.compactMap { id in former[id].map { ($0, id) } }
    }

    /// The ID this context now knows `id` by.
    func current(_ id: NSManagedObjectID) -> NSManagedObjectID {
        id.isTemporaryID ? reassigned[id] ?? id : id
    }

    /// The permanent ID `id` became here, if it did.
    func permanent(for id: NSManagedObjectID) -> NSManagedObjectID? { reassigned[id] }
}

extension NSManagedObjectContext {
    /// The parent context: its child (this context) fetches, faults and counts through it, seeing
    /// its unsaved changes, and saves into it rather than into the stores. `nil` for a context on a
    /// coordinator. Setting it makes ``persistentStoreCoordinator`` the root context's coordinator;
    /// setting a coordinator clears it.
    ///
    /// ```swift
    /// let editor = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    /// editor.parent = viewContext
    /// try await editor.perform {
    ///     let mood = Mood(context: editor)
    ///     try editor.save()  // viewContext now has `mood` as an unsaved insert
    /// }
    /// ```
    ///
    /// Set it before the context is used, to a context that has a coordinator or a parent; a
    /// parent that would make a cycle is refused (logged).
    ///
    /// Related Core Data documentation: [parent](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/parent)
    public var parent: NSManagedObjectContext? {
        get { _parentContext }
        set {
            var ancestor = newValue
            while let context = ancestor {
                if context === self { return reportMisuse("parent: the context would be its own ancestor") }
                ancestor = context._parentContext
            }
            guard let newValue else {
                _parentContext = nil
                return
            }
            persistentStoreCoordinator = newValue.persistentStoreCoordinator  // (clears `_parentContext`)
            _parentContext = newValue
        }
    }

    // MARK: Asking the source

    /// The values of `objectID` from where the context gets its rows (its parent or its coordinator).
    @inline(__always)
    package func _newValues(for objectID: NSManagedObjectID) throws -> NSIncrementalStoreNode {
        if let parent = _parentContext { return try parent.newValues(for: objectID, context: self) }
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        return try coordinator.newValues(for: objectID, context: self)
    }

    /// The destinations of a to-many relationship of `objectID` from where the context gets its rows.
    @inline(__always)
    package func _newValue(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID)
        throws -> Any
    {
        if let parent = _parentContext { return try parent.newValue(forRelationship: relationship, of: objectID, context: self) }
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        return try coordinator.newValue(forRelationship: relationship, of: objectID, context: self)
    }

    // MARK: Answering a child (on this context's queue)

    /// The object this context has for an ID a child asks about (a temporary ID this context has
    /// since made permanent is followed), or `nil` if none is registered.
    private func _registeredForChild(_ objectID: NSManagedObjectID) -> NSManagedObject? {
        registry.object(for: _childIDs?.current(objectID) ?? objectID)
    }

    /// `object`'s values as a child takes them: a row of its own (not sharing this object's
    /// storage across queues), to-one relationships as IDs, to-many ones left out.
    private func _rowForChild(_ object: NSManagedObject, naming named: inout [NSManagedObjectID]) -> RowValues {
        if object._isFault { object._fireFault() }
        let layout = object._layout
        var row = RowValues(for: layout)
        for slot in layout.properties.indices {
            if let relationship = layout.relationships[slot] {
                guard !relationship.isToMany else { continue }
                let id = (object._values[slot] as? NSManagedObject)?.objectID ?? object._values[slot] as? NSManagedObjectID
                if let id {
                    _noteHandedOut(id)
                    named.append(id)
                }
                row[slot] = id
            } else {
                row[slot] = object._values[slot]
            }
        }
        return row
    }

    /// Tells `child` which of the IDs in this answer replaced temporary IDs it may hold (this
    /// context saved the objects since): its objects registered under the old IDs take the new
    /// ones, so that a fetch or a relationship does not make a second instance of one of them.
    /// Called on the child's thread (which holds the child's lock: the child is asking).
    private func _reportReassignments(among named: [NSManagedObjectID], to child: NSManagedObjectContext) {
        guard let pairs = _childIDs?.reassignments(among: named), !pairs.isEmpty else { return }
        child._adoptReassignedIDs(pairs)
    }

    /// See ``_reportReassignments(among:to:)``: the objects registered under `pairs`' old IDs take the new ones.
    private func _adoptReassignedIDs(_ pairs: [(old: NSManagedObjectID, new: NSManagedObjectID)]) {
        var moved: [(NSManagedObject, NSManagedObjectID)] = []
        for (old, new) in pairs where registry.object(for: new) == nil {
            guard let object = registry.object(for: old) else { continue }
            _changeID(of: object, to: new)
            moved.append((object, old))
        }
        if !moved.isEmpty { _childIDs?.noteReassigned(moved) }  // for this context's own children
    }

    private func _noteHandedOut(_ id: NSManagedObjectID) {
        guard id.isTemporaryID else { return }
        if _childIDs == nil { _childIDs = NestedContextIDs() }
        _childIDs!.noteHandedOut(id)
    }

    private func _missingForChild(_ objectID: NSManagedObjectID) -> OpenCoreDataError {
        OpenCoreDataError(
            .managedObjectReferentialIntegrity, "the parent context has no object with this ID (deleted, or never saved into it)",
            entityName: objectID.entity.name, objectID: objectID)
    }

    /// A child's fault or refresh: this context's values for `objectID`, its unsaved changes
    /// included; throws if this context has deleted the object or does not know it. The node's ID
    /// is the one this context knows the object by (permanent, if it saved the object since).
    package func newValues(for objectID: NSManagedObjectID, context child: NSManagedObjectContext) throws
        -> NSIncrementalStoreNode
    {
        try performAndWait { () throws(any Error) -> NSIncrementalStoreNode in
            let object = _registeredForChild(objectID)
            if let object, object._isDeleted { throw _missingForChild(objectID) }
            if let object, !object._isFault || object._isInserted {
                let id = _childIDs?.current(objectID) ?? objectID
                var named = [id]
                let row = _rowForChild(object, naming: &named)
                _reportReassignments(among: named, to: child)
                return NSIncrementalStoreNode(objectID: id, slotValues: row, version: UInt64(max(object._version, 0)))
            }
            // Not in memory here (or a fault): what this context's own source has (a temporary ID
            // may be an ancestor's new object).
            let id = _childIDs?.current(objectID) ?? objectID
            if id.isTemporaryID, _parentContext == nil { throw _missingForChild(objectID) }
            let node = try _newValues(for: id)
            let layout = id.entity.layout
            let toOnes = layout.relationships.indices.compactMap { slot -> NSManagedObjectID? in
                guard layout.relationships[slot]?.isToMany == false, slot < node.slotValues.count else { return nil }
                return node.slotValues[slot] as? NSManagedObjectID
            }
            _reportReassignments(among: [id] + toOnes, to: child)
            return node
        }
    }

    /// A child's to-many relationship: the destinations this context has, its unsaved changes included.
    package func newValue(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID,
                          context child: NSManagedObjectContext) throws -> Any
    {
        try performAndWait { () throws(any Error) -> Any in
            if let object = _registeredForChild(objectID) {
                guard !object._isDeleted, let slot = object._layout.indexByName[relationship.name] else {
                    return [NSManagedObjectID]()
                }
                // (Objects deleted here stay in a list until saved, for a rollback: a child does not see them.)
                let ids = object._toMany(slot: slot).objects.compactMap { $0._isDeleted ? nil : $0.objectID }
                for id in ids { _noteHandedOut(id) }
                _reportReassignments(among: ids, to: child)
                return ids
            }
            let id = _childIDs?.current(objectID) ?? objectID
            if id.isTemporaryID, _parentContext == nil { return [NSManagedObjectID]() }
            let value = try _newValue(forRelationship: relationship, of: id)
            _reportReassignments(among: NSIncrementalStore._relationshipIDs(in: value), to: child)
            return value
        }
    }

    /// A child's fetch: this context runs it (merging its unsaved changes unless
    /// `includesPendingChanges` is off, and asking its own source), and the child registers the
    /// objects with this context's values. IDs, counts and dictionaries are the same in every
    /// context and pass through.
    package func _executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, with child: NSManagedObjectContext)
        throws -> FetchResults
    {
        let wantsObjects = request.resultType == .managedObjectResultType
        typealias Row = (id: NSManagedObjectID, values: RowValues, version: Int64)
        let answer = try performAndWait { () throws(any Error) -> (rows: [Row], other: FetchResults?) in
            var named: [NSManagedObjectID] = []
            defer { _reportReassignments(among: named, to: child) }  // before the child registers the rows
            let copy = NSFetchRequest<any NSFetchRequestResult>()
            copy.copySettings(from: request)
            copy.fetchBatchSize = 0
            if wantsObjects { copy.returnsObjectsAsFaults = false }
            let results = try _fetch(copy)
            guard wantsObjects else { return ([], results) }
            let rows = results.managedObjects.map { object -> Row in
                let id = object.objectID
                _noteHandedOut(id)
                named.append(id)
                return (id, _rowForChild(object, naming: &named), object._version)
            }
            return (rows, nil)
        }
        if let other = answer.other { return other }
        let asFaults = request.returnsObjectsAsFaults
        return .objects(answer.rows.map { row in
            child._registerFetchedObject(objectID: row.id, values: row.values, version: row.version, asFault: asFaults)
        })
    }

    // MARK: Permanent IDs

    /// ``obtainPermanentIDs(for:)`` in a child: an ID an ancestor already made permanent is taken
    /// from it; the others come from the root's coordinator, and every ancestor that holds one of
    /// these objects (a new object the child saved into it) changes its ID too.
    package func _obtainPermanentIDs(throughParent parent: NSManagedObjectContext, for temporary: [NSManagedObject]) throws {
        let oldIDs = temporary.map(\.objectID)
        let known = parent._permanentIDs(forChildIDs: oldIDs)
        var remaining: [NSManagedObject] = []
        var remainingOld: [NSManagedObjectID] = []
        for (index, object) in temporary.enumerated() {
            if let id = known[index] {
                _changeID(of: object, to: id)
            } else {
                remaining.append(object)
                remainingOld.append(oldIDs[index])
            }
        }
        guard !remaining.isEmpty else { return }
        try _obtainPermanentIDsFromCoordinator(for: remaining)  // the root's coordinator
        parent._adoptPermanentIDs(Array(zip(remainingOld, remaining.map(\.objectID))))
    }

    /// The permanent IDs this context or an ancestor gave the temporary IDs `ids`, where one did.
    private func _permanentIDs(forChildIDs ids: [NSManagedObjectID]) -> [NSManagedObjectID?] {
        let here = performAndWait { ids.map { id in _childIDs?.permanent(for: id) } }
        guard let parent = _parentContext, here.contains(where: { $0 == nil }) else { return here }
        let above = parent._permanentIDs(forChildIDs: ids)
        return zip(here, above).map { $0 ?? $1 }
    }

    /// A child obtained permanent IDs for objects it may have saved into this context: the objects
    /// registered here under the temporary IDs take the new ones, here and in every ancestor.
    private func _adoptPermanentIDs(_ pairs: [(old: NSManagedObjectID, new: NSManagedObjectID)]) {
        performAndWait {
            var moved: [(NSManagedObject, NSManagedObjectID)] = []
            for (old, new) in pairs {
                guard let object = registry.object(for: old) else { continue }
                _changeID(of: object, to: new)
                moved.append((object, old))
            }
            _childIDs?.noteReassigned(moved)  // this context's other children may hold the old IDs
        }
        _parentContext?._adoptPermanentIDs(pairs)
    }

    // MARK: Saving into the parent

    /// How many times a child's conflicts with its parent are found and resolved before its save
    /// gives up (as for conflicts with the stores, `+Conflicts.swift`).
    private static let parentConflictPasses = 4

    /// A child's save: resolves conflicts between the child's snapshots and the parent's current
    /// values with the child's merge policy, then pushes inserts, updates (the changed properties)
    /// and deletes into the parent, on the parent's queue, as the parent's own unsaved changes.
    /// New objects keep their temporary IDs. The three lists are updated when resolution changes
    /// objects.
    package func _pushChanges(
        to parent: NSManagedObjectContext, inserted insertedNow: inout [NSManagedObject],
        updated updatedNow: inout [NSManagedObject], deleted deletedNow: inout [NSManagedObject]
    ) throws {
        // Checked and pushed inside one `performAndWait` of the parent: a sibling's push cannot
        // come between this child's check and its push. (The child's objects are used on this
        // thread, which holds the child's lock too.)
        var lists = (insertedNow, updatedNow, deletedNow)
        try parent.performAndWait { () throws(any Error) in
            var pass = 0
            while true {
                let conflicts = _conflicts(withParent: parent, lists.1 + lists.2)
                if conflicts.isEmpty { break }
                pass += 1
                if pass > Self.parentConflictPasses { throw Self._parentConflictError(NSMergePolicy._lockingError(conflicts)) }
                do {
                    try _effectiveMergePolicy.resolve(mergeConflicts: conflicts)
                } catch let error as OpenCoreDataError where error.code == .persistentStoreSaveConflicts {
                    throw Self._parentConflictError(error)
                }
                lists = (
                    Array(inserted.values), _updatedForSave,
                    Array(deleted.values)
                )
            }
            parent._receive(ChildChanges(inserted: lists.0, updated: lists.1, deleted: lists.2))
        }
        (insertedNow, updatedNow, deletedNow) = lists
    }

    /// An unresolved conflict with the parent as Apple reports one found in memory rather than in
    /// a store: `NSManagedObjectMergeError` (133020), with the conflicts in `conflictList`.
    private static func _parentConflictError(_ error: OpenCoreDataError) -> OpenCoreDataError {
        var error = error
        error.code = .managedObjectMerge
        error.message = "merge conflict: \(error.conflictList.count) object(s) changed in the parent context since the child read them"
        error.url = nil
        return error
    }

    /// One ``NSMergeConflict`` per updated or deleted object whose snapshot (the values this
    /// context last read from its parent) is not what the parent holds now, as Apple checks a
    /// child's snapshots against its parent. `persistedSnapshot` is the parent's current values
    /// (`nil`, with version 0, when the parent deleted the object); `cachedSnapshot` the snapshot;
    /// `newVersionNumber` the parent's version of the object (at least 1 for an object the parent
    /// has and never saved).
    private func _conflicts(withParent parent: NSManagedObjectContext, _ objects: [NSManagedObject]) -> [NSMergeConflict] {
        let checked = objects.filter { !$0._isInserted && $0._snapshot != nil }
        guard !checked.isEmpty else { return [] }
        let ids = checked.map(\.objectID)
        let current = ids.map { try? parent.newValues(for: $0, context: self) }  // (on the parent's queue already)
        var conflicts: [NSMergeConflict] = []
        for (object, node) in zip(checked, current) {
            let snapshot = object._snapshot!
            if let node, Self._sameStoredValues(snapshot, node.slotValues, layout: object._layout) { continue }
            conflicts.append(NSMergeConflict(
                source: object, newVersion: node.map { max(Int($0.version), 1) } ?? 0, oldVersion: Int(object._version),
                cachedSnapshot: object._snapshotDictionary(snapshot),
                persistedSnapshot: node.map { object._snapshotDictionary($0.slotValues) }))
        }
        return conflicts
    }

    /// Whether two rows agree on every stored attribute and to-one relationship.
    private static func _sameStoredValues(_ a: RowValues, _ b: RowValues, layout: EntityLayout) -> Bool {
        for (slot, property) in layout.properties.enumerated() where !property.isTransient {
            if layout.relationships[slot]?.isToMany == true { continue }
            let x = slot < a.count ? a[slot] : nil
            let y = slot < b.count ? b[slot] : nil
            if !_sameValue(x, y) { return false }
        }
        return true
    }

    /// Applies a child's saved changes to this context's objects (on this context's queue).
    ///
    /// Relationships are set with inverse maintenance, from the to-one side where there is one: a
    /// child's lists may be older than this context's (it does not see changes made here after it
    /// read them), and setting each changed to-one keeps both sides here in agreement where
    /// replacing whole lists would not. An unordered to-many whose inverse is to-one is left to
    /// its members' to-ones (every member the child moved is among its changes); ordered,
    /// many-to-many and one-way lists are replaced, after the to-ones.
    private func _receive(_ changes: ChildChanges) {
        var made: [NSManagedObjectID: NSManagedObject] = [:]
        func resolve(_ id: NSManagedObjectID) -> NSManagedObject {
            made[id] ?? _registeredForChild(id) ?? object(with: _childIDs?.current(id) ?? id)
        }
        // New objects first, so that relationships among them and to them resolve to them.
        for new in changes.inserted {
            let object = NSManagedObject.makeFault(class: new.objectClass, objectID: new.id, context: self)
            object._values = RowValues(for: object._layout)
            object._isFault = false
            object._didAwakeFromInsert = true  // awoke in the child: defaults are not applied again
            // Filed directly, not through `insert(_:)`: its ID may be permanent already (the child
            // obtained one), and it awoke from insert in the child.
            object._isInserted = true
            inserted.insert(object)
            register(object)
            made[new.id] = object
            _noteHandedOut(new.id)
        }
        var lists: [(NSManagedObject, Int, [NSManagedObjectID])] = []
        func apply(_ pushed: ChildChanges.Object, isNew: Bool) {
            let object = isNew ? made[pushed.id]! : resolve(pushed.id)
            if object._isFault { object._fireFault() }
            for (slot, value) in pushed.values {
                switch value {
                case .attribute(let value):
                    if isNew { object._values[slot] = value } else { object._storeValue(value, slot: slot) }
                case .toOne(let id):
                    object._setToOne(id.map(resolve), slot: slot)
                case .toMany(let ids):
                    let relationship = object._layout.relationships[slot]!
                    if !relationship.isOrdered, relationship.inverseRelationship?.isToMany == false { continue }
                    lists.append((object, slot, ids))
                }
            }
        }
        for new in changes.inserted { apply(new, isNew: true) }
        for update in changes.updated { apply(update, isNew: false) }
        for (object, slot, ids) in lists { object._replaceToMany(slot: slot, with: ids.map(resolve)) }
        for id in changes.deleted {
            let object = resolve(id)
            if !object._isDeleted { delete(object) }
        }
    }
}

/// A child's saved changes as they cross to its parent's queue: IDs and values, no objects of
/// the child's (which belong to the child's queue).
private struct ChildChanges {
    enum Value {
        case attribute(Any?)
        case toOne(NSManagedObjectID?)
        case toMany([NSManagedObjectID])
    }

    struct Object {
        let id: NSManagedObjectID
        let objectClass: NSManagedObject.Type
        let values: [(slot: Int, value: Value)]
    }

    let inserted: [Object]
    let updated: [Object]
    let deleted: [NSManagedObjectID]

    /// Read on the child's queue: every value of new objects, the changed ones of updated objects.
    init(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        self.inserted = inserted.map { object in
            Object(id: object.objectID, objectClass: type(of: object), values: object._layout.properties.indices.compactMap { slot in
                Self.value(of: object, slot: slot).map { (slot, $0) }
            })
        }
        self.updated = updated.map { object in
            Object(id: object.objectID, objectClass: type(of: object), values: object._changedSlots.compactMap { slot in
                Self.value(of: object, slot: slot).map { (slot, $0) }
            })
        }
        self.deleted = deleted.map(\.objectID)
    }

    /// A slot's value by ID; `nil` for a to-many relationship not loaded (the parent's stays as it is).
    private static func value(of object: NSManagedObject, slot: Int) -> Value? {
        let stored = object._values[slot]
        guard let relationship = object._layout.relationships[slot] else { return .attribute(stored) }
        if relationship.isToMany {
            guard let list = stored as? ManagedObjectList else { return nil }
            return .toMany(list.objects.map(\.objectID))
        }
        return .toOne((stored as? NSManagedObject)?.objectID ?? stored as? NSManagedObjectID)
    }
}
