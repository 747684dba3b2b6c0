import Foundation

/// Values of composite attributes (``NSCompositeAttributeDescription``): dictionaries keyed by element
/// name, nested for nested composites. Shared by the stores (reading and writing the flattened
/// elements, normalizing what they keep) and by validation.
package enum CompositeValues {
    /// A composite value as a `[String: Any]` (from a Swift dictionary, `[AnyHashable: Any]` or an
    /// `NSDictionary`), or nil when it is nil, `NSNull` or not a dictionary with string keys.
    package static func dictionary(_ value: Any?) -> [String: Any]? {
        switch ValueConversion.unwrap(value) {
        case let dictionary as [String: Any]:
            return dictionary
        case let dictionary as [AnyHashable: Any]:
            var result: [String: Any] = [:]
            for (key, value) in dictionary {
                guard let key = key.base as? String else { return nil }
                result[key] = value
            }
            return result
        case let dictionary as NSDictionary:
            var result: [String: Any] = [:]
            for (key, value) in dictionary {
                guard let key = (key as? String) ?? (key as? NSString).map({ String($0) }) else { return nil }
                result[key] = value
            }
            return result
        default:
            return nil
        }
    }

    /// The value at `path` (element names) inside a composite value; nil when any step is missing.
    package static func value(at path: ArraySlice<String>, in composite: Any?) -> Any? {
        var current: Any? = composite
        for name in path {
            guard let dictionary = dictionary(current) else { return nil }
            current = dictionary[name]
        }
        guard let current = ValueConversion.unwrap(current), !(current is NSNull) else { return nil }
        return current
    }

    /// Sets `value` at `path` inside `dictionary`, creating the nested dictionaries on the way.
    package static func set(_ value: Any, at path: ArraySlice<String>, in dictionary: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            dictionary[first] = value
            return
        }
        var nested = Self.dictionary(dictionary[first]) ?? [:]
        set(value, at: path.dropFirst(), in: &nested)
        dictionary[first] = nested
    }

    /// The value a store keeps for `value`: element values in their canonical types, nil elements
    /// and keys that name no element left out, and nil when no element has a value (which is what
    /// the flattened columns of the SQLite store read back, so both stores answer alike).
    package static func normalized(_ value: Any?, _ composite: NSCompositeAttributeDescription, depth: Int = 0) -> [String: Any]? {
        guard depth < 64, let dictionary = dictionary(value) else { return nil }
        var result: [String: Any] = [:]
        for element in composite.elements {
            guard let raw = dictionary[element.name] else { continue }
            let canonical: Any?
            if let nested = element as? NSCompositeAttributeDescription {
                canonical = normalized(raw, nested, depth: depth + 1)
            } else {
                canonical = ValueConversion.canonicalize(raw, for: element.attributeType)
            }
            if let canonical { result[element.name] = canonical }
        }
        return result.isEmpty ? nil : result
    }

    /// Normalizes the composite attributes of a row of slot values (see ``normalized(_:_:depth:)``).
    package static func normalize(_ values: inout RowValues, layout: EntityLayout) {
        for slot in layout.compositeSlots where slot < values.count && values[slot] != nil {
            guard let composite = layout.properties[slot] as? NSCompositeAttributeDescription else { continue }
            values[slot] = normalized(values[slot], composite)
        }
    }

    /// Whether `value` is a dictionary with no value in it (only nils and `NSNull`s): a composite
    /// with no element set, which the stores keep as nil.
    package static func isEmpty(_ value: Any?) -> Bool {
        guard let dictionary = dictionary(value) else { return false }
        return dictionary.values.allSatisfy { element in
            guard let element = ValueConversion.unwrap(element) else { return true }
            return element is NSNull
        }
    }

    /// A composite value's problems, as (code, message, key path, predicate): a value that is not a
    /// dictionary, keys that name no element, missing required elements, element values of the
    /// wrong type, and failed element validation predicates. `path` is the composite's key path
    /// (`colorScheme`); each failure names the element by its namespaced key path
    /// (`colorScheme.primary`).
    package static func failures(
        _ value: Any, _ composite: NSCompositeAttributeDescription, path: String, depth: Int = 0
    ) -> [(code: OpenCoreDataError.Code, message: String, key: String, predicate: NSPredicate?)] {
        guard let dictionary = dictionary(value) else {
            return [(.managedObjectValidation,
                     "\(path): a value of type \(type(of: value)) does not fit a composite attribute (use [String: Any])", path, nil)]
        }
        var result: [(code: OpenCoreDataError.Code, message: String, key: String, predicate: NSPredicate?)] = []
        let unknown = dictionary.keys.filter { composite._element(named: $0) == nil }
        for key in unknown.sorted() {
            result.append((.managedObjectValidation, "\(path) has no element named \(key)", "\(path).\(key)", nil))
        }
        guard depth < 64 else { return result }
        for element in composite.elements {
            let elementPath = "\(path).\(element.name)"
            let raw = dictionary[element.name].flatMap { ValueConversion.unwrap($0) }
            guard let raw, !(raw is NSNull) else {
                if !element.isOptional {
                    result.append((.validationMissingMandatoryProperty, "\(elementPath) is a required value", elementPath, nil))
                }
                continue
            }
            if let nested = element as? NSCompositeAttributeDescription {
                if isEmpty(raw) {
                    // No element of the nested composite is set: it is stored, and read back, as nil.
                    if !element.isOptional {
                        result.append((.validationMissingMandatoryProperty, "\(elementPath) is a required value (no element is set)", elementPath, nil))
                    }
                } else {
                    result += failures(raw, nested, path: elementPath, depth: depth + 1)
                }
                continue
            }
            guard let canonical = ValueConversion.canonicalize(raw, for: element.attributeType) else {
                result.append((.managedObjectValidation,
                               "\(elementPath): a value of type \(type(of: raw)) does not fit a \(element.attributeType) element", elementPath, nil))
                continue
            }
            for failure in element._failedValidationPredicates(for: canonical) {
                let message = failure.message == element._defaultMessage(for: failure.code)
                    ? "\(elementPath): \(failure.message)" : failure.message
                result.append((failure.code, message, elementPath, failure.predicate))
            }
        }
        return result
    }
}

