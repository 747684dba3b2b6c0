import Foundation

extension NSManagedObject {
    /// The object at a to-one slot, resolving a stored object ID to a (faulted) object.
    package func _toOne(slot: Int) -> NSManagedObject? {
        if _isFault { _fireFault() }
        switch _values[slot] {
        case let object as NSManagedObject:
            return object
        case let id as NSManagedObjectID:
            guard let context = _context else { return nil }
            let object = context.object(with: id)
            _values[slot] = object
            return object
        default:
            return nil
        }
    }

    /// The objects of a to-many slot, loading them from the store on first access.
    package func _toMany(slot: Int) -> ManagedObjectList {
        if _isFault { _fireFault() }
        if let list = _values[slot] as? ManagedObjectList { return list }
        let relationship = _layout.relationships[slot]!
        let loaded = _context?._loadToMany(relationship, of: self) ?? []
        let list = relationship.isOrdered ? ManagedObjectList.ordered(loaded) : ManagedObjectList.unordered(Set(loaded))
        _values[slot] = list
        return list
    }

    /// Changes the list of a to-many slot in place and records the change when `body` returns true.
    /// The slot lets go of the list while `body` runs, so the list's storage is not copied.
    package func _mutateToMany(slot: Int, _ body: (inout ManagedObjectList) -> Bool) {
        var list = _toMany(slot: slot)
        _values[slot] = nil
        let changed = body(&list)
        _values[slot] = list
        if changed { _noteChange(slot: slot) }
    }

    /// Sets a to-one relationship and keeps the inverse consistent on both old and new destinations.
    package func _setToOne(_ newValue: NSManagedObject?, slot: Int) {
        let relationship = _layout.relationships[slot]!
        let old = _toOne(slot: slot)
        if old === newValue { return }
        _storeValue(newValue, slot: slot)
        guard let inverse = relationship.inverseRelationship else { return }
        if let old { old._inverseRemove(self, inverse: inverse) }
        if let newValue { newValue._inverseAdd(self, inverse: inverse) }
    }

    /// Replaces the objects of a to-many relationship, keeping inverses consistent.
    package func _replaceToMany(slot: Int, with objects: [NSManagedObject]) {
        let relationship = _layout.relationships[slot]!
        let current = _toMany(slot: slot).objects
        let newIDs = Set(objects.map(ObjectIdentifier.init))
        let oldIDs = Set(current.map(ObjectIdentifier.init))
        let list = relationship.isOrdered ? ManagedObjectList.ordered(objects) : ManagedObjectList.unordered(Set(objects))
        _storeValue(list, slot: slot)
        guard let inverse = relationship.inverseRelationship else { return }
        for removed in current where !newIDs.contains(ObjectIdentifier(removed)) { removed._inverseRemove(self, inverse: inverse) }
        for added in objects where !oldIDs.contains(ObjectIdentifier(added)) { added._inverseAdd(self, inverse: inverse) }
    }

    /// Adds objects to a to-many relationship (the generated `addToX` accessors and mutable sets).
    package func _addToMany(_ objects: [NSManagedObject], slot: Int) {
        let relationship = _layout.relationships[slot]!
        var added: [NSManagedObject] = []
        _mutateToMany(slot: slot) { list in
            for object in objects where !list.contains(object) { list.insert(object); added.append(object) }
            return !added.isEmpty
        }
        if let inverse = relationship.inverseRelationship { for object in added { object._inverseAdd(self, inverse: inverse) } }
    }

    /// Removes objects from a to-many relationship.
    package func _removeFromToMany(_ objects: [NSManagedObject], slot: Int) {
        let relationship = _layout.relationships[slot]!
        var removed: [NSManagedObject] = []
        _mutateToMany(slot: slot) { list in
            for object in objects where list.contains(object) { list.remove(object); removed.append(object) }
            return !removed.isEmpty
        }
        if let inverse = relationship.inverseRelationship { for object in removed { object._inverseRemove(self, inverse: inverse) } }
    }

    /// Whether this object's to-one `relationship` was changed (unsaved) to point at something
    /// other than `owner`.
    package func _hasUnsavedToOne(_ relationship: NSRelationshipDescription, otherThan owner: NSManagedObject) -> Bool {
        _unsavedToOne(relationship, pointsAt: owner) == false
    }

