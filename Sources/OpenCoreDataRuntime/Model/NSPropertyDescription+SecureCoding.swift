import Foundation

// Properties archive under the keys of Apple's compiled models (docs/compiled-models.md), which
// `CompiledModelBuilder` reads too. Keys that start with `_NS` and are not in Apple's archives hold
// what a compiled model keeps elsewhere (external storage, the `_P` flags): the reader reads them.

extension NSPropertyDescription: NSSecureCoding {
    /// `true`: properties decode with secure coding.
    ///
    /// Related Core Data documentation: [supportsSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding/supportssecurecoding)
    public static var supportsSecureCoding: Bool { true }

    func _encodePropertyFields(with coder: NSCoder) {
        coder.encode(name, forKey: "NSPropertyName")
        if let entity { coder.encode(entity, forKey: "NSEntity") }
        coder.encode(isOptional, forKey: "NSIsOptional")
        coder.encode(isTransient, forKey: "NSIsTransient")
        if _isReadOnly { coder.encode(true, forKey: "NSIsReadOnly") }
        if isIndexed { coder.encode(true, forKey: "_NSIsIndexed") }
        if isIndexedBySpotlight { coder.encode(true, forKey: "_NSIsIndexedBySpotlight") }
        ModelArchive.encode(userInfo, forKey: "NSUserInfo", with: coder, context: "property \(name)")
        ModelArchive.encode(versionHashModifier, forKey: "NSVersionHashModifier", with: coder)
        ModelArchive.encode(renamingIdentifier, forKey: "NSRenamingIdentifier", with: coder)
        if !validationPredicates.isEmpty {
            // As format strings, which the compiled-model reader accepts too (GNUstep's archives).
            coder.encode(validationPredicates.map(\.predicateFormat), forKey: "NSValidationPredicates")
            ModelArchive.encode(validationWarnings, forKey: "NSValidationWarnings", with: coder, context: "property \(name)")
        }
    }

    /// Reads the fields every property has; what is wrong with them, or nil.
    func _decodePropertyFields(from coder: NSCoder) -> String? {
        guard let name = ModelArchive.string(coder, "NSPropertyName"), !name.isEmpty else { return "a property has no NSPropertyName" }
        self.name = name
        isOptional = coder.decodeBool(forKey: "NSIsOptional")
        isTransient = coder.decodeBool(forKey: "NSIsTransient")
        isIndexed = coder.decodeBool(forKey: "_NSIsIndexed")
        isIndexedBySpotlight = coder.decodeBool(forKey: "_NSIsIndexedBySpotlight")
        userInfo = ModelArchive.value(coder, "NSUserInfo") as? [AnyHashable: Any]
        versionHashModifier = ModelArchive.string(coder, "NSVersionHashModifier")
        renamingIdentifier = ModelArchive.string(coder, "NSRenamingIdentifier")
        if let formats = ModelArchive.strings(coder, "NSValidationPredicates"), !formats.isEmpty {
            var predicates: [NSPredicate] = []
            for format in formats {
                guard let predicate = try? NSPredicate(validatingFormat: format) else {
                    return "property \(name): validation predicate does not parse: \(format)"
                }
                predicates.append(predicate)
            }
            _setValidationPredicates(predicates, warnings: ModelArchive.value(coder, "NSValidationWarnings") as? [Any] ?? [])
        }
        return nil
    }
}

