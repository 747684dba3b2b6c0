import Foundation

/// The default resolution of each policy type (see ``NSMergePolicy/resolve(constraintConflicts:)``
/// and ``NSMergePolicy/resolve(optimisticLockingConflicts:)`` for what each type does).
extension NSMergePolicy {
    // MARK: Constraint conflicts

    func _resolveConstraintConflicts(_ list: [NSConstraintConflict]) throws {
        if mergeType == .errorMergePolicyType { throw Self._constraintError(list) }
        // An object merged away by one conflict may be named by another (an entity with several
        // constraints): follow it to the object it was merged into.
        var mergedInto: [ObjectIdentifier: NSManagedObject] = [:]
        func current(_ object: NSManagedObject) -> NSManagedObject? {
            var object = object
            while let next = mergedInto[ObjectIdentifier(object)] { object = next }
            return object._context == nil || object._isDeleted ? nil : object
        }
        for conflict in list {
            var objects: [NSManagedObject] = []
            for object in conflict.conflictingObjects {
                if let live = current(object), !objects.contains(where: { $0 === live }) { objects.append(live) }
            }
            let survivor: NSManagedObject
            if let database = conflict.databaseObject.flatMap(current) {
                survivor = database
            } else {
                guard let first = objects.first else { continue }
                survivor = first
            }
            var merged = false
            for loser in objects where loser !== survivor {
                guard let context = loser._context else { continue }
                _merge(loser, into: survivor)
                context.delete(loser)
                mergedInto[ObjectIdentifier(loser)] = survivor
                merged = true
            }
            if merged { survivor.awake(fromSnapshotEvents: .mergePolicy) }
        }
    }

    /// Copies what the policy keeps of `loser` into `survivor` and moves `loser`'s relationships
    /// to `survivor`, leaving `loser` without relationships (so deleting it cascades nothing).
    private func _merge(_ loser: NSManagedObject, into survivor: NSManagedObject) {
        if loser._isFault { loser._fireFault() }
        if survivor._isFault { survivor._fireFault() }
        let loserWins = mergeType == .mergeByPropertyObjectTrumpMergePolicyType || mergeType == .overwriteMergePolicyType
        // Derived attributes are not merged: the save computes them again for the kept object.
        for (slot, property) in loser._layout.properties.enumerated()
        where !property.isTransient && !(property is NSDerivedAttributeDescription) {
            guard let target = survivor._layout.indexByName[property.name],
                  (survivor._layout.relationships[target]?.isToMany) == (loser._layout.relationships[slot]?.isToMany)
            else { continue }
            if let relationship = loser._layout.relationships[slot] {
                if relationship.isToMany {
                    let members = loser._toMany(slot: slot).objects
                    guard !members.isEmpty else { continue }
                    loser._replaceToMany(slot: slot, with: [])
                    survivor._addToMany(members, slot: target)
                } else if let destination = loser._toOne(slot: slot) {
                    loser._setToOne(nil, slot: slot)
                    let takeLosers = survivor._toOne(slot: target) == nil
                        || (loserWins && (loser._isInserted || loser._changedSlotsContain(slot)))
                    if takeLosers { survivor._setToOne(destination, slot: target) }
                }
                continue
            }
            let value = loser._values[slot]
            let existing = survivor._values[target]
            let take: Bool
            switch mergeType {
            case .mergeByPropertyStoreTrumpMergePolicyType: take = existing == nil && value != nil
            case .mergeByPropertyObjectTrumpMergePolicyType: take = loser._changedSlotsContain(slot)
            case .overwriteMergePolicyType: take = true
            default: take = false
            }
            if take, !_sameValue(existing, value) { survivor._setPublicValue(value, slot: target) }
        }
    }

    // MARK: Optimistic-locking conflicts

    func _resolveOptimisticLockingConflicts(_ list: [NSMergeConflict]) throws {
        if mergeType == .errorMergePolicyType { throw Self._lockingError(list) }
        var unresolved: [NSMergeConflict] = []
        for conflict in list {
            let object = conflict.sourceObject
            if object._isDeleted {
                // The deletion goes ahead against the row as it is now (version 0: row already gone).
                object._version = Int64(conflict.newVersionNumber)
                continue
            }
            guard conflict.newVersionNumber > 0, let persisted = conflict.persistedSnapshot else {
                unresolved.append(conflict)
                continue
            }
            _merge(conflict, persisted, into: object)
            object.awake(fromSnapshotEvents: .mergePolicy)
        }
        if !unresolved.isEmpty { throw Self._lockingError(unresolved) }
    }

