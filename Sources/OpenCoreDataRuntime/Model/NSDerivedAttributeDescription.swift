import Foundation

/// An attribute whose value the store computes from other values of the object (a key path such as
/// `photos.@count`, or a function such as `canonical:(name)`). Derived attributes are read-only.
///
/// ```swift
/// let photoCount = NSDerivedAttributeDescription()
/// photoCount.name = "photoCount"
/// photoCount.attributeType = .integer64AttributeType
/// photoCount.derivationExpression = NSExpression(forKeyPath: "photos.@count")
/// ```
///
/// The context computes the value when it saves (for inserted and updated objects, and for objects
/// whose related objects changed so that the value is stale) and stores it as an ordinary column, so
/// predicates and sort descriptors use it like any attribute. A refresh reads the saved value.
/// Supported expressions: to-one key paths (`category.name`), `@count`/`@sum`/`@avg`/`@min`/`@max`
/// over one to-many relationship (`articles.@count`, `articles.views.@sum`), `now()`, and
/// `canonical:`/`lowercase:`/`uppercase:` of a string key path. Adding a store fails with
/// `persistentStoreIncompatibleSchema` for any other expression, naming the entity and attribute.
///
/// - Note: Linux: Apple's SQLite store computes derived values in SQL triggers when it writes; here the
///   context computes them before the write, for both stores, and the in-memory object shows the new
///   value right after `save()`. Values are computed after `willSave()` runs, so they include what a
///   `willSave()` override changes. Setting a derived attribute through
///   `setValue(_:forKey:)` or an accessor is ignored and logged; `setCheckedValue(_:forKey:)` throws.
///   A stale value is found through inverse relationships: a path through a relationship without an
///   inverse is recomputed only when the object itself changes.
///
/// Related Core Data documentation: [NSDerivedAttributeDescription](https://developer.apple.com/documentation/coredata/nsderivedattributedescription)
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The expression the store evaluates to produce the value.
    ///
    /// Related Core Data documentation: [derivationExpression](https://developer.apple.com/documentation/coredata/nsderivedattributedescription/derivationexpression)
    open var derivationExpression: NSExpression? {
        didSet {
            if let derivationExpression {
                _derivationExpressionFormat = derivationExpression.expressionType == .keyPath
                    ? derivationExpression.keyPath : derivationExpression.description
            }
        }
    }

    /// The checked form of ``derivationExpression`` and the expression it was made from.
    package let _derivationCache = Locked<(expression: NSExpression?, derivation: DerivationExpression)?>(nil)

    /// The expression's format string (`predicateFormat`), as written in a model file.
    package var _derivationExpressionFormat: String?

    package override var _isReadOnly: Bool { true }

    public override init() { super.init() }

    /// Decodes a derived attribute (see ``NSPropertyDescription/init(coder:)``).
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let format = ModelArchive.string(coder, "NSDerivationExpression") { _setDerivationExpression(format: format) }
    }

    /// Encodes the attribute with the keys of Apple's compiled models (see ``NSPropertyDescription/encode(with:)``).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        ModelArchive.encode(_derivationExpressionFormat, forKey: "NSDerivationExpression", with: coder)
    }

    /// Sets the expression from its format as a model file writes it: a plain key path
    /// (`photos.@count`), or a function (`canonical:(name)`, `now()`). A function that does not parse
    /// leaves the expression nil, which fails the store's load with the attribute named (see
    /// `DerivationExpression`); the format is kept for the version hash either way.
    package func _setDerivationExpression(format: String) {
        derivationExpression = XcodeModelBuilder.isPlainKeyPath(format)
            ? NSExpression(forKeyPath: format) : try? NSExpression(validatingFormat: format, argumentArray: [])
        _derivationExpressionFormat = format
    }
}
