import Foundation

/// An expression used in a predicate: a constant, a key path, a variable, a function, ...
///
/// ```swift
/// let total = NSExpression(format: "price * quantity")
/// total.expressionValue(with: ["price": 2.5, "quantity": 4], context: nil) // 10.0
/// let count = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "items")])
/// ```
///
/// Expressions are immutable; sharing them between threads is safe as long as constant values
/// (and block closures) are.
///
/// Related Core Data documentation: [NSExpression](https://developer.apple.com/documentation/foundation/nsexpression)
///
/// - Note: Linux: Apple raises when a property that does not fit the expression type is read
///   (`keyPath` of a constant expression, ...). We return a neutral value (`""`, `nil`, an empty
///   array, a `nil` constant) instead, so reading never crashes.
open class NSExpression: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable after init; constant values and
    // closures are the caller's to keep thread-safe, as on Apple platforms.

    /// The kinds of expression, with Apple's raw values.
    ///
    /// Related Core Data documentation: [NSExpression.ExpressionType](https://developer.apple.com/documentation/foundation/nsexpression/expressiontype-swift.enum)
    public enum ExpressionType: UInt, Sendable {
        case constantValue = 0, evaluatedObject, variable, keyPath, function, unionSet, intersectSet, minusSet
        case subquery = 13, aggregate, anyKey = 15, block = 19, conditional = 20
    }

    /// The structure of an expression. What the parser builds, for code that reads the tree
    /// (SQL generation):
    /// - `a.b.@count`, `a.@sum.b`: one key-path expression with the whole dotted path.
    /// - `$x.age`, `SUBQUERY(...).@count`: a key path (`age`, `@count`) whose ``operand`` is the
    ///   variable or subquery expression. `SELF.a` is the plain key path `a`.
    /// - `a[2]`, `a['key']`, `a[LAST]`: function `objectFrom:withIndex:` with arguments
    ///   `[a, index]`; `FIRST`/`LAST`/`SIZE` indexes are ``_ocdSymbolicIndex``.
    /// - `a + b` etc.: functions `add:to:`, `from:subtract:`, `multiply:by:`, `divide:by:`,
    ///   `raise:toPower:`, `bitwiseAnd:with:`, `bitwiseOr:with:`, `bitwiseXor:with:`; unary minus of a
    ///   non-constant is `from:subtract:` with a 0 constant first.
    /// - `NONE p` is `NOT (ANY p)`; `CAST(constant, 'NSDate')` is folded into a constant.
    /// - `{1, 2}` stays an aggregate expression; `%@` with an array is a constant array.
    package enum Node {
        case constant(Any?)
        /// `FIRST`, `LAST`, `SIZE` in an index subscript (`array[LAST]`). Typed `constantValue`.
        case symbolic(String)
        case evaluatedObject
        case variable(String)
        /// A key path; `operand` nil means the evaluated object.
        case keyPath(operand: NSExpression?, path: String)
        /// A function; `operand` nil for the predefined functions (Apple's `NSPredicateUtilities`).
        case function(name: String, operand: NSExpression?, arguments: [NSExpression])
        case aggregate([NSExpression])
        case setOperation(ExpressionType, NSExpression, NSExpression)
        case subquery(collection: NSExpression, variable: String, predicate: NSPredicate)
        case anyKey
        case block((Any?, [NSExpression], NSMutableDictionary?) -> Any, [NSExpression]?)
        case conditional(NSPredicate, NSExpression, NSExpression)
    }

    package let _node: Node

    /// The kind of this expression.
    public let expressionType: ExpressionType

    /// The path of a key-path expression without an operand (what `%K` gives), kept apart from the
    /// node: matching `.keyPath(nil, let path)` on `_node` copies the whole node out of the object
    /// (an outlined copy and destroy, about 120 instructions), and fetches of template instances
    /// look at each slot's path twice (callgrind case 4).
    package let _plainKeyPath: String?
    /// The dynamic type of a non-nil constant's value, kept apart from the node for the same reason.
    package let _constantType: ObjectIdentifier?
    /// The value of a constant `Int` made from a format's `%d` or `%lld` argument, kept apart for
    /// the same reason: a planned fetch binds it without boxing it (``SQLiteStore/FetchPlan``).
    /// `nil` for other expressions, and for constants made otherwise (reading the value back out
    /// of the node cost more than the binding saved). Set by ``init(_integerConstant:)``.
    package let _constantInteger: Int64?

    /// The constant `value` made from a format's `%d` or `%lld` argument, with its
    /// ``_constantInteger``: what `init(_node: .constant(value))` makes, set directly (the general
    /// initializer's look at the node and at the value's type were about 150 instructions,
    /// callgrind case 4).
    package init(_integerConstant value: Int) {
        _node = .constant(value)
        expressionType = .constantValue
        _plainKeyPath = nil
        _constantType = ObjectIdentifier(Int.self)
        _constantInteger = Int64(value)
        super.init()
    }

    package init(_node node: Node) {
        // One switch sets all three: a match of `node` for each copied it (about 200 instructions).
        var plainKeyPath: String?
        var constantType: ObjectIdentifier?
        switch node {
        case .constant(let value):
            expressionType = .constantValue
            if let value { constantType = ObjectIdentifier(type(of: value)) }
        case .symbolic: expressionType = .constantValue
        case .evaluatedObject: expressionType = .evaluatedObject
        case .variable: expressionType = .variable
        case .keyPath(let operand, let path):
            expressionType = .keyPath
            if operand == nil { plainKeyPath = path }
        case .function: expressionType = .function
        case .aggregate: expressionType = .aggregate
        case .setOperation(let type, _, _): expressionType = type
        case .subquery: expressionType = .subquery
        case .anyKey: expressionType = .anyKey
        case .block: expressionType = .block
        case .conditional: expressionType = .conditional
        }
        _node = node
        _plainKeyPath = plainKeyPath
        _constantType = constantType
        _constantInteger = nil
        super.init()
    }

    /// An expression of the given type with no further content (a `nil` constant, `SELF`, ...).
    ///
    /// Related Core Data documentation: [init(expressionType:)](https://developer.apple.com/documentation/foundation/nsexpression/init(expressiontype:))
    public convenience init(expressionType type: ExpressionType) {
        switch type {
        case .evaluatedObject: self.init(_node: .evaluatedObject)
        case .anyKey: self.init(_node: .anyKey)
        case .keyPath: self.init(_node: .keyPath(operand: nil, path: ""))
        case .variable: self.init(_node: .variable(""))
        case .aggregate: self.init(_node: .aggregate([]))
        default: self.init(_node: .constant(nil))
        }
    }

    // MARK: Apple's initializers

    /// An expression that always evaluates to `obj`.
    ///
    /// Related Core Data documentation: [init(forConstantValue:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forconstantvalue:))
    public convenience init(forConstantValue obj: Any?) {
        self.init(_node: .constant(PredicateValues.normalize(obj)))
    }

    /// An expression for a dotted key path (`"department.name"`, `"items.@count"`).
    ///
    /// Related Core Data documentation: [init(forKeyPath:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forkeypath:)-5aw2b)
    public convenience init(forKeyPath keyPath: String) {
        self.init(_node: .keyPath(operand: nil, path: keyPath))
    }

    /// An expression for a variable (`$name`), replaced by substitution or read from the context.
    ///
    /// Related Core Data documentation: [init(forVariable:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forvariable:))
    public convenience init(forVariable string: String) {
        self.init(_node: .variable(string))
    }

    /// `SELF`: the object the predicate is evaluated with.
    ///
    /// Related Core Data documentation: [expressionForEvaluatedObject()](https://developer.apple.com/documentation/foundation/nsexpression/expressionforevaluatedobject())
    open class func expressionForEvaluatedObject() -> NSExpression { NSExpression(_node: .evaluatedObject) }

    /// `ANYKEY`: any key of the evaluated object (Spotlight-only on Apple platforms).
    ///
    /// Related Core Data documentation: [expressionForAnyKey()](https://developer.apple.com/documentation/foundation/nsexpression/expressionforanykey())
    open class func expressionForAnyKey() -> NSExpression { NSExpression(_node: .anyKey) }

    /// A predefined function (`"sum:"`, `"add:to:"`, `"uppercase:"`, `"now"`, ...) applied to `parameters`,
    /// which are `NSExpression`s (other values are wrapped as constants).
    ///
    /// Related Core Data documentation: [init(forFunction:arguments:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forfunction:arguments:))
    ///
    /// - Note: Linux: Apple raises for an unknown function name; the expression evaluates to `nil` here.
    public convenience init(forFunction name: String, arguments parameters: [Any]) {
        self.init(_node: .function(name: name, operand: nil, arguments: parameters.map(NSExpression._wrap)))
    }

    /// `FUNCTION(target, 'selector', args...)`: a method called on the target's value.
    ///
    /// Related Core Data documentation: [init(forFunction:selectorName:arguments:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forfunction:selectorname:arguments:))
    ///
    /// - Note: Linux: there is no Objective-C runtime to send the selector to; such expressions
    ///   evaluate to `nil` unless the selector names one of the predefined functions.
    public convenience init(forFunction target: NSExpression, selectorName name: String, arguments parameters: [Any]?) {
        self.init(_node: .function(name: name, operand: target, arguments: (parameters ?? []).map(NSExpression._wrap)))
    }

    /// `{a, b, c}`: a collection of expressions.
    ///
    /// Related Core Data documentation: [init(forAggregate:)](https://developer.apple.com/documentation/foundation/nsexpression/init(foraggregate:))
    public convenience init(forAggregate subexpressions: [Any]) {
        self.init(_node: .aggregate(subexpressions.map(NSExpression._wrap)))
    }

    /// `left UNION right`.
    ///
    /// Related Core Data documentation: [init(forUnionSet:with:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forunionset:with:))
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(_node: .setOperation(.unionSet, left, right))
    }

    /// `left INTERSECT right`.
    ///
    /// Related Core Data documentation: [init(forIntersectSet:with:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forintersectset:with:))
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(_node: .setOperation(.intersectSet, left, right))
    }

    /// `left MINUS right`.
    ///
    /// Related Core Data documentation: [init(forMinusSet:with:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forminusset:with:))
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(_node: .setOperation(.minusSet, left, right))
    }

    /// `SUBQUERY(collection, $variable, predicate)`: the elements of a collection that match.
    ///
    /// Related Core Data documentation: [init(forSubquery:usingIteratorVariable:predicate:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forsubquery:usingiteratorvariable:predicate:))
    public convenience init(forSubquery expression: NSExpression, usingIteratorVariable variable: String, predicate: NSPredicate) {
        self.init(_node: .subquery(collection: expression, variable: variable, predicate: predicate))
    }

    /// An expression computed by a closure.
    ///
    /// Related Core Data documentation: [init(block:arguments:)](https://developer.apple.com/documentation/foundation/nsexpression/init(block:arguments:))
    public convenience init(block: @escaping (Any?, [NSExpression], NSMutableDictionary?) -> Any, arguments: [NSExpression]?) {
        self.init(_node: .block(block, arguments))
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`.
    ///
    /// Related Core Data documentation: [init(forConditional:trueExpression:falseExpression:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forconditional:trueexpression:falseexpression:))
    public convenience init(forConditional predicate: NSPredicate, trueExpression: NSExpression, falseExpression: NSExpression) {
        self.init(_node: .conditional(predicate, trueExpression, falseExpression))
    }

    /// Parses an expression format string (`"price * 2"`, `"sum:(items.price)"`, `"%K"`).
    ///
    /// Related Core Data documentation: [init(format:argumentArray:)](https://developer.apple.com/documentation/foundation/nsexpression/init(format:argumentarray:))
    ///
    /// - Note: Linux: Apple raises for a malformed string; we return a `nil` constant expression.
    ///   Use ``init(validatingFormat:_:)`` to get the error.
    public convenience init(format expressionFormat: String, _ args: Any?...) {
        self.init(format: expressionFormat, argumentArray: PredicateParser.formatArguments(args))
    }

    /// Parses an expression format string with an array of arguments.
    ///
    /// Related Core Data documentation: [init(format:argumentArray:)](https://developer.apple.com/documentation/foundation/nsexpression/init(format:argumentarray:))
    public convenience init(format expressionFormat: String, argumentArray arguments: [Any]) {
        let parsed = try? PredicateParser.parseExpression(expressionFormat, arguments: arguments)
        self.init(_node: parsed?._node ?? .constant(nil))
    }

    /// Throwing twin of ``init(format:_:)``: throws ``OpenCoreDataError/Code/invalidFormat`` with a
    /// caret under the spot where the string stops making sense.
    public convenience init(validatingFormat expressionFormat: String, _ args: Any?...) throws {
        try self.init(validatingFormat: expressionFormat, argumentArray: PredicateParser.formatArguments(args))
    }

    /// Throwing twin of ``init(format:argumentArray:)``.
    public convenience init(validatingFormat expressionFormat: String, argumentArray arguments: [Any]) throws {
        let parsed = try PredicateParser.parseExpression(expressionFormat, arguments: arguments)
        self.init(_node: parsed._node)
    }

    package static func _wrap(_ value: Any) -> NSExpression {
        if let expression = value as? NSExpression { return expression }
        return NSExpression(forConstantValue: value)
    }

    // MARK: Properties

    /// The value of a constant expression.
    open var constantValue: Any? {
        switch _node {
        case .constant(let value): value
        case .symbolic(let name): name
        default: nil
        }
    }

    /// `FIRST`, `LAST` or `SIZE` for the index of a subscript (`items[LAST]` is the function
    /// `objectFrom:withIndex:` applied to `items` and this expression); nil for any other
    /// expression. Lets SQL generators tell `[LAST]` from a dictionary key `['LAST']`.
    package var _ocdSymbolicIndex: String? {
        if case .symbolic(let name) = _node { return name }
        return nil
    }

    /// The key path of a key-path expression.
    open var keyPath: String {
        if case .keyPath(_, let path) = _node { return path }
        return ""
    }

    /// The function name (selector) of a function expression: `"add:to:"`, `"sum:"`, ...
    open var function: String {
        if case .function(let name, _, _) = _node { return name }
        return ""
    }

    /// The arguments of a function or block expression.
    open var arguments: [NSExpression]? {
        switch _node {
        case .function(_, _, let arguments): arguments
        case .block(_, let arguments): arguments
        default: nil
        }
    }

    /// The receiver of a key-path or function expression.
    ///
    /// - Note: Linux: a predefined function's operand is a `nil` constant (Apple's is the
    ///   private `NSPredicateUtilities` class).
    open var operand: NSExpression {
        switch _node {
        case .keyPath(let operand, _): operand ?? .expressionForEvaluatedObject()
        case .function(_, let operand, _): operand ?? NSExpression(_node: .constant(nil))
        default: NSExpression(_node: .constant(nil))
        }
    }

    /// The name of a variable expression (without `$`), or a subquery's iteration variable.
    open var variable: String {
        switch _node {
        case .variable(let name): name
        case .subquery(_, let name, _): name
        default: ""
        }
    }

    /// The sub-expressions of an aggregate expression (`[NSExpression]`), or a subquery's collection expression.
    open var collection: Any {
        switch _node {
        case .aggregate(let items): items
        case .subquery(let collection, _, _): collection
        default: [NSExpression]()
        }
    }

    /// The predicate of a subquery or conditional expression.
    open var predicate: NSPredicate {
        switch _node {
        case .subquery(_, _, let predicate), .conditional(let predicate, _, _): predicate
        default: NSPredicate(value: true)
        }
    }

    /// The left side of a set expression.
    open var left: NSExpression {
        if case .setOperation(_, let left, _) = _node { return left }
        return NSExpression(_node: .constant(nil))
    }

    /// The right side of a set expression.
    open var right: NSExpression {
        if case .setOperation(_, _, let right) = _node { return right }
        return NSExpression(_node: .constant(nil))
    }

    /// The expression a conditional yields when its predicate holds.
    open var trueExpression: NSExpression {
        if case .conditional(_, let yes, _) = _node { return yes }
        return NSExpression(_node: .constant(nil))
    }

    /// The expression a conditional yields when its predicate fails.
    open var falseExpression: NSExpression {
        if case .conditional(_, _, let no) = _node { return no }
        return NSExpression(_node: .constant(nil))
    }

    /// The closure of a block expression.
    open var expressionBlock: (Any?, [NSExpression], NSMutableDictionary?) -> Any {
        if case .block(let block, _) = _node { return block }
        return { _, _, _ in NSNull() }
    }

    // MARK: Evaluation

    /// The value of the expression for `object`. `context` holds variable bindings (and receives
    /// none back). Returns `nil` where Apple would raise (unknown variable, type mismatch).
    ///
    /// Related Core Data documentation: [expressionValue(with:context:)](https://developer.apple.com/documentation/foundation/nsexpression/expressionvalue(with:context:))
    open func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        var bindings: [String: Any] = [:]
        if let context {
            for (key, value) in context { if let key = key as? String { bindings[key] = value } }
        }
        let scope = EvaluationScope(bindings: bindings, context: context)
        return PredicateEvaluator.value(of: self, object: object, scope: scope)
    }

    /// Kept for source compatibility: evaluation is always allowed here.
    ///
    /// Related Core Data documentation: [allowEvaluation()](https://developer.apple.com/documentation/foundation/nsexpression/allowevaluation())
    open func allowEvaluation() {}

    // MARK: Equality and printing

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        return PredicateEquality.equal(self, other)
    }

    open override var hash: Int {
        var hasher = Hasher()
        PredicateEquality.hash(self, into: &hasher)
        return hasher.finalize()
    }

    /// The expression in format syntax; parses back to an equal expression.
    /// Returns `self`: instances are immutable.
    ///
    /// Related Core Data documentation: [NSCopying](https://developer.apple.com/documentation/foundation/nscopying)
    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var description: String { PredicateFormatter.format(self) }
}
