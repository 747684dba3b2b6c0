import Foundation

// The default implementations of `validateForInsert()`, `validateForUpdate()`,
// `validateForDelete()` and `validateValue(_:forKey:)` (declared, overridable, in
// NSManagedObject.swift): the model-level rules.
//
// Per-key rules (Apple's `validate<Key>(_:)`, found there by selector name) are written on Linux
// as an override of `validateValue(_:forKey:)` that switches on the key and calls `super`:
//
//     override func validateValue(_ value: inout Any?, forKey key: String) throws {
//         try super.validateValue(&value, forKey: key)
//         if key == "name" { try validateName(value) }
//     }
//
// `validateForInsert()`/`validateForUpdate()` call `validateValue(_:forKey:)` for every property,
// so the override runs at save as Apple's `validate<Key>` does.

extension NSManagedObject {
    /// The model-level checks of one value: required, value type, validation predicates
    /// (numeric, string-length and date bounds, regular expressions, custom predicates) and the
    /// count bounds of to-many relationships. Several failures are grouped as
    /// `validationMultipleErrors`. An unknown key has no rules.
    ///
    /// As Apple's default does, a valid value is also coerced to the property's type: an `Int`
    /// for an Integer 16 attribute comes back as `Int16`.
    package func _validateValue(_ value: inout Any?, forKey key: String) throws {
        // `_validateForSave` names the slot it is validating, which spares a lookup by name.
        let slot: Int
        if _validationSlot >= 0, _layout.names[_validationSlot] == key {
            slot = _validationSlot
        } else {
            guard let found = _layout.indexByName[key] else { return }
            slot = found
        }
        // The common case, checked without converting: a value of the attribute's own type, and no
        // validation predicates. It is valid as it is.
        if let type = _layout.attributeTypes[slot],
           !(_layout.hasValidationPredicates[slot] ?? _layout.properties[slot]._hasValidationPredicates),
           let expected = ValueConversion.canonicalType(of: type), Self._storedTypeIs(expected, &value) {
            return
        }
        // Likewise `nil` for an optional attribute (with or without predicates: they are not
        // evaluated for nil), which `_modelValidationErrors` accepts after converting it.
        if _layout.attributeTypes[slot] != nil, Self._isNilInPlace(&value), _layout.isOptionalSlot[slot] {
            return
        }
        if let error = OpenCoreDataError.grouping(_modelValidationErrors(slot: slot, value: value)) { throw error }
        if let type = _layout.attributeTypes[slot], Self._holdsOneType(type),
           let canonical = ValueConversion.canonicalize(value, for: type) {
            value = canonical
        }
    }

    /// Whether `value` holds a value whose type is exactly `expected`, read from the `Any?` where it
    /// lies: its existential container's metadata word (the layout ``ValueConversion/exactly(_:as:)``
    /// describes; `nil` is a null word). Unwrapping the value to ask `type(of:)` copies it and
    /// destroys the copy, for every property of every saved object.
    @inline(__always)
    private static func _storedTypeIs(_ expected: any Any.Type, _ value: inout Any?) -> Bool {
        withUnsafeMutablePointer(to: &value) { ValueConversion.holds(at: $0, valueOfType: expected) }
    }

    /// Whether `value` is `nil`, read in place (its metadata word is null).
    @inline(__always)
    private static func _isNilInPlace(_ value: inout Any?) -> Bool {
        withUnsafeMutablePointer(to: &value) { ValueConversion.isNil(at: $0) }
    }

    /// Whether values of an attribute type have one canonical Swift type (transformable,
    /// composite and untyped attributes hold values of any type).
    private static func _holdsOneType(_ type: NSAttributeType) -> Bool {
        type != .transformableAttributeType && type != .compositeAttributeType
            && type != .undefinedAttributeType && type != .objectIDAttributeType
    }

