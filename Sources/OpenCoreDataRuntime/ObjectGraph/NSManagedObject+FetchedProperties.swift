import Foundation

// Fetched properties (NSFetchedPropertyDescription) on objects. They have no slot in the entity's
// layout: nothing of theirs is stored, compared or saved. Their values live in the context's
// `FetchedPropertyCache` (not in the object: a stored property would make every object a size class
// larger), filled on first read and dropped when the object turns into a fault or is refreshed
// (`_dropFetchedPropertyValues()`).
extension NSManagedObject {
    /// The value of the fetched property `property`: the cached array, or the result of its fetch
    /// request run now through the object's context.
    package func _fetchedPropertyValue(_ property: NSFetchedPropertyDescription) throws -> [Any] {
        if _isFault { _fireFault() }
        if let cached = _context?._fetchedPropertyCache.value(of: property.name, for: self) { return cached }
        guard let context = _context, let model = context.persistentStoreCoordinator?.managedObjectModel else {
            throw OpenCoreDataError(
                .managedObjectReferentialIntegrity,
                "fetched property \(entity.name ?? "?").\(property.name) cannot be fetched: the object has no context",
                entityName: entity.name, key: property.name, objectID: objectID)
        }
        let request = try property._request(for: self, model: model)
        let result = try context.fetch(request)
        context._fetchedPropertyCache.set(result, of: property.name, for: self)
        context._link.cachesFetchedProperties = true
        return result
    }

    /// `value(forKey:)` for a key that has no slot: a fetched property's value (a failed fetch is
    /// logged and reads as `nil`), or ``value(forUndefinedKey:)``.
    package func _valueForKeyWithoutSlot(_ key: String) -> Any? {
        guard let property = _layout.fetchedPropertiesByName[key] else { return value(forUndefinedKey: key) }
        willAccessValue(forKey: key)
        defer { didAccessValue(forKey: key) }
        do {
            return try _fetchedPropertyValue(property)
        } catch {
            reportMisuse("value(forKey:): the fetched property \(entity.name ?? "?").\(key) could not be fetched: \(error)")
            return nil
        }
    }

    /// `setValue(_:forKey:)` for a key that has no slot: a fetched property is read-only (logged),
    /// anything else goes to ``setValue(_:forUndefinedKey:)``.
    package func _setValueForKeyWithoutSlot(_ value: Any?, _ key: String) {
        guard _layout.fetchedPropertiesByName[key] != nil else { return setValue(value, forUndefinedKey: key) }
        reportMisuse("setValue(_:forKey:): \(entity.name ?? "?").\(key) is a fetched property; its value cannot be set")
    }

    /// The throwing reads and writes of ``checkedValue(forKey:)`` and ``setCheckedValue(_:forKey:)``
    /// for a fetched property; `nil` if `key` names none.
    package func _checkedFetchedPropertyValue(forKey key: String) throws -> [Any]? {
        guard let property = _layout.fetchedPropertiesByName[key] else { return nil }
        willAccessValue(forKey: key)
        defer { didAccessValue(forKey: key) }
        return try _fetchedPropertyValue(property)
    }

    package func _fetchedPropertyIsReadOnlyError(_ key: String) -> OpenCoreDataError? {
        guard _layout.fetchedPropertiesByName[key] != nil else { return nil }
        return OpenCoreDataError(
            .managedObjectValidation, "\(entity.name ?? "?").\(key) is a fetched property; its value cannot be set",
            entityName: entity.name, key: key, objectID: objectID)
    }

    /// Forgets the cached values of fetched properties, so the next read fetches again.
    package func _dropFetchedPropertyValues() {
        // Asked of the link first: reaching the cache loads the context through a weak reference
        // (about 300 instructions), for every object that turns into a fault.
        guard _contextLink?.cachesFetchedProperties == true else { return }
        _context?._fetchedPropertyCache.remove(self)
    }
}

/// The values of fetched properties read through one context, by object.
///
/// Used on the context's queue only, like the objects. An entry holds its object weakly: one whose
/// object went away (without turning into a fault) is dropped by the next sweep, and a new object
/// at the same address never sees it.
package final class FetchedPropertyCache {
    private struct Entry {
        weak var object: NSManagedObject?
        var values: [String: [Any]]
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var sweepThreshold = 64

    package init() {}

    func value(of name: String, for object: NSManagedObject) -> [Any]? {
        guard !entries.isEmpty, let entry = entries[ObjectIdentifier(object)], entry.object === object else { return nil }
        return entry.values[name]
    }

    func set(_ value: [Any], of name: String, for object: NSManagedObject) {
        let key = ObjectIdentifier(object)
        if var entry = entries[key], entry.object === object {
            entry.values[name] = value
            entries[key] = entry
            return
        }
        entries[key] = Entry(object: object, values: [name: value])
        if entries.count >= sweepThreshold {
            entries = entries.filter { $0.value.object != nil }
            sweepThreshold = max(64, entries.count * 2)
        }
    }

    /// Called for every object that turns into a fault: one check when nothing is cached.
    func remove(_ object: NSManagedObject) {
        guard !entries.isEmpty else { return }
        entries[ObjectIdentifier(object)] = nil
    }
}