extension NSManagedObject {
    /// The validation errors of a composite attribute's (non-nil) value: see
    /// ``CompositeValues/failures(_:_:path:depth:)``. A composite with no element set (`[:]`) is
    /// validated as nil, which is how the stores keep it: fine when optional, else
    /// `validationMissingMandatoryProperty`.
    package func _compositeValidationErrors(_ composite: NSCompositeAttributeDescription, value: Any) -> [OpenCoreDataError] {
        let failures: [(code: OpenCoreDataError.Code, message: String, key: String, predicate: NSPredicate?)]
        if CompositeValues.isEmpty(value) {
            // Stored, and read back, as nil: valid exactly when nil is.
            guard !composite.isOptional, !composite.isTransient else { return [] }
            failures = [(.validationMissingMandatoryProperty, "\(composite.name) is a required value (no element is set)", composite.name, nil)]
        } else {
            failures = CompositeValues.failures(value, composite, path: composite.name)
        }
        return failures.map { failure in
            OpenCoreDataError(failure.code, failure.message, object: self, key: failure.key, value: value, predicate: failure.predicate)
        }
    }
}

extension NSManagedObject {
    /// `setValue(_:forKeyPath:)` for a namespaced key path into a composite attribute of this object
    /// (`colorScheme.primary`): sets the element in a copy of the composite's dictionary (nil removes
    /// it) and sets the composite, so the change is recorded as a change of the composite. Returns
    /// false when the key path does not start with a composite attribute.
    package func _setCompositeElement(_ value: Any?, forKeyPath keyPath: String) -> Bool {
        let names = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard names.count > 1, let slot = _layout.indexByName[names[0]],
              let composite = _layout.properties[slot] as? NSCompositeAttributeDescription else { return false }
        let path = names[1...]
        var dictionary = CompositeValues.dictionary(self.value(forKey: composite.name)) ?? [:]
        if let value = ValueConversion.unwrap(value), !(value is NSNull) {
            CompositeValues.set(value, at: path, in: &dictionary)
        } else {
            CompositeValues.remove(at: path, in: &dictionary)
        }
        setValue(dictionary, forKey: composite.name)
        return true
    }
}

extension CompositeValues {
    /// Removes the value at `path` inside `dictionary` (nested dictionaries left empty stay).
    package static func remove(at path: ArraySlice<String>, in dictionary: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            dictionary[first] = nil
            return
        }
        guard var nested = Self.dictionary(dictionary[first]) else { return }
        remove(at: path.dropFirst(), in: &nested)
        dictionary[first] = nested
    }
}

// MARK: Uniqueness constraints on composites

extension CompositeValues {
    /// For a uniqueness-constraint name that is a composite attribute (`colorScheme`) or a
    /// namespaced key path to one of its elements (`colorScheme.primary`): the composite's slot and
    /// the element path below it (empty for the whole composite). Nil for any other name.
    package static func constrainedSlot(_ name: String, layout: EntityLayout)
        -> (slot: Int, composite: NSCompositeAttributeDescription, path: [String])?
    {
        guard !layout.compositeSlots.isEmpty else { return nil }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let slot = layout.indexByName[parts[0]],
              let composite = layout.properties[slot] as? NSCompositeAttributeDescription else { return nil }
        return (slot, composite, Array(parts.dropFirst()))
    }

    /// The value a constraint compares for the element at `path` of a composite value (the whole
    /// composite for an empty path): the element's canonical value, a (nested) composite as an
    /// `NSDictionary` of its normalized elements; nil when there is none (nil never conflicts).
    package static func constraintValue(_ value: Any?, _ composite: NSCompositeAttributeDescription, path: [String]) -> AnyHashable? {
        var target: NSAttributeDescription = composite
        for name in path {
            guard let nested = target as? NSCompositeAttributeDescription,
                  let element = nested.elements.first(where: { $0.name == name }) else { return nil }
            target = element
        }
        let raw = path.isEmpty ? value : self.value(at: path[...], in: value)
        if let nested = target as? NSCompositeAttributeDescription {
            return normalized(raw, nested).map { NSDictionary(dictionary: $0) }
        }
        return ValueConversion.canonicalize(raw, for: target.attributeType) as? AnyHashable
    }
}