    /// Merges the store's row into `object` by the policy's rule, then makes the row's values
    /// and version the object's committed state.
    private func _merge(_ conflict: NSMergeConflict, _ persisted: [String: Any], into object: NSManagedObject) {
        if object._isFault { object._fireFault() }
        let layout = object._layout
        var stored = RowValues(for: layout)
        var changed = SlotSet()
        // To-ones kept against a store that had moved them: the store's destination loses the
        // object (below, once the object's state is settled).
        var formerDestinations: [(NSManagedObjectID, NSRelationshipDescription)] = []
        for (slot, property) in layout.properties.enumerated() {
            let isToMany = layout.relationships[slot]?.isToMany ?? false
            if isToMany || property.isTransient {
                if object._changedSlotsContain(slot) {
                    if mergeType == .rollbackMergePolicyType, isToMany {
                        object._values[slot] = nil  // reloads from the store on next access
                    } else {
                        changed.insert(slot)
                    }
                }
                continue
            }
            let storeValue: Any? = persisted[property.name].flatMap { $0 is NSNull ? nil : $0 }
            stored[slot] = storeValue
            let base = object._snapshot.flatMap { slot < $0.count ? $0[slot] : nil }
            let ours = object._snapshotValue(slot: slot)
            let weChanged = object._changedSlotsContain(slot)
            let theyChanged = !_sameValue(base, storeValue)
            let keepOurs: Bool
            switch mergeType {
            case .mergeByPropertyStoreTrumpMergePolicyType: keepOurs = !theyChanged
            case .mergeByPropertyObjectTrumpMergePolicyType: keepOurs = weChanged
            case .overwriteMergePolicyType: keepOurs = true
            default: keepOurs = false
            }
            if !keepOurs { object._values[slot] = storeValue }
            if keepOurs, !_sameValue(ours, storeValue) {
                changed.insert(slot)
                if theyChanged, let former = storeValue as? NSManagedObjectID,
                   let inverse = layout.relationships[slot]?.inverseRelationship {
                    formerDestinations.append((former, inverse))
                }
            }
        }
        object._snapshot = stored
        object._version = Int64(conflict.newVersionNumber)
        object._changedSlots = changed
        object._leaveFormerDestinations(formerDestinations)
    }

    // MARK: Errors

    static func _constraintError(_ list: [NSConstraintConflict]) -> OpenCoreDataError {
        let object = list.first?.conflictingObjects.first
        var error = OpenCoreDataError(
            .managedObjectConstraintMerge,
            "the save violates uniqueness constraints (\(list.count) conflict\(list.count == 1 ? "" : "s"))",
            entityName: object?.entity.name, objectID: object?.objectID)
        error.conflictList = list
        return error
    }

    static func _lockingError(_ list: [NSMergeConflict]) -> OpenCoreDataError {
        let object = list.first?.sourceObject
        // 133020, as Apple's error policy reports it ("Could not merge changes."), with the
        // conflicts under `conflictList`; the stores' own 134050 stays inside the save.
        var error = OpenCoreDataError(
            .managedObjectMerge,
            "could not merge changes: optimistic locking failure: \(list.count) object\(list.count == 1 ? " was" : "s were") changed or deleted in the store since \(list.count == 1 ? "it was" : "they were") read",
            entityName: object?.entity.name, objectID: object?.objectID, url: object?.objectID.persistentStore?.url)
        error.conflictList = list
        return error
    }
}

/// Whether two slot values are the same (objects compare by object ID).
package func _sameValue(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (nil, _), (_, nil): return false
    case let (x as NSManagedObject, y as NSManagedObject): return x === y
    case let (x as NSManagedObject, y as NSManagedObjectID): return x.objectID == y
    case let (x as NSManagedObjectID, y as NSManagedObject): return x == y.objectID
    case let (x?, y?):
        if let x = x as? AnyHashable, let y = y as? AnyHashable { return x == y }
        if let x = x as? NSObject, let y = y as? NSObject { return x.isEqual(y) }
        return false
    }
}
