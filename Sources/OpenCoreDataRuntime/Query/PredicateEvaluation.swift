import Foundation

/// In-memory evaluation of predicates and expressions, with Apple's semantics.
///
/// Where Apple raises (ordering a string against a number, `MATCHES` with a bad pattern, an unknown
/// variable), the comparison is `false` here.
package enum PredicateEvaluator {
    // MARK: Comparisons

    package static func evaluate(_ predicate: NSComparisonPredicate, object: Any?, scope: EvaluationScope) -> Bool {
        if let result = predicate._evaluateDirect(object) { return result }
        let lhs = value(of: predicate.leftExpression, object: object, scope: scope)
        let rhs = value(of: predicate.rightExpression, object: object, scope: scope)
        let type = predicate.predicateOperatorType
        let options = predicate.options
        switch predicate.comparisonPredicateModifier {
        case .direct:
            return test(lhs, type, rhs, options)
        case .any:
            return candidates(lhs).contains { test($0, type, rhs, options) }
        case .all:
            return candidates(lhs).allSatisfy { test($0, type, rhs, options) }
        }
    }

    /// The elements an `ANY`/`ALL` comparison iterates: a collection's elements, a single value, or none for nil.
    private static func candidates(_ value: Any?) -> [Any?] {
        if let items = PredicateValues.elements(value) { return items }
        guard let value = PredicateValues.normalize(value) else { return [] }
        return [value]
    }

    package static func test(_ lhs: Any?, _ type: NSComparisonPredicate.Operator, _ rhs: Any?, _ options: NSComparisonPredicate.Options) -> Bool {
        switch type {
        case .equalTo:
            return PredicateValues.equal(lhs, rhs, options: options)
        case .notEqualTo:
            // In memory, `x != 5` is TRUE when x is nil (it is "not equal"), as Apple's in-memory
            // evaluation does. In SQL `x <> 5` is NULL (not true) for a NULL x, so a SQL store must
            // add `OR x IS NULL` to give the same answer.
            return !PredicateValues.equal(lhs, rhs, options: options)
        case .lessThan:
            return PredicateValues.compare(lhs, rhs, options: options) == .orderedAscending
        case .lessThanOrEqualTo:
            return PredicateValues.compare(lhs, rhs, options: options).map { $0 != .orderedDescending } ?? false
        case .greaterThan:
            return PredicateValues.compare(lhs, rhs, options: options) == .orderedDescending
        case .greaterThanOrEqualTo:
            return PredicateValues.compare(lhs, rhs, options: options).map { $0 != .orderedAscending } ?? false
        case .beginsWith, .endsWith, .like, .matches:
            guard let l = PredicateValues.normalize(lhs).flatMap(PredicateValues.string),
                  let r = PredicateValues.normalize(rhs).flatMap(PredicateValues.string) else { return false }
            return stringTest(l, type, r, options)
        case .contains:
            if let l = PredicateValues.normalize(lhs).flatMap(PredicateValues.string) {
                guard let r = PredicateValues.normalize(rhs).flatMap(PredicateValues.string) else { return false }
                return substring(r, of: l, options)
            }
            guard let items = PredicateValues.elements(lhs) else { return false }
            return items.contains { PredicateValues.equal($0, rhs, options: options) }
        case .in:
            if let r = PredicateValues.normalize(rhs).flatMap(PredicateValues.string) {
                guard let l = PredicateValues.normalize(lhs).flatMap(PredicateValues.string) else { return false }
                return substring(l, of: r, options)
            }
            guard let items = PredicateValues.elements(rhs) else { return false }
            return items.contains { PredicateValues.equal(lhs, $0, options: options) }
        case .between:
            guard let bounds = PredicateValues.elements(rhs), bounds.count == 2,
                  let low = PredicateValues.compare(lhs, bounds[0], options: options),
                  let high = PredicateValues.compare(lhs, bounds[1], options: options) else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .customSelector:
            return false
        }
    }

    /// Whether `needle` occurs in `haystack`. An empty needle is not found, as with NSString's
    /// `rangeOfString:` (Apple's `CONTAINS ''` is false).
    private static func substring(_ needle: String, of haystack: String, _ options: NSComparisonPredicate.Options) -> Bool {
        guard !needle.isEmpty else { return false }
        let h = PredicateValues.fold(haystack, options), n = PredicateValues.fold(needle, options)
        return h.range(of: n) != nil
    }

    private static func stringTest(_ l: String, _ type: NSComparisonPredicate.Operator, _ r: String, _ options: NSComparisonPredicate.Options) -> Bool {
        switch type {
        case .beginsWith:
            guard !r.isEmpty else { return false }
            return PredicateValues.fold(l, options).hasPrefix(PredicateValues.fold(r, options))
        case .endsWith:
            guard !r.isEmpty else { return false }
            return PredicateValues.fold(l, options).hasSuffix(PredicateValues.fold(r, options))
        case .like:
            return like(Array(PredicateValues.fold(l, options)), Array(PredicateValues.fold(r, options)))
        case .matches:
            return matches(l, pattern: r, options)
        default:
            return false
        }
    }

    /// `LIKE`: `*` matches any run of characters, `?` one character, `\` escapes the next one.
    private static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        var t = 0, p = 0
        var star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "\\", p + 1 < pattern.count, pattern[p + 1] == text[t] {
                t += 1; p += 2
            } else if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] != "\\" && pattern[p] == text[t]) {
                t += 1; p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = p; mark = t; p += 1
            } else if star >= 0 {
                p = star + 1; mark += 1; t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    /// `MATCHES`: an ICU regular expression that must match the whole string.
    private static func matches(_ string: String, pattern: String, _ options: NSComparisonPredicate.Options) -> Bool {
        var regexOptions: NSRegularExpression.Options = []
        var subject = string
        if !options.contains(.normalized) {
            if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
            if options.contains(.diacriticInsensitive) { subject = PredicateValues.fold(subject, [.diacriticInsensitive]) }
        }
        let pattern = options.contains(.diacriticInsensitive) && !options.contains(.normalized)
            ? PredicateValues.fold(pattern, [.diacriticInsensitive]) : pattern
        guard let regex = RegexCache.shared.regex("\\A(?:\(pattern))\\z", regexOptions) else { return false }
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }

    // MARK: Expressions

    package static func value(of expression: NSExpression, object: Any?, scope: EvaluationScope) -> Any? {
        switch expression._node {
        case .constant(let value):
            return value
        case .symbolic(let name):
            return name
        case .evaluatedObject:
            return object
        case .variable(let name):
            return PredicateValues.normalize(scope.variable(name))
        case .keyPath(let operand, let path):
            let base = operand.map { value(of: $0, object: object, scope: scope) } ?? object
            return PredicateKeyPath.value(of: base, keyPath: path)
        case .function(let name, let operand, let arguments):
            if name == "objectFrom:withIndex:", arguments.count == 2 {
                return subscriptValue(value(of: arguments[0], object: object, scope: scope), index: arguments[1], object: object, scope: scope)
            }
            if let operand, PredicateFunctions.canonicalName(name, argumentCount: arguments.count) == nil {
                // FUNCTION(receiver, 'selector'): no Objective-C runtime; receivers of our own answer in Swift.
                guard let receiver = value(of: operand, object: object, scope: scope) as? any ExpressionFunctionReceiver
                else { return nil }
                return receiver._expressionFunction(name, arguments: arguments.map { value(of: $0, object: object, scope: scope) })
            }
            if operand == nil, name == "FETCH", arguments.count == 3 {
                return PredicateFunctions.fetch(arguments.map { value(of: $0, object: object, scope: scope) })
            }
            return PredicateFunctions.call(name, arguments.map { value(of: $0, object: object, scope: scope) })
        case .aggregate(let items):
            return items.map { value(of: $0, object: object, scope: scope) ?? NSNull() }
        case .setOperation(let type, let left, let right):
            let l = PredicateValues.elements(value(of: left, object: object, scope: scope)) ?? []
            let r = PredicateValues.elements(value(of: right, object: object, scope: scope)) ?? []
            func has(_ items: [Any], _ x: Any) -> Bool { items.contains { PredicateValues.equal($0, x) } }
            var result: [Any] = []
            switch type {
            case .unionSet: for x in l + r where !has(result, x) { result.append(x) }
            case .intersectSet: for x in l where has(r, x) && !has(result, x) { result.append(x) }
            default: for x in l where !has(r, x) && !has(result, x) { result.append(x) }
            }
            return result
        case .subquery(let collection, let variable, let predicate):
            let items = PredicateValues.elements(value(of: collection, object: object, scope: scope)) ?? []
            return items.filter { predicate._evaluateNested($0, scope: scope.binding(variable, to: $0)) }
        case .anyKey:
            return nil
        case .block(let block, let arguments):
            return PredicateValues.normalize(block(object, arguments ?? [], scope.context))
        case .conditional(let predicate, let yes, let no):
            return value(of: predicate._evaluateNested(object, scope: scope) ? yes : no, object: object, scope: scope)
        }
    }

    /// `collection[index]`, `collection[FIRST]`, `[LAST]`, `[SIZE]`, `dictionary[key]`.
    private static func subscriptValue(_ receiver: Any?, index: NSExpression, object: Any?, scope: EvaluationScope) -> Any? {
        guard let receiver = PredicateValues.normalize(receiver) else { return nil }
        if case .symbolic(let name) = index._node {
            guard let items = PredicateValues.elements(receiver) else { return nil }
            switch name {
            case "FIRST": return items.first
            case "LAST": return items.last
            default: return items.count
            }
        }
        let key = value(of: index, object: object, scope: scope)
        if let string = key.flatMap(PredicateValues.string) {
            return PredicateKeyPath.step(receiver, string)
        }
        guard let position = key.flatMap(PredicateValues.number)?.intValue,
              let items = PredicateValues.elements(receiver), items.indices.contains(position) else { return nil }
        return items[position]
    }
}

/// Compiled `MATCHES` patterns, so that filtering many objects compiles each pattern once.
/// Bounded: cleared when it reaches `limit` entries.
private final class RegexCache: Sendable {
    static let shared = RegexCache()
    private static let limit = 128

    private struct Key: Hashable {
        let pattern: String
        let options: UInt
    }

    /// A box so the cache can hold NSRegularExpression, which is immutable and thread-safe.
    private struct Entry: @unchecked Sendable {
        let regex: NSRegularExpression?
    }

    private let entries = Locked<[Key: Entry]>([:])

    func regex(_ pattern: String, _ options: NSRegularExpression.Options) -> NSRegularExpression? {
        let key = Key(pattern: pattern, options: options.rawValue)
        if let entry = entries.withLock({ $0[key] }) { return entry.regex }
        let regex = try? NSRegularExpression(pattern: pattern, options: options)
        entries.withLock { cache in
            if cache.count >= Self.limit { cache.removeAll() }
            cache[key] = Entry(regex: regex)
        }
        return regex
    }
}
