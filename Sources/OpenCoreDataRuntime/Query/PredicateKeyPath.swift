import Foundation

/// Key-path evaluation for predicates: KVC steps through managed objects, dictionaries and plain
/// Swift values (by reflection), collection operators (`@count`, `@sum`, `@avg`, `@min`, `@max`,
/// `@distinctUnionOfObjects`, `@unionOfObjects`, `@allKeys`, `@allValues`), and to-many steps that
/// collect the values of every element.
///
/// Unlike Foundation's KVC, a step through a to-many relationship of a to-many relationship
/// (`departments.employees.name`) flattens into one collection, as Core Data's SQL does for `ANY`.
package enum PredicateKeyPath {
    /// Whether `keyPath` has more than one step (contains a `.`).
    @inline(__always)
    package static func isCompound(_ keyPath: String) -> Bool {
        keyPath.utf8.contains(UInt8(ascii: "."))
    }

    /// The steps of `keyPath`, empty ones kept (`a..b` has an empty middle step). A one-step key path,
    /// the common case, is not split (splitting costs two allocations and a copy per step).
    package static func components(_ keyPath: String) -> [String] {
        isCompound(keyPath) ? keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) : [keyPath]
    }

    package static func value(of root: Any?, keyPath: String) -> Any? {
        // One plain key (`code`), the common case: no splitting (two allocations per evaluation).
        if !isCompound(keyPath), keyPath.utf8.first != UInt8(ascii: "@") {
            return step(root, keyPath)
        }
        let components = components(keyPath)
        var current: Any? = root
        var index = 0
        while index < components.count {
            let key = components[index]
            if key.hasPrefix("@") {
                let rest = components[(index + 1)...].joined(separator: ".")
                switch key {
                case "@allKeys":
                    current = allKeys(current)
                case "@allValues":
                    current = PredicateValues.elements(current).map { $0 as Any }
                default:
                    return collectionOperator(key, current, rest: rest)
                }
            } else {
                current = step(current, key)
            }
            index += 1
        }
        return current
    }

    private static func allKeys(_ value: Any?) -> Any? {
        switch PredicateValues.normalize(value) {
        case let dictionary as [String: Any]: Array(dictionary.keys)
        case let dictionary as [AnyHashable: Any]: Array(dictionary.keys)
        case let dictionary as NSDictionary: dictionary.allKeys
        default: nil
        }
    }

    private static func collectionOperator(_ name: String, _ value: Any?, rest: String) -> Any? {
        let items = PredicateValues.elements(value) ?? []
        if name == "@count" { return items.count }
        let values: [Any] = rest.isEmpty ? items : items.compactMap { PredicateValues.normalize(Self.value(of: $0, keyPath: rest)) }
        switch name {
        case "@sum": return PredicateFunctions.call("sum:", [values])
        case "@avg": return PredicateFunctions.call("average:", [values])
        case "@min": return PredicateFunctions.call("min:", [values])
        case "@max": return PredicateFunctions.call("max:", [values])
        case "@unionOfObjects": return values
        case "@distinctUnionOfObjects": return distinct(values)
        case "@unionOfArrays", "@unionOfSets": return values.flatMap { PredicateValues.elements($0) ?? [$0] }
        case "@distinctUnionOfArrays", "@distinctUnionOfSets": return distinct(values.flatMap { PredicateValues.elements($0) ?? [$0] })
        default: return nil
        }
    }

    private static func distinct(_ values: [Any]) -> [Any] {
        var result: [Any] = []
        for value in values where !result.contains(where: { PredicateValues.equal($0, value) }) { result.append(value) }
        return result
    }

    /// One KVC step: `value.key`.
    private static func step(_ object: NSManagedObject, _ key: String) -> Any? {
        if let slot = object._layout.indexByName[key] { return object._value(forKey: key, slot: slot) }
        if object._layout.fetchedPropertiesByName[key] == nil {  // not a property: no KVC misuse log
            return key == "objectID" ? object.objectID : nil
        }
        return object.value(forKey: key)
    }

    package static func step(_ value: Any?, _ key: String) -> Any? {
        guard let value = PredicateValues.normalize(value) else { return nil }
        if key == "self" || key == "SELF" { return value }
        if let object = ValueConversion.managedObject(value) { return step(object, key) }
        switch value {
        case let object as NSManagedObject:
            return step(object, key)
        case let dictionary as [String: Any]:
            return dictionary[key]
        case let dictionary as [AnyHashable: Any]:
            return dictionary[key]
        case let dictionary as NSDictionary:
            return dictionary.object(forKey: key)
        case is String, is Data:
            break
        case let receiver as any ExpressionFunctionReceiver:
            return receiver._expressionValue(forKey: key)
        default:
            if let items = PredicateValues.elements(value) {
                // A to-many step collects the values of every element (nil ones dropped).
                var result: [Any] = []
                for item in items {
                    guard let stepped = PredicateValues.normalize(step(item, key)) else { continue }
                    if item is NSManagedObject, !(stepped is String), let nested = PredicateValues.elements(stepped) {
                        result.append(contentsOf: nested)
                    } else {
                        result.append(stepped)
                    }
                }
                return result
            }
        }
        if let string = PredicateValues.string(value) {
            switch key {
            case "length": return string.utf16.count
            case "description": return string
            case "uppercaseString": return string.uppercased()
            case "lowercaseString": return string.lowercased()
            default: return nil
            }
        }
        if key == "length", let data = value as? Data { return data.count }  // NSData.length
        if key == "description" { return String(describing: value) }
        // Plain Swift values: stored properties by name.
        for child in Mirror(reflecting: value).children where child.label == key { return child.value }
        return nil
    }
}
