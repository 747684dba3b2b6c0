import Foundation

/// A logical condition on objects, used to filter fetch results and collections.
///
/// ```swift
/// let adults = NSPredicate(format: "age >= %d AND name BEGINSWITH[c] %@", 18, "a")
/// adults.evaluate(with: ["age": 30, "name": "Alice"]) // true
/// request.predicate = adults
/// ```
///
/// `NSPredicate(format:)` returns an ``NSComparisonPredicate`` or ``NSCompoundPredicate`` for
/// comparisons and `AND`/`OR`/`NOT`, as on Apple platforms, so stores can inspect the tree.
///
/// Predicates are immutable and `Sendable`, provided constant values captured in them are.
///
/// Related Core Data documentation: [NSPredicate](https://developer.apple.com/documentation/foundation/nspredicate),
/// [Predicate Format String Syntax](https://developer.apple.com/library/archive/documentation/Cocoa/Conceptual/Predicates/Articles/pSyntax.html)
///
/// - Note: Linux: `NSPredicate(format:)` never raises. A malformed format string gives a predicate
///   that evaluates to `false` and makes fetches throw ``OpenCoreDataError/Code/invalidFormat``;
///   ``init(validatingFormat:_:)`` throws that error directly. Evaluation never raises either: where
///   Apple raises (comparing a string with a number, an unknown variable), the comparison is `false`.
open class NSPredicate: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked Sendable: all stored properties are immutable after init. Block predicates hold a
    // closure the caller is responsible for, as with Apple's `NSPredicate(block:)`.

    package enum Storage {
        case constant(Bool)
        case block((Any?, [String: Any]?) -> Bool)
        /// A format string that did not parse: evaluates to false, ``_ocdCheckValid()`` throws.
        case invalid(OpenCoreDataError, format: String)
        /// NSComparisonPredicate / NSCompoundPredicate: the subclass evaluates.
        case subclass
    }

    /// What the predicate is, for `NSPredicate` itself; `.subclass` for the subclasses.
    package var _storage: Storage { _storageBox?.storage ?? .subclass }

    /// The storage of an `NSPredicate` itself, boxed; `nil` for a subclass. The enum, stored inline,
    /// was made and destroyed through switches over its cases with every predicate (about 110
    /// instructions a predicate made and freed, callgrind case 4).
    private let _storageBox: StorageBox?

    private final class StorageBox: @unchecked Sendable {
        // @unchecked Sendable: immutable (see the class's own invariant above).
        let storage: Storage
        init(_ storage: Storage) { self.storage = storage }
    }

    /// For a predicate instantiated from a cached format template (``PredicateTemplates``): the
    /// template and the expressions that filled its slots, so that a store can reuse what it
    /// compiled for an earlier instance of the same template. Set once, before the predicate is
    /// returned to its creator.
    var _templateOrigin: PredicateTemplateOrigin?

    /// A predicate that always evaluates to `value` (`TRUEPREDICATE` / `FALSEPREDICATE`).
    ///
    /// Related Core Data documentation: [init(value:)](https://developer.apple.com/documentation/foundation/nspredicate/init(value:))
    public init(value: Bool) {
        _storageBox = StorageBox(.constant(value))
        super.init()
    }

    /// A predicate evaluated by a closure, which receives the object and the substitution variables.
    ///
    /// Related Core Data documentation: [init(block:)](https://developer.apple.com/documentation/foundation/nspredicate/init(block:))
    ///
    /// - Note: Stores cannot translate block predicates to SQL; use them for in-memory filtering.
    public init(block: @escaping (Any?, [String: Any]?) -> Bool) {
        _storageBox = StorageBox(.block(block))
        super.init()
    }

    package init(_storage storage: Storage) {
        if case .subclass = storage { _storageBox = nil } else { _storageBox = StorageBox(storage) }
        super.init()
    }

    /// The predicate a malformed format string gives: it evaluates to false, and fetches throw `error`.
    package convenience init(_ocdFormatError error: any Error, format: String) {
        let error = error as? OpenCoreDataError ?? OpenCoreDataError(.invalidFormat, "\(error)")
        self.init(_storage: .invalid(error, format: format))
    }

    // MARK: Evaluation

    /// Whether `object` satisfies the predicate.
    ///
    /// `object` may be an `NSManagedObject`, a `[String: Any]` or `NSDictionary`, an array or set
    /// (for `SELF[...]`, `@count`, ...) or any plain value (`SELF == 3`).
    ///
    /// Related Core Data documentation: [evaluate(with:)](https://developer.apple.com/documentation/foundation/nspredicate/evaluate(with:))
    open func evaluate(with object: Any?) -> Bool {
        evaluate(with: object, substitutionVariables: nil)
    }

    /// Whether `object` satisfies the predicate, with `$variables` taken from `bindings`.
    ///
    /// Related Core Data documentation: [evaluate(with:substitutionVariables:)](https://developer.apple.com/documentation/foundation/nspredicate/evaluate(with:substitutionvariables:))
    open func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        _evaluate(object, scope: EvaluationScope(bindings: bindings ?? [:], context: nil))
    }

    /// Evaluation with a scope of variable bindings; subclasses override.
    package func _evaluate(_ object: Any?, scope: EvaluationScope) -> Bool {
        switch _storage {
        case .constant(let value): return value
        case .block(let block): return block(object, scope.bindings)
        case .invalid, .subclass: return false
        }
    }

    /// Evaluation of a nested predicate (inside a compound, SUBQUERY or TERNARY). A user subclass
    /// that overrides ``evaluate(with:substitutionVariables:)`` gets its override called.
    package func _evaluateNested(_ object: Any?, scope: EvaluationScope) -> Bool {
        let type = Swift.type(of: self)
        if type == NSPredicate.self || type == NSComparisonPredicate.self || type == NSCompoundPredicate.self {
            return _evaluate(object, scope: scope)
        }
        return scope.bindings.isEmpty ? evaluate(with: object) : evaluate(with: object, substitutionVariables: scope.bindings)
    }

    /// A copy with every `$variable` that `variables` names replaced by a constant.
    /// Variables missing from the dictionary stay variables.
    ///
    /// Related Core Data documentation: [withSubstitutionVariables(_:)](https://developer.apple.com/documentation/foundation/nspredicate/withsubstitutionvariables(_:))
    ///
    /// - Note: Linux: Apple raises for a variable missing from `variables`; we keep it.
    open func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        _substituting(SubstitutionVariables(named: variables)) as? Self ?? self
    }

    package func _substituting(_ variables: SubstitutionVariables) -> NSPredicate { self }

    /// Kept for source compatibility: evaluation is always allowed here.
    ///
    /// Related Core Data documentation: [allowEvaluation()](https://developer.apple.com/documentation/foundation/nspredicate/allowevaluation())
    open func allowEvaluation() {}

    /// Throws the parse error of a predicate built from a malformed format string (checked by fetches).
    package func _ocdCheckValid() throws {
        if case .invalid(let error, _) = _storage { throw error }
    }

    // MARK: Printing and equality

    /// The predicate in format syntax. It parses back to an equal predicate.
    ///
    /// Related Core Data documentation: [predicateFormat](https://developer.apple.com/documentation/foundation/nspredicate/predicateformat)
    open var predicateFormat: String { PredicateFormatter.format(self) }

    /// Returns `self`: instances are immutable.
    ///
    /// Related Core Data documentation: [NSCopying](https://developer.apple.com/documentation/foundation/nscopying)
    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var description: String { predicateFormat }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        return PredicateEquality.equal(self, other)
    }

    open override var hash: Int {
        var hasher = Hasher()
        PredicateEquality.hash(self, into: &hasher)
        return hasher.finalize()
    }
}

