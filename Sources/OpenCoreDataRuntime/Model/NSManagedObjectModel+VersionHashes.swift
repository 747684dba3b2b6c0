import Foundation

// Core Data's version hashes, byte for byte (docs/FORMATS.md §2).
//
// Every hash is SHA-256 over a concatenation; integers are little-endian, strings UTF-8 without a
// terminator. The test vectors are the `NSStoreModelVersionHashes` of real Apple-written stores
// (Tests/OpenCoreDataTests/Model/VersionHashTests.swift).

extension NSManagedObjectModel {
    /// The version hash of each entity, by entity name.
    ///
    /// A persistent store records these hashes in its metadata (`NSStoreModelVersionHashes`); a model
    /// opens a store without migration when every hash matches.
    ///
    /// ```swift
    /// let hashes = model.entityVersionHashesByName  // ["Person": <32 bytes>, ...]
    /// ```
    ///
    /// Related Core Data documentation: [entityVersionHashesByName](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/entityversionhashesbyname)
    public var entityVersionHashesByName: [String: Data] {
        var result: [String: Data] = [:]
        for entity in entities {
            guard let name = entity.name, result[name] == nil else { continue }
            result[name] = entity.versionHash
        }
        return result
    }

    /// A checksum of the whole model: base64 of SHA-256 over the entity version hashes, entities in
    /// binary order of name. Stores record it as `NSStoreModelVersionChecksumKey`.
    ///
    /// ```swift
    /// print(model.versionChecksum)  // "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik="
    /// ```
    ///
    /// Related Core Data documentation: [versionChecksum](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/versionchecksum)
    public var versionChecksum: String {
        var hasher = SHA256Hasher()
        for (_, hash) in Self._sortedByName(entityVersionHashesByName) { hasher.update(hash) }
        return hasher.finalize().base64EncodedString()
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over each entity's name followed by its
    /// 32-byte version hash, entities in binary order of name.
    package var versionHashesDigest: String {
        Self.versionHashesDigest(of: entityVersionHashesByName)
    }

    /// The `NSStoreModelVersionHashesDigest` of a set of entity hashes (as read from store metadata).
    package static func versionHashesDigest(of hashes: [String: Data]) -> String {
        var hasher = SHA512Hasher()
        for (name, hash) in _sortedByName(hashes) {
            hasher.update(name.utf8)
            hasher.update(hash)
        }
        return hasher.finalize().base64EncodedString()
    }

    /// Entries sorted by the UTF-8 bytes of their key (Core Data's ordinal order, not a locale's).
    private static func _sortedByName(_ hashes: [String: Data]) -> [(String, Data)] {
        hashes.sorted { _utf8Precedes($0.key, $1.key) }
    }
}

extension NSEntityDescription {
    /// The entity's version hash: 32 bytes that change when the entity's stored shape changes.
    ///
    /// Inputs: the name, `isAbstract`, the superentity's hash, the hash of every non-transient
    /// attribute and relationship (inherited ones included) in order of name, the
    /// `versionHashModifier`, and the uniqueness constraints. Class name, user info, renaming
    /// identifier, indexes, fetched properties and validation are not inputs.
    ///
    /// ```swift
    /// if model.entitiesByName["Person"]!.versionHash != storedHashes["Person"] { /* migrate */ }
    /// ```
    ///
    /// Related Core Data documentation: [versionHash](https://developer.apple.com/documentation/coredata/nsentitydescription/versionhash)
    public var versionHash: Data {
        var hasher = SHA256Hasher()
        hasher.update((name ?? "").utf8)
        hasher.update(CollectionOfOne(isAbstract ? 1 : 0))
        if let superentity { hasher.update(superentity.versionHash) }

        // Own properties override inherited ones of the same name, as in the entity's layout.
        var byName: [String: NSPropertyDescription] = [:]
        for property in properties { byName[property.name] = property }
        let stored = byName.values.filter { !$0.isTransient && ($0 is NSAttributeDescription || $0 is NSRelationshipDescription) }
        for property in stored.sorted(by: { _utf8Precedes($0.name, $1.name) }) {
            hasher.update(property._versionHash(in: self))
        }

        if let versionHashModifier { hasher.update(versionHashModifier.utf8) }
        let constraints = uniquenessConstraints
            .map { tuple in tuple.map(Self._constraintElementName).joined(separator: ".") }
            .filter { !$0.isEmpty }
            .sorted(by: _utf8Precedes)
        for constraint in constraints { hasher.update(constraint.utf8) }
        return hasher.finalize()
    }

