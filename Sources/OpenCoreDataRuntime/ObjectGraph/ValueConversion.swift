import Foundation

/// Converts between the values users hand in (any numeric type, `NSNumber`, optionals) and the one
/// canonical Swift type each attribute type stores (see ``NSAttributeDescription``).
package enum ValueConversion {
    /// The canonical value for `value` in an attribute of `type`, or `nil` for nil/NSNull/unconvertible.
    package static func canonicalize(_ value: Any?, for type: NSAttributeType) -> Any? {
        if let exact = exactCanonical(value, for: type) { return exact }
        return canonicalizeSlow(value, for: type)
    }

    /// The value itself when it already has the attribute's canonical type (a comparison of type
    /// metadata: far cheaper than the casts of the general path).
    @inline(__always)
    private static func exactCanonical(_ value: Any?, for type: NSAttributeType) -> Any? {
        guard let value, hasCanonicalType(value, type) else { return nil }
        return value
    }

    /// Whether `value` already has the one Swift type an attribute of `type` stores (a comparison of
    /// type metadata, no cast). False for types without one canonical Swift type.
    @inline(__always)
    package static func hasCanonicalType(_ value: Any, _ type: NSAttributeType) -> Bool {
        guard let expected = canonicalType(of: type) else { return false }
        return ObjectIdentifier(Swift.type(of: value)) == ObjectIdentifier(expected)
    }

    /// The one Swift type values of an attribute type have (`nil`: any type, as for transformable).
    package static func canonicalType(of type: NSAttributeType) -> (any Any.Type)? {
        switch type {
        case .integer16AttributeType: Int16.self
        case .integer32AttributeType: Int32.self
        case .integer64AttributeType: Int64.self
        case .doubleAttributeType: Double.self
        case .floatAttributeType: Float.self
        case .booleanAttributeType: Bool.self
        case .stringAttributeType: String.self
        case .dateAttributeType: Date.self
        case .binaryDataAttributeType: Data.self
        case .UUIDAttributeType: UUID.self
        case .decimalAttributeType: Decimal.self
        case .URIAttributeType: URL.self
        default: nil
        }
    }

    private static func canonicalizeSlow(_ value: Any?, for type: NSAttributeType) -> Any? {
        guard let value = unwrap(value), !(value is NSNull) else { return nil }
        switch type {
        case .integer16AttributeType: return int64(value).map { Int16(truncatingIfNeeded: $0) }
        case .integer32AttributeType: return int64(value).map { Int32(truncatingIfNeeded: $0) }
        case .integer64AttributeType: return int64(value)
        case .doubleAttributeType: return double(value)
        case .floatAttributeType: return double(value).map { Float($0) }
        case .booleanAttributeType:
            if let b = value as? Bool { return b }
            return int64(value).map { $0 != 0 }
        case .decimalAttributeType:
            if let d = value as? Decimal { return d }
            if let n = value as? NSNumber { return n.decimalValue }
            if let s = value as? String { return Decimal(string: s) }
            return double(value).map { Decimal($0) }
        case .stringAttributeType: return value as? String ?? (value as? NSString).map { String($0) }
        case .dateAttributeType: return value as? Date ?? (value as? NSDate).map { Date(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate) }
        case .binaryDataAttributeType: return value as? Data ?? (value as? NSData).map { Data($0) }
        // A transformable attribute holds the user's value; its transformer makes it Data at save.
        case .transformableAttributeType: return value
        case .UUIDAttributeType:
            if let u = value as? UUID { return u }
            if let s = value as? String { return UUID(uuidString: s) }
            return nil
        case .URIAttributeType:
            if let u = value as? URL { return u }
            if let s = value as? String { return URL(string: s) }
            return nil
        case .objectIDAttributeType: return value as? NSManagedObjectID
        case .compositeAttributeType, .undefinedAttributeType: return value
        }
    }

    /// Whether `value` can be stored in an attribute of `type` without losing its meaning.
    package static func isAcceptable(_ value: Any?, for type: NSAttributeType) -> Bool {
        guard let value = unwrap(value), !(value is NSNull) else { return true }
        return canonicalize(value, for: type) != nil
    }

    /// `value` as `T`, converting numbers and bridging to `NSNumber` as needed.
    @inline(__always)
    package static func convert<T>(_ value: Any?, to: T.Type) -> T? {
        if let value, let exact = cast(value, to: T.self) { return exact }
        return convertSlow(value, to: T.self)
    }

    /// `value as? T`, with the in-place load of ``exactly(_:as:)`` (Support/RuntimeInternals) first.
    @inline(__always)
    package static func cast<T>(_ value: Any, to type: T.Type) -> T? {
        exactly(value, as: T.self) ?? value as? T
    }

    private static func convertSlow<T>(_ value: Any?, to: T.Type) -> T? {
        guard let value = unwrap(value) else { return nil }
        if let numeric = T.self as? any ManagedNumericValue.Type {
            if let d = value as? Decimal, let t = numeric.init(decimal: d) as? T { return t }
            if let i = int64IfIntegral(value), let t = numeric.init(int64: i) as? T { return t }
            if let d = double(value), let t = numeric.init(double: d) as? T { return t }
        }
        if T.self == NSNumber.self || T.self == NSNumber?.self {
            return number(value) as? T
        }
        if let list = value as? ManagedObjectList { return list.publicValue as? T ?? Set(list.objects) as? T }
        // A to-many relationship read as another collection type: an ordered one (`NSOrderedSet`)
        // as `[Element]` or a `Set`, an unordered one (`Set<NSManagedObject>`) as `[Element]`.
        if let ordered = value as? NSOrderedSet {
            return ordered.array as? T ?? Set(ordered.array.compactMap { $0 as? NSManagedObject }) as? T
        }
        if let objects = value as? Set<NSManagedObject> { return Array(objects) as? T }
        return nil
    }

    private static func number(_ value: Any) -> NSNumber? {
        switch value {
        case let v as NSNumber: v
        case let v as Int16: NSNumber(value: v)
        case let v as Int32: NSNumber(value: v)
        case let v as Int64: NSNumber(value: v)
        case let v as Int: NSNumber(value: v)
        case let v as Double: NSNumber(value: v)
        case let v as Float: NSNumber(value: v)
        case let v as Bool: NSNumber(value: v)
        case let v as Decimal: NSDecimalNumber(decimal: v)
        default: nil
        }
    }

    package static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        // Only an `Optional` boxed in `Any` needs unwrapping. The protocol cast below costs hundreds
        // of instructions (a conformance lookup), so the metadata kind is checked first.
        guard isOptionalType(type(of: value)) else { return value }
        if let optional = value as? any _OptionalValue { return optional._wrapped }
        return value
    }

    /// Whether `value` is `NSNull`, without the bridging lookup that `is NSNull` costs a Swift value.
    @inline(__always)
    package static func isNull(_ value: Any) -> Bool {
        type(of: value) is AnyClass && value is NSNull
    }

    package static func int64(_ value: Any) -> Int64? {
        switch value {
        case let v as Int64: v
        case let v as Int: Int64(v)
        case let v as Int32: Int64(v)
        case let v as Int16: Int64(v)
        case let v as Int8: Int64(v)
        case let v as UInt8: Int64(v)
        case let v as UInt16: Int64(v)
        case let v as UInt32: Int64(v)
        case let v as UInt64: Int64(truncatingIfNeeded: v)
        case let v as UInt: Int64(truncatingIfNeeded: v)
        case let v as Bool: v ? 1 : 0
        case let v as Double: v.isFinite ? Int64(exactly: v.rounded(.towardZero)) : nil
        case let v as Float: v.isFinite ? Int64(exactly: Double(v).rounded(.towardZero)) : nil
        case let v as Decimal: Int64(exactly: NSDecimalNumber(decimal: v).doubleValue.rounded(.towardZero))
        case let v as NSNumber: v.int64Value
        case let v as String: Int64(v)
        default: nil
        }
    }

    private static func int64IfIntegral(_ value: Any) -> Int64? {
        switch value {
        case is Double, is Float, is Decimal: nil
        case let n as NSNumber where !CFNumberIsFloatType(n): n.int64Value
        case is NSNumber: nil
        default: int64(value)
        }
    }

    package static func double(_ value: Any) -> Double? {
        switch value {
        case let v as Double: v
        case let v as Float: Double(v)
        case let v as Decimal: NSDecimalNumber(decimal: v).doubleValue
        case let v as NSNumber: v.doubleValue
        case let v as String: Double(v)
        default: int64(value).map(Double.init)
        }
    }

    private static func CFNumberIsFloatType(_ n: NSNumber) -> Bool {
        let t = String(cString: n.objCType)
        return t == "d" || t == "f"
    }
}

