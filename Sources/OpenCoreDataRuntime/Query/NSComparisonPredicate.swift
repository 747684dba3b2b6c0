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
    public var leftExpression: NSExpression { _left ?? _pendingExpression() }
    /// The right side of the comparison.
    public var rightExpression: NSExpression { _right ?? _pendingExpression() }

    /// The sides as made. One is `nil` in an instance of a format template whose integer slot
    /// (`%d`, `%lld`) got an `Int` or `Int64` (``init(_templateLeft:right:pendingInteger:modifier:type:options:)``):
    /// that side is the constant ``_pendingInteger``, made into its expression when first read. A
    /// lookup in a loop sends its value to SQL and never reads the expression, which was made and
    /// freed with every instance (about 400 instructions a lookup, callgrind case 4).
    package let _left: NSExpression?
    package let _right: NSExpression?
    /// The value of the side that is `nil`; 0 when neither is.
    package let _pendingInteger: Int64
    /// The expression of the pending side, once read: set once, so that every reader gets the same.
    private let _madePending = SetOnceReference<NSExpression>()

    /// Whether the pending side's expression has been made (for tests).
    package final var _hasMadePendingExpression: Bool { _madePending.withObject { _ in true } ?? false }

    /// The pending side's expression, made on first use: what the template's direct parse makes
    /// for the integer (``NSExpression/init(_integerConstant:)``).
    @inline(never)
    package final func _pendingExpression() -> NSExpression {
        if let made = _madePending.withObject({ $0 }) { return made }
        _madePending.setIfUnset(NSExpression(_integerConstant: Int(_pendingInteger)))
        return _madePending.withObject { $0 }.unsafelyUnwrapped
    }
    /// `.direct`, `.any` or `.all`.
    public let comparisonPredicateModifier: Modifier
    /// The operator.
    public let predicateOperatorType: Operator
    /// The string options.
    public let options: Options
    /// `key op constant`, evaluated on managed objects without the general walk; worked out at the
    /// first evaluation, not in `init`: most predicates are made for fetches that run in SQL and
    /// are never evaluated in memory (working it out cost about 300 instructions a predicate,
    /// callgrind case 4). `nil` when the comparison has no direct form, or leaves this object to
    /// the general evaluation.
    ///
    /// The form is published as a retained pointer in an atomic word (released in `deinit`) and
    /// used in place, without a retain: the standard library's `AtomicLazyReference` is not
    /// specialized across the module boundary (its generic `load()` made every evaluation several
    /// times dearer), and copying the comparison out, or retaining its form, per evaluation cost
    /// as much as the evaluation (callgrind case 7).
    @inline(__always)
    func _evaluateDirect(_ object: Any?) -> Bool? {
        var bits = _directForm.load(ordering: .acquiring)
        if bits == 0 { bits = _makeDirect() }
        return Unmanaged<DirectComparison.Form>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)._withUnsafeGuaranteedRef {
            $0.evaluate(object, hint: _slotHint)
        }
    }

    /// Makes and publishes the direct form; its bits (another thread's, if it published first).
    @inline(never)
    private func _makeDirect() -> UInt {
        let made = DirectComparison.Form(
            DirectComparison(
                left: leftExpression, right: rightExpression, modifier: comparisonPredicateModifier,
                type: predicateOperatorType, options: options))
        let madeBits = UInt(bitPattern: Unmanaged.passRetained(made).toOpaque())
        let (stored, current) = _directForm.compareExchange(
            expected: 0, desired: madeBits, ordering: .acquiringAndReleasing)
        if stored { return madeBits }
        Unmanaged<DirectComparison.Form>.fromOpaque(UnsafeRawPointer(bitPattern: madeBits)!).release()
        return current
    }
    private let _directForm = Atomic<UInt>(0)

    deinit {
        let bits = _directForm.load(ordering: .acquiring)
        if bits != 0 { Unmanaged<DirectComparison.Form>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    /// The slot the direct form's key had in the entity layout it last read (see ``DirectComparison``).
    let _slotHint = Atomic<UInt64>(DirectComparison.noHint)

    /// A comparison of two expressions.
    ///
    /// Related Core Data documentation: [init(leftExpression:rightExpression:modifier:type:options:)](https://developer.apple.com/documentation/foundation/nscomparisonpredicate/init(leftexpression:rightexpression:modifier:type:options:))
    public init(leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier, type: Operator, options: Options = []) {
        _left = lhs
        _right = rhs
        _pendingInteger = 0
        comparisonPredicateModifier = modifier
        predicateOperatorType = type
        self.options = options
        super.init(_storage: .subclass)
    }

    /// A format template's instance whose side that is `nil` is the integer constant `pendingInteger`
    /// (see ``_left``); exactly one of `left` and `right` is `nil`.
    package init(
        _templateLeft left: NSExpression?, right: NSExpression?, pendingInteger: Int64, modifier: Modifier,
        type: Operator, options: Options
    ) {
        precondition((left == nil) != (right == nil), "one side of a template instance is pending")
        _left = left
        _right = right
        _pendingInteger = pendingInteger
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
