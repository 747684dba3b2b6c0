import Foundation

/// A computed column of a dictionary fetch: a name, an expression and the type of its value.
///
/// ```swift
/// let total = NSExpressionDescription()
/// total.name = "total"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "amount")])
/// total.expressionResultType = .doubleAttributeType
/// request.resultType = .dictionaryResultType
/// request.propertiesToFetch = ["category", total]
/// request.propertiesToGroupBy = ["category"]
/// ```
///
/// Related Core Data documentation: [NSExpressionDescription](https://developer.apple.com/documentation/coredata/nsexpressiondescription)
///
/// `@unchecked Sendable` invariant: configured before the request runs and not mutated while it does.
open class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    /// The expression whose value fills the column: a key path, or an aggregate function
    /// (`sum:`, `count:`, `min:`, `max:`, `average:`) of a key path.
    ///
    /// Related Core Data documentation: [expression](https://developer.apple.com/documentation/coredata/nsexpressiondescription/expression)
    open var expression: NSExpression?
    /// The type the value is converted to (`.undefinedAttributeType` keeps it as computed).
    ///
    /// Related Core Data documentation: [expressionResultType](https://developer.apple.com/documentation/coredata/nsexpressiondescription/expressionresulttype)
    open var expressionResultType: NSAttributeType = .undefinedAttributeType
    /// The newer Swift spelling of ``expressionResultType``.
    ///
    /// Related Core Data documentation: [resultType](https://developer.apple.com/documentation/coredata/nsexpressiondescription/resulttype)
    open var resultType: NSAttributeDescription.AttributeType {
        get { NSAttributeDescription.AttributeType(expressionResultType) }
        set { expressionResultType = newValue.rawValue }
    }

    public override init() { super.init() }

    /// Decodes an expression description: the expression from its format (`NSExpression`), and its
    /// result type (`NSExpressionResultType`; see ``NSPropertyDescription/init(coder:)``).
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let format = ModelArchive.string(coder, "NSExpression") {
            expression = try? NSExpression(validatingFormat: format, argumentArray: [])
            if expression == nil { _noteArchiveProblem("expression description \(name): the expression does not parse: \(format)") }
        }
        expressionResultType = NSAttributeType(rawValue: UInt(clamping: max(coder.decodeInteger(forKey: "NSExpressionResultType"), 0)))
            ?? .undefinedAttributeType
    }

    /// Encodes the expression as its format string and the result type (see ``NSPropertyDescription/encode(with:)``).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        ModelArchive.encode(expression?.description, forKey: "NSExpression", with: coder)
        coder.encode(Int(expressionResultType.rawValue), forKey: "NSExpressionResultType")
    }
}
