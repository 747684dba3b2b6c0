import Foundation

/// A value transformer for any `Codable` type: values are stored as JSON (`Data`), so a struct or
/// enum needs no `NSSecureCoding` class and no transformer of its own.
///
/// ```swift
/// struct Color: Codable, Equatable { var red, green, blue, alpha: Double }
///
/// CodableValueTransformer<Color>.register(forName: NSValueTransformerName("ColorTransformer"))
/// let color = NSAttributeDescription(name: "color", type: .transformableAttributeType)
/// color.valueTransformerName = "ColorTransformer"
/// article.setValue(Color(red: 1, green: 0, blue: 0, alpha: 1), forKey: "color")
/// ```
///
/// - Note: Linux: not Apple API (Apple's stack has no generic transformer; on Apple platforms write a
///   `ValueTransformer` subclass). JSON keys are sorted, so equal values store equal bytes.
///
/// Related Core Data documentation: [ValueTransformer](https://developer.apple.com/documentation/foundation/valuetransformer)
public final class CodableValueTransformer<Value: Codable>: ValueTransformer {
    /// A transformer for `Value`; register it with ``register(forName:)`` or
    /// ``ValueTransformer/setValueTransformer(_:forName:)``.
    public override init() { super.init() }

    /// Registers a new transformer for `Value` under `name` (see ``ValueTransformer/setValueTransformer(_:forName:)``).
    public static func register(forName name: NSValueTransformerName) {
        ValueTransformer.setValueTransformer(CodableValueTransformer<Value>(), forName: name)
    }

    /// `NSData`: values become JSON data.
    public override class func transformedValueClass() -> AnyClass { NSData.self }
    /// `true`: JSON data decodes back to `Value`.
    public override class func allowsReverseTransformation() -> Bool { true }

    /// The JSON encoding of `value` (a `Value`), or nil if it is not one or does not encode.
    public override func transformedValue(_ value: Any?) -> Any? {
        guard let value = ValueConversion.unwrap(value) as? Value else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(value)
    }

    /// The `Value` decoded from JSON `Data`, or nil if the data does not decode.
    public override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = ValueConversion.unwrap(value) as? Data else { return nil }
        return try? JSONDecoder().decode(Value.self, from: data)
    }
}