extension NSAttributeDescription {
    func _encodeAttributeFields(with coder: NSCoder) {
        coder.encode(Int(attributeType.rawValue), forKey: "NSAttributeType")
        ModelArchive.encode(_attributeValueClassName, forKey: "NSAttributeValueClassName", with: coder)
        ModelArchive.encode(valueTransformerName, forKey: "NSValueTransformerName", with: coder)
        if !(self is NSCompositeAttributeDescription) {  // a composite's default is made from its elements'
            // A Decimal as its text: Foundation on Linux archives no NSDecimalNumber that reads back securely.
            let value = (defaultValue as? Decimal).map { $0.description } ?? defaultValue
            ModelArchive.encode(value, forKey: "NSDefaultValue", with: coder, extra: _archivedValueClasses, context: "attribute \(name)")
        }
        let flags = preservesValueInHistoryOnDeletion ? CompiledModelBuilder.preservesValueInHistoryOnDeletionFlag : 0
        if flags != 0 { coder.encode(flags, forKey: "NSFlagsKey") }
        if allowsExternalBinaryDataStorage { coder.encode(true, forKey: "_NSAllowsExternalBinaryDataStorage") }
        if allowsCloudEncryption { coder.encode(true, forKey: "_NSAllowsCloudEncryption") }
    }

    /// A transformable's default may be of the attribute's own class (the app's), when it is found by name.
    private var _archivedValueClasses: [AnyClass] {
        _attributeValueClassName.flatMap { TransformableValues.secureCodingClass(named: $0) }.map { [$0] } ?? []
    }

    func _decodeAttributeFields(from coder: NSCoder) -> String? {
        let code = coder.decodeInteger(forKey: "NSAttributeType")
        guard code >= 0, let type = NSAttributeType(rawValue: UInt(code)) else { return "attribute \(name): unknown NSAttributeType \(code)" }
        attributeType = type
        if let className = ModelArchive.string(coder, "NSAttributeValueClassName") { attributeValueClassName = className }
        valueTransformerName = ModelArchive.string(coder, "NSValueTransformerName")
        let flags = coder.decodeInteger(forKey: "NSFlagsKey")
        preservesValueInHistoryOnDeletion = flags & CompiledModelBuilder.preservesValueInHistoryOnDeletionFlag != 0
        allowsExternalBinaryDataStorage = coder.decodeBool(forKey: "_NSAllowsExternalBinaryDataStorage")
        allowsCloudEncryption = coder.decodeBool(forKey: "_NSAllowsCloudEncryption")
        if let value = ModelArchive.value(coder, "NSDefaultValue", extra: _archivedValueClasses) {
            defaultValue = CompiledModelBuilder.canonicalDefaultValue(value, type: type)
        }
        return nil
    }
}

extension NSRelationshipDescription {
    func _encodeRelationshipFields(with coder: NSCoder) {
        if let destinationEntity { coder.encode(destinationEntity, forKey: "NSDestinationEntity") }
        ModelArchive.encode(destinationEntity?.name ?? _destinationEntityName, forKey: "_NSDestinationEntityName", with: coder)
        if let inverseRelationship { coder.encode(inverseRelationship, forKey: "NSInverseRelationship") }
        ModelArchive.encode(inverseRelationship?.name ?? _inverseName, forKey: "_NSInverseRelationshipName", with: coder)
        coder.encode(minCount, forKey: "NSMinCount")
        coder.encode(maxCount, forKey: "NSMaxCount")
        coder.encode(Int(deleteRule.rawValue), forKey: "NSDeleteRule")
        coder.encode(isOrdered, forKey: "NSIsOrdered")
    }

    func _decodeRelationshipFields(from coder: NSCoder) -> String? {
        minCount = coder.decodeInteger(forKey: "NSMinCount")
        maxCount = coder.containsValue(forKey: "NSMaxCount") ? coder.decodeInteger(forKey: "NSMaxCount") : 1
        let rule = coder.containsValue(forKey: "NSDeleteRule") ? coder.decodeInteger(forKey: "NSDeleteRule") : 1
        guard rule >= 0, let deleteRule = NSDeleteRule(rawValue: UInt(rule)) else { return "relationship \(name): unknown NSDeleteRule \(rule)" }
        self.deleteRule = deleteRule
        isOrdered = coder.decodeBool(forKey: "NSIsOrdered")
        _destinationEntityName = ModelArchive.string(coder, "_NSDestinationEntityName")
        _inverseName = ModelArchive.string(coder, "_NSInverseRelationshipName")
        return nil
    }
}