    /// The default `validateForInsert()`/`validateForUpdate()`: `validateValue(_:forKey:)` (with any
    /// override) for every property, all failures collected.
    ///
    /// To-many relationships of an object already saved are checked only when they changed and
    /// have a count bound, so validation does not load every relationship from the store. Derived
    /// attributes are computed by the save, not set by the user: only a required one of a new
    /// object is checked (see ``_missingDerivedValues()``).
    package func _validateForSave() throws {
        if _isFault { _fireFault() }
        let layout = _layout
        var errors: [(error: any Error, object: NSManagedObject)] =
            layout.derivedSlots.isEmpty ? [] : _missingDerivedValues().map { ($0, self) }
        let names = layout.names
        // When the class keeps the default `validateValue(_:forKey:)`, an attribute whose value
        // passes its first checks where it lies is not boxed and handed to it: the answer would be
        // the same. Boxing, the dynamic call and the box's clean-up were most of a save's
        // validation, about 260 instructions per attribute (callgrind case 5).
        let checksInPlace = _keptMethods.contains(.validation)
        // Every property such an attribute, every value where the check would look: nothing to
        // box or call for any of them (per property, the loop below cost about 70 instructions,
        // callgrind cases 1 and 5).
        if errors.isEmpty, checksInPlace, layout.validatesInPlace,
            withUnsafeMutablePointer(
                to: &_storedValues, { RowValues.allInFieldOrOptionalNil(at: $0, layout.isOptionalSlot) })
        {
            return
        }
        // One value box for all properties, emptied after each by ``ValueConversion/clear(containerAt:)``:
        // a `var value: Any?` per property was destroyed through `Optional<Any>`'s generic value
        // witnesses, about 80 instructions a property (callgrind cases 1 and 5).
        withUnsafeTemporaryAllocation(of: Any?.self, capacity: 1) { buffer in
            let value = buffer.baseAddress.unsafelyUnwrapped
            for slot in names.indices {
                // Derived attributes are read-only (computed by the save): not checked.
                if !layout.derivedSlots.isEmpty, layout.derivedSlots.contains(slot) { continue }
                let relationship = layout.relationships[slot]
                if let relationship, relationship.isToMany {
                    guard !relationship.isTransient, relationship.hasCountBounds else { continue }
                    if !_isInserted, !_changedSlotsContain(slot) { continue }
                }
                if checksInPlace, relationship == nil, _attributePassesInPlace(slot, layout) { continue }
                if let relationship {
                    value.initialize(
                        to: relationship.isToMany
                            ? _toMany(slot: slot).publicValue : _values[slot] == nil ? nil : _toOne(slot: slot))
                } else {
                    value.initialize(to: _attributeValueCopy(slot: slot))
                }
                _validationSlot = slot
                do {
                    try validateValue(&value.pointee, forKey: names[slot])
                } catch {
                    errors.append((error, self))
                }
                _validationSlot = -1
                ValueConversion.clear(containerAt: value)  // nil: nothing to destroy when reinitialized
            }
        }
        if !errors.isEmpty, let error = OpenCoreDataError.grouping(anyErrors: errors) { throw error }
    }

    /// The required derived attributes of a new object, each missing: Apple's store computes a
    /// derived value as it writes the row, after validation, so a new object has none to validate
    /// but its default value, and a required derived attribute without one fails with
    /// `validationMissingMandatoryProperty` (1570) as on Apple. (OpenCoreData computes the value in
    /// the context before validation; what the object held before that is what is checked.)
    private func _missingDerivedValues() -> [OpenCoreDataError] {
        guard _isInserted else { return [] }
        return _layout.derivedSlots.compactMap { slot in
            let property = _layout.properties[slot]
            guard !property.isOptional, !property.isTransient,
                  (property as? NSAttributeDescription)?.defaultValue == nil else { return nil }
            return OpenCoreDataError(
                .validationMissingMandatoryProperty, property._defaultMessage(for: .validationMissingMandatoryProperty),
                object: self, key: property.name, value: nil)
        }
    }

    /// Whether the attribute at `slot` passes `_validateValue(_:forKey:)`'s first two checks as it
    /// lies, so that the default `validateValue(_:forKey:)` would accept it: a value in its typed
    /// field (exactly the canonical type) with no validation predicates, or `nil` in an optional
    /// attribute. `false` also for a relationship.
    @inline(__always)
    private func _attributePassesInPlace(_ slot: Int, _ layout: EntityLayout) -> Bool {
        guard layout.attributeTypes[slot] != nil else { return false }
        switch withUnsafeMutablePointer(to: &_storedValues, { RowValues.content(at: $0, slot) }) {
        case .typed: return !(layout.hasValidationPredicates[slot] ?? layout.properties[slot]._hasValidationPredicates)
        case .none: return layout.isOptionalSlot[slot]
        case .other: return false
        }
    }

    /// A copy of the attribute value at `slot` for `validateValue(_:forKey:)`: a value of one of
    /// the common attribute types is boxed from its typed field (``RowValues``), with no value-witness
    /// calls.
    @inline(__always)
    private func _attributeValueCopy(slot: Int) -> Any? {
        // Read in place: `_values[slot]` copied the values out, a retain and a release per property.
        withUnsafeMutablePointer(to: &_storedValues) { RowValues.value(at: $0, slot) }
    }

    /// The default `validateForDelete()`: a relationship with the deny delete rule must be empty
    /// (destinations deleted in the same save do not count: they leave with the object).
    package func _validateForDelete() throws {
        // No relationships, no rule to check: the empty error list and its grouping were about 200
        // instructions per deleted object (callgrind case 6).
        if _layout.relationshipSlots.isEmpty { return }
        var errors: [OpenCoreDataError] = []
        for slot in _layout.relationshipSlots {
            let relationship = _layout.relationships[slot]!
            guard relationship.deleteRule == .denyDeleteRule else { continue }
            let destinations = relationship.isToMany ? _toMany(slot: slot).objects : _toOne(slot: slot).map { [$0] } ?? []
            let remaining = destinations.filter { !$0._isDeleted }
            if !remaining.isEmpty {
                errors.append(OpenCoreDataError(
                    .validationRelationshipDeniedDelete, "\(relationship.name) is not empty and its delete rule is deny",
                    object: self, key: relationship.name, value: remaining))
            }
        }
        if let error = OpenCoreDataError.grouping(errors) { throw error }
    }

