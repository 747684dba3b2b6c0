import Foundation

// Inferring a mapping model for lightweight migration.
//
// Apple's "Migrating your data model automatically" lists what an inferred mapping covers: adding
// or removing an attribute, a required attribute becoming optional, an optional attribute becoming
// required with a default value, renaming an entity or property through its renaming identifier,
// adding, removing and renaming relationships, and changing the entity hierarchy without merging
// two hierarchies. Anything else (an attribute changing type, two source hierarchies meeting in one
// destination hierarchy) needs a custom mapping, and inference fails.

extension NSMappingModel {
    /// Infers the mapping from `sourceModel` to `destinationModel` for a lightweight migration.
    ///
    /// Entities and properties are matched by their *canonical name*: the renaming identifier if set,
    /// else the name (Xcode writes the renaming identifier as `elementID`). A destination element
    /// whose renaming identifier is the *name* of a source element also matches it, as Apple's docs
    /// describe. Entities whose version hash did not change get a copy mapping, changed ones a
    /// transform mapping, new ones an add mapping and vanished ones a remove mapping.
    ///
    /// ```swift
    /// let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
    /// ```
    ///
    /// Throws ``OpenCoreDataError`` with `inferredMappingModel` (134190, `NSInferredMappingModelError`)
    /// naming the entity and property when a change is not lightweight-eligible: an attribute that
    /// changes type, an attribute that becomes required (or is added as required) without a default
    /// value, a property that changes between attribute and relationship, a relationship whose
    /// destination is a different entity, or two source hierarchies merged into one.
    ///
    /// - Note: Linux: Apple's documentation does not say whether adding a *required* attribute
    ///   without a default value can be inferred (existing rows would have no value); here it cannot.
    ///
    /// Related Core Data documentation: [inferredMappingModel(forSourceModel:destinationModel:)](https://developer.apple.com/documentation/coredata/nsmappingmodel/inferredmappingmodel(forsourcemodel:destinationmodel:))
    public static func inferredMappingModel(
        forSourceModel sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel
    ) throws -> NSMappingModel {
        let sources = sourceModel.entities
        var matchedSources: Set<ObjectIdentifier> = []
        var pairs: [(NSEntityDescription, NSEntityDescription?)] = []
        for destination in destinationModel.entities {
            let source = _match(destination, in: sources, excluding: matchedSources)
            if let source { matchedSources.insert(ObjectIdentifier(source)) }
            pairs.append((destination, source))
        }

        // Two source hierarchies may not meet in one destination hierarchy.
        var sourceRootOf: [ObjectIdentifier: ObjectIdentifier] = [:]
        for (destination, source) in pairs {
            guard let source else { continue }
            let key = ObjectIdentifier(destination.rootEntity)
            let root = ObjectIdentifier(source.rootEntity)
            if let seen = sourceRootOf[key], seen != root {
                throw _error(
                    "entity \(destination.name ?? "?") joins a hierarchy that holds entities of another source hierarchy (merging hierarchies needs a custom mapping)",
                    entity: destination.name)
            }
            sourceRootOf[key] = root
        }

        let mapping = NSMappingModel()
        var entityMappings: [NSEntityMapping] = []
        for (destination, source) in pairs {
            let entityMapping = NSEntityMapping()
            entityMapping.destinationEntityName = destination.name
            entityMapping.destinationEntityVersionHash = destination.versionHash
            guard let source else {
                entityMapping.name = destination.name
                entityMapping.mappingType = .addEntityMappingType
                entityMappings.append(entityMapping)
                continue
            }
            entityMapping.name = "\(source.name ?? "")To\(destination.name ?? "")"
            entityMapping.sourceEntityName = source.name
            entityMapping.sourceEntityVersionHash = source.versionHash
            entityMapping.mappingType =
                source.versionHash == destination.versionHash ? .copyEntityMappingType : .transformEntityMappingType
            entityMapping.sourceExpression = NSExpression(
                forFunction: NSExpression(forVariable: "manager"),
                selectorName: "fetchRequestForSourceEntityNamed:predicateString:",
                arguments: [NSExpression(forConstantValue: source.name), NSExpression(forConstantValue: "TRUEPREDICATE")])
            var attributes: [NSPropertyMapping] = []
            var relationships: [NSPropertyMapping] = []
            // Fetched properties hold no data: nothing to map.
            let sourceProperties = source.properties.filter { !$0.isTransient && !($0 is NSFetchedPropertyDescription) }
            for property in destination.properties where !property.isTransient && !(property is NSFetchedPropertyDescription) {
                let match = _match(property, in: sourceProperties)
                let propertyMapping = NSPropertyMapping()
                propertyMapping.name = property.name
                switch (property, match) {
                case (let attribute as NSAttributeDescription, nil):
                    if !attribute.isOptional, attribute.defaultValue == nil {
                        throw _error(
                            "the new required attribute \(attribute.name) of \(destination.name ?? "?") has no default value for existing instances",
                            entity: destination.name, key: attribute.name)
                    }
                    attributes.append(propertyMapping)
                case (let attribute as NSAttributeDescription, let old as NSAttributeDescription):
                    if old.attributeType != attribute.attributeType {
                        throw _error(
                            "attribute \(attribute.name) of \(destination.name ?? "?") changes type from \(old.attributeType) to \(attribute.attributeType)",
                            entity: destination.name, key: attribute.name)
                    }
                    if old.isOptional, !attribute.isOptional, attribute.defaultValue == nil {
                        throw _error(
                            "attribute \(attribute.name) of \(destination.name ?? "?") becomes required without a default value",
                            entity: destination.name, key: attribute.name)
                    }
                    propertyMapping._sourcePropertyName = old.name
                    propertyMapping.valueExpression = NSExpression(
                        forFunction: NSExpression(forVariable: "source"), selectorName: "valueForKey:",
                        arguments: [NSExpression(forConstantValue: old.name)])
                    attributes.append(propertyMapping)
                case (is NSRelationshipDescription, nil):
                    relationships.append(propertyMapping)
                case (let relationship as NSRelationshipDescription, let old as NSRelationshipDescription):
                    let oldTarget = old.destinationEntity.flatMap { target in
                        pairs.first { $0.1 === target }?.0
                    }
                    if let newTarget = relationship.destinationEntity, oldTarget !== newTarget {
                        throw _error(
                            "relationship \(relationship.name) of \(destination.name ?? "?") points to \(newTarget.name ?? "?"), which is not what \(old.destinationEntity?.name ?? "?") became",
                            entity: destination.name, key: relationship.name)
                    }
                    propertyMapping._sourcePropertyName = old.name
                    propertyMapping.valueExpression = NSExpression(
                        forFunction: NSExpression(forVariable: "manager"),
                        selectorName: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                        arguments: [
                            NSExpression(forConstantValue: old.name),
                            NSExpression(
                                forFunction: NSExpression(forVariable: "source"), selectorName: "valueForKey:",
                                arguments: [NSExpression(forConstantValue: old.name)]),
                        ])
                    relationships.append(propertyMapping)
                case (_, let old?):
                    throw _error(
                        "property \(property.name) of \(destination.name ?? "?") changes between attribute and relationship (source property \(old.name))",
                        entity: destination.name, key: property.name)
                default:
                    continue
                }
            }
            entityMapping.attributeMappings = attributes
            entityMapping.relationshipMappings = relationships
            entityMappings.append(entityMapping)
        }
        for source in sources where !matchedSources.contains(ObjectIdentifier(source)) {
            let entityMapping = NSEntityMapping()
            entityMapping.name = source.name
            entityMapping.mappingType = .removeEntityMappingType
            entityMapping.sourceEntityName = source.name
            entityMapping.sourceEntityVersionHash = source.versionHash
            entityMappings.append(entityMapping)
        }
        mapping.entityMappings = entityMappings
        return mapping
    }