    /// Whether this object's to-one `relationship` was changed (unsaved) to point at `owner`.
    package func _hasUnsavedToOne(_ relationship: NSRelationshipDescription, pointingAt owner: NSManagedObject) -> Bool {
        _unsavedToOne(relationship, pointsAt: owner) == true
    }

    /// Whether the unsaved value of the to-one `relationship` is `owner`; nil when the
    /// relationship has no unsaved change (or the object is a fault).
    private func _unsavedToOne(_ relationship: NSRelationshipDescription, pointsAt owner: NSManagedObject) -> Bool? {
        guard !_isFault, _hasChangedSlots, let slot = _layout.indexByName[relationship.name], _changedSlotsContain(slot) else { return nil }
        switch _values[slot] {
        case let destination as NSManagedObject: return destination === owner
        case let id as NSManagedObjectID: return id == owner.objectID
        default: return false
        }
    }

    /// Makes `source` part of this object's `inverse` relationship, without recursing back.
    private func _inverseAdd(_ source: NSManagedObject, inverse: NSRelationshipDescription) {
        guard let slot = _layout.indexByName[inverse.name] else { return }
        if _isFault { _fireFault() }
        if inverse.isToMany {
            _mutateToMany(slot: slot) { list in
                guard !list.contains(source) else { return false }
                list.insert(source)
                return true
            }
        } else {
            let previous = _toOne(slot: slot)
            if previous === source { return }
            _storeValue(source, slot: slot)
            // The previous partner of a one-to-one loses us.
            if let previous, let back = inverse.inverseRelationship, let backSlot = previous._layout.indexByName[back.name] {
                if back.isToMany {
                    previous._mutateToMany(slot: backSlot) { list in
                        list.remove(self)
                        return true
                    }
                } else if previous._toOne(slot: backSlot) === self {
                    previous._storeValue(nil, slot: backSlot)
                }
            }
        }
    }

    /// Takes `source` out of this object's `inverse` relationship, without recursing back.
    private func _inverseRemove(_ source: NSManagedObject, inverse: NSRelationshipDescription) {
        guard let slot = _layout.indexByName[inverse.name] else { return }
        if _isFault { _fireFault() }
        if inverse.isToMany {
            // A list loaded just now already leaves `source` out (its to-one points elsewhere,
            // unsaved: see `_loadToMany`); the removal is still this object's change, which a save
            // must report (a sibling's copy of this object holds `source` until it is refreshed).
            let loadsNow = !(_values[slot] is ManagedObjectList)
            _mutateToMany(slot: slot) { list in
                guard list.contains(source) else { return loadsNow }
                list.remove(source)
                return true
            }
        } else if _toOne(slot: slot) === source {
            _storeValue(nil, slot: slot)
        }
    }

    /// Inverse maintenance for to-ones this object keeps changed against a store that has moved
    /// them since its snapshot (a merge policy's resolution, or a refresh that keeps the changes):
    /// as if the object had been moved away from the store's destination, that destination's
    /// to-many changes too, and the save reports it (a sibling holding it would otherwise keep
    /// listing the object). A row deleted since is left alone.
    package func _leaveFormerDestinations(_ formerDestinations: [(NSManagedObjectID, NSRelationshipDescription)]) {
        guard !formerDestinations.isEmpty, let context = _context else { return }
        for (former, inverse) in formerDestinations {
            guard let destination = try? context.existingObject(with: former), !destination._isDeleted else { continue }
            destination._inverseRemoveResolvingConflict(self, inverse: inverse)
        }
    }

    /// Takes `source` out of this object's to-many `inverse` as a change of this object, also
    /// when this copy of the list did not hold it: a merge policy resolved a conflict for a to-one
    /// of `source` that the store had pointing here, so the save must report this object (every
    /// sibling holding the store's list refreshes it). A to-one `inverse` as `_inverseRemove`.
    package func _inverseRemoveResolvingConflict(_ source: NSManagedObject, inverse: NSRelationshipDescription) {
        guard inverse.isToMany, let slot = _layout.indexByName[inverse.name] else {
            return _inverseRemove(source, inverse: inverse)
        }
        _mutateToMany(slot: slot) { list in
            list.remove(source)
            return true
        }
    }

