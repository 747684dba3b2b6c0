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
/// - Note: Linux: model files keep the expression's source text (``_derivationExpressionFormat``);
///   ``derivationExpression`` is set only for plain key paths until the expression parser lands.
///   Stores do not yet maintain derived values.
///
/// Related Core Data documentation: [NSDerivedAttributeDescription](https://developer.apple.com/documentation/coredata/nsderivedattributedescription)
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The expression the store evaluates to produce the value.
    ///
    /// Related Core Data documentation: [derivationExpression](https://developer.apple.com/documentation/coredata/nsderivedattributedescription/derivationexpression)
    open var derivationExpression: NSExpression? {
        didSet {
            if let derivationExpression, derivationExpression.expressionType == .keyPath {
                _derivationExpressionFormat = derivationExpression.keyPath
            }
        }
    }

    /// The expression's format string (`predicateFormat`), as written in a model file.
    package var _derivationExpressionFormat: String?

    package override var _isReadOnly: Bool { true }

    public override init() { super.init() }
}
