import Foundation

/// Key of the migration manager in the variables of a mapping's expressions (`$manager`).
///
/// Related Core Data documentation: [NSMigrationManagerKey](https://developer.apple.com/documentation/coredata/nsmigrationmanagerkey)
public let NSMigrationManagerKey = "manager"
/// Key of the source instance in the variables of a mapping's expressions (`$source`).
///
/// Related Core Data documentation: [NSMigrationSourceObjectKey](https://developer.apple.com/documentation/coredata/nsmigrationsourceobjectkey)
public let NSMigrationSourceObjectKey = "source"
/// Key of the destination instance in the variables of a mapping's expressions (`$destination`).
///
/// Related Core Data documentation: [NSMigrationDestinationObjectKey](https://developer.apple.com/documentation/coredata/nsmigrationdestinationobjectkey)
public let NSMigrationDestinationObjectKey = "destination"
/// Key of the current entity mapping in the variables of a mapping's expressions (`$entityMapping`).
///
/// Related Core Data documentation: [NSMigrationEntityMappingKey](https://developer.apple.com/documentation/coredata/nsmigrationentitymappingkey)
public let NSMigrationEntityMappingKey = "entityMapping"
/// Key of the current property mapping in the variables of a mapping's expressions (`$propertyMapping`).
///
/// Related Core Data documentation: [NSMigrationPropertyMappingKey](https://developer.apple.com/documentation/coredata/nsmigrationpropertymappingkey)
public let NSMigrationPropertyMappingKey = "propertyMapping"
/// Key of the entity migration policy in the variables of a mapping's expressions (`$entityPolicy`).
///
/// Related Core Data documentation: [NSMigrationEntityPolicyKey](https://developer.apple.com/documentation/coredata/nsmigrationentitypolicykey)
public let NSMigrationEntityPolicyKey = "entityPolicy"

/// What a migration does with the instances of one entity mapping, in the three stages of
/// ``NSMigrationManager``: creating destination instances, creating relationships, validating.
///
/// The default implementation does what Apple documents: for each source instance it inserts one
/// instance of the destination entity, sets each attribute from its property mapping's value
/// expression (evaluated with `$source`, `$manager`, `$entityPolicy`, `$entityMapping` and
/// `$propertyMapping`), and associates the two; later it sets each relationship from its
/// relationship mapping's value expression. Subclass it and name the subclass in
/// ``NSEntityMapping/entityMigrationPolicyClassName`` to change that:
///
/// ```swift
/// final class SplitNamePolicy: NSEntityMigrationPolicy {
///     override func createDestinationInstances(forSource source: NSManagedObject, in mapping: NSEntityMapping,
///                                              manager: NSMigrationManager) throws {
///         let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: manager.destinationContext)
///         let parts = (source.value(forKey: "fullName") as? String ?? "").split(separator: " ", maxSplits: 1)
///         person.setValue(parts.first.map(String.init), forKey: "firstName")
///         person.setValue(parts.dropFirst().first.map(String.init), forKey: "lastName")
///         manager.associate(sourceInstance: source, withDestinationInstance: person, for: mapping)
///     }
/// }
/// mapping.entityMigrationPolicyClassName = "MyModule.SplitNamePolicy"
/// ```
///
/// - Note: Linux: there is no Objective-C runtime, so `FUNCTION($entityPolicy, "selector:", args…)`
///   in a value expression calls ``migrationFunction(named:arguments:manager:)``, which a subclass
///   overrides to answer the selectors its mapping model uses. The class is found by name with
///   Swift's runtime: give the module-qualified name (`MyModule.SplitNamePolicy`); a bare name is
///   also looked up in the program's SwiftPM modules that ship resources, as managed object classes are.
///
/// Not `Sendable`: the migration manager makes a policy for one entity mapping of one migration
/// and uses it only on that migration's thread, like the managed objects it handles.
///
/// Related Core Data documentation: [NSEntityMigrationPolicy](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy)
open class NSEntityMigrationPolicy: NSObject {
    /// The manager running the policy's mapping (for `FUNCTION($entityPolicy, …)`).
    package weak var _manager: NSMigrationManager?

    /// A policy; the migration manager makes one per entity mapping.
    public required override init() { super.init() }

