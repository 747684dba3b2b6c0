import Foundation

extension XcodeModelBuilder {
    /// Gives every composite attribute its elements: Xcode 15 writes `<attribute … attributeType="Composite"
    /// composite="Name"/>` and, at the top level, `<composite name="Name">` holding the element
    /// `<attribute>`s (FORMATS.md §3). A composite element may name another composite (nesting); each
    /// use gets its own copies of the element descriptions, so a composite used twice is two trees.
    ///
    /// A composite attribute without `composite=`, one naming no `<composite>`, or composites that
    /// contain each other fail with the file and line.
    func resolveComposites(_ definitions: [String: [NSAttributeDescription]], entities: [NSEntityDescription]) throws {
        for entity in entities {
            for case let composite as NSCompositeAttributeDescription in entity.ownProperties {
                composite.elements = try compositeElements(for: composite, definitions, entity: entity.name, chain: [])
            }
        }
    }

    private func compositeElements(
        for composite: NSCompositeAttributeDescription, _ definitions: [String: [NSAttributeDescription]],
        entity: String?, chain: [String]
    ) throws -> [NSAttributeDescription] {
        let line = composite._xcodeModelExtras?.line ?? 1
        func failure(_ message: String) -> OpenCoreDataError {
            var error = XcodeModelReader.error(entity.map { "entity \($0): \(message)" } ?? message, url: url, line: line)
            error.entityName = entity
            return error
        }
        guard let name = composite._xcodeModelExtras?.compositeName, !name.isEmpty else {
            throw failure("attribute \(composite.name) is of type Composite but names no composite (composite=\"…\")")
        }
        guard !chain.contains(name) else {
            throw failure("composite \(name) contains itself (\((chain + [name]).joined(separator: " → ")))")
        }
        guard let definition = definitions[name] else {
            throw failure("attribute \(composite.name): composite \(name) is not defined by a <composite> element of the model")
        }
        return try definition.map { element in
            let copy = Self.copyElement(element)
            if let nested = copy as? NSCompositeAttributeDescription {
                nested.elements = try compositeElements(for: nested, definitions, entity: entity, chain: chain + [name])
            }
            return copy
        }
    }

    /// A copy of an element description as the reader built it.
    private static func copyElement(_ element: NSAttributeDescription) -> NSAttributeDescription {
        let copy = element is NSCompositeAttributeDescription ? NSCompositeAttributeDescription() : NSAttributeDescription()
        copy.name = element.name
        copy.attributeType = element.attributeType
        copy.isOptional = element.isOptional
        copy.isTransient = element.isTransient
        copy.isIndexed = element.isIndexed
        copy.isIndexedBySpotlight = element.isIndexedBySpotlight
        copy.renamingIdentifier = element.renamingIdentifier
        copy.versionHashModifier = element.versionHashModifier
        copy.userInfo = element.userInfo
        copy.valueTransformerName = element.valueTransformerName
        copy.allowsExternalBinaryDataStorage = element.allowsExternalBinaryDataStorage
        copy.preservesValueInHistoryOnDeletion = element.preservesValueInHistoryOnDeletion
        copy.allowsCloudEncryption = element.allowsCloudEncryption
        if !(element is NSCompositeAttributeDescription) { copy.defaultValue = element.defaultValue }
        if element.attributeType == .transformableAttributeType, let custom = element._xcodeModelExtras?.customClassName {
            copy.attributeValueClassName = custom
        }
        copy._xcodeModelExtras = element._xcodeModelExtras
        copy._setValidationPredicates(element.validationPredicates, warnings: element.validationWarnings)
        return copy
    }
}
