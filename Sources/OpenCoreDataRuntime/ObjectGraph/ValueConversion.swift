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

    /// `value as? T`, with the in-place load of ``exactly(_:as:)`` first.
    @inline(__always)
    package static func cast<T>(_ value: Any, to type: T.Type) -> T? {
        exactly(value, as: T.self) ?? value as? T
    }

    /// `value` if its dynamic type is exactly `T` and `T` is stored inline in an `Any`, else `nil`
    /// (no answer: the caller tries `as?` next).
    ///
    /// The runtime's general cast (`as?` from `Any`) looks through optionals, existentials, classes
    /// and bridging: about 250 instructions for an `Int64`, paid for every attribute a save binds or
    /// an accessor reads. An `Any` is an opaque existential container, whose layout is part of Swift's
    /// stable ABI (docs/ABI/TypeLayout.rst, "Existential Container Layout"): a three-word value buffer
    /// and then the type's metadata pointer; a value of at most three words, word-aligned and bitwise
    /// takable (the scalars, `Date`, `String`) is stored inline at the start of the buffer. So when
    /// the metadata pointer is `T`'s, the value can be loaded in place.
    @inline(__always)
    package static func exactly<T>(_ value: Any, as type: T.Type) -> T? {
        withUnsafePointer(to: value) { exactly(inContainerAt: UnsafeRawPointer($0), as: T.self) }
    }

    /// ``exactly(_:as:)`` for the `Any` (or `Any?`) container at `container`, read in place: copying
    /// the value out first went through its generic copy and destroy (about 400 instructions per
    /// typed accessor read, callgrind case 2). `Optional<Any>` has `Any`'s layout (its `nil` is an
    /// extra inhabitant of the metadata pointer), so a container whose metadata is `T`'s holds a `T` inline.
    @inline(__always)
    package static func exactly<T>(inContainerAt container: UnsafeRawPointer, as type: T.Type) -> T? {
        guard MemoryLayout<T>.size <= 3 * MemoryLayout<Int>.size, MemoryLayout<T>.alignment <= MemoryLayout<Int>.alignment,
            MemoryLayout<T>.size > 0, InlineStorage.isInline(T.self)
        else { return nil }
        return loadExactly(container, as: T.self)
    }

    /// ``exactly(inContainerAt:as:)`` for element `index` of an array, as `NSPredicate(format:_:)`'s
    /// variadic arguments come, read in place.
    @inline(__always)
    package static func exactly<T>(in values: [Any?], at index: Int, as type: T.Type) -> T? {
        guard MemoryLayout<Any?>.size == MemoryLayout<Any>.size else { return nil }
        return values.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, index >= 0, index < buffer.count else { return nil }
            return exactly(inContainerAt: UnsafeRawPointer(base + index), as: T.self)
        }
    }

    /// The type metadata word of the `Any` (or `Any?`) container at `container`: `nil` for an
    /// `Any?` holding `nil`. The one place that knows where the word lies (see ``exactly(_:as:)``).
    @inline(__always)
    package static func metadata(ofContainerAt container: UnsafeRawPointer) -> UnsafeRawPointer? {
        container.load(fromByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
    }

    /// Whether the container at `container` holds a value of exactly `type`.
    @inline(__always)
    package static func container(at container: UnsafeRawPointer, holds type: any Any.Type) -> Bool {
        metadata(ofContainerAt: container) == unsafeBitCast(type, to: UnsafeRawPointer.self)
    }

    /// Sets the `Any?` at `container` to `nil`, destroying its value. The common attribute values
    /// are destroyed without the generic `Optional<Any>` value witness (about 60 instructions, per
    /// property of every validated object): the trivial scalars and `Date` need nothing destroyed,
    /// and a `String` (inline, see ``exactly(_:as:)``) is released as one. `nil` is a null metadata
    /// word (see ``metadata(ofContainerAt:)``).
    @inline(__always)
    package static func clear(containerAt container: UnsafeMutablePointer<Any?>) {
        let raw = UnsafeMutableRawPointer(container)
        guard let metadata = self.metadata(ofContainerAt: raw) else { return }
        if InlineStorage.isTrivial(metadata: metadata) {
            raw.storeBytes(of: nil, toByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
        } else if metadata == unsafeBitCast(String.self, to: UnsafeRawPointer.self) {
            raw.assumingMemoryBound(to: String.self).deinitialize(count: 1)
            raw.storeBytes(of: nil, toByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
        } else {
            container.pointee = nil
        }
    }

    /// The `T` in the existential container at `container` if its metadata is `T`'s, else `nil`.
    /// `T` must be a type stored inline (``InlineStorage``) or a class.
    @inline(__always)
    package static func loadExactly<T>(_ container: UnsafeRawPointer, as type: T.Type) -> T? {
        guard self.container(at: container, holds: T.self) else { return nil }
        return container.load(as: T.self)
    }

    /// `value` if it is a managed object boxed as `NSManagedObject` (as a store's `[NSManagedObject]`
    /// results are when seen as `[Any]`), without the runtime's general cast; else `nil` (no answer).
    /// The container layout is the one ``exactly(_:as:)`` relies on; a class reference is inline.
    @inline(__always)
    package static func boxedManagedObject(_ value: Any) -> NSManagedObject? {
        boxedReference(value, as: NSManagedObject.self)
    }

    /// `value` if it holds a reference boxed with static type `T` (its container's metadata is `T`'s),
    /// loaded in place; else `nil` (no answer: the caller casts).
    @inline(__always)
    package static func boxedReference<T: AnyObject>(_ value: Any, as type: T.Type) -> T? {
        withUnsafePointer(to: value) { loadExactly(UnsafeRawPointer($0), as: T.self) }
    }

    /// `value` if it holds a managed object of any class, without the runtime's general cast: the
    /// dynamic type is checked with a metatype cast (tens of instructions, not hundreds), and a class
    /// instance is stored inline in the container, so the reference is loaded in place.
    @inline(__always)
    package static func managedObject(_ value: Any) -> NSManagedObject? {
        guard Swift.type(of: value) is NSManagedObject.Type else { return nil }
        return withUnsafePointer(to: value) { UnsafeRawPointer($0).load(as: NSManagedObject.self) }
    }

    /// ``managedObject(_:)`` for an optional, read in place: the container's type (its metadata word,
    /// null for `nil`) is checked with a metatype cast, and the reference loaded. Unwrapping the
    /// optional first copied the container, and `type(of:)` looked the class up again (about 300
    /// instructions of an in-memory predicate evaluation, callgrind case 7). A reference boxed as
    /// another existential (`AnyObject`) is not recognized: `nil`, for the caller's general path.
    @inline(__always)
    package static func managedObject(in value: Any?) -> NSManagedObject? {
        withUnsafePointer(to: value) { pointer in
            let container = UnsafeRawPointer(pointer)
            guard let metadata = metadata(ofContainerAt: container),
                unsafeBitCast(metadata, to: Any.Type.self) is NSManagedObject.Type
            else { return nil }
            return container.load(as: NSManagedObject.self)
        }
    }

    /// ``boxedReference(_:as:)`` for an optional, read in place (`Optional<Any>` has `Any`'s layout,
    /// its `nil` a null metadata pointer, which matches no type).
    @inline(__always)
    package static func boxedReference<T: AnyObject>(in value: Any?, as type: T.Type) -> T? {
        guard MemoryLayout<Any?>.size == MemoryLayout<Any>.size else { return nil }
        return withUnsafePointer(to: value) { loadExactly(UnsafeRawPointer($0), as: T.self) }
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

    /// Whether `type` is an `Optional`: its metadata's first word is the kind, and Swift's stable
    /// ABI gives `Optional` the kind 0x202 (`MetadataKind::Optional`) on every platform.
    @inline(__always)
    package static func isOptionalType(_ type: any Any.Type) -> Bool {
        unsafeBitCast(type, to: UnsafeRawPointer.self).load(as: UInt.self) == 0x202
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

/// The types ``ValueConversion/exactly(_:as:)`` loads in place: known to be bitwise takable, so an
/// `Any` stores them inline (a type with a weak reference, say, is not, and would be boxed).
private enum InlineStorage {
    @inline(__always)
    static func isInline<T>(_ type: T.Type) -> Bool {
        T.self == Int64.self || T.self == Int.self || T.self == Int32.self || T.self == Int16.self
            || T.self == Double.self || T.self == Float.self || T.self == Bool.self || T.self == Date.self
            || T.self == String.self
    }

    /// Whether `metadata` is one of the inline types above that need nothing destroyed (all but
    /// `String`), for ``ValueConversion/clear(containerAt:)``, which has a container's metadata word,
    /// not a static type.
    @inline(__always)
    static func isTrivial(metadata: UnsafeRawPointer) -> Bool {
        func `is`<T>(_: T.Type) -> Bool { metadata == unsafeBitCast(T.self, to: UnsafeRawPointer.self) }
        return `is`(Int64.self) || `is`(Double.self) || `is`(Int16.self) || `is`(Int32.self) || `is`(Bool.self)
            || `is`(Date.self) || `is`(Float.self) || `is`(Int.self)
    }
}
