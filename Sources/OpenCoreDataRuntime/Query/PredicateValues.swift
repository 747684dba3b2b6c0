import Foundation

/// A number from any of the numeric types a predicate may meet.
package enum PredicateNumber {
    case integer(Int)
    case unsigned(UInt)
    case double(Double)
    case decimal(Decimal)

    package var doubleValue: Double {
        switch self {
        case .integer(let i): Double(i)
        case .unsigned(let u): Double(u)
        case .double(let d): d
        case .decimal(let d): NSDecimalNumber(decimal: d).doubleValue
        }
    }

    package var decimalValue: Decimal {
        switch self {
        case .integer(let i): Decimal(i)
        case .unsigned(let u): Decimal(u)
        case .double(let d): Decimal(d)
        case .decimal(let d): d
        }
    }

    /// The value as an `Int` when it is an integer that fits.
    package var intValue: Int? {
        switch self {
        case .integer(let i): i
        case .unsigned(let u): Int(exactly: u)
        case .double(let d): d.isFinite ? Int(exactly: d) : nil
        case .decimal(let d): Int(exactly: NSDecimalNumber(decimal: d).doubleValue)
        }
    }

    package var isInteger: Bool {
        switch self {
        case .integer, .unsigned: true
        default: false
        }
    }
}

/// Value semantics of in-memory predicate evaluation: what counts as a number, a string, a
/// collection, and how two values compare (Apple's `NSNumber`/`NSString`/`NSDate` rules).
package enum PredicateValues {
    /// Unwraps optionals and turns `NSNull` into `nil`; bridges `NSString`/`Substring` to `String`.
    package static func normalize(_ value: Any?) -> Any? {
        guard let value else { return nil }
        // Type checks by metadata: a cast of a Swift value (an `Int16` from an attribute) to a class
        // such as NSNull looks for a bridge first and cost over a thousand instructions per value.
        // The dynamic type is read once (unwrapping first read it again and copied the value twice).
        let type = Swift.type(of: value)
        if ValueConversion.isOptionalType(type) { return normalize(ValueConversion.unwrap(value)) }
        if ObjectIdentifier(type) == ObjectIdentifier(NSNull.self) { return nil }
        if ObjectIdentifier(type) == ObjectIdentifier(Substring.self), let s = value as? Substring { return String(s) }
        if type is AnyClass, type is NSString.Type, let s = value as? NSString { return String(s) }
        return value
    }

    package static func number(_ value: Any) -> PredicateNumber? {
        // The common exact types first, by metadata: each `as?` below is a runtime cast.
        if let v = ValueConversion.exactly(value, as: Int.self) { return .integer(v) }
        if let v = ValueConversion.exactly(value, as: Int64.self) { return .integer(Int(v)) }
        if let v = ValueConversion.exactly(value, as: Double.self) { return .double(v) }
        if let v = ValueConversion.exactly(value, as: Int32.self) { return .integer(Int(v)) }
        if let v = ValueConversion.exactly(value, as: Int16.self) { return .integer(Int(v)) }
        if let v = ValueConversion.exactly(value, as: Bool.self) { return .integer(v ? 1 : 0) }
        switch value {
        case let v as Bool: return .integer(v ? 1 : 0)
        case let v as Int: return .integer(v)
        case let v as Int8: return .integer(Int(v))
        case let v as Int16: return .integer(Int(v))
        case let v as Int32: return .integer(Int(v))
        case let v as Int64: return .integer(Int(v))
        case let v as UInt8: return .integer(Int(v))
        case let v as UInt16: return .integer(Int(v))
        case let v as UInt32: return .integer(Int(v))
        case let v as UInt64: return Int(exactly: v).map(PredicateNumber.integer) ?? .unsigned(UInt(v))
        case let v as UInt: return Int(exactly: v).map(PredicateNumber.integer) ?? .unsigned(v)
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Decimal: return .decimal(v)
        case let v as CGFloat: return .double(Double(v))
        // Only class instances can be NSNumbers: a Swift value (a String) is not cast to a class,
        // which would look for a bridge and could build an NSString first.
        case _ where !(Swift.type(of: value) is AnyClass): return nil
        case let v as NSDecimalNumber: return .decimal(v.decimalValue)
        case let v as NSNumber:
            let type = String(cString: v.objCType)
            if type == "d" || type == "f" { return .double(v.doubleValue) }
            if type == "Q" || type == "L" { return Int(exactly: v.uint64Value).map(PredicateNumber.integer) ?? .unsigned(UInt(v.uint64Value)) }
            return .integer(Int(v.int64Value))
        default: return nil
        }
    }

    package static func string(_ value: Any) -> String? {
        if let s = ValueConversion.exactly(value, as: String.self) { return s }
        return switch value {
        case let s as String: s
        case let s as Substring: String(s)
        case let c as Character: String(c)
        case _ where !(Swift.type(of: value) is AnyClass): nil  // see `number(_:)`
        case let s as NSString: String(s)
        default: nil
        }
    }

    package static func date(_ value: Any) -> Date? {
        switch value {
        case let d as Date: d
        case _ where !(Swift.type(of: value) is AnyClass): nil  // see `number(_:)`
        case let d as NSDate: Date(timeIntervalSinceReferenceDate: d.timeIntervalSinceReferenceDate)
        default: nil
        }
    }

    /// The elements of a collection (arrays, sets, ordered sets, a dictionary's values); `nil` for
    /// anything else, strings and `Data` included.
    package static func elements(_ value: Any?) -> [Any]? {
        guard let value = normalize(value) else { return nil }
        switch value {
        case is String, is Data: return nil
        case let list as ManagedObjectList: return list.objects
        case let array as [Any]: return array
        case let set as Set<AnyHashable>: return Array(set)
        case let ordered as NSOrderedSet: return ordered.array
        case let set as NSSet: return set.allObjects
        case let array as NSArray: return array.map { $0 }
        case let dictionary as [String: Any]: return Array(dictionary.values)
        case let dictionary as [AnyHashable: Any]: return Array(dictionary.values)
        case let dictionary as NSDictionary: return dictionary.allValues
        default: return nil
        }
    }

    package static func negate(_ value: Any?) -> Any? {
        guard let value = normalize(value), !(value is Bool), let number = number(value) else { return nil }
        switch number {
        case .integer(let i): return i == .min ? -Double(i) : -i
        case .unsigned(let u): return -Double(u)
        case .double(let d): return -d
        case .decimal(let d): return -d
        }
    }

    // MARK: Comparison

    package static func compareNumbers(_ a: PredicateNumber, _ b: PredicateNumber) -> ComparisonResult {
        func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
            x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.unsigned(let x), .unsigned(let y)): return order(x, y)
        case (.integer, .unsigned): return .orderedAscending
        case (.unsigned, .integer): return .orderedDescending
        case (.decimal, _), (_, .decimal): return order(a.decimalValue, b.decimalValue)
        default: return order(a.doubleValue, b.doubleValue)
        }
    }

    /// Folds a string for comparison with `[c]`/`[d]` (Unicode case folding and diacritic removal,
    /// not ASCII-only). `[n]` means the strings are already normalized: no folding.
    package static func fold(_ string: String, _ options: NSComparisonPredicate.Options) -> String {
        if options.contains(.normalized) { return string }
        var fold: String.CompareOptions = []
        if options.contains(.caseInsensitive) { fold.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
        if fold.isEmpty { return string }
        return string.folding(options: fold, locale: nil)
    }

    /// The order of two values, or `nil` when they cannot be ordered (Apple raises there).
    /// Numbers compare numerically across all integer and floating-point types, `NSNumber` and
    /// `Bool`; strings by Unicode order after folding; dates chronologically.
    package static func compare(_ a: Any?, _ b: Any?, options: NSComparisonPredicate.Options = []) -> ComparisonResult? {
        guard let a = normalize(a), let b = normalize(b) else { return nil }
        if let x = number(a), let y = number(b) {
            // NaN has no order (IEEE 754; NSNumber's isEqual: is false): comparisons with it are false.
            if x.doubleValue.isNaN || y.doubleValue.isNaN { return nil }
            return compareNumbers(x, y)
        }
        if let x = string(a), let y = string(b) {
            let fx = fold(x, options), fy = fold(y, options)
            return fx < fy ? .orderedAscending : fx == fy ? .orderedSame : .orderedDescending
        }
        if let x = date(a), let y = date(b) { return x.compare(y) }
        return nil
    }

    /// Equality as `==` in a predicate: `nil` equals only `nil`; numbers, strings (with options) and
    /// dates by value; managed objects by identity, or by object ID against an `NSManagedObjectID`.
    package static func equal(_ a: Any?, _ b: Any?, options: NSComparisonPredicate.Options = []) -> Bool {
        let a = normalize(a), b = normalize(b)
        guard let a, let b else { return a == nil && b == nil }
        if let x = number(a), let y = number(b) {
            if x.doubleValue.isNaN || y.doubleValue.isNaN { return false }
            return compareNumbers(x, y) == .orderedSame
        }
        if let x = string(a), let y = string(b) { return fold(x, options) == fold(y, options) }
        if let x = date(a), let y = date(b) { return x == y }
        switch (a, b) {
        case (let x as NSManagedObject, let y as NSManagedObject): return x === y
        case (let x as NSManagedObject, let y as NSManagedObjectID): return x.objectID == y
        case (let x as NSManagedObjectID, let y as NSManagedObject): return x == y.objectID
        default: break
        }
        if !(a is NSManagedObject), !(b is NSManagedObject), let x = elements(a), let y = elements(b) {
            if (a is Set<AnyHashable> || a is NSSet) != (b is Set<AnyHashable> || b is NSSet) { return false }
            guard x.count == y.count else { return false }
            if a is Set<AnyHashable> || a is NSSet {
                return x.allSatisfy { e in y.contains { equal(e, $0, options: options) } }
            }
            return zip(x, y).allSatisfy { equal($0, $1, options: options) }
        }
        if let x = a as? AnyHashable, let y = b as? AnyHashable, x == y { return true }
        if let x = a as? NSObject, let y = b as? NSObject { return x.isEqual(y) }
        return false
    }

    /// A hash consistent with ``equal(_:_:options:)`` without options.
    package static func hash(_ value: Any?, into hasher: inout Hasher) {
        guard let value = normalize(value) else { hasher.combine(0); return }
        if let n = number(value) {
            hasher.combine(1)
            if let i = n.intValue { hasher.combine(i) } else { hasher.combine(n.doubleValue) }
        } else if let s = string(value) {
            hasher.combine(2); hasher.combine(s)
        } else if let d = date(value) {
            hasher.combine(3); hasher.combine(d)
        } else if let object = value as? NSManagedObject {
            hasher.combine(ObjectIdentifier(object))
        } else if let items = elements(value) {
            hasher.combine(4); hasher.combine(items.count)
        } else if let h = value as? AnyHashable {
            hasher.combine(h)
        }
    }
}