    private static func _constraintElementName(_ element: Any) -> String {
        switch element {
        case let name as String: name
        case let property as NSPropertyDescription: property.name
        default: "\(element)"
        }
    }
}

extension NSPropertyDescription {
    /// The property's version hash: 32 bytes that change when the property's stored shape changes.
    ///
    /// Inputs: the name, `isOptional`, `isTransient`, read-only-ness (derived attributes) and the
    /// `versionHashModifier`; attributes add their type, external-storage and keep-in-history flags;
    /// relationships add the destination entity's name, the inverse's name, `maxCount` (`0` for
    /// to-many), `minCount` and `isOrdered`. User info, delete rules, defaults and validation are not
    /// inputs.
    ///
    /// ```swift
    /// let hash = entity.attributesByName["name"]!.versionHash  // 32 bytes
    /// ```
    ///
    /// Related Core Data documentation: [versionHash](https://developer.apple.com/documentation/coredata/nspropertydescription/versionhash)
    public var versionHash: Data { _versionHash(in: entity) }

    /// The hash as seen from `entity`, which may be a subentity that inherits the property.
    package func _versionHash(in owner: NSEntityDescription?) -> Data {
        let base = _baseVersionHash
        switch self {
        case let derived as NSDerivedAttributeDescription:
            var hasher = SHA256Hasher()
            hasher.update(Self._attributeHash(derived, base: base))
            // [RE, partial] FORMATS §2 step 3: the expression's format; the filtering-predicate part is
            // not known. Untested against Apple-written stores.
            if let format = derived._derivationExpressionFormat { hasher.update(format.utf8) }
            return hasher.finalize()
        case let composite as NSCompositeAttributeDescription:
            return composite._compositeVersionHash(base: Self._attributeHash(composite, base: base), owner: owner)
        case let attribute as NSAttributeDescription:
            return Self._attributeHash(attribute, base: base)
        case let relationship as NSRelationshipDescription:
            var hasher = SHA256Hasher()
            hasher.update(base)
            hasher.update((relationship.destinationEntity?.name ?? relationship._destinationEntityName ?? "").utf8)
            // FORMATS §2 step 4: the inverse name is left out for an inherited relationship whose
            // same-named ancestor relationship is its own inverse.
            let inverse = relationship.inverseRelationship
            let inherited = owner != nil && relationship.entity != nil && owner !== relationship.entity
            if !(inherited && inverse === relationship) {
                hasher.update((inverse?.name ?? relationship._inverseName ?? "").utf8)
            }
            hasher.update(_littleEndianBytes(Int32(truncatingIfNeeded: relationship.maxCount)))
            hasher.update(_littleEndianBytes(Int32(truncatingIfNeeded: relationship.minCount)))
            if relationship.isOrdered { hasher.update(_littleEndianBytes(UInt16(1))) }
            return hasher.finalize()
        default:
            return base
        }
    }

    /// SHA-256(name ‖ uint16(optional·1 | transient·2 | readOnly·4) ‖ versionHashModifier).
    package var _baseVersionHash: Data {
        var hasher = SHA256Hasher()
        hasher.update(name.utf8)
        let flags: UInt16 = (isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (_isReadOnly ? 4 : 0)
        hasher.update(_littleEndianBytes(flags))
        if let versionHashModifier { hasher.update(versionHashModifier.utf8) }
        return hasher.finalize()
    }

    package static func _attributeHash(_ attribute: NSAttributeDescription, base: Data) -> Data {
        var hasher = SHA256Hasher()
        hasher.update(base)
        hasher.update(_littleEndianBytes(Int32(truncatingIfNeeded: attribute.attributeType.rawValue)))
        if attribute.allowsExternalBinaryDataStorage { hasher.update(CollectionOfOne(1)) }
        if attribute.preservesValueInHistoryOnDeletion { hasher.update(CollectionOfOne(1)) }
        return hasher.finalize()
    }
}

/// Whether `a` sorts before `b` in binary (UTF-8 byte) order.
package func _utf8Precedes(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}

private func _littleEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}
