import Foundation

/// The name under which a ``ValueTransformer`` is registered.
///
/// ```swift
/// extension NSValueTransformerName {
///     static let colorTransformerName = NSValueTransformerName("ColorTransformer")
/// }
/// ```
///
/// - Note: Linux: Foundation on Linux has no `NSValueTransformerName`; this is OpenCoreData's,
///   with Apple's spelling. On Apple platforms the shim module uses Foundation's.
///
/// Related Core Data documentation: [NSValueTransformerName](https://developer.apple.com/documentation/foundation/nsvaluetransformername)
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    /// The name as a string.
    public var rawValue: String
    /// A transformer name from its string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A transformer name from its string (`NSValueTransformerName("ColorTransformer")`).
    ///
    /// Related Core Data documentation: [init(_:)](https://developer.apple.com/documentation/foundation/nsvaluetransformername/init(_:))
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The name of ``NSSecureUnarchiveFromDataTransformer``, the default transformer of transformable
    /// attributes: it unarchives data with `NSKeyedUnarchiver` (secure coding), and archives in reverse.
    ///
    /// Related Core Data documentation: [secureUnarchiveFromDataTransformerName](https://developer.apple.com/documentation/foundation/nsvaluetransformername/secureunarchivefromdatatransformername)
    public static let secureUnarchiveFromDataTransformerName = NSValueTransformerName("NSSecureUnarchiveFromData")
    /// The name of the keyed-unarchiving transformer (not secure; deprecated on Apple).
    ///
    /// - Note: Linux: registered as the secure transformer: Foundation on Linux only offers secure
    ///   keyed unarchiving of the classes ``NSSecureUnarchiveFromDataTransformer`` allows.
    ///
    /// Related Core Data documentation: [keyedUnarchiveFromDataTransformerName](https://developer.apple.com/documentation/foundation/nsvaluetransformername/keyedunarchivefromdatatransformername)
    public static let keyedUnarchiveFromDataTransformerName = NSValueTransformerName("NSKeyedUnarchiveFromData")
    /// The name of the transformer that negates a Boolean (`NSNumber`) value.
    ///
    /// Related Core Data documentation: [negateBooleanTransformerName](https://developer.apple.com/documentation/foundation/nsvaluetransformername/negatebooleantransformername)
    public static let negateBooleanTransformerName = NSValueTransformerName("NSNegateBoolean")
    /// The name of the transformer that answers whether a value is nil.
    ///
    /// Related Core Data documentation: [isNilTransformerName](https://developer.apple.com/documentation/foundation/nsvaluetransformername/isniltransformername)
    public static let isNilTransformerName = NSValueTransformerName("NSIsNil")
    /// The name of the transformer that answers whether a value is not nil.
    ///
    /// Related Core Data documentation: [isNotNilTransformerName](https://developer.apple.com/documentation/foundation/nsvaluetransformername/isnotniltransformername)
    public static let isNotNilTransformerName = NSValueTransformerName("NSIsNotNil")
}

/// Converts values from one representation to another; transformable attributes use one to turn
/// their values into `Data` for the store and back.
///
/// Subclass it, override ``transformedValueClass()``, ``allowsReverseTransformation()``,
/// ``transformedValue(_:)`` and ``reverseTransformedValue(_:)``, and register an instance before
/// loading stores:
///
/// ```swift
/// final class ColorTransformer: ValueTransformer {
///     override class func transformedValueClass() -> AnyClass { NSData.self }
///     override class func allowsReverseTransformation() -> Bool { true }
///     override func transformedValue(_ value: Any?) -> Any? {
///         (value as? Color).flatMap { try? NSKeyedArchiver.archivedData(withRootObject: $0, requiringSecureCoding: true) }
///     }
///     override func reverseTransformedValue(_ value: Any?) -> Any? {
///         (value as? Data).flatMap { try? NSKeyedUnarchiver.unarchivedObject(ofClass: Color.self, from: $0) }
///     }
/// }
/// ValueTransformer.setValueTransformer(ColorTransformer(), forName: NSValueTransformerName("ColorTransformer"))
/// ```
///
/// For `Codable` values, ``CodableValueTransformer`` does all of this.
///
/// - Note: Linux: Foundation on Linux has no `ValueTransformer`; this is OpenCoreData's, with Apple's
///   API. `init?(forName:)` cannot hand back the registered instance itself in Swift: it returns a
///   transformer that forwards every call to it (so `as? ColorTransformer` on its result fails).
///
/// Not `Sendable`, as on Apple; but the registry hands the same instance to every thread that asks,
/// as Apple's does, so a registered transformer should keep no mutable state.
///
/// Related Core Data documentation: [ValueTransformer](https://developer.apple.com/documentation/foundation/valuetransformer)
open class ValueTransformer: NSObject {
    private let forwardTarget: ValueTransformer?