    /// The canonical name of a model element: its renaming identifier, else its name.
    private static func _canonical(_ name: String?, _ renamingIdentifier: String?) -> String? {
        if let renamingIdentifier, !renamingIdentifier.isEmpty { return renamingIdentifier }
        return name
    }

    private static func _match(
        _ destination: NSEntityDescription, in sources: [NSEntityDescription], excluding used: Set<ObjectIdentifier>
    ) -> NSEntityDescription? {
        let candidates = sources.filter { !used.contains(ObjectIdentifier($0)) }
        let canonical = _canonical(destination.name, destination.renamingIdentifier)
        if let found = candidates.first(where: { _canonical($0.name, $0.renamingIdentifier) == canonical }) {
            return found
        }
        guard let identifier = destination.renamingIdentifier, !identifier.isEmpty else { return nil }
        return candidates.first { $0.name == identifier }
    }

    private static func _match(_ destination: NSPropertyDescription, in sources: [NSPropertyDescription])
        -> NSPropertyDescription?
    {
        let canonical = _canonical(destination.name, destination.renamingIdentifier)
        if let found = sources.first(where: { _canonical($0.name, $0.renamingIdentifier) == canonical }) {
            return found
        }
        guard let identifier = destination.renamingIdentifier, !identifier.isEmpty else { return nil }
        return sources.first { $0.name == identifier }
    }

    private static func _error(_ reason: String, entity: String?, key: String? = nil) -> OpenCoreDataError {
        OpenCoreDataError(
            .inferredMappingModel, "cannot infer a mapping model: \(reason)", entityName: entity, key: key)
    }
}
