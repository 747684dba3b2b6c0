import Foundation

/// A derived attribute's `derivationExpression`, checked against its entity: what it reads (so a
/// save knows when the value is stale) and how to compute it.
///
/// Supported forms (Apple's list for SQL stores, docs/FORMATS.md §4.2):
/// - a key path through to-one relationships to an attribute: `name`, `category.name`;
/// - a to-many aggregate: `articles.@count`, `articles.views.@sum` (also `@avg`, `@min`, `@max`, and
///   the operator-first spelling `@sum.articles.views`);
/// - `now()`;
/// - `canonical:(name)`, `lowercase:(name)`, `uppercase:(name)` over a to-one key path as above.
///
/// Anything else is unsupported: the store's load fails with an error naming the entity and attribute.
package struct DerivationExpression: Sendable {
    package enum Function: String, Sendable {
        case canonical = "canonical:"
        case lowercase = "lowercase:"
        case uppercase = "uppercase:"
    }

    /// The key path read (normalized: operators last), or nil for `now()`.
    package let keyPath: String?
    /// The string function applied to the key path's value, if any.
    package let function: Function?
    /// The relationships the key path follows from the entity, in order.
    package let relationshipNames: [String]
    /// The attribute read at the end of the path (nil for `@count` and `now()`).
    package let attributeName: String?
    /// The aggregate operator at the end of a to-many key path (`@count`, `@sum`, ...), if any.
    package let aggregate: String?
    /// Whether the value is the time of the save (`now()`).
    package var isNow: Bool { keyPath == nil }
    /// The property of the entity itself whose change makes the value stale: the first relationship,
    /// or the attribute for a local key path.
    package var localKey: String? { relationshipNames.first ?? attributeName }

    private static let aggregates: Set<String> = ["@count", "@sum", "@avg", "@min", "@max"]
    private static let numericTypes: Set<NSAttributeType> = [
        .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
        .doubleAttributeType, .floatAttributeType,
    ]

    /// Checks `attribute`'s expression against `entity` (the entity that declares it).
    package init(_ attribute: NSDerivedAttributeDescription, in entity: NSEntityDescription) throws {
        func unsupported(_ why: String) -> OpenCoreDataError {
            let text = attribute.derivationExpression.map { "\($0)" } ?? attribute._derivationExpressionFormat ?? "nil"
            return OpenCoreDataError(
                .persistentStoreIncompatibleSchema,
                "unsupported derivation expression \"\(text)\" for derived attribute \(entity.name ?? "?").\(attribute.name): \(why)",
                entityName: entity.name, key: attribute.name)
        }
        guard let expression = attribute.derivationExpression else {
            throw unsupported(attribute._derivationExpressionFormat == nil ? "the attribute has no derivation expression" : "it does not parse")
        }
        switch expression.expressionType {
        case .keyPath:
            let path = try Self.checkedPath(expression.keyPath, from: entity, allowToMany: true, unsupported)
            (keyPath, function, relationshipNames, attributeName) = (path.keyPath, nil, path.relationships, path.attribute)
            aggregate = path.aggregate
        case .function where expression.function == "now" && (expression.arguments ?? []).isEmpty:
            (keyPath, function, relationshipNames, attributeName, aggregate) = (nil, nil, [], nil, nil)
        case .function:
            guard let function = Function(rawValue: expression.function) else {
                throw unsupported("\(expression.function) is not a function derived attributes support (now, canonical:, lowercase:, uppercase:)")
            }
            guard let arguments = expression.arguments, arguments.count == 1, arguments[0].expressionType == .keyPath else {
                throw unsupported("\(function.rawValue) takes one key path")
            }
            let path = try Self.checkedPath(arguments[0].keyPath, from: entity, allowToMany: false, unsupported)
            guard let attribute = path.attribute,
                  Self.attribute(attribute, at: path.relationships, from: entity)?.attributeType == .stringAttributeType
            else { throw unsupported("\(function.rawValue) needs a string attribute") }
            (keyPath, self.function, relationshipNames, attributeName) = (path.keyPath, function, path.relationships, attribute)
            aggregate = nil
        default:
            throw unsupported("derived attributes take a key path or one of the functions now, canonical:, lowercase:, uppercase:")
        }
    }

    /// The value for `object` now, as the attribute stores it. Reads slots directly (no key-value
    /// coding); objects deleted in the pending save do not count in aggregates.
    package func value(for object: NSManagedObject, type: NSAttributeType) -> Any? {
        guard keyPath != nil else { return ValueConversion.canonicalize(Date(), for: type) }
        var current: NSManagedObject? = object
        for name in aggregate == nil ? relationshipNames[...] : relationshipNames.dropLast() {
            current = current.flatMap { Self.toOne($0, name) }
        }
        var value: Any?
        if let aggregate, let owner = current, let toMany = relationshipNames.last {
            let members = Self.toMany(owner, toMany).filter { !$0._isDeleted }
            if aggregate == "@count" {
                value = members.count
            } else if let attributeName {
                let values = members.compactMap { Self.attribute($0, attributeName) }
                let function = ["@sum": "sum:", "@avg": "average:", "@min": "min:", "@max": "max:"][aggregate] ?? "sum:"
                value = PredicateFunctions.call(function, [values])
            }
        } else if let attributeName {
            value = current.flatMap { Self.attribute($0, attributeName) }
        }
        if let function { value = PredicateFunctions.call(function.rawValue, [value]) }
        return ValueConversion.canonicalize(value, for: type)
    }

    private static func toOne(_ object: NSManagedObject, _ name: String) -> NSManagedObject? {
        guard let slot = object._layout.indexByName[name], object._layout.relationships[slot] != nil else { return nil }
        return object._toOne(slot: slot)
    }

    private static func toMany(_ object: NSManagedObject, _ name: String) -> [NSManagedObject] {
        guard let slot = object._layout.indexByName[name], object._layout.relationships[slot] != nil else { return [] }
        return object._toMany(slot: slot).objects
    }

    private static func attribute(_ object: NSManagedObject, _ name: String) -> Any? {
        guard let slot = object._layout.indexByName[name] else { return nil }
        return object._publicValue(slot: slot)
    }

    // MARK: Checking

    private struct Path {
        var keyPath: String
        var relationships: [String]
        var attribute: String?
        var aggregate: String? { keyPath.split(separator: ".").last.flatMap { $0.hasPrefix("@") ? String($0) : nil } }
    }

    /// Walks `text` from `entity`: to-one relationships, then an attribute; or one to-many
    /// relationship followed by an optional attribute and an aggregate operator.
    private static func checkedPath(
        _ text: String, from entity: NSEntityDescription, allowToMany: Bool,
        _ unsupported: (String) -> OpenCoreDataError
    ) throws -> Path {
        var components = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // `@sum.articles.views` is `articles.views.@sum`.
        if let first = components.first, first.hasPrefix("@"), components.count > 1 {
            components.append(components.removeFirst())
        }
        guard !components.isEmpty, !components.contains(where: \.isEmpty) else { throw unsupported("empty key path") }
        var current = entity
        var relationships: [String] = []
        var attribute: String?
        var attributeType: NSAttributeType?
        var toMany = false
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            if component.hasPrefix("@") {
                guard isLast, aggregates.contains(component) else {
                    throw unsupported("\(component) is not an aggregate derived attributes support (@count, @sum, @avg, @min, @max)")
                }
                guard toMany else { throw unsupported("\(component) needs a to-many relationship before it") }
                if component != "@count", attribute == nil { throw unsupported("\(component) needs an attribute to aggregate") }
                if component == "@sum" || component == "@avg", let attributeType, !Self.numericTypes.contains(attributeType) {
                    throw unsupported("\(component) needs a numeric attribute; \(attribute!) is not one")
                }
                return Path(keyPath: components.joined(separator: "."), relationships: relationships, attribute: attribute)
            }
            guard attribute == nil else { throw unsupported("\(attribute!) is an attribute: the key path cannot go on to \(component)") }
            guard let property = current.propertiesByName[component] else {
                throw unsupported("\(current.name ?? "?") has no property \(component)")
            }
            if let relationship = property as? NSRelationshipDescription {
                guard let destination = relationship.destinationEntity else {
                    throw unsupported("relationship \(component) has no destination entity")
                }
                if relationship.isToMany {
                    guard allowToMany else { throw unsupported("\(component) is a to-many relationship") }
                    guard !toMany else { throw unsupported("only one to-many relationship may be followed") }
                    toMany = true
                } else if toMany {
                    throw unsupported("after the to-many relationship only an attribute may follow")
                }
                relationships.append(component)
                current = destination
            } else if let property = property as? NSAttributeDescription {
                attribute = component
                attributeType = property.attributeType
            }
        }
        if toMany { throw unsupported("a to-many key path must end with @count, @sum, @avg, @min or @max") }
        guard attribute != nil else { throw unsupported("the key path must end at an attribute") }
        return Path(keyPath: components.joined(separator: "."), relationships: relationships, attribute: attribute)
    }

    private static func attribute(_ name: String, at relationships: [String], from entity: NSEntityDescription) -> NSAttributeDescription? {
        var current = entity
        for name in relationships {
            guard let next = current.relationshipsByName[name]?.destinationEntity else { return nil }
            current = next
        }
        return current.attributesByName[name]
    }

    // MARK: Model

    /// Checks every derived attribute of `model`; throws for the first unsupported one.
    package static func validate(_ model: NSManagedObjectModel) throws {
        for entity in model.entities {
            for property in entity.ownProperties {
                guard let derived = property as? NSDerivedAttributeDescription else { continue }
                _ = try derived._derivation(in: entity)
            }
        }
    }
}

extension NSDerivedAttributeDescription {
    /// The checked expression, computed once per attribute.
    package func _derivation(in entity: NSEntityDescription) throws -> DerivationExpression {
        if let cached = _derivationCache.withLock({ $0 }), cached.expression === derivationExpression { return cached.derivation }
        let derivation = try DerivationExpression(self, in: entity)
        _derivationCache.withLock { $0 = (derivationExpression, derivation) }
        return derivation
    }
}