/// Numeric types that `@ManagedProperty` accessors convert to and from.
package protocol ManagedNumericValue {
    init?(int64: Int64)
    init?(double: Double)
    init?(decimal: Decimal)
}

extension ManagedNumericValue where Self: BinaryInteger {
    package init?(int64: Int64) { self.init(exactly: int64) }
    package init?(double: Double) { self.init(exactly: double.rounded(.towardZero)) }
    package init?(decimal: Decimal) { self.init(double: NSDecimalNumber(decimal: decimal).doubleValue) }
}
extension ManagedNumericValue where Self: BinaryFloatingPoint {
    package init?(int64: Int64) { self.init(int64) }
    package init?(double: Double) { self.init(double) }
    package init?(decimal: Decimal) { self.init(NSDecimalNumber(decimal: decimal).doubleValue) }
}
extension Int: ManagedNumericValue {}
extension Int8: ManagedNumericValue {}
extension Int16: ManagedNumericValue {}
extension Int32: ManagedNumericValue {}
extension Int64: ManagedNumericValue {}
extension UInt: ManagedNumericValue {}
extension UInt8: ManagedNumericValue {}
extension UInt16: ManagedNumericValue {}
extension UInt32: ManagedNumericValue {}
extension UInt64: ManagedNumericValue {}
extension Double: ManagedNumericValue {}
extension Float: ManagedNumericValue {}
extension Bool: ManagedNumericValue {
    package init?(int64: Int64) { self = int64 != 0 }
    package init?(double: Double) { self = double != 0 }
    package init?(decimal: Decimal) { self = decimal != 0 }
}
extension Decimal: ManagedNumericValue {
    package init?(int64: Int64) { self.init(int64) }
    package init?(double: Double) { self.init(double) }
    package init?(decimal: Decimal) { self = decimal }
}

