import Foundation

// Hooks that `@ManagedProperty` expansions call. They are public only so expanded code in user
// modules can reach them; their names start with `_ocd` so they never collide with user code.
extension NSManagedObject {
    /// Reads a property for a generated accessor. Public for macro expansion only.
    @inline(__always)
    public final func _ocdGetValue<T>(_ key: borrowing ManagedPropertyKey, as type: T.Type = T.self) -> T
    where T: _ManagedEmptyValue {
        _ocdGetOptionalValue(key, as: T.self) ?? T._ocdEmpty
    }

    /// Reads a property for a generated accessor of a type without an empty value (a to-one of a
    /// non-optional type). A nil value here is a programming error; it traps with the key named.
    @inline(__always)
    public final func _ocdGetValue<T>(_ key: borrowing ManagedPropertyKey, as type: T.Type = T.self) -> T {
        guard let value = _ocdGetOptionalValue(key, as: T.self) else {
            preconditionFailure(
                "OpenCoreData: non-optional property \(key.name) of \(entity.name ?? "?") is nil; declare it optional")
        }
        return value
    }

    /// Reads an optional property for a generated accessor. Public for macro expansion only.
    @inline(__always)
    public final func _ocdGetOptionalValue<T>(_ key: borrowing ManagedPropertyKey, as type: T.Type = T.self) -> T? {
        _assertOnQueue("a property's getter")
        guard let slot = key.slot(in: _layout) else {
            return ValueConversion.convert(value(forKey: key.name), to: T.self)  // a fetched property, or undefined
        }
        let notifies = !_keptMethods.contains(.access)  // not called when the class keeps them
        if notifies { willAccessValue(forKey: key.name) }
        if _isFault { _fireFault() }  // what the default does; an override may not call super
        let raw: Any?
        if _layout.relationships[slot] == nil {
            raw = _values[slot]
        } else {
            raw = _publicValue(slot: slot)
        }
        if notifies { didAccessValue(forKey: key.name) }
        return ValueConversion.convert(raw, to: T.self)
    }

    /// Writes a property for a generated accessor. Public for macro expansion only.
    @inline(__always)
    public final func _ocdSetValue<T>(_ value: T, _ key: borrowing ManagedPropertyKey) {
        _assertOnQueue("a property's setter")
        guard let slot = key.slot(in: _layout) else { return setValue(value, forUndefinedKey: key.name) }
        let notifies = !_keptMethods.contains(.change)  // the defaults do nothing
        if notifies { willChangeValue(forKey: key.name) }
        _setPublicValue(value, slot: slot)
        if notifies { didChangeValue(forKey: key.name) }
    }

    /// Adds objects to a to-many relationship for generated `addToX(_:)` accessors.
    public final func _ocdAdd(_ objects: [NSManagedObject], _ key: borrowing ManagedPropertyKey) {
        _assertOnQueue("a to-many relationship's add accessor")
        guard let slot = key.slot(in: _layout), _layout.relationships[slot]?.isToMany == true else { return }
        willChangeValue(forKey: key.name)
        _addToMany(objects, slot: slot)
        didChangeValue(forKey: key.name)
    }

    /// Removes objects from a to-many relationship for generated `removeFromX(_:)` accessors.
    public final func _ocdRemove(_ objects: [NSManagedObject], _ key: borrowing ManagedPropertyKey) {
        _assertOnQueue("a to-many relationship's remove accessor")
        guard let slot = key.slot(in: _layout), _layout.relationships[slot]?.isToMany == true else { return }
        willChangeValue(forKey: key.name)
        _removeFromToMany(objects, slot: slot)
        didChangeValue(forKey: key.name)
    }
}
