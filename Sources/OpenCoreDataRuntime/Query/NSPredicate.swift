import Foundation

// PLACEHOLDER SHELL: the predicate subsystem (parser, evaluation, format printing) replaces this
// file. It fixes the public shape other subsystems rely on.

/// A logical condition on objects.
///
/// Related Core Data documentation: [NSPredicate](https://developer.apple.com/documentation/foundation/nspredicate)
open class NSPredicate: NSObject, @unchecked Sendable {
    private let constant: Bool?

    public init(value: Bool) { constant = value; super.init() }
    package init(_shellConstant value: Bool?) { constant = value; super.init() }

    /// Parses a format string. Placeholder: always true.
    public convenience init(format predicateFormat: String, _ args: Any?...) { self.init(_shellConstant: nil) }
    public convenience init(format predicateFormat: String, argumentArray arguments: [Any]?) { self.init(_shellConstant: nil) }

    open func evaluate(with object: Any?) -> Bool { constant ?? true }
    open func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool { evaluate(with: object) }
    open var predicateFormat: String { constant == false ? "FALSEPREDICATE" : "TRUEPREDICATE" }

    /// Throws the parse error of a predicate built from a malformed format string.
    package func _ocdCheckValid() throws {}
}

/// Related Core Data documentation: [NSComparisonPredicate](https://developer.apple.com/documentation/foundation/nscomparisonpredicate)
open class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    public enum Operator: UInt, Sendable {
        case lessThan = 0, lessThanOrEqualTo, greaterThan, greaterThanOrEqualTo, equalTo, notEqualTo, matches, like, beginsWith, endsWith, `in`
        case customSelector, contains = 99, between
    }
    public enum Modifier: UInt, Sendable { case direct = 0, all, any }
    public struct Options: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let caseInsensitive = Options(rawValue: 1)
        public static let diacriticInsensitive = Options(rawValue: 2)
        public static let normalized = Options(rawValue: 4)
    }
    public let leftExpression: NSExpression
    public let rightExpression: NSExpression
    public let comparisonPredicateModifier: Modifier
    public let predicateOperatorType: Operator
    public let options: Options
    public init(leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier, type: Operator, options: Options = []) {
        leftExpression = lhs; rightExpression = rhs; comparisonPredicateModifier = modifier; predicateOperatorType = type; self.options = options
        super.init(_shellConstant: nil)
    }
}

/// Related Core Data documentation: [NSCompoundPredicate](https://developer.apple.com/documentation/foundation/nscompoundpredicate)
open class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    public enum LogicalType: UInt, Sendable { case not = 0, and, or }
    public let compoundPredicateType: LogicalType
    public let subpredicates: [Any]
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        compoundPredicateType = type; self.subpredicates = subpredicates
        super.init(_shellConstant: nil)
    }
}

/// Related Core Data documentation: [NSExpression](https://developer.apple.com/documentation/foundation/nsexpression)
open class NSExpression: NSObject, @unchecked Sendable {
    public enum ExpressionType: UInt, Sendable {
        case constantValue = 0, evaluatedObject, variable, keyPath, function, unionSet, intersectSet, minusSet
        case subquery = 13, aggregate, anyKey = 15, block = 19, conditional = 20
    }
    public let expressionType: ExpressionType
    private let _constant: Any?
    private let _keyPath: String?
    public init(expressionType type: ExpressionType) { expressionType = type; _constant = nil; _keyPath = nil; super.init() }
    public init(forConstantValue obj: Any?) { expressionType = .constantValue; _constant = obj; _keyPath = nil; super.init() }
    public init(forKeyPath keyPath: String) { expressionType = .keyPath; _constant = nil; _keyPath = keyPath; super.init() }
    open var constantValue: Any? { _constant }
    open var keyPath: String { _keyPath ?? "" }
}

/// Related Core Data documentation: [NSSortDescriptor](https://developer.apple.com/documentation/foundation/nssortdescriptor)
open class NSSortDescriptor: NSObject, @unchecked Sendable {
    public let key: String?
    public let ascending: Bool
    public init(key: String?, ascending: Bool) { self.key = key; self.ascending = ascending; super.init() }
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult { .orderedSame }
}
