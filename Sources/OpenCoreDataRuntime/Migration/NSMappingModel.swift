import Foundation

/// How a migration turns the entities and properties of a source model into those of a destination
/// model: one ``NSEntityMapping`` per entity that is added, removed, copied or transformed.
///
/// ```swift
/// let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
/// for entityMapping in mapping.entityMappings {
///     print(entityMapping.name ?? "", entityMapping.mappingType)
/// }
/// ```
///
/// - Note: Linux: mapping models are built in code or inferred; compiled mapping model files
///   (`.cdm`, `.xcmappingmodel`) are not read, so `init?(from:forSourceModel:destinationModel:)`
///   is not available, and custom mappings (``NSEntityMappingType/customEntityMappingType``,
///   entity migration policies) are not run.
///
/// Related Core Data documentation: [NSMappingModel](https://developer.apple.com/documentation/coredata/nsmappingmodel)
///
/// `@unchecked Sendable` invariant: built once (by inference or by the caller) before a migration
/// reads it; not mutated while a migration runs.
open class NSMappingModel: NSObject, @unchecked Sendable {
    /// The entity mappings, in the order a migration applies them.
    ///
    /// Related Core Data documentation: [entityMappings](https://developer.apple.com/documentation/coredata/nsmappingmodel/entitymappings)
    open var entityMappings: [NSEntityMapping]! = []

    /// The entity mappings by name.
    ///
    /// Related Core Data documentation: [entityMappingsByName](https://developer.apple.com/documentation/coredata/nsmappingmodel/entitymappingsbyname)
    open var entityMappingsByName: [String: NSEntityMapping] {
        var result: [String: NSEntityMapping] = [:]
        for mapping in entityMappings ?? [] {
            if let name = mapping.name, result[name] == nil { result[name] = mapping }
        }
        return result
    }

    /// An empty mapping model.
    public override init() { super.init() }

    open override var description: String {
        "(<NSMappingModel>) entityMappings [\((entityMappings ?? []).compactMap(\.name).joined(separator: ", "))]"
    }
}

/// What an entity mapping does with its entity.
///
/// Related Core Data documentation: [NSEntityMappingType](https://developer.apple.com/documentation/coredata/nsentitymappingtype)
public enum NSEntityMappingType: UInt, Sendable {
    /// Developer-defined.
    case undefinedEntityMappingType = 0x00
    /// A custom mapping run by an entity migration policy.
    case customEntityMappingType = 0x01
    /// A new entity in the destination model: no source instances.
    case addEntityMappingType = 0x02
    /// An entity of the source model that the destination does not have: its instances are dropped.
    case removeEntityMappingType = 0x03
    /// An entity whose version hash is the same in both models: instances are copied as they are.
    case copyEntityMappingType = 0x04
    /// An entity that changed (attributes added, removed, renamed, optionality): instances are transformed.
    case transformEntityMappingType = 0x05
}

/// How instances of one source entity become instances of one destination entity.
///
/// ```swift
/// let mapping = NSEntityMapping()
/// mapping.name = "CarToAutomobile"
/// mapping.mappingType = .transformEntityMappingType
/// mapping.sourceEntityName = "Car"
/// mapping.destinationEntityName = "Automobile"
/// ```
///
/// Related Core Data documentation: [NSEntityMapping](https://developer.apple.com/documentation/coredata/nsentitymapping)
///
/// `@unchecked Sendable` invariant: as ``NSMappingModel``.
open class NSEntityMapping: NSObject, @unchecked Sendable {
    /// The mapping's name (an inferred mapping uses `<Source>To<Destination>`).
    open var name: String!
    /// What the mapping does.
    open var mappingType: NSEntityMappingType = .undefinedEntityMappingType
    /// The source entity's name (`nil` for an added entity).
    open var sourceEntityName: String?
    /// The source entity's version hash.
    open var sourceEntityVersionHash: Data?
    /// The destination entity's name (`nil` for a removed entity).
    open var destinationEntityName: String?
    /// The destination entity's version hash.
    open var destinationEntityVersionHash: Data?
    /// How each destination attribute gets its value.
    open var attributeMappings: [NSPropertyMapping]?
    /// How each destination relationship gets its destinations.
    open var relationshipMappings: [NSPropertyMapping]?
    /// The expression that fetches the source instances (`FETCH(FUNCTION($manager, ...))` on Apple).
    open var sourceExpression: NSExpression?
    /// The class name of a custom entity migration policy (not run on Linux).
    open var entityMigrationPolicyClassName: String?
    /// Developer information.
    open var userInfo: [AnyHashable: Any]?

    /// An empty entity mapping.
    public override init() { super.init() }

    open override var description: String {
        "(<NSEntityMapping>) name \(name ?? "nil"), type \(mappingType), source \(sourceEntityName ?? "nil"), destination \(destinationEntityName ?? "nil")"
    }
}

/// How one destination property gets its value: a name and the expression that computes it from the
/// source instance (`$source`) and the migration manager (`$manager`).
///
/// ```swift
/// let mapping = NSPropertyMapping()
/// mapping.name = "paintColor"
/// mapping.valueExpression = NSExpression(format: "$source.color")
/// ```
///
/// Related Core Data documentation: [NSPropertyMapping](https://developer.apple.com/documentation/coredata/nspropertymapping)
///
/// `@unchecked Sendable` invariant: as ``NSMappingModel``.
open class NSPropertyMapping: NSObject, @unchecked Sendable {
    /// The destination property's name.
    open var name: String?
    /// The expression that computes the value; `nil` leaves the destination's default value.
    open var valueExpression: NSExpression?
    /// Developer information.
    open var userInfo: [AnyHashable: Any]?
    /// The source property an inferred mapping reads (what `valueExpression` names), for stores that
    /// migrate in place without evaluating expressions.
    package var _sourcePropertyName: String?

    /// An empty property mapping.
    public override init() { super.init() }

    /// The source property this mapping copies, for stores that migrate in SQL: the inferred
    /// source name, or the key of a `$source.key`, `FUNCTION($source, "valueForKey:", "key")` or
    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "key", …)`
    /// expression. `nil` when there is no expression; `.failure` for any other expression.
    package var _copiedSourceProperty: Result<String, OpenCoreDataError>? {
        if let _sourcePropertyName { return .success(_sourcePropertyName) }
        guard let expression = valueExpression else { return nil }
        func isVariable(_ e: NSExpression, _ name: String) -> Bool { e.expressionType == .variable && e.variable == name }
        switch expression.expressionType {
        case .keyPath where isVariable(expression.operand, "source") && !expression.keyPath.contains("."):
            return .success(expression.keyPath)
        case .function:
            let arguments = expression.arguments ?? []
            let first = arguments.first.flatMap { $0.expressionType == .constantValue ? $0.constantValue as? String : nil }
            if let first, isVariable(expression.operand, "source"), expression.function == "valueForKey:",
                arguments.count == 1
            {
                return .success(first)
            }
            if let first, isVariable(expression.operand, "manager"),
                expression.function == "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
            {
                return .success(first)
            }
        default: break
        }
        return .failure(
            OpenCoreDataError(
                .migration,
                "the value expression of property mapping \(name ?? "?") (\(expression)) is not a plain copy of a source property; custom value expressions are not supported on Linux yet",
                key: name))
    }

    open override var description: String {
        "(<NSPropertyMapping>) name \(name ?? "nil"), valueExpression \(valueExpression.map { "\($0)" } ?? "nil")"
    }
}
