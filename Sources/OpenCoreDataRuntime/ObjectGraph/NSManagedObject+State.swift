import Foundation

/// An object's state (inserted, updated, deleted, fault), what it changed since its last save, and its
/// values as last saved or fetched.
extension NSManagedObject {
    /// Whether the object was inserted and not saved yet.
    public var isInserted: Bool { _isInserted }
    /// Whether the object has unsaved changes to its values.
    public var isUpdated: Bool { !_isInserted && !_isDeleted && _hasChangedSlots }
    /// Whether the object will be deleted at the next save.
    public var isDeleted: Bool { _isDeleted }
    /// Whether the object's values have not been loaded.
    public var isFault: Bool { _isFault }
    /// Whether the object is inserted, updated or deleted.
    public var hasChanges: Bool { _isInserted || _isDeleted || _hasChangedSlots }
    /// Whether the object has changes that would be saved (ignoring transient-only changes).
    public var hasPersistentChangedValues: Bool {
        if _isInserted || _isDeleted { return true }
        let transient = _layout.transientSlots
        return transient.isEmpty ? _hasChangedSlots : _changedSlots.contains { !transient.contains($0) }
    }

    /// The values changed since the last save, by key (relationships as objects).
    ///
    /// Related Core Data documentation: [changedValues()](https://developer.apple.com/documentation/coredata/nsmanagedobject/changedvalues())
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        if _isInserted {
            for slot in _layout.properties.indices { if let v = _publicValue(slot: slot) { result[_layout.properties[slot].name] = v } }
            return result
        }
        for slot in _changedSlots { result[_layout.properties[slot].name] = _publicValue(slot: slot) ?? NSNull() }
        return result
    }

    /// The values as last saved or fetched, for the given keys (all properties if `nil`).
    ///
    /// Related Core Data documentation: [committedValues(forKeys:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/committedvalues(forkeys:))
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        if _isFault { _fireFault() }
        guard let snapshot = _snapshot else { return [:] }
        var result: [String: Any] = [:]
        let slots = keys.map { $0.compactMap { _layout.indexByName[$0] } } ?? Array(_layout.properties.indices)
        for slot in slots where slot < snapshot.count {
            let property = _layout.properties[slot]
            if let relationship = property as? NSRelationshipDescription, relationship.isToMany { continue }
            result[property.name] = snapshot[slot] ?? NSNull()
        }
        return result
    }

    /// The values changed since the object was last fetched or refreshed (same as `changedValues()` here).
    public func changedValuesForCurrentEvent() -> [String: Any] { changedValues() }
}