    /// Creates a transformer.
    public override init() {
        forwardTarget = nil
        super.init()
    }

    /// The transformer registered under `name`, or nil if none is.
    ///
    /// - Note: Linux: the result forwards to the registered transformer (see the type's note).
    ///
    /// Related Core Data documentation: [init(forName:)](https://developer.apple.com/documentation/foundation/valuetransformer/init(forname:))
    public init?(forName name: NSValueTransformerName) {
        guard let registered = Self._registered(forName: name) else { return nil }
        forwardTarget = registered.forwardTarget ?? registered
        super.init()
    }

    /// Registers `transformer` under `name`, replacing any transformer registered there; `nil` removes it.
    ///
    /// Related Core Data documentation: [setValueTransformer(_:forName:)](https://developer.apple.com/documentation/foundation/valuetransformer/setvaluetransformer(_:forname:))
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        registry.withLock { $0[name] = transformer }
    }

    /// The names of the registered transformers (Foundation's predefined ones included).
    ///
    /// Related Core Data documentation: [valueTransformerNames()](https://developer.apple.com/documentation/foundation/valuetransformer/valuetransformernames())
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        registry.withLock { Array($0.keys) }.sorted { $0.rawValue < $1.rawValue }
    }

    /// The class of the values ``transformedValue(_:)`` returns. The default is `NSObject`.
    ///
    /// Related Core Data documentation: [transformedValueClass()](https://developer.apple.com/documentation/foundation/valuetransformer/transformedvalueclass())
    open class func transformedValueClass() -> AnyClass { NSObject.self }

    /// Whether ``reverseTransformedValue(_:)`` is supported. The default is `true`.
    ///
    /// Related Core Data documentation: [allowsReverseTransformation()](https://developer.apple.com/documentation/foundation/valuetransformer/allowsreversetransformation())
    open class func allowsReverseTransformation() -> Bool { true }

    /// The transformed value. The default returns `value` unchanged.
    ///
    /// Related Core Data documentation: [transformedValue(_:)](https://developer.apple.com/documentation/foundation/valuetransformer/transformedvalue(_:))
    open func transformedValue(_ value: Any?) -> Any? {
        if let forwardTarget { return forwardTarget.transformedValue(value) }
        return value
    }

    /// The value before transformation. The default calls ``transformedValue(_:)`` when reverse
    /// transformation is allowed.
    ///
    /// - Note: Linux: when it is not allowed, Apple raises; this logs and returns nil.
    ///
    /// Related Core Data documentation: [reverseTransformedValue(_:)](https://developer.apple.com/documentation/foundation/valuetransformer/reversetransformedvalue(_:))
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        if let forwardTarget { return forwardTarget.reverseTransformedValue(value) }
        guard Self.allowsReverseTransformation() else {
            reportMisuse("reverseTransformedValue(_:): \(Self.self) does not allow reverse transformation")
            return nil
        }
        return transformedValue(value)
    }

    // MARK: Registry

    private static let registry = Locked<[NSValueTransformerName: ValueTransformer]>([
        .secureUnarchiveFromDataTransformerName: NSSecureUnarchiveFromDataTransformer(),
        .keyedUnarchiveFromDataTransformerName: NSSecureUnarchiveFromDataTransformer(),
        .negateBooleanTransformerName: NegateBooleanTransformer(),
        .isNilTransformerName: IsNilTransformer(negated: false),
        .isNotNilTransformerName: IsNilTransformer(negated: true),
    ])

    /// The registered transformer itself (not a forwarding one).
    package static func _registered(forName name: NSValueTransformerName) -> ValueTransformer? {
        registry.withLock { $0[name] }
    }

    /// Whether this transformer unarchives in its forward direction (``NSSecureUnarchiveFromDataTransformer``
    /// and its subclasses), so Core Data runs it in reverse to store a value.
    package var _unarchivesForward: Bool { _secureUnarchiver != nil }

    /// The ``NSSecureUnarchiveFromDataTransformer`` this transformer is or stands for.
    package var _secureUnarchiver: NSSecureUnarchiveFromDataTransformer? { (forwardTarget ?? self) as? NSSecureUnarchiveFromDataTransformer }
}

/// `NSNegateBoolean`: `true` ↔ `false` (both directions).
private final class NegateBooleanTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override func transformedValue(_ value: Any?) -> Any? {
        guard let value = ValueConversion.unwrap(value), let number = ValueConversion.int64(value) else { return nil }
        return NSNumber(value: number == 0)
    }
}

/// `NSIsNil` / `NSIsNotNil`: whether the value is nil (one way only).
private final class IsNilTransformer: ValueTransformer {
    private let negated: Bool
    init(negated: Bool) {
        self.negated = negated
        super.init()
    }
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? {
        let isNil = ValueConversion.unwrap(value) == nil || value is NSNull
        return NSNumber(value: isNil != negated)
    }
}
