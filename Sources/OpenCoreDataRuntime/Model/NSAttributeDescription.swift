import Foundation

/// An attribute of an entity: a value stored in a column.
///
/// ```swift
/// let updatedAt = NSAttributeDescription()
/// updatedAt.name = "updatedAt"
/// updatedAt.attributeType = .dateAttributeType
/// updatedAt.isOptional = false
/// ```
///
/// Values are held as Swift values of one canonical type per attribute type: `Int16`, `Int32`,
/// `Int64`, `Decimal`, `Double`, `Float`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`; a
/// transformable attribute holds the value as set, and its ``valueTransformerName`` transformer
/// (``NSSecureUnarchiveFromDataTransformer`` when nil) turns it into `Data` for the store.
///
/// - Note: Linux: `attributeValueClassName` names the Swift type (`"Int16"`, `"String"`), not an
///   Objective-C class.
///
/// Related Core Data documentation: [NSAttributeDescription](https://developer.apple.com/documentation/coredata/nsattributedescription)
open class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    /// The attribute's type.
    open var attributeType: NSAttributeType = .undefinedAttributeType
    /// The Swift-style spelling of ``attributeType``.
    open var type: AttributeType {
        get { AttributeType(attributeType) }
        set { attributeType = newValue.rawValue }
    }
    /// The name of the value's type; derived from ``attributeType`` unless set.
    open var attributeValueClassName: String? {
        get { _attributeValueClassName ?? attributeType.canonicalTypeName }
        set { _attributeValueClassName = newValue }
    }
    /// The value class name as set (nil when derived from the type).
    package private(set) var _attributeValueClassName: String?
    /// The value a new object starts with.
    open var defaultValue: Any?
    /// Whether large values may live outside the store file.
    open var allowsExternalBinaryDataStorage: Bool = false
    /// Whether the value is kept in persistent history when the object is deleted.
    open var preservesValueInHistoryOnDeletion: Bool = false
    /// Whether CloudKit encrypts the value (stored, no effect on Linux).
    open var allowsCloudEncryption: Bool = false
    /// The name of the value transformer for a transformable attribute; `nil` means
    /// ``NSValueTransformerName/secureUnarchiveFromDataTransformerName``. The transformer must be
    /// registered with ``ValueTransformer/setValueTransformer(_:forName:)`` before objects are saved
    /// or fetched; a missing one fails the save (or the fetch) with a clear error.
    ///
    /// Related Core Data documentation: [valueTransformerName](https://developer.apple.com/documentation/coredata/nsattributedescription/valuetransformername)
    open var valueTransformerName: String?

    public override init() { super.init() }

    /// Decodes an attribute (see ``NSPropertyDescription/init(coder:)``).
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        _noteArchiveProblem(_decodeAttributeFields(from: coder))
    }

    /// Encodes the attribute with the keys of Apple's compiled models (see ``NSPropertyDescription/encode(with:)``).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        _encodeAttributeFields(with: coder)
    }

    /// Convenience initializer (not Apple API) for models built in code.
    public convenience init(name: String, type: NSAttributeType, isOptional: Bool = true, defaultValue: Any? = nil) {
        self.init()
        self.name = name
        self.attributeType = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
    }
}

extension NSAttributeType {
    /// The Swift type name of the canonical value for this attribute type.
    package var canonicalTypeName: String? {
        switch self {
        case .integer16AttributeType: "Int16"
        case .integer32AttributeType: "Int32"
        case .integer64AttributeType: "Int64"
        case .decimalAttributeType: "Decimal"
        case .doubleAttributeType: "Double"
        case .floatAttributeType: "Float"
        case .stringAttributeType: "String"
        case .booleanAttributeType: "Bool"
        case .dateAttributeType: "Date"
        case .binaryDataAttributeType: "Data"
        case .transformableAttributeType: nil  // the model's custom class, when it names one
        case .UUIDAttributeType: "UUID"
        case .URIAttributeType: "URL"
        case .objectIDAttributeType: "NSManagedObjectID"
        case .compositeAttributeType: "Dictionary"
        case .undefinedAttributeType: nil
        }
    }
}
