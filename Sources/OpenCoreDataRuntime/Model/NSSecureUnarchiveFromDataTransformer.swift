import Foundation

/// The default transformer of transformable attributes: unarchives `Data` with `NSKeyedUnarchiver`
/// (secure coding, limited to ``allowedTopLevelClasses``), and archives values in reverse.
///
/// Core Data runs it in reverse to store a value (archive) and forward to read one back (unarchive).
/// Subclass it to allow your own `NSSecureCoding` classes:
///
/// ```swift
/// final class ColorArchiver: NSSecureUnarchiveFromDataTransformer {
///     override class var allowedTopLevelClasses: [AnyClass] { [Color.self] }
/// }
/// ValueTransformer.setValueTransformer(ColorArchiver(), forName: NSValueTransformerName("ColorArchiver"))
/// ```
///
/// - Note: Linux: archiving uses swift-corelibs-foundation's `NSKeyedArchiver`: Swift values archive
///   as their Foundation classes (`String` as `NSString`, `[String]` as `NSArray`) and read back as
///   Swift values; a class of your own must be an `NSObject` conforming to `NSSecureCoding`.
///
/// Related Core Data documentation: [NSSecureUnarchiveFromDataTransformer](https://developer.apple.com/documentation/foundation/nssecureunarchivefromdatatransformer)
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer {
    /// The classes the transformer unarchives: Foundation's property-list and value classes.
    ///
    /// Related Core Data documentation: [allowedTopLevelClasses](https://developer.apple.com/documentation/foundation/nssecureunarchivefromdatatransformer/allowedtoplevelclasses)
    open class var allowedTopLevelClasses: [AnyClass] {
        [NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
         NSURL.self, NSUUID.self, NSNull.self]
    }

    /// `NSObject`: the forward direction produces the unarchived objects.
    open override class func transformedValueClass() -> AnyClass { NSObject.self }
    /// `true`: the reverse direction archives.
    open override class func allowsReverseTransformation() -> Bool { true }

    /// Unarchives `value` (`Data`); nil if it is not data or does not unarchive to an allowed class.
    open override func transformedValue(_ value: Any?) -> Any? {
        let unwrapped = ValueConversion.unwrap(value)
        guard let data = unwrapped as? Data ?? (unwrapped as? NSData).map({ Data($0) }) else { return nil }
        return _unarchive(data, alsoAllowing: [])
    }

    /// Archives `value` with secure coding; nil if it cannot be archived securely, or would not
    /// unarchive again because its class is not one of ``allowedTopLevelClasses``.
    open override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value = ValueConversion.unwrap(value), !(value is NSNull) else { return nil }
        return _archive(value, alsoAllowing: [])
    }

    /// Unarchives `data`, allowing ``allowedTopLevelClasses`` and `extra` (a transformable attribute's
    /// value class, which Core Data allows too).
    package func _unarchive(_ data: Data, alsoAllowing extra: [AnyClass]) -> Any? {
        let allowed = Self.allowedTopLevelClasses + extra
        // Foundation on Linux traps on a class that is not allowed; check the archive's classes first.
        guard Self.archiveClassesAreAllowed(data, allowed) else { return nil }
        guard let object = try? NSKeyedUnarchiver.unarchivedObject(ofClasses: allowed, from: data) else { return nil }
        return Self.swiftValue(object)
    }

    /// Archives `value` if it would unarchive again allowing ``allowedTopLevelClasses`` and `extra`.
    package func _archive(_ value: Any, alsoAllowing extra: [AnyClass]) -> Data? {
        // Foundation on Linux traps on a value without secure coding; check the value first.
        guard Self.isSecurelyArchivable(value, topLevel: true, allowed: Self.allowedTopLevelClasses + extra) else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
    }

    // MARK: Checks that keep Foundation on Linux from trapping

    /// Whether `value` is made of values Foundation archives with secure coding: Swift property-list
    /// values and collections of them, and `NSSecureCoding` classes (at the top level, allowed ones;
    /// at every level when `nestedToo`, as a model archive's values, which decode with one class list).
    package static func isSecurelyArchivable(_ value: Any, topLevel: Bool, allowed: [AnyClass], nestedToo: Bool = false) -> Bool {
        func member(_ value: Any) -> Bool { isSecurelyArchivable(value, topLevel: nestedToo, allowed: allowed, nestedToo: nestedToo) }
        switch value {
        case is String, is Bool, is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16,
             is UInt32, is UInt64, is Double, is Float, is Data, is Date, is URL, is UUID:
            return true
        case let array as [Any]: return array.allSatisfy(member)
        case let set as Set<AnyHashable>: return set.allSatisfy { member($0.base) }
        case let dictionary as [AnyHashable: Any]: return dictionary.allSatisfy { member($0.key.base) && member($0.value) }
        case let object as NSObject:
            let cls: AnyClass = type(of: object)
            guard (cls as? any NSSecureCoding.Type)?.supportsSecureCoding == true else { return false }
            return !topLevel || isKind(cls, of: allowed)
        default:
            return false
        }
    }

    /// Whether every class an archive names resolves, as `NSKeyedUnarchiver` resolves it, to an
    /// allowed class that supports secure coding.
    private static func archiveClassesAreAllowed(_ data: Data, _ allowed: [AnyClass]) -> Bool {
        guard let classes = archivedClasses(data) else { return false }
        return classes.allSatisfy { description in
            // The unarchiver tries the class name, then each hint, and traps on the first one that
            // resolves to a class that is not allowed.
            let candidates = [description.name] + description.classes
            guard let resolved = candidates.lazy.compactMap({ NSKeyedUnarchiver.class(forClassName: $0) ?? NSClassFromString($0) }).first,
                  isKind(resolved, of: allowed), (resolved as? any NSSecureCoding.Type)?.supportsSecureCoding == true
            else { return false }
            return true
        }
    }

    /// The class descriptions of a keyed archive (`$classname`, `$classes`); nil if `data` is not one.
    package static func archivedClasses(_ data: Data) -> [(name: String, classes: [String])]? {
        guard let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
              let archive = plist as? [String: Any], let objects = archive["$objects"] as? [Any]
        else { return nil }
        return objects.compactMap { object in
            guard let description = object as? [String: Any], let name = description["$classname"] as? String else { return nil }
            return (name, description["$classes"] as? [String] ?? [])
        }
    }

    private static func isKind(_ cls: AnyClass, of allowed: [AnyClass]) -> Bool {
        var current: AnyClass? = cls
        while let candidate = current {
            if allowed.contains(where: { $0 == candidate }) { return true }
            current = _getSuperclass(candidate)
        }
        return false
    }

    /// Foundation objects as the Swift values users stored (`NSString` as `String`, ...).
    package static func swiftValue(_ object: Any) -> Any {
        switch object {
        case let string as NSString: return String(string)
        case let data as NSData: return Data(data)
        case let date as NSDate: return Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        case let url as NSURL: return url as URL
        case let uuid as NSUUID: return uuid as UUID
        case let array as NSArray: return array.map { swiftValue($0) }
        case let set as NSSet:
            let members = set.allObjects.map { swiftValue($0) }
            if let strings = members as? [String] { return Set(strings) }
            if let numbers = members as? [Int] { return Set(numbers) }
            return set
        case let dictionary as NSDictionary:
            var result: [AnyHashable: Any] = [:]
            for (key, value) in dictionary { result[(swiftValue(key) as? AnyHashable) ?? (key as? AnyHashable) ?? AnyHashable("\(key)")] = swiftValue(value) }
            if let byString = result as? [String: Any] { return byString }
            return result
        default: return object
        }
    }
}