    /// The model's verdict on `value` for the property at `slot`.
    ///
    /// Runs for every property of every saved object, so the common case (a value of the
    /// attribute's canonical type, no predicates) costs one concrete cast.
    private func _modelValidationErrors(slot: Int, value rawValue: Any?) -> [OpenCoreDataError] {
        let property = _layout.properties[slot]
        func error(_ code: OpenCoreDataError.Code, _ message: String? = nil, predicate: NSPredicate? = nil) -> OpenCoreDataError {
            OpenCoreDataError(code, message ?? property._defaultMessage(for: code), object: self, key: property.name,
                              value: rawValue, predicate: predicate)
        }
        func isNil(_ value: Any?) -> Bool {
            guard let value = ValueConversion.unwrap(value) else { return true }
            return value is NSNull
        }

        if let type = _layout.attributeTypes[slot] {
            let value: Any
            if Self._holdsOneType(type) {
                guard let canonical = ValueConversion.canonicalize(rawValue, for: type) else {
                    if isNil(rawValue) { return property.isOptional || property.isTransient ? [] : [error(.validationMissingMandatoryProperty)] }
                    let typeName = ValueConversion.unwrap(rawValue).map { "\(Swift.type(of: $0))" } ?? "nil"
                    return [error(.managedObjectValidation, "\(property.name): a value of type \(typeName) does not fit a \(type) attribute")]
                }
                value = canonical
            } else {
                guard !isNil(rawValue), let unwrapped = ValueConversion.unwrap(rawValue) else {
                    return property.isOptional || property.isTransient ? [] : [error(.validationMissingMandatoryProperty)]
                }
                value = unwrapped
                if let composite = property as? NSCompositeAttributeDescription {
                    let failures = _compositeValidationErrors(composite, value: unwrapped)
                    if !failures.isEmpty { return failures }
                }
            }
            return property._failedValidationPredicates(for: value).map { failure in
                error(failure.code, failure.message, predicate: failure.predicate)
            }
        }

        guard let relationship = _layout.relationships[slot] else { return [] }
        let value = isNil(rawValue) ? nil : ValueConversion.unwrap(rawValue)
        if relationship.isToMany {
            // An optional to-many may be empty; otherwise its count lies within minCount...maxCount
            // (maxCount 0: no limit).
            let count = value.flatMap(PredicateValues.elements)?.count ?? 0
            if count == 0, relationship.isOptional { return [] }
            let minimum = relationship.isOptional ? relationship.minCount : max(relationship.minCount, 1)
            if count < minimum {
                return [error(.validationRelationshipLacksMinimumCount,
                              "\(relationship.name) holds \(count) objects, fewer than its minimum of \(minimum)")]
            }
            if relationship.maxCount > 1, count > relationship.maxCount {
                return [error(.validationRelationshipExceedsMaximumCount,
                              "\(relationship.name) holds \(count) objects, more than its maximum of \(relationship.maxCount)")]
            }
            return []
        }
        guard let value else {
            return relationship.isOptional || relationship.isTransient ? [] : [error(.validationMissingMandatoryProperty)]
        }
        guard value is NSManagedObject || value is NSManagedObjectID else {
            return [error(.managedObjectValidation, "\(relationship.name): a value of type \(Swift.type(of: value)) is not a managed object")]
        }
        return relationship._failedValidationPredicates(for: value).map { failure in
            error(failure.code, failure.message, predicate: failure.predicate)
        }
    }
}

extension NSRelationshipDescription {
    /// Whether a to-many relationship has a count to check at save.
    fileprivate var hasCountBounds: Bool { !isOptional || minCount > 0 || maxCount > 1 }
}

extension OpenCoreDataError {
    /// `grouping(_:)` for errors of any type, each with the object it is about: one error is
    /// returned as it is (an error a validation method threw stays the caller's own), several
    /// become `validationMultipleErrors`, with foreign errors wrapped as `managedObjectValidation`
    /// holding the original as ``underlyingError`` (`NSUnderlyingErrorKey`).
    package static func grouping(anyErrors errors: [(error: any Error, object: NSManagedObject)]) -> (any Error)? {
        if errors.count == 1 { return errors[0].error }
        return grouping(errors.map { item in
            if let error = item.error as? OpenCoreDataError { return error }
            let bridged = item.error as NSError
            var error = OpenCoreDataError(.managedObjectValidation, "a validation method threw \(bridged.domain) error \(bridged.code)",
                                          object: item.object, key: nil, value: nil)
            error.underlyingError = bridged
            return error
        })
    }
}
