import Foundation

extension NSManagedObjectContext {
    /// Writes the context's changes to its stores: all of them or, if anything fails, none
    /// (the context then still holds its changes).
    ///
    /// Throws ``OpenCoreDataError``: validation errors (`validationMissingMandatoryProperty`, grouped
    /// as `validationMultipleErrors` with `NSDetailedErrorsKey`), store errors, conflicts; an error
    /// thrown by an override of `validateForInsert()`/`validateForUpdate()`/`validateForDelete()`/
    /// `validateValue(_:forKey:)` as it is when it is the only one.
    ///
    /// Related Core Data documentation: [save()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/save())
    public func save() throws {
        _assertOnQueue("save()")
        try performAndWait { () throws(any Error) in try _save() }
    }

    private func _save() throws {
        // The save's own ObjectsDidChange reports keep no counts for updates: a successful save
        // forgets what was reported right after (see `ObjectChangeLog.reportedUpdatedDuringSave`).
        let wasSaving = _changeLog.isSaving
        _changeLog.isSaving = true
        defer {
            _changeLog.isSaving = wasSaving
            _changeLog.keepCountsOfSaveReports()  // (empty after a successful save)
            _changeLog.saveReport = nil
        }
        _changeLog.saveReport = nil
        processPendingChanges()
        // What its ObjectsDidChange posted, if it was everything; kept for the save, so that the
        // events of `willSave()`'s rounds see when nothing changed since (`_endChangeEvent()`).
        var reported = _changeLog.saveReport
        _propagatePendingDeletes()  // also when `propagatesDeletesAtEndOfEvent` is off
        guard hasChanges else { return try _saveWithoutChanges() }
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: self)
        try _runWillSave()  // NSManagedObjectContext+Lifecycle.swift
        try _updateDerivedAttributes()  // after willSave, so what willSave changes is derived from

        var insertedNow = Array(inserted.values)
        var updatedNow = _updatedForSave
        var deletedNow = Array(deleted.values)
        // The sets ObjectsDidChange posted, if they are still the save's (see `ReportedChanges`).
        let mutationsBefore = _tableMutations

        try _validateForSave(inserted: insertedNow, updated: updatedNow, deleted: deletedNow)

        try TransformableValues.checkStorable(insertedNow)  // before anything is written
        try TransformableValues.checkStorable(updatedNow)
        // Constraint and optimistic-locking conflicts go to the merge policy (+Conflicts.swift).
        if let parent = _parentContext {  // a child's save goes one level up (+NestedContexts.swift)
            try _pushChanges(to: parent, inserted: &insertedNow, updated: &updatedNow, deleted: &deletedNow)
        } else {
            // A pinned context saves, and resolves conflicts, against the store's latest state.
            let pinned = _link.queryGeneration
            _link.queryGeneration = nil
            var saved = false
            defer { _advanceQueryGenerationAfterSave(pinned, saved: saved) }
            try _executeSaveResolvingConflicts(coordinator, inserted: &insertedNow, updated: &updatedNow, deleted: &deletedNow)
            saved = true
        }

        var sets = reported.flatMap { reported -> ReportedChanges? in
            guard reported.mutations == mutationsBefore, _tableMutations == mutationsBefore,
                  reported.inserted.count == insertedNow.count, reported.updated.count == updatedNow.count,
                  reported.deleted.count == deletedNow.count else { return nil }
            return reported
        }
        // The stores have the changes: commit them in memory.
        insertedNow.forEachBorrowed { object in
            object._isInserted = false
            object._version = 1
            object._commitSnapshot()
            object._clearChangedSlots()
        }
        updatedNow.forEachBorrowed { object in
            if object.hasPersistentChangedValues { object._version += 1 }
            object._commitSnapshot()
            object._clearChangedSlots()
        }
        if !deletedNow.isEmpty { _detachDeletions(deletedNow, merged: false) }
        deletedNow.forEachBorrowed { object in
            registry.remove(object)
            object._context = nil
        }
        inserted.removeAll()
        changed.removeAll()
        deleted.removeAll()
        _changeLog.forgetReported()
        insertedNow.forEachBorrowed { $0.didSave() }  // (three loops: no concatenated copy)
        updatedNow.forEachBorrowed { $0.didSave() }
        deletedNow.forEachBorrowed { $0.didSave() }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: [
            NSInsertedObjectsKey: sets?.inserted ?? Self.notificationSet(insertedNow),
            NSUpdatedObjectsKey: sets?.updated ?? Self.notificationSet(updatedNow),
            NSDeletedObjectsKey: sets?.deleted ?? Self.notificationSet(deletedNow),
        ])
        _postDidSaveObjectIDs(inserted: insertedNow, updated: updatedNow, deleted: deletedNow)
        _turnSavedDeletionsIntoFaults(deletedNow)
        _deliverToAutomaticMergers(inserted: insertedNow, updated: updatedNow, deleted: deletedNow)
        // The sets hold the objects in hash order: let them go while the arrays still hold them,
        // so that new objects nobody else keeps are freed in the order they were made (in hash
        // order each one's registry page and memory is a cache miss: case 1 took 13% longer).
        withExtendedLifetime((insertedNow, updatedNow, deletedNow)) {
            reported = nil
            sets = nil
            _changeLog.saveReport = nil
        }
    }
}

