import Foundation

/// `AND`, `OR` or `NOT` of other predicates.
///
/// ```swift
/// let p = NSCompoundPredicate(andPredicateWithSubpredicates: [
///     NSPredicate(format: "age >= 18"), NSPredicate(format: "name != nil"),
/// ])
/// p.predicateFormat // age >= 18 AND name != nil
/// ```
///
/// An `AND` of no subpredicates is true, an `OR` of none is false, as on Apple platforms.
///
/// Related Core Data documentation: [NSCompoundPredicate](https://developer.apple.com/documentation/foundation/nscompoundpredicate)
open class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    // @unchecked Sendable: immutable after init (see NSPredicate).

    /// The logical operators, with Apple's raw values.
    ///
    /// Related Core Data documentation: [NSCompoundPredicate.LogicalType](https://developer.apple.com/documentation/foundation/nscompoundpredicate/logicaltype)
    public enum LogicalType: UInt, Sendable { case not = 0, and, or }

    /// `.and`, `.or` or `.not`.
    public let compoundPredicateType: LogicalType
    /// The subpredicates (`NSPredicate`s; `[Any]` as in Apple's API).
    public let subpredicates: [Any]

    package var _subpredicates: [NSPredicate] { subpredicates.compactMap { $0 as? NSPredicate } }

    /// A compound predicate. A `.not` predicate uses the first subpredicate.
    ///
    /// Related Core Data documentation: [init(type:subpredicates:)](https://developer.apple.com/documentation/foundation/nscompoundpredicate/init(type:subpredicates:))
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        compoundPredicateType = type
        self.subpredicates = subpredicates
        super.init(_storage: .subclass)
    }

    /// `p1 AND p2 AND ...`.
    ///
    /// Related Core Data documentation: [init(andPredicateWithSubpredicates:)](https://developer.apple.com/documentation/foundation/nscompoundpredicate/init(andpredicatewithsubpredicates:))
    public convenience init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// `p1 OR p2 OR ...`.
    ///
    /// Related Core Data documentation: [init(orPredicateWithSubpredicates:)](https://developer.apple.com/documentation/foundation/nscompoundpredicate/init(orpredicatewithsubpredicates:))
    public convenience init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// `NOT p`.
    ///
    /// Related Core Data documentation: [init(notPredicateWithSubpredicate:)](https://developer.apple.com/documentation/foundation/nscompoundpredicate/init(notpredicatewithsubpredicate:))
    public convenience init(notPredicateWithSubpredicate predicate: NSPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }

    package override func _evaluate(_ object: Any?, scope: EvaluationScope) -> Bool {
        let subs = _subpredicates
        switch compoundPredicateType {
        case .and: return subs.allSatisfy { $0._evaluateNested(object, scope: scope) }
        case .or: return subs.contains { $0._evaluateNested(object, scope: scope) }
        case .not: return !(subs.first?._evaluateNested(object, scope: scope) ?? true)  // prints as NOT TRUEPREDICATE
        }
    }

    package override func _substituting(_ variables: SubstitutionVariables) -> NSPredicate {
        NSCompoundPredicate(type: compoundPredicateType, subpredicates: _subpredicates.map { $0._substituting(variables) })
    }

    package override func _ocdCheckValid() throws {
        for sub in _subpredicates { try sub._ocdCheckValid() }
    }
}