/// Variable bindings during an evaluation.
package struct EvaluationScope {
    package var bindings: [String: Any]
    package var context: NSMutableDictionary?

    package func variable(_ name: String) -> Any? {
        if let value = bindings[name] { return value }
        return context?.object(forKey: name)
    }

    package func binding(_ name: String, to value: Any?) -> EvaluationScope {
        var copy = self
        copy.bindings[name] = value ?? NSNull()
        return copy
    }
}

// MARK: - Format initializers

/// Hosts `NSPredicate`'s format initializers, so that they can return a subclass instance
/// (``NSComparisonPredicate``, ``NSCompoundPredicate``) as Apple's class cluster does.
/// Not meant to be used directly.
public protocol _OCDPredicateFormatInitializable {}

extension NSPredicate: _OCDPredicateFormatInitializable {}

extension _OCDPredicateFormatInitializable where Self == NSPredicate {
    /// Parses a predicate format string, substituting `args` for `%@`, `%K`, `%d`, ... specifiers.
    ///
    /// ```swift
    /// NSPredicate(format: "%K == %@ AND rating > %f", "author", "Ann", 4.5)
    /// ```
    ///
    /// Related Core Data documentation: [init(format:_:)](https://developer.apple.com/documentation/foundation/nspredicate/init(format:_:))
    ///
    /// - Note: Linux: arguments are Swift values (`Any?`), not `CVarArg`s. A malformed string does not
    ///   raise: the predicate evaluates to `false` and fetches using it throw the parse error.
    public init(format predicateFormat: String, _ args: Any?...) {
        do {
            self = try PredicateParser.parsePredicate(predicateFormat, optionalArguments: args)
        } catch {
            self = NSPredicate(_ocdFormatError: error, format: predicateFormat)
        }
    }

    /// Parses a predicate format string with an array of arguments.
    ///
    /// Related Core Data documentation: [init(format:argumentArray:)](https://developer.apple.com/documentation/foundation/nspredicate/init(format:argumentarray:))
    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        do {
            self = try PredicateParser.parsePredicate(predicateFormat, arguments: arguments ?? [])
        } catch {
            self = NSPredicate(_ocdFormatError: error, format: predicateFormat)
        }
    }

    /// Throwing twin of ``init(format:_:)``: throws ``OpenCoreDataError/Code/invalidFormat``, whose
    /// message quotes the format string with a caret under the spot, and says what was expected:
    ///
    /// ```
    /// expected an expression after '=='
    /// name == AND x
    ///         ^
    /// ```
    ///
    /// Too few arguments for the specifiers, or a `%K` argument that is not a string, also throw.
    public init(validatingFormat predicateFormat: String, _ args: Any?...) throws {
        self = try PredicateParser.parsePredicate(predicateFormat, optionalArguments: args)
    }

    /// Throwing twin of ``init(format:argumentArray:)``.
    public init(validatingFormat predicateFormat: String, argumentArray arguments: [Any]?) throws {
        self = try PredicateParser.parsePredicate(predicateFormat, arguments: arguments ?? [])
    }
}
