import Foundation

/// The type of an attribute.
///
/// Related Core Data documentation: [NSAttributeType](https://developer.apple.com/documentation/coredata/nsattributetype)
public enum NSAttributeType: UInt, Sendable, CaseIterable {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case UUIDAttributeType = 1100
    case URIAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000
    case compositeAttributeType = 2100
}

extension NSAttributeDescription {
    /// The attribute type in the Swift-style spelling Apple added in 2021.
    ///
    /// Related Core Data documentation: [NSAttributeDescription.AttributeType](https://developer.apple.com/documentation/coredata/nsattributedescription/attributetype)
    public struct AttributeType: Hashable, Sendable, RawRepresentable {
        public var rawValue: NSAttributeType
        public init(rawValue: NSAttributeType) { self.rawValue = rawValue }
        public init(_ rawValue: NSAttributeType) { self.rawValue = rawValue }

        public static let undefined = AttributeType(.undefinedAttributeType)
        public static let integer16 = AttributeType(.integer16AttributeType)
        public static let integer32 = AttributeType(.integer32AttributeType)
        public static let integer64 = AttributeType(.integer64AttributeType)
        public static let decimal = AttributeType(.decimalAttributeType)
        public static let double = AttributeType(.doubleAttributeType)
        public static let float = AttributeType(.floatAttributeType)
        public static let string = AttributeType(.stringAttributeType)
        public static let boolean = AttributeType(.booleanAttributeType)
        public static let date = AttributeType(.dateAttributeType)
        public static let binaryData = AttributeType(.binaryDataAttributeType)
        public static let uuid = AttributeType(.UUIDAttributeType)
        public static let uri = AttributeType(.URIAttributeType)
        public static let transformable = AttributeType(.transformableAttributeType)
        public static let objectID = AttributeType(.objectIDAttributeType)
        public static let composite = AttributeType(.compositeAttributeType)
    }
}
