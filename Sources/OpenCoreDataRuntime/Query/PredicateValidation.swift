import Foundation

extension NSPredicate {
    /// Checks that the predicate parsed and that every key path it evaluates against the fetched
    /// object names a property of `entity` (following relationships to their destinations).
    ///
    /// Apple's fetch raises `NSInvalidArgumentException` ("keypath x not found in entity"); callers
    /// (the context's fetch, SQL stores) can throw the ``OpenCoreDataError/Code/unknownKey`` error
    /// this throws instead. Key paths through attributes of transformable or composite type, `@`
    /// operators after the first step, `SELF` and key paths on variables bound outside the predicate
    /// are not checked.
    package func _ocdValidate(for entity: NSEntityDescription) throws {
        // The origin read unretained: the predicate holds it, set once before it was returned.
        if let origin = _templateOrigin.map(Unmanaged.passUnretained),
            origin._withUnsafeGuaranteedRef({ $0.isValidated(for: entity, instance: self) })
        {
            return
        }
        try _ocdCheckValid()
        try PredicateValidator(entity: entity).check(self, scope: [:])
        _templateOrigin?.noteValidated(for: entity, instance: self)
    }
}

extension NSSortDescriptor {
    /// Checks that the descriptor's key path names a property of `entity` (following relationships),
    /// as Apple's fetch does ("keypath x not found in entity"), throwing
    /// ``OpenCoreDataError/Code/unknownKey`` with the entity and the unknown key.
    package func _ocdValidate(for entity: NSEntityDescription) throws {
        guard let key else { return }
        try PredicateValidator(entity: entity).destination(of: key, from: entity)
    }
}

extension NSEntityDescription {
    /// Checks that `keyPath` names a property of this entity (following relationships), throwing
    /// ``OpenCoreDataError/Code/unknownKey`` with the entity and the unknown key.
    package func _ocdValidateKeyPath(_ keyPath: String) throws {
        try PredicateValidator(entity: self).destination(of: keyPath, from: self)
    }
}

/// Walks a predicate and checks its key paths against an entity.
private struct PredicateValidator {
    let entity: NSEntityDescription

    /// `scope` maps SUBQUERY iteration variables to the entity their elements belong to.
    func check(_ predicate: NSPredicate, scope: [String: NSEntityDescription]) throws {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            try check(comparison.leftExpression, scope: scope)
            try check(comparison.rightExpression, scope: scope)
        case let compound as NSCompoundPredicate:
            for sub in compound._subpredicates { try check(sub, scope: scope) }
        default:
            break
        }
    }

    func check(_ expression: NSExpression, scope: [String: NSEntityDescription]) throws {
        switch expression._node {
        case .keyPath(nil, let path):
            _ = try destination(of: path, from: entity)
        case .keyPath(let operand?, let path):
            if case .variable(let name) = operand._node, let bound = scope[name] {
                _ = try destination(of: path, from: bound)
            } else {
                try check(operand, scope: scope)
            }
        case .function(_, let operand, let arguments):
            if let operand { try check(operand, scope: scope) }
            for argument in arguments { try check(argument, scope: scope) }
        case .aggregate(let items):
            for item in items { try check(item, scope: scope) }
        case .setOperation(_, let left, let right):
            try check(left, scope: scope)
            try check(right, scope: scope)
        case .subquery(let collection, let variable, let predicate):
            try check(collection, scope: scope)
            var inner = scope
            if case .keyPath(nil, let path) = collection._node, let target = try destination(of: path, from: entity) {
                inner[variable] = target
            }
            try check(predicate, scope: inner)
        case .conditional(let predicate, let yes, let no):
            try check(predicate, scope: scope)
            try check(yes, scope: scope)
            try check(no, scope: scope)
        default:
            break
        }
    }

    /// The entity a key path ends on when its last step is a relationship; nil when it ends on an
    /// attribute or an operator. Throws for a step that is not a property.
    @discardableResult
    func destination(of path: String, from start: NSEntityDescription) throws -> NSEntityDescription? {
        var current: NSEntityDescription? = start
        let components = PredicateKeyPath.components(path)
        for (index, component) in components.enumerated() {
            guard let entity = current else { return nil }  // past an attribute: not checked
            if component.hasPrefix("@") { return nil }
            if component == "self" || component == "SELF" || component == "objectID" { continue }
            guard let property = entity.layout.propertiesByName[component] else {
                throw OpenCoreDataError(
                    .unknownKey, "keypath \(path) not found in entity \(entity.name ?? "?"): no property \(component)",
                    entityName: entity.name, key: component)
            }
            if let composite = property as? NSCompositeAttributeDescription, index + 1 < components.count {
                try composite._checkElementPath(components[(index + 1)...], keyPath: path, entity: entity)
                return nil
            }
            current = (property as? NSRelationshipDescription)?.destinationEntity
        }
        return current
    }
}