    /// Called at the start of the mapping, before any of its destination instances are created.
    ///
    /// Related Core Data documentation: [begin(_:with:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/begin(_:with:))
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Creates the destination instance(s) for `sInstance` and associates them with it.
    ///
    /// The default inserts one instance of the mapping's destination entity, sets each attribute
    /// mapping's value, and calls ``NSMigrationManager/associate(sourceInstance:withDestinationInstance:for:)``.
    ///
    /// Related Core Data documentation: [createDestinationInstances(forSource:in:manager:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/createdestinationinstances(forsource:in:manager:))
    open func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let entity = manager.destinationEntity(for: mapping) else { return }
        let destination = entity.layout.managedObjectClass.init(entity: entity, insertInto: manager.destinationContext)
        for propertyMapping in mapping.attributeMappings ?? [] {
            guard let name = propertyMapping.name, let expression = propertyMapping.valueExpression,
                entity.attributesByName[name] != nil
            else { continue }
            let value = try manager._evaluate(
                expression, source: sInstance, destination: destination, mapping: mapping,
                propertyMapping: propertyMapping, policy: self)
            destination.setValue(MigrationValues.attributeValue(value), forKey: name)
            try manager._checkCancellation()
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: destination, for: mapping)
    }

    /// Called when every destination instance of the mapping exists.
    ///
    /// Related Core Data documentation: [endInstanceCreation(forMapping:manager:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/endinstancecreation(formapping:manager:))
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets the relationships of `dInstance` from the mapping's relationship mappings, with
    /// `$source` bound to the source instance it was created from.
    ///
    /// Related Core Data documentation: [createRelationships(forDestination:in:manager:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/createrelationships(fordestination:in:manager:))
    open func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let name = mapping.name,
            let source = manager.sourceInstances(forEntityMappingName: name, destinationInstances: [dInstance]).first
        else { return }
        let relationships = dInstance.entity.relationshipsByName
        for propertyMapping in mapping.relationshipMappings ?? [] {
            guard let key = propertyMapping.name, let expression = propertyMapping.valueExpression,
                let relationship = relationships[key]
            else { continue }
            let value = try manager._evaluate(
                expression, source: source, destination: dInstance, mapping: mapping,
                propertyMapping: propertyMapping, policy: self)
            dInstance.setValue(MigrationValues.relationshipValue(value, for: relationship), forKey: key)
        }
    }

    /// Called when every relationship of the mapping's destination instances is set.
    ///
    /// Related Core Data documentation: [endRelationshipCreation(forMapping:manager:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/endrelationshipcreation(formapping:manager:))
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Your own checks of the mapping's destination instances, before the destination is validated
    /// and saved. Throw to stop the migration.
    ///
    /// Related Core Data documentation: [performCustomValidation(forMapping:manager:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/performcustomvalidation(formapping:manager:))
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called at the end of the mapping, after validation.
    ///
    /// Related Core Data documentation: [end(_:manager:)](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy/end(_:manager:))
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Answers `FUNCTION($entityPolicy, "selectorName", arguments…)` in a value expression: Apple
    /// sends the selector to the policy through the Objective-C runtime; here the policy overrides
    /// this method and switches on the selector name.
    ///
    /// ```swift
    /// override func migrationFunction(named selectorName: String, arguments: [Any?],
    ///                                 manager: NSMigrationManager) throws -> Any? {
    ///     switch selectorName {
    ///     case "firstNameFrom:": return (arguments.first as? String)?.split(separator: " ").first.map(String.init)
    ///     default: return try super.migrationFunction(named: selectorName, arguments: arguments, manager: manager)
    ///     }
    /// }
    /// ```
    ///
    /// The default throws `NSMigrationError` (134110) naming the selector. Arguments arrive
    /// evaluated; a thrown error stops the migration and leaves the source store as it was.
    ///
    /// - Note: Linux: not an Apple API (Apple calls the Objective-C method of that selector).
    ///
    /// Related Core Data documentation: [NSEntityMigrationPolicy](https://developer.apple.com/documentation/coredata/nsentitymigrationpolicy)
    open func migrationFunction(named selectorName: String, arguments: [Any?], manager: NSMigrationManager) throws
        -> Any?
    {
        throw OpenCoreDataError(
            .migration,
            "\(type(of: self)) does not answer FUNCTION($entityPolicy, \"\(selectorName)\"): override migrationFunction(named:arguments:manager:)"
        )
    }
}

/// Finds entity migration policy classes by name without an Objective-C runtime.
package enum EntityMigrationPolicyClassRegistry {
    /// The class named `name`: a module-qualified Swift name, or a bare name looked up in the
    /// program's resource-shipping modules (the same candidates as managed object classes).
    package static func resolve(_ name: String) -> NSEntityMigrationPolicy.Type? {
        ManagedObjectClassRegistry.type(named: name, as: NSEntityMigrationPolicy.Type.self)
    }
}

/// Turns the value of a mapping's expression into what a destination property takes.
enum MigrationValues {
    /// An attribute value: `NSNull` becomes nil.
    static func attributeValue(_ value: Any?) -> Any? {
        guard let value = PredicateValues.normalize(value), !(value is NSNull) else { return nil }
        return value
    }

    /// A relationship value: a to-one takes the single (or first) object of a collection, a to-many
    /// a set (an ordered set when the relationship is ordered) of every managed object in the value.
    static func relationshipValue(_ value: Any?, for relationship: NSRelationshipDescription) -> Any? {
        let objects = managedObjects(in: value)
        if !relationship.isToMany { return objects.first }
        if relationship.isOrdered { return NSOrderedSet(array: objects) }
        return Set(objects)
    }

    /// The managed objects of a value: one object, or the objects of a collection (others dropped).
    static func managedObjects(in value: Any?) -> [NSManagedObject] {
        guard let value = PredicateValues.normalize(value) else { return [] }
        if let object = value as? NSManagedObject { return [object] }
        return (PredicateValues.elements(value) ?? []).compactMap { $0 as? NSManagedObject }
    }
}
