import Foundation

/// Structural equality and hashing of predicates and expressions (`isEqual`/`hash`).
///
/// Constants compare as predicate values do (`1 == 1.0 == true`, strings exactly); an aggregate of
/// constants equals a constant collection of the same values, so a printed constant array
/// (`{1, 2}`) parses back to an equal predicate.
package enum PredicateEquality {
    package static func equal(_ a: NSPredicate, _ b: NSPredicate) -> Bool {
        if a === b { return true }
        switch (a, b) {
        case (let x as NSComparisonPredicate, let y as NSComparisonPredicate):
            return x.predicateOperatorType == y.predicateOperatorType
                && x.comparisonPredicateModifier == y.comparisonPredicateModifier
                && x.options == y.options
                && equal(x.leftExpression, y.leftExpression)
                && equal(x.rightExpression, y.rightExpression)
        case (let x as NSCompoundPredicate, let y as NSCompoundPredicate):
            let xs = x._subpredicates, ys = y._subpredicates
            return x.compoundPredicateType == y.compoundPredicateType && xs.count == ys.count
                && zip(xs, ys).allSatisfy { equal($0, $1) }
        case (is NSComparisonPredicate, _), (is NSCompoundPredicate, _), (_, is NSComparisonPredicate), (_, is NSCompoundPredicate):
            return false
        default:
            switch (a._storage, b._storage) {
            case (.constant(let x), .constant(let y)): return x == y
            case (.invalid(_, let x), .invalid(_, let y)): return x == y
            default: return false
            }
        }
    }

    package static func hash(_ predicate: NSPredicate, into hasher: inout Hasher) {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            hasher.combine(1)
            hasher.combine(comparison.predicateOperatorType)
            hasher.combine(comparison.comparisonPredicateModifier)
            hasher.combine(comparison.options.rawValue)
            hash(comparison.leftExpression, into: &hasher)
            hash(comparison.rightExpression, into: &hasher)
        case let compound as NSCompoundPredicate:
            hasher.combine(2)
            hasher.combine(compound.compoundPredicateType)
            for sub in compound._subpredicates { hash(sub, into: &hasher) }
        default:
            switch predicate._storage {
            case .constant(let value): hasher.combine(3); hasher.combine(value)
            case .invalid(_, let format): hasher.combine(4); hasher.combine(format)
            case .block, .subclass: hasher.combine(ObjectIdentifier(predicate))
            }
        }
    }

    /// The constant values of an aggregate made only of constants.
    private static func constantItems(_ expression: NSExpression) -> [Any?]? {
        switch expression._node {
        case .aggregate(let items):
            var values: [Any?] = []
            for item in items {
                guard case .constant(let value) = item._node else { return nil }
                values.append(value)
            }
            return values
        case .constant(let value):
            guard let value, !(value is [String: Any]), !(value is NSDictionary) else { return nil }
            return PredicateValues.elements(value)
        default:
            return nil
        }
    }

    package static func equal(_ a: NSExpression, _ b: NSExpression) -> Bool {
        if a === b { return true }
        if let x = constantItems(a), let y = constantItems(b) {
            return x.count == y.count && zip(x, y).allSatisfy { PredicateValues.equal($0, $1) }
        }
        switch (a._node, b._node) {
        case (.constant(let x), .constant(let y)):
            let nx = PredicateValues.normalize(x), ny = PredicateValues.normalize(y)
            // Strings and numbers never equal each other; otherwise predicate equality.
            if let nx, let ny, (PredicateValues.string(nx) == nil) != (PredicateValues.string(ny) == nil) { return false }
            return PredicateValues.equal(nx, ny)
        case (.symbolic(let x), .symbolic(let y)): return x == y
        case (.evaluatedObject, .evaluatedObject), (.anyKey, .anyKey): return true
        case (.variable(let x), .variable(let y)): return x == y
        case (.keyPath(let xo, let xp), .keyPath(let yo, let yp)):
            return xp == yp && optionalEqual(xo, yo)
        case (.function(let xn, let xo, let xa), .function(let yn, let yo, let ya)):
            return xn == yn && optionalEqual(xo, yo) && xa.count == ya.count && zip(xa, ya).allSatisfy { equal($0, $1) }
        case (.aggregate(let x), .aggregate(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.setOperation(let xt, let xl, let xr), .setOperation(let yt, let yl, let yr)):
            return xt == yt && equal(xl, yl) && equal(xr, yr)
        case (.subquery(let xc, let xv, let xp), .subquery(let yc, let yv, let yp)):
            return xv == yv && equal(xc, yc) && equal(xp, yp)
        case (.conditional(let xp, let xt, let xf), .conditional(let yp, let yt, let yf)):
            return equal(xp, yp) && equal(xt, yt) && equal(xf, yf)
        default:
            return false
        }
    }

    private static func optionalEqual(_ a: NSExpression?, _ b: NSExpression?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let x?, let y?): equal(x, y)
        default: false
        }
    }

    package static func hash(_ expression: NSExpression, into hasher: inout Hasher) {
        if let items = constantItems(expression) {
            hasher.combine(100)
            hasher.combine(items.count)
            for item in items { PredicateValues.hash(item, into: &hasher) }
            return
        }
        hasher.combine(expression.expressionType)
        switch expression._node {
        case .constant(let value): PredicateValues.hash(value, into: &hasher)
        case .symbolic(let name), .variable(let name): hasher.combine(name)
        case .evaluatedObject, .anyKey: break
        case .keyPath(let operand, let path):
            hasher.combine(path)
            if let operand { hash(operand, into: &hasher) }
        case .function(let name, let operand, let arguments):
            hasher.combine(name)
            if let operand { hash(operand, into: &hasher) }
            for argument in arguments { hash(argument, into: &hasher) }
        case .aggregate(let items):
            for item in items { hash(item, into: &hasher) }
        case .setOperation(_, let left, let right):
            hash(left, into: &hasher)
            hash(right, into: &hasher)
        case .subquery(let collection, let variable, let predicate):
            hash(collection, into: &hasher)
            hasher.combine(variable)
            hash(predicate, into: &hasher)
        case .block:
            hasher.combine(ObjectIdentifier(expression))
        case .conditional(let predicate, let yes, let no):
            hash(predicate, into: &hasher)
            hash(yes, into: &hasher)
            hash(no, into: &hasher)
        }
    }
}

