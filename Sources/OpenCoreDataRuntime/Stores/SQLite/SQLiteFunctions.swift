import CSQLite
import Foundation

/// SQL functions the store registers on each connection, so string predicates keep Apple's
/// in-memory (Unicode) semantics inside SQL instead of SQLite's ASCII-only `LIKE`/`NOCASE`.
///
/// `ocd_strop(op, options, value, pattern)` returns 1 when `value <op> pattern` holds, where `op` is an
/// `NSComparisonPredicate.Operator` raw value (==, !=, <, <=, >, >=, MATCHES, LIKE, BEGINSWITH, ENDSWITH, CONTAINS)
/// and `options` an `NSComparisonPredicate.Options` raw value ([c], [d], [n]). NULL operands give 0.
enum SQLiteFunctions {
    static let stringOperationName = "ocd_strop"

    static func register(on db: OpaquePointer?) {
        sqlite3_create_function_v2(
            db, stringOperationName, 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, ocdStringOperation, nil, nil, nil)
        // One collation per sort-descriptor selector, ordering text as the in-memory sort does; the
        // context pointer carries the selector's raw value.
        for selector in SortSelector.allCases {
            guard let name = selector.collationName else { continue }
            sqlite3_create_collation_v2(
                db, name, SQLITE_UTF8, UnsafeMutableRawPointer(bitPattern: Int(selector.rawValue)),
                ocdCollation, nil)
        }
    }

    /// The body of the selector collations (called from the C callback).
    static func collate(
        _ context: UnsafeMutableRawPointer?, _ count1: Int32, _ text1: UnsafeRawPointer?, _ count2: Int32,
        _ text2: UnsafeRawPointer?
    ) -> Int32 {
        func string(_ pointer: UnsafeRawPointer?, _ count: Int32) -> String {
            guard let pointer, count > 0 else { return "" }
            return String(sqliteText: pointer, count: Int(count))
        }
        let selector = SortSelector(rawValue: Int32(truncatingIfNeeded: Int(bitPattern: context))) ?? .compare
        switch selector.compare(string(text1, count1), string(text2, count2)) {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }

    /// The body of `ocd_strop` (called from the C callback).
    static func stringOperation(_ ctx: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let argv, argc == 4 else {
            sqlite3_result_null(ctx)
            return
        }
        if sqlite3_value_type(argv[2]) == SQLITE_NULL || sqlite3_value_type(argv[3]) == SQLITE_NULL {
            sqlite3_result_int(ctx, 0)
            return
        }
        let op = UInt(sqlite3_value_int(argv[0]))
        let options = UInt(sqlite3_value_int(argv[1]))
        let matched = match(op: op, options: options, value: text(argv[2]), pattern: text(argv[3]))
        sqlite3_result_int(ctx, matched ? 1 : 0)
    }

    private static func text(_ value: OpaquePointer?) -> String {
        guard let pointer = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(sqliteText: pointer, count: count)
    }

    /// Folds a string as the predicate options ask (case, diacritics), using Unicode rules.
    static func fold(_ string: String, options: UInt) -> String {
        var folding: String.CompareOptions = []
        if options & NSComparisonPredicate.Options.caseInsensitive.rawValue != 0 { folding.insert(.caseInsensitive) }
        if options & NSComparisonPredicate.Options.diacriticInsensitive.rawValue != 0 {
            folding.insert(.diacriticInsensitive)
        }
        return folding.isEmpty ? string : string.folding(options: folding, locale: nil)
    }

    static func match(op: UInt, options: UInt, value: String, pattern: String) -> Bool {
        // Orderings with [c]/[d] run the in-memory comparison itself.
        let ordering: [NSComparisonPredicate.Operator: Set<ComparisonResult>] = [
            .lessThan: [.orderedAscending], .lessThanOrEqualTo: [.orderedAscending, .orderedSame],
            .greaterThan: [.orderedDescending], .greaterThanOrEqualTo: [.orderedDescending, .orderedSame],
        ]
        if let operation = NSComparisonPredicate.Operator(rawValue: op), let accepted = ordering[operation] {
            let order = PredicateValues.compare(value, pattern, options: NSComparisonPredicate.Options(rawValue: options))
            return order.map(accepted.contains) ?? false
        }
        let value = fold(value, options: options)
        let pattern = fold(pattern, options: options)
        switch NSComparisonPredicate.Operator(rawValue: op) {
        case .equalTo: return value == pattern
        case .notEqualTo: return value != pattern
        // An empty prefix, suffix or substring is never found, as with NSString's `hasPrefix:` and
        // `rangeOfString:` and the in-memory evaluator (Apple's `BEGINSWITH ''` is false).
        case .beginsWith: return !pattern.isEmpty && value.hasPrefix(pattern)
        case .endsWith: return !pattern.isEmpty && value.hasSuffix(pattern)
        case .contains: return !pattern.isEmpty && value.range(of: pattern) != nil
        case .like: return regex(likePattern(pattern))?.wholeMatch(value) ?? false
        case .matches: return regex(pattern)?.wholeMatch(value) ?? false
        default: return false
        }
    }

    /// A `LIKE` pattern (`*` any run, `?` one character, `\` escapes) as a regular expression.
    private static func likePattern(_ pattern: String) -> String {
        var result = ""
        var escaped = false
        for character in pattern {
            if escaped {
                result += NSRegularExpression.escapedPattern(for: String(character))
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "*": result += ".*"
            case "?": result += "."
            default: result += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        return result
    }

    private static let regexCache = Locked<[String: NSRegularExpression]>([:])

    private static func regex(_ pattern: String) -> NSRegularExpression? {
        if let cached = regexCache.withLock({ $0[pattern] }) { return cached }
        guard
            let made = try? NSRegularExpression(
                pattern: "\\A(?:" + pattern + ")\\z", options: [.dotMatchesLineSeparators])
        else { return nil }
        regexCache.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[pattern] = made
        }
        return made
    }
}

extension NSRegularExpression {
    /// Whether the expression matches all of `string`.
    fileprivate func wholeMatch(_ string: String) -> Bool {
        firstMatch(in: string, options: [], range: NSRange(string.startIndex..., in: string)) != nil
    }
}

/// The C entry point of `ocd_strop` (a plain function: SQLite calls it through a C pointer).
private func ocdStringOperation(_ ctx: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<OpaquePointer?>?) {
    SQLiteFunctions.stringOperation(ctx, argc, argv)
}

/// The C entry point of the selector collations.
private func ocdCollation(
    _ context: UnsafeMutableRawPointer?, _ count1: Int32, _ text1: UnsafeRawPointer?, _ count2: Int32,
    _ text2: UnsafeRawPointer?
) -> Int32 {
    SQLiteFunctions.collate(context, count1, text1, count2, text2)
}