    /// Takes `deleted` out of relationship `slot`, as loaded, without recording a change (merged
    /// or saved deletions: see `NSManagedObjectContext._detachDeletions`). A to-one not resolved
    /// yet is compared by object ID; `set`, when given, holds `deleted`'s identities.
    package func _dropDeletions(_ deleted: [NSManagedObject], slot: Int, set: Set<ObjectIdentifier> = []) {
        func isAmong(_ object: NSManagedObject) -> Bool {
            set.isEmpty ? deleted.contains { $0 === object } : set.contains(ObjectIdentifier(object))
        }
        switch _values[slot] {
        case var list as ManagedObjectList:
            // Whichever is shorter is walked: a long list or many deletions.
            let held = list.count < deleted.count && !set.isEmpty
                ? list.objects.filter { set.contains(ObjectIdentifier($0)) } : deleted.filter(list.contains)
            guard !held.isEmpty else { return }
            _values[slot] = nil  // (the list's storage is not copied)
            for object in held { list.remove(object) }
            _values[slot] = list
        case let object as NSManagedObject:
            if isAmong(object) { _values[slot] = nil }
        case let id as NSManagedObjectID:
            if let object = _context?.registry.object(for: id), isAmong(object) { _values[slot] = nil }
        default:
            break
        }
    }

    // MARK: Mutable proxies

    /// A mutable set whose changes go to the to-many relationship `key`.
    ///
    /// - Note: Linux: returns ``ManagedMutableSet`` rather than `NSMutableSet`: it has `NSMutableSet`'s
    ///   `add(_:)`, `remove(_:)`, `addObjects(from:)`, `removeAllObjects()` and `count`.
    ///
    /// Related Core Data documentation: [mutableSetValue(forKey:)](https://developer.apple.com/documentation/objectivec/nsobject/1408115-mutablesetvalue)
    public func mutableSetValue(forKey key: String) -> ManagedMutableSet {
        _assertOnQueue("mutableSetValue(forKey:)")
        return ManagedMutableSet(owner: self, key: key)
    }

    /// A mutable ordered set whose changes go to the ordered to-many relationship `key`.
    ///
    /// - Note: Linux: returns ``ManagedMutableOrderedSet`` rather than `NSMutableOrderedSet`: it has
    ///   the set operations of ``ManagedMutableSet`` and `NSMutableOrderedSet`'s index-based ones.
    ///
    /// Related Core Data documentation: [mutableOrderedSetValue(forKey:)](https://developer.apple.com/documentation/objectivec/nsobject/1415238-mutableorderedsetvalue)
    public func mutableOrderedSetValue(forKey key: String) -> ManagedMutableOrderedSet {
        ManagedMutableOrderedSet(owner: self, key: key)
    }

    /// Whether the relationship's objects have not been loaded yet.
    ///
    /// Related Core Data documentation: [hasFault(forRelationshipNamed:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/hasfault(forrelationshipnamed:))
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        guard let slot = _layout.indexByName[key], let relationship = _layout.relationships[slot] else { return false }
        if _isFault { return true }
        if relationship.isToMany { return !(_values[slot] is ManagedObjectList) }
        return (_values[slot] as? NSManagedObject)?.isFault ?? (_values[slot] is NSManagedObjectID)
    }

    /// The object IDs of a relationship's destination objects, without firing faults.
    public func objectIDs(forRelationshipNamed key: String) -> [NSManagedObjectID] {
        guard let slot = _layout.indexByName[key], _layout.relationships[slot] != nil else { return [] }
        switch _values.isEmpty ? nil : _values[slot] {
        case let object as NSManagedObject: return [object._objectID]
        case let id as NSManagedObjectID: return [id]
        case let list as ManagedObjectList: return list.objects.map { $0._objectID }
        default: return _layout.relationships[slot]!.isToMany ? _toMany(slot: slot).objects.map { $0._objectID } : []
        }
    }
}

/// A live, mutable view of a to-many relationship, as `mutableSetValue(forKey:)` returns.
///
/// Not `Sendable`: valid on its owner's context queue only, like the owner.
public class ManagedMutableSet: Sequence {
    fileprivate let owner: NSManagedObject
    fileprivate let key: String
    fileprivate let slot: Int?

    init(owner: NSManagedObject, key: String) {
        self.owner = owner
        self.key = key
        let slot = owner._layout.indexByName[key]
        self.slot = slot.flatMap { owner._layout.relationships[$0]?.isToMany == true ? $0 : nil }
        if self.slot == nil { reportMisuse("mutableSetValue(forKey:): \(key) is not a to-many relationship of \(owner.entity.name ?? "?")") }
    }

    fileprivate var objects: [NSManagedObject] { slot.map { owner._toMany(slot: $0).objects } ?? [] }

