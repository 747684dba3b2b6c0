import Foundation

extension NSManagedObject {
    // MARK: Key-value coding

    /// The value of a property, firing the fault if needed. To-one relationships return the object,
    /// to-many ones a `Set<NSManagedObject>` (an `NSOrderedSet` when ordered).
    ///
    /// An unknown key calls ``value(forUndefinedKey:)`` (Apple raises `NSUnknownKeyException`; we log
    /// and return `nil`). ``checkedValue(forKey:)`` throws instead.
    ///
    /// Related Core Data documentation: [value(forKey:)](https://developer.apple.com/documentation/objectivec/nsobject/1412591-value)
    public func value(forKey key: String) -> Any? {
        _assertOnQueue("value(forKey:)")
        guard let slot = _layout.indexByName[key] else { return _valueForKeyWithoutSlot(key) }
        return _value(forKey: key, slot: slot)
    }

    /// ``value(forKey:)`` for a key whose slot the caller has looked up.
    package func _value(forKey key: String, slot: Int) -> Any? {
        willAccessValue(forKey: key)
        defer { didAccessValue(forKey: key) }
        return _publicValue(slot: slot)
    }

    /// What ``_value(forKey:slot:)`` reads, for an in-memory comparison with a number: a number in
    /// a typed field is read in place, not boxed (``DirectComparison``); anything else is read as
    /// that method reads it. `willAccessValue`/`didAccessValue` are called once either way, unless the
    /// class keeps `NSManagedObject`'s (``_keptMethods``).
    package func _comparableValue(forKey key: String, slot: Int) -> ComparableValue {
        let notifies = !_keptMethods.contains(.access)  // as a generated accessor reads
        if notifies { willAccessValue(forKey: key) }
        defer { if notifies { didAccessValue(forKey: key) } }
        if _isFault { _fireFault() }
        if _layout.relationships[slot] == nil {
            switch withUnsafeMutablePointer(to: &_storedValues, { RowValues.content(at: $0, slot) }) {
            case .none: return .none
            case .typed:
                if let number = withUnsafeMutablePointer(to: &_storedValues, { RowValues.number(at: $0, slot) }) {
                    return .number(number)
                }
            case .other: break
            }
        }
        return _publicValue(slot: slot).map(ComparableValue.value) ?? .none
    }

    /// What ``_comparableValue(forKey:slot:)`` read.
    package enum ComparableValue {
        case none
        case number(PredicateNumber)
        case value(Any)
    }

    /// Sets a property's value, keeping inverse relationships consistent and recording the change.
    ///
    /// Related Core Data documentation: [setValue(_:forKey:)](https://developer.apple.com/documentation/objectivec/nsobject/1415969-setvalue)
    public func setValue(_ value: Any?, forKey key: String) {
        _assertOnQueue("setValue(_:forKey:)")
        guard let slot = _layout.indexByName[key] else { return _setValueForKeyWithoutSlot(value, key) }
        willChangeValue(forKey: key)
        _setPublicValue(value, slot: slot)
        didChangeValue(forKey: key)
    }

    /// Throwing twin of ``value(forKey:)``: throws ``OpenCoreDataError/Code/unknownKey`` for a key
    /// that is not a property of the entity.
    public func checkedValue(forKey key: String) throws -> Any? {
        if let fetched = try _checkedFetchedPropertyValue(forKey: key) { return fetched }
        guard _layout.indexByName[key] != nil else { throw unknownKeyError(key) }
        let value = value(forKey: key)
        if var undecodable = (value as? UndecodableTransformedValue)?.error {
            undecodable.objectID = objectID
            throw undecodable
        }
        return value
    }

    /// Throwing twin of ``setValue(_:forKey:)``: throws for an unknown key or a value of the wrong type.
    public func setCheckedValue(_ value: Any?, forKey key: String) throws {
        guard let slot = _layout.indexByName[key] else { throw _fetchedPropertyIsReadOnlyError(key) ?? unknownKeyError(key) }
        if _layout.derivedSlots.contains(slot) { throw derivedAttributeError(key) }
        if let type = _layout.attributeTypes[slot], !ValueConversion.isAcceptable(value, for: type) {
            throw OpenCoreDataError(.managedObjectValidation, "value of type \(Swift.type(of: value!)) does not fit a \(type) attribute",
                                    entityName: entity.name, key: key, objectID: objectID)
        }
        setValue(value, forKey: key)
    }

    /// Called for a key that is not a property. Logs and returns `nil` (Apple raises).
    public func value(forUndefinedKey key: String) -> Any? {
        reportMisuse("value(forKey:): entity \(entity.name ?? "?") has no property \(key)")
        return nil
    }

    /// Called for a key that is not a property. Logs and ignores the value (Apple raises).
    public func setValue(_ value: Any?, forUndefinedKey key: String) {
        reportMisuse("setValue(_:forKey:): entity \(entity.name ?? "?") has no property \(key)")
    }

    /// The value at a dotted key path, walking through relationships; to-many steps collect values
    /// (into an array), and collection operators (`@count`, `@sum`, `@avg`, `@min`, `@max`, ...) apply.
    ///
    /// Related Core Data documentation: [value(forKeyPath:)](https://developer.apple.com/documentation/objectivec/nsobject/1416468-value)
    public func value(forKeyPath keyPath: String) -> Any? {
        PredicateKeyPath.value(of: self, keyPath: keyPath)
    }