/// The values `withSubstitutionVariables(_:)` puts in place of variables: named ones, and the
/// slots of a format template (``PredicateTemplates``), whose variable `%i` is `slots[i]`.
package struct SubstitutionVariables {
    package var named: [String: Any]
    package var slots: [NSExpression] = []

    package init(named: [String: Any], slots: [NSExpression] = []) {
        self.named = named
        self.slots = slots
    }

    /// The template slot `name` stands for (`%` and decimal digits), if any.
    func slot(_ name: String) -> NSExpression? {
        guard !slots.isEmpty, let index = PredicateTemplates.slotIndex(name), index < slots.count else { return nil }
        return slots[index]
    }
}

/// `withSubstitutionVariables(_:)` on expressions, and validity checks of nested predicates.
package enum PredicateSubstitution {
    package static func substitute(_ expression: NSExpression, _ variables: SubstitutionVariables) -> NSExpression {
        func sub(_ e: NSExpression) -> NSExpression { substitute(e, variables) }
        switch expression._node {
        case .variable(let name):
            if let slot = variables.slot(name) { return slot }
            guard !variables.named.isEmpty, let value = variables.named[name] else { return expression }
            if let replacement = value as? NSExpression { return replacement }
            return NSExpression(_node: .constant(PredicateValues.normalize(value)))
        case .constant, .symbolic, .evaluatedObject, .anyKey:
            return expression
        case .keyPath(let operand, let path):
            return NSExpression(_node: .keyPath(operand: operand.map(sub), path: path))
        case .function(let name, let operand, let arguments):
            return NSExpression(_node: .function(name: name, operand: operand.map(sub), arguments: arguments.map(sub)))
        case .aggregate(let items):
            return NSExpression(_node: .aggregate(items.map(sub)))
        case .setOperation(let type, let left, let right):
            return NSExpression(_node: .setOperation(type, sub(left), sub(right)))
        case .subquery(let collection, let variable, let predicate):
            var inner = variables
            inner.named[variable] = nil  // the iteration variable is bound by the subquery, not substituted
            return NSExpression(_node: .subquery(collection: sub(collection), variable: variable, predicate: predicate._substituting(inner)))
        case .block(let block, let arguments):
            return NSExpression(_node: .block(block, arguments?.map(sub)))
        case .conditional(let predicate, let yes, let no):
            return NSExpression(_node: .conditional(predicate._substituting(variables), sub(yes), sub(no)))
        }
    }

    package static func checkValid(_ expression: NSExpression) throws {
        switch expression._node {
        case .subquery(let collection, _, let predicate):
            try checkValid(collection)
            try predicate._ocdCheckValid()
        case .conditional(let predicate, let yes, let no):
            try predicate._ocdCheckValid()
            try checkValid(yes)
            try checkValid(no)
        case .keyPath(let operand?, _):
            try checkValid(operand)
        case .function(_, let operand, let arguments):
            if let operand { try checkValid(operand) }
            for argument in arguments { try checkValid(argument) }
        case .aggregate(let items):
            for item in items { try checkValid(item) }
        case .setOperation(_, let left, let right):
            try checkValid(left)
            try checkValid(right)
        default:
            break
        }
    }
}
