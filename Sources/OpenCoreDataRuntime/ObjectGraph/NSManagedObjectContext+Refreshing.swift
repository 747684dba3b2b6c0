import Foundation

/// Freshness: how old the cached rows a fault fires from may be (`stalenessInterval`), and fetches
/// that update objects already in memory (`shouldRefreshRefetchedObjects`).
///
/// The cached rows are the rows a fetch hands to the faults it returns: such a fault fires from
/// its row later without asking the store. With a `stalenessInterval` of zero or more, a fetch
/// notes when each of its faults' rows was read (in the context's link, ``ContextLink/rowTimes``),
/// and a fault whose row is older than the interval (or whose time is unknown) reads the store
/// instead. With the default (negative: no limit) nothing is noted and nothing is checked but
/// the interval itself.
extension NSManagedObjectContext {
    /// After a fetch: notes when the rows of the faults it returned were read, if cached rows can
    /// go stale (`stalenessInterval` zero or more).
    package func _noteRowTimes(of objects: [NSManagedObject]) {
        guard _link.stalenessInterval >= 0 else { return }
        let now = Date.timeIntervalSinceReferenceDate
        if _link.rowTimes.count > 4 * max(objects.count, 1024) { _link.rowTimes.removeAll() }  // stale keys of freed objects
        for object in objects where object._isFault && object._hasSnapshot {
            _link.rowTimes[ObjectTableKey(id: ObjectIdentifier(object))] = now
        }
    }

    /// A fetch with `shouldRefreshRefetchedObjects`: an object already in memory takes the row just
    /// read, keeping its unsaved changes on top, as ``refresh(_:mergeChanges:)`` with `true`.
    package func _refreshFromRefetch(_ object: NSManagedObject, values: RowValues, version: Int64) {
        guard !object._isInserted, !object._isDeleted else { return }
        _applyRefreshedValues(to: object, values: values, version: version)
    }

    /// Gives a loaded object the store's current `values`, its unsaved changes re-applied on top.
    package func _applyRefreshedValues(to object: NSManagedObject, values: RowValues, version: Int64) {
        var merged = values
        // Changed to-ones the store has moved since the snapshot: the store's destination loses
        // this object when it saves (below, once the object's state is settled).
        var formerDestinations: [(NSManagedObjectID, NSRelationshipDescription)] = []
        for slot in object._changedSlots {
            merged[slot] = object._values[slot]
            guard let relationship = object._layout.relationships[slot], !relationship.isToMany,
                  let inverse = relationship.inverseRelationship,
                  let storeDestination = (values[slot] as? NSManagedObject)?.objectID ?? values[slot] as? NSManagedObjectID,
                  !_sameValue(object._snapshot.map { $0[slot] } ?? nil, storeDestination),
                  !_sameValue(object._values[slot], storeDestination)
            else { continue }
            formerDestinations.append((storeDestination, inverse))
        }
        object._values = merged
        object._snapshot = values
        object._dropFetchedPropertyValues()
        object._version = version
        _mergeChangedToManys(of: object)
        object._leaveFormerDestinations(formerDestinations)
        object.awake(fromSnapshotEvents: .refresh)
        _noteRefreshed(object)
    }

    /// A changed to-many relationship whose inverse is a to-one, refreshed keeping this context's
    /// changes: the store's members (less those this context moved elsewhere) and the members
    /// this context added, rather than the list as it was, which may hold objects another context
    /// has since moved away (their to-ones, refreshed, point elsewhere).
    private func _mergeChangedToManys(of object: NSManagedObject) {
        for slot in object._changedSlots {
            guard let relationship = object._layout.relationships[slot], relationship.isToMany, !relationship.isOrdered,
                  let inverse = relationship.inverseRelationship, !inverse.isToMany,
                  case .unordered(let members)? = object._values[slot] as? ManagedObjectList
            else { continue }
            var merged = Set(_loadToMany(relationship, of: object))
            for member in members where member._hasUnsavedToOne(inverse, pointingAt: object) { merged.insert(member) }
            object._values[slot] = ManagedObjectList.unordered(merged)
        }
    }
}

extension NSManagedObject {
    /// Whether this fault's cached row may be used: always while its context sets no staleness
    /// limit; otherwise when the row was read within `stalenessInterval`. A stale row is dropped, so
    /// the fault reads the store.
    @inline(__always)
    package final func _cachedRowIsFresh() -> Bool {
        guard let link = _contextLink, link.stalenessInterval >= 0 else { return true }
        return _checkCachedRowAge(link)
    }

    @inline(never)
    private final func _checkCachedRowAge(_ link: ContextLink) -> Bool {
        let key = ObjectTableKey(id: ObjectIdentifier(self))
        if let read = link.rowTimes.removeValue(forKey: key),
           Date.timeIntervalSinceReferenceDate - read <= link.stalenessInterval
        {
            return true
        }
        _snapshot = nil
        return false
    }
}