    /// Sets the value at a dotted key path.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        guard let dot = keyPath.lastIndex(of: ".") else { return setValue(value, forKey: keyPath) }
        if _setCompositeElement(value, forKeyPath: keyPath) { return }
        let head = String(keyPath[..<dot])
        let last = String(keyPath[keyPath.index(after: dot)...])
        (self.value(forKeyPath: head) as? NSManagedObject)?.setValue(value, forKey: last)
    }

    /// The values of several keys.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys { result[key] = value(forKey: key) ?? NSNull() }
        return result
    }

    /// The stored value of a property without firing change hooks or converting (faults still fire).
    ///
    /// Related Core Data documentation: [primitiveValue(forKey:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/primitivevalue(forkey:))
    public func primitiveValue(forKey key: String) -> Any? {
        _assertOnQueue("primitiveValue(forKey:)")
        guard let slot = _layout.indexByName[key] else { return nil }
        if _isFault { _fireFault() }
        return _publicValue(slot: slot)
    }

    /// Sets the stored value of a property without change hooks or inverse maintenance.
    ///
    /// Related Core Data documentation: [setPrimitiveValue(_:forKey:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/setprimitivevalue(_:forkey:))
    public func setPrimitiveValue(_ value: Any?, forKey key: String) {
        _assertOnQueue("setPrimitiveValue(_:forKey:)")
        guard let slot = _layout.indexByName[key] else { return }
        if _isFault { _fireFault() }
        if let type = _layout.attributeTypes[slot] {
            _storeValue(ValueConversion.canonicalize(value, for: type), slot: slot, notifying: false)
        } else if let relationship = _layout.relationships[slot] {
            _storeValue(Self._relationshipStorage(value, relationship), slot: slot, notifying: false)
        }
    }

    private func derivedAttributeError(_ key: String) -> OpenCoreDataError {
        OpenCoreDataError(
            .managedObjectValidation,
            "\(entity.name ?? "?").\(key) is a derived attribute: it is read-only and computed when the context saves",
            entityName: entity.name, key: key, objectID: objectID)
    }

    private func unknownKeyError(_ key: String) -> OpenCoreDataError {
        OpenCoreDataError(.unknownKey, "entity \(entity.name ?? "?") has no property \(key)", entityName: entity.name, key: key, objectID: objectID)
    }

    // MARK: Slots

    /// The value of a slot as KVC returns it (relationships resolved to objects).
    package func _publicValue(slot: Int) -> Any? {
        if _isFault { _fireFault() }
        guard let relationship = _layout.relationships[slot] else { return _values[slot] }
        if relationship.isToMany { return _toMany(slot: slot).publicValue }
        return _toOne(slot: slot)
    }

    /// Sets a slot from a user-facing value: converts attributes, maintains inverses for relationships.
    /// A derived attribute is read-only: the value is ignored and the misuse logged.
    package func _setPublicValue(_ value: Any?, slot: Int) {
        if !_layout.derivedSlots.isEmpty, _layout.derivedSlots.contains(slot) {
            return reportMisuse(derivedAttributeError(_layout.properties[slot].name).message)
        }
        if _isFault { _fireFault() }
        if let type = _layout.attributeTypes[slot] {
            _storeValue(ValueConversion.canonicalize(value, for: type), slot: slot)
        } else if let relationship = _layout.relationships[slot] {
            if relationship.isToMany {
                let objects = Self._objects(in: value)
                _replaceToMany(slot: slot, with: objects)
            } else {
                _setToOne(ValueConversion.unwrap(value) as? NSManagedObject, slot: slot)
            }
        }
    }

    /// Writes a canonical value into a slot and records the change (`notifying: false` for
    /// primitive writes, which `willSave()` processing does not see as a new change).
    package func _storeValue(_ value: Any?, slot: Int, notifying: Bool = true) {
        _values[slot] = value
        _noteChange(slot: slot, notifying: notifying)
    }

    package func _noteChange(slot: Int, notifying: Bool = true) {
        if _isAwakingFromFetch { return }  // change tracking is off in awakeFromFetch()
        if notifying { _notifiedChangeCount &+= 1 }
        _insertChangedSlot(slot)
        if !_isInserted, !_isDeleted, let link = _contextLink { link.noteChanged(self) }
    }

    package static func _relationshipStorage(_ value: Any?, _ relationship: NSRelationshipDescription) -> Any? {
        if relationship.isToMany {
            let objects = _objects(in: value)
            return relationship.isOrdered ? ManagedObjectList.ordered(objects) : ManagedObjectList.unordered(Set(objects))
        }
        return ValueConversion.unwrap(value) as? NSManagedObject
    }

    package static func _objects(in value: Any?) -> [NSManagedObject] {
        switch ValueConversion.unwrap(value) {
        case nil: return []
        case let list as ManagedObjectList: return list.objects
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [NSManagedObject]: return array
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
        case let sequence as any Sequence: return sequence.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }
}