    public var count: Int { slot.map { owner._toMany(slot: $0).count } ?? 0 }
    public func add(_ object: Any) { addObjects(from: [object]) }
    public func addObjects(from array: [Any]) {
        guard let slot else { return }
        owner.willChangeValue(forKey: key)
        owner._addToMany(array.compactMap { $0 as? NSManagedObject }, slot: slot)
        owner.didChangeValue(forKey: key)
    }
    public func remove(_ object: Any) {
        guard let slot, let object = object as? NSManagedObject else { return }
        owner.willChangeValue(forKey: key)
        owner._removeFromToMany([object], slot: slot)
        owner.didChangeValue(forKey: key)
    }
    public func removeAllObjects() {
        guard let slot else { return }
        owner.willChangeValue(forKey: key)
        owner._removeFromToMany(objects, slot: slot)
        owner.didChangeValue(forKey: key)
    }
    public func contains(_ object: Any) -> Bool {
        guard let slot, let object = object as? NSManagedObject else { return false }
        return owner._toMany(slot: slot).contains(object)
    }
    public var allObjects: [Any] { objects }
    public func makeIterator() -> IndexingIterator<[NSManagedObject]> { objects.makeIterator() }
}

/// A live, mutable view of an ordered to-many relationship, as `mutableOrderedSetValue(forKey:)`
/// returns: the set operations of ``ManagedMutableSet`` plus `NSMutableOrderedSet`'s index-based ones.
/// The order is saved (SQLite: the `Z_FOK_` column) and read back.
///
/// ```swift
/// let steps = recipe.mutableOrderedSetValue(forKey: "steps")
/// steps.insert(step, at: 0)
/// steps.moveObjects(at: IndexSet(integer: 2), to: 0)
/// ```
///
/// Not `Sendable`: valid on its owner's context queue only, like the owner.
///
/// Related Core Data documentation: [NSMutableOrderedSet](https://developer.apple.com/documentation/foundation/nsmutableorderedset)
public final class ManagedMutableOrderedSet: ManagedMutableSet {
    /// The objects in order.
    public var array: [NSManagedObject] { objects }
    /// The first object, if any.
    public var firstObject: NSManagedObject? { objects.first }
    /// The last object, if any.
    public var lastObject: NSManagedObject? { objects.last }

    /// The object at `index` (which must be in bounds).
    public func object(at index: Int) -> NSManagedObject { objects[index] }

    /// The index of `object`, or `NSNotFound`.
    public func index(of object: Any) -> Int {
        guard let object = object as? NSManagedObject else { return NSNotFound }
        return objects.firstIndex { $0 === object } ?? NSNotFound
    }

    /// Inserts `object` at `index`; does nothing if the set already holds it.
    public func insert(_ object: Any, at index: Int) {
        guard let object = object as? NSManagedObject else { return }
        update { list in
            guard !list.contains(where: { $0 === object }) else { return }
            list.insert(object, at: index)
        }
    }

    /// Removes the object at `index`.
    public func removeObject(at index: Int) { update { _ = $0.remove(at: index) } }

    /// Replaces the object at `index` with `object` (ignored if `object` is elsewhere in the set).
    public func replaceObject(at index: Int, with object: Any) {
        guard let object = object as? NSManagedObject else { return }
        update { list in
            if let existing = list.firstIndex(where: { $0 === object }) {
                if existing != index { return }
            }
            list[index] = object
        }
    }

    /// Moves the objects at `indexes` to `index`, keeping their relative order; `index` counts in
    /// the set without the moved objects, as `NSMutableOrderedSet` does.
    public func moveObjects(at indexes: IndexSet, to index: Int) {
        update { list in
            let moved = indexes.map { list[$0] }
            for i in indexes.reversed() { list.remove(at: i) }
            list.insert(contentsOf: moved, at: index)
        }
    }

    /// Swaps the objects at two indexes.
    public func exchangeObject(at first: Int, withObjectAt second: Int) { update { $0.swapAt(first, second) } }

    private func update(_ change: (inout [NSManagedObject]) -> Void) {
        guard let slot else { return }
        var list = objects
        let before = list
        change(&list)
        guard list.count != before.count || zip(list, before).contains(where: { $0 !== $1 }) else { return }
        owner.willChangeValue(forKey: key)
        owner._replaceToMany(slot: slot, with: list)
        owner.didChangeValue(forKey: key)
    }
}
