import Foundation
import Synchronization

/// A comparison between two expressions: `left op[options] right`, optionally `ANY`/`ALL`.
///
/// ```swift
/// let p = NSComparisonPredicate(
///     leftExpression: NSExpression(forKeyPath: "name"),
///     rightExpression: NSExpression(forConstantValue: "ann"),
///     modifier: .direct, type: .beginsWith, options: [.caseInsensitive])
/// p.predicateFormat // name BEGINSWITH[c] "ann"
/// ```
///
/// Related Core Data documentation: [NSComparisonPredicate](https://developer.apple.com/documentation/foundation/nscomparisonpredicate)
///
/// - Note: Linux: string equality without options uses Swift's canonical equivalence (a
///   precomposed `é` equals `e` + combining accent); Apple's `NSString` compares UTF-16 code units,
///   so it only treats them as equal with `[n]`-normalized input or `[d]`.
/// - Note: Linux: custom-selector comparisons (`init(leftExpression:rightExpression:customSelector:)`)
///   are not available: there is no Objective-C runtime.
open class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    // @unchecked Sendable: immutable after init (see NSPredicate).

    /// The comparison operators, with Apple's raw values.
    ///
    /// Related Core Data documentation: [NSComparisonPredicate.Operator](https://developer.apple.com/documentation/foundation/nscomparisonpredicate/operator)
    public enum Operator: UInt, Sendable {
        case lessThan = 0, lessThanOrEqualTo, greaterThan, greaterThanOrEqualTo, equalTo, notEqualTo, matches, like, beginsWith, endsWith, `in`
        case customSelector, contains = 99, between
    }

    /// How the left expression's collection is tested: as a whole, `ALL` elements, or `ANY` element.
    /// (`NONE` parses as `NOT ANY`, as on Apple platforms.)
    ///
    /// Related Core Data documentation: [NSComparisonPredicate.Modifier](https://developer.apple.com/documentation/foundation/nscomparisonpredicate/modifier)
    public enum Modifier: UInt, Sendable { case direct = 0, all, any }

    /// String comparison options: `[c]`, `[d]`, `[n]`.
    ///
    /// Related Core Data documentation: [NSComparisonPredicate.Options](https://developer.apple.com/documentation/foundation/nscomparisonpredicate/options-swift.struct)
    public struct Options: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive (Unicode case folding).
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: diacritic-insensitive (`é` matches `e`).
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized; overrides `[c]` and `[d]`.
        public static let normalized = Options(rawValue: 4)
    }

    /// The left side of the comparison.
    public let leftExpression: NSExpression
    /// The right side of the comparison.
    public let rightExpression: NSExpression
    /// `.direct`, `.any` or `.all`.
    public let comparisonPredicateModifier: Modifier
    /// The operator.
    public let predicateOperatorType: Operator
    /// The string options.
    public let options: Options
    /// `key op constant`, evaluated on managed objects without the general walk; worked out at the
    /// first evaluation, not in `init`: most predicates are made for fetches that run in SQL and
    /// are never evaluated in memory (working it out cost about 300 instructions a predicate,
    /// callgrind case 4).
    var _direct: DirectComparison? {
        if let made = _directForm.load() { return made.direct }
        let made = DirectComparison.Form(
            DirectComparison(
                left: leftExpression, right: rightExpression, modifier: comparisonPredicateModifier,
                type: predicateOperatorType, options: options))
        return _directForm.storeIfNil(made).direct
    }
    private let _directForm = AtomicLazyReference<DirectComparison.Form>()
    /// The slot `_direct`'s key had in the entity layout it last read (see ``DirectComparison``).
    let _slotHint = Atomic<UInt64>(DirectComparison.noHint)

    /// A comparison of two expressions.
    ///
    /// Related Core Data documentation: [init(leftExpression:rightExpression:modifier:type:options:)](https://developer.apple.com/documentation/foundation/nscomparisonpredicate/init(leftexpression:rightexpression:modifier:type:options:))
    public init(leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier, type: Operator, options: Options = []) {
        leftExpression = lhs
        rightExpression = rhs
        comparisonPredicateModifier = modifier
        predicateOperatorType = type
        self.options = options
        super.init(_storage: .subclass)
    }

    package override func _evaluate(_ object: Any?, scope: EvaluationScope) -> Bool {
        PredicateEvaluator.evaluate(self, object: object, scope: scope)
    }

    package override func _substituting(_ variables: SubstitutionVariables) -> NSPredicate {
        NSComparisonPredicate(
            leftExpression: PredicateSubstitution.substitute(leftExpression, variables),
            rightExpression: PredicateSubstitution.substitute(rightExpression, variables),
            modifier: comparisonPredicateModifier, type: predicateOperatorType, options: options)
    }

    package override func _ocdCheckValid() throws {
        try PredicateSubstitution.checkValid(leftExpression)
        try PredicateSubstitution.checkValid(rightExpression)
    }
}