extension NSManagedObjectContext {
    /// The updated objects a save writes: changed, and neither inserted nor deleted.
    package var _updatedForSave: [NSManagedObject] {
        changed.values.filter { $0.isUpdated && !$0._isDeleted && !$0._isInserted }
    }

    /// A save with nothing to save still reaches the stores, as on Apple: one save request with
    /// empty sets (a store of your own may write its metadata then; the SQLite store writes
    /// nothing unless its metadata changed). No notifications are posted.
    ///
    /// Not made when no one could tell: the coordinator is not a subclass (which sees every
    /// request) and no store wants it (``NSPersistentStore/_wantsSavesWithoutChanges``).
    private func _saveWithoutChanges() throws {
        guard _parentContext == nil, let coordinator = persistentStoreCoordinator else { return }  // a child: nothing to push
        let stores = coordinator.persistentStores
        guard !stores.isEmpty else { return }
        if type(of: coordinator) == NSPersistentStoreCoordinator.self,
            // (Stores are read under the coordinator's lock.)
            !coordinator.performAndWait({ stores.contains { $0._wantsSavesWithoutChanges } })
        {
            return
        }
        _ = try coordinator.execute(NSSaveChangesRequest(inserted: [], updated: [], deleted: []), with: self)
    }

    /// `objects` as a set for a did-save notification's `userInfo`, made with room for twice as
    /// many. Each insertion compares the object with every one it meets in its probe, through
    /// `NSObject`'s `==`, which boxes the other in an `Any?` for `isEqual(_:)` (about 160
    /// instructions a comparison); a table at most a third full meets about a quarter as many as
    /// `Set(objects)`'s (callgrind case 5: 0.79 comparisons an object, 0.2 now).
    private static func notificationSet(_ objects: [NSManagedObject]) -> Set<NSManagedObject> {
        var set = Set<NSManagedObject>(minimumCapacity: objects.count * 2)
        for object in objects { set.insert(object) }
        return set
    }
}

extension NSManagedObject {
    /// Makes the values just saved the committed snapshot. Without relationships the snapshot is
    /// the values themselves, not held apart (as after a fetch; a write first gives the snapshot a
    /// reference of its own): holding them apart was a retain of the values' storage a saved object,
    /// a read of memory the save had left (case 5's pass over 100,000 saved objects: 6.3 ms → 3.6).
    package final func _commitSnapshot() {
        if _layout.relationshipSlots.isEmpty {
            _shareSnapshotWithValues()
        } else {
            _snapshot = _committedSnapshot()
        }
    }

    /// The values to keep as the committed snapshot: to-one relationships as object IDs,
    /// to-many relationships left out (they reload from the store).
    package func _committedSnapshot() -> RowValues {
        if _layout.relationshipSlots.isEmpty { return _values }  // shares the storage until either changes
        var snapshot = _values
        for slot in _layout.relationshipSlots {
            if _layout.relationships[slot]!.isToMany { snapshot[slot] = nil; continue }
            snapshot[slot] = (_values[slot] as? NSManagedObject)?._objectID ?? _values[slot] as? NSManagedObjectID
        }
        return snapshot
    }
}
