import Foundation

/// The receiver of `FUNCTION(receiver, "selector:", …)` and of key paths in expressions evaluated
/// in memory, for objects of our own that stand in for Objective-C message sends (the migration
/// manager answers `$manager` functions, an entity migration policy `$entityPolicy` ones).
package protocol ExpressionFunctionReceiver: AnyObject {
    /// The value of `FUNCTION(self, selector, arguments…)` (arguments evaluated).
    func _expressionFunction(_ selector: String, arguments: [Any?]) -> Any?
    /// The value of `self.key` in a key path.
    func _expressionValue(forKey key: String) -> Any?
}

/// NSExpression's predefined functions (`sum:`, `add:to:`, `uppercase:`, `now`, ...).
///
/// Related Core Data documentation: [init(forFunction:arguments:)](https://developer.apple.com/documentation/foundation/nsexpression/init(forfunction:arguments:))
package enum PredicateFunctions {
    /// Apple's function names by argument count.
    private static let unary: Set<String> = [
        "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:", "sqrt:", "log:", "ln:", "exp:",
        "floor:", "ceiling:", "abs:", "trunc:", "uppercase:", "lowercase:", "canonical:", "onesComplement:", "noindex:",
        "length:", "random:",
    ]
    private static let binary: Set<String> = [
        "add:to:", "from:subtract:", "multiply:by:", "divide:by:", "modulus:by:", "raise:toPower:", "bitwiseAnd:with:",
        "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:", "rightshift:by:", "castObject:toType:",
        "distanceToLocation:fromLocation:", "objectFrom:withIndex:",
    ]
    private static let nullary: Set<String> = ["now", "random"]

    /// Spellings without colons (GNUstep's `sum(a)`, `avg(a)`, `now()`) mapped to Apple's names.
    private static let aliases: [String: String] = [
        "avg": "average:", "average": "average:", "add": "add:to:", "subtract": "from:subtract:", "from": "from:subtract:",
        "multiply": "multiply:by:", "divide": "divide:by:", "modulus": "modulus:by:", "raise": "raise:toPower:",
        "pow": "raise:toPower:", "bitwiseAnd": "bitwiseAnd:with:", "bitwiseOr": "bitwiseOr:with:",
        "bitwiseXor": "bitwiseXor:with:", "leftshift": "leftshift:by:", "rightshift": "rightshift:by:",
        "castObject": "castObject:toType:",
    ]

    /// Apple's name for a function spelled `name` with `argumentCount` arguments, or nil if unknown.
    package static func canonicalName(_ name: String, argumentCount: Int) -> String? {
        if unary.contains(name) || binary.contains(name) || nullary.contains(name) { return name }
        if name.hasSuffix(":") { return nil }
        if name == "random" { return argumentCount == 0 ? "random" : "random:" }
        if argumentCount == 0, nullary.contains(name) { return name }
        if let alias = aliases[name] { return alias }
        if unary.contains(name + ":") { return name + ":" }
        // Apple's documentation spells the aggregate functions as keywords: `MAX(1, 5, 10)`.
        let lower = name.lowercased()
        if lower != name, let canonical = canonicalName(lower, argumentCount: argumentCount) { return canonical }
        return nil
    }

    /// Functions over one collection, which also accept a list of values (`max(1, 5, 10)`).
    package static func takesCollection(_ name: String) -> Bool {
        ["sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:"].contains(name)
    }

    /// Calls a predefined function on evaluated arguments; nil for unknown names or unusable arguments.
    package static func call(_ name: String, _ arguments: [Any?]) -> Any? {
        let args = arguments.map(PredicateValues.normalize)
        func numbers(_ value: Any?) -> [PredicateNumber] {
            let items = PredicateValues.elements(value) ?? (value.map { [$0] } ?? [])
            return items.compactMap { PredicateValues.normalize($0).flatMap(PredicateValues.number) }
        }
        func number(_ index: Int) -> PredicateNumber? {
            index < args.count ? args[index].flatMap(PredicateValues.number) : nil
        }
        func string(_ index: Int) -> String? {
            index < args.count ? args[index].flatMap(PredicateValues.string) : nil
        }
        switch name {
        case "sum:", "sum":
            return sum(numbers(args.first ?? nil))
        case "average:", "avg":
            let values = numbers(args.first ?? nil)
            guard !values.isEmpty else { return 0 }
            return values.reduce(0.0) { $0 + $1.doubleValue } / Double(values.count)
        case "count:":
            guard let value = args.first ?? nil else { return 0 }
            return PredicateValues.elements(value)?.count ?? 1
        case "min:", "max:":
            let items = PredicateValues.elements(args.first ?? nil) ?? ((args.first ?? nil).map { [$0] } ?? [])
            let wanted: ComparisonResult = name == "min:" ? .orderedAscending : .orderedDescending
            return items.reduce(nil as Any?) { best, item in
                guard let best else { return item }
                return PredicateValues.compare(item, best) == wanted ? item : best
            }
        case "median:":
            let values = numbers(args.first ?? nil).map(\.doubleValue).sorted()
            guard !values.isEmpty else { return nil }
            let mid = values.count / 2
            return values.count % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2
        case "mode:":
            let items = PredicateValues.elements(args.first ?? nil) ?? []
            var counts: [(Any, Int)] = []
            for item in items {
                if let i = counts.firstIndex(where: { PredicateValues.equal($0.0, item) }) { counts[i].1 += 1 } else { counts.append((item, 1)) }
            }
            let top = counts.map(\.1).max() ?? 0
            return counts.filter { $0.1 == top }.map(\.0)
        case "stddev:":
            let values = numbers(args.first ?? nil).map(\.doubleValue)
            guard !values.isEmpty else { return nil }
            let mean = values.reduce(0, +) / Double(values.count)
            return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
        case "add:to:", "from:subtract:", "multiply:by:", "modulus:by:":
            guard let a = number(0), let b = number(1) else { return nil }
            return arithmetic(name, a, b)
        case "divide:by:":
            guard let a = number(0), let b = number(1), b.doubleValue != 0 else { return nil }
            if case .decimal = a { return a.decimalValue / b.decimalValue }
            if case .decimal = b { return a.decimalValue / b.decimalValue }
            return a.doubleValue / b.doubleValue
        case "raise:toPower:":
            guard let a = number(0), let b = number(1) else { return nil }
            return pow(a.doubleValue, b.doubleValue)
        case "sqrt:": return number(0).map { $0.doubleValue.squareRoot() }
        case "log:": return number(0).map { log10($0.doubleValue) }
        case "ln:": return number(0).map { Foundation.log($0.doubleValue) }
        case "exp:": return number(0).map { Foundation.exp($0.doubleValue) }
        case "floor:": return number(0).map { $0.isInteger ? $0.intValue as Any : Foundation.floor($0.doubleValue) }
        case "ceiling:": return number(0).map { $0.isInteger ? $0.intValue as Any : Foundation.ceil($0.doubleValue) }
        case "trunc:": return number(0).map { $0.isInteger ? $0.intValue as Any : Foundation.trunc($0.doubleValue) }
        case "abs:":
            guard let a = number(0) else { return nil }
            if case .integer(let i) = a, i != .min { return Swift.abs(i) }
            return Swift.abs(a.doubleValue)
        case "uppercase:": return string(0)?.uppercased()
        case "lowercase:": return string(0)?.lowercased()
        case "canonical:": return string(0).map { PredicateValues.fold($0, [.caseInsensitive, .diacriticInsensitive]) }
        case "length:": return string(0)?.utf16.count
        case "noindex:": return args.first ?? nil
        case "now": return Date()
        case "random": return Double.random(in: 0..<1)
        case "random:":
            guard let n = number(0)?.intValue, n > 0 else { return nil }
            return Int.random(in: 0..<n)
        case "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:", "rightshift:by:":
            guard let a = number(0)?.intValue, let b = number(1)?.intValue else { return nil }
            switch name {
            case "bitwiseAnd:with:": return a & b
            case "bitwiseOr:with:": return a | b
            case "bitwiseXor:with:": return a ^ b
            case "leftshift:by:": return a << b
            default: return a >> b
            }
        case "onesComplement:": return number(0)?.intValue.map { ~$0 }
        case "castObject:toType:":
            guard let type = string(1) else { return nil }
            return cast(args.first ?? nil, to: type)
        default:
            return nil
        }
    }

    /// `FETCH(request, context, countOnly)`: the objects (or their count) `request` fetches in
    /// `context`; nil when the arguments are not a fetch request and a context, or the fetch fails.
    package static func fetch(_ arguments: [Any?]) -> Any? {
        guard arguments.count == 3, let request = arguments[0] as? NSFetchRequest<any NSFetchRequestResult>,
            let context = arguments[1] as? NSManagedObjectContext
        else { return nil }
        if let countOnly = arguments[2].flatMap(PredicateValues.number), countOnly.intValue != 0 {
            return try? context.count(for: request)
        }
        return try? context.fetch(request)
    }

    private static func sum(_ values: [PredicateNumber]) -> Any {
        if values.contains(where: { if case .decimal = $0 { true } else { false } }) {
            return values.reduce(Decimal(0)) { $0 + $1.decimalValue }
        }
        if values.allSatisfy({ $0.intValue != nil && $0.isInteger }) {
            var total = 0
            for value in values {
                let (next, overflow) = total.addingReportingOverflow(value.intValue!)
                if overflow { return values.reduce(0.0) { $0 + $1.doubleValue } }
                total = next
            }
            return total
        }
        return values.reduce(0.0) { $0 + $1.doubleValue }
    }

    private static func arithmetic(_ name: String, _ a: PredicateNumber, _ b: PredicateNumber) -> Any? {
        if case .decimal = a { return decimalArithmetic(name, a.decimalValue, b.decimalValue) }
        if case .decimal = b { return decimalArithmetic(name, a.decimalValue, b.decimalValue) }
        if a.isInteger, b.isInteger, let x = a.intValue, let y = b.intValue {
            let (result, overflow): (Int, Bool) = switch name {
            case "add:to:": x.addingReportingOverflow(y)
            case "from:subtract:": x.subtractingReportingOverflow(y)
            case "multiply:by:": x.multipliedReportingOverflow(by: y)
            default: y == 0 ? (0, true) : x.remainderReportingOverflow(dividingBy: y)
            }
            if !overflow { return result }
            if name == "modulus:by:" { return nil }
        }
        let x = a.doubleValue, y = b.doubleValue
        switch name {
        case "add:to:": return x + y
        case "from:subtract:": return x - y
        case "multiply:by:": return x * y
        default: return y == 0 ? nil : fmod(x, y)
        }
    }

    private static func decimalArithmetic(_ name: String, _ x: Decimal, _ y: Decimal) -> Any? {
        switch name {
        case "add:to:": return x + y
        case "from:subtract:": return x - y
        case "multiply:by:": return x * y
        default: return nil
        }
    }

    /// `CAST(value, 'Type')`: `NSDate` from seconds since 2001, `NSNumber` from strings and dates,
    /// `NSString` from anything. `UUID`, `NSData` (base64) and `NSURL` are our additions, used by
    /// `predicateFormat` so that such constants print in a form that parses back.
    package static func cast(_ value: Any?, to type: String) -> Any? {
        guard let value = PredicateValues.normalize(value) else { return nil }
        switch type {
        case "NSDate", "Date":
            if let date = PredicateValues.date(value) { return date }
            if let seconds = PredicateValues.number(value)?.doubleValue { return Date(timeIntervalSinceReferenceDate: seconds) }
            if let string = PredicateValues.string(value), let seconds = Double(string) { return Date(timeIntervalSinceReferenceDate: seconds) }
            return nil
        case "NSNumber", "NSDecimalNumber":
            if PredicateValues.number(value) != nil { return value }
            if let date = PredicateValues.date(value) { return date.timeIntervalSinceReferenceDate }
            if let string = PredicateValues.string(value) {
                if let i = Int(string) { return i }
                if type == "NSDecimalNumber" { return Decimal(string: string) }
                return Double(string)
            }
            return nil
        case "NSString", "String":
            return PredicateValues.string(value) ?? String(describing: value)
        case "UUID", "NSUUID":
            if let uuid = value as? UUID { return uuid }
            return PredicateValues.string(value).flatMap(UUID.init(uuidString:))
        case "NSData", "Data":
            if let data = value as? Data { return data }
            return PredicateValues.string(value).flatMap { Data(base64Encoded: $0) }
        case "NSURL", "URL":
            if let url = value as? URL { return url }
            return PredicateValues.string(value).flatMap { URL(string: $0) }
        default:
            return nil
        }
    }
}