/// Lets generic code see through `Optional<Wrapped>` held in an `Any`.
package protocol _OptionalValue { var _wrapped: Any? { get } }

extension ValueConversion {
    /// Whether `type` is an `Optional` (a conformance lookup; reading the metadata's kind word
    /// instead saved under 2% of any benchmark case, see docs/runtime-internals.md, "Removed").
    package static func isOptionalType(_ type: any Any.Type) -> Bool {
        type is any _OptionalValue.Type
    }
}
extension Optional: _OptionalValue {
    package var _wrapped: Any? {
        switch self {
        case .some(let w): ValueConversion.unwrap(w)
        case .none: nil
        }
    }
}

/// The value a non-optional `@ManagedProperty` reads when the stored value is nil (a required
/// attribute not set yet). Apple's `@NSManaged` has undefined behaviour there; we return an empty value.
public protocol _ManagedEmptyValue { static var _ocdEmpty: Self { get } }
extension Int: _ManagedEmptyValue { public static var _ocdEmpty: Int { 0 } }
extension Int16: _ManagedEmptyValue { public static var _ocdEmpty: Int16 { 0 } }
extension Int32: _ManagedEmptyValue { public static var _ocdEmpty: Int32 { 0 } }
extension Int64: _ManagedEmptyValue { public static var _ocdEmpty: Int64 { 0 } }
extension Double: _ManagedEmptyValue { public static var _ocdEmpty: Double { 0 } }
extension Float: _ManagedEmptyValue { public static var _ocdEmpty: Float { 0 } }
extension Bool: _ManagedEmptyValue { public static var _ocdEmpty: Bool { false } }
extension Decimal: _ManagedEmptyValue { public static var _ocdEmpty: Decimal { 0 } }
extension String: _ManagedEmptyValue { public static var _ocdEmpty: String { "" } }
extension Data: _ManagedEmptyValue { public static var _ocdEmpty: Data { Data() } }
extension Date: _ManagedEmptyValue { public static var _ocdEmpty: Date { Date(timeIntervalSinceReferenceDate: 0) } }
extension UUID: _ManagedEmptyValue { public static var _ocdEmpty: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) } }
extension Set: _ManagedEmptyValue { public static var _ocdEmpty: Set<Element> { [] } }
extension Array: _ManagedEmptyValue { public static var _ocdEmpty: [Element] { [] } }
extension NSNumber: _ManagedEmptyValue { public static var _ocdEmpty: Self { NSNumber(value: 0) as! Self } }
