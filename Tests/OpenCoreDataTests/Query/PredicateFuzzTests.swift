import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSPredicate

/// Random token soup: the parser never crashes, and whatever parses prints to a string that
/// parses back to an equal predicate.
@Suite struct PredicateFuzzTests {
    /// A small deterministic generator (SplitMix64) so failures reproduce.
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static let pieces = [
        "a", "b.c", "SELF", "$v", "1", "2.5", "-3", "'s'", "\"q\"", "nil", "TRUE", "{1, 2}", "(", ")", "==", "!=", "<", ">=",
        "IN", "CONTAINS", "BEGINSWITH[cd]", "LIKE", "BETWEEN", "AND", "OR", "NOT", "ANY", "ALL", "NONE", "+", "*", "**", "-",
        "[FIRST]", "[1]", ".@count", "sum:(", "SUBQUERY(", ",", "%@", "%K", "%d", "#in", "TRUEPREDICATE", "[c]", "'", "@", "&",
    ]

    @Test func neverCrashesAndRoundTrips() {
        var rng = SplitMix(state: 42)
        var parsed = 0
        for _ in 0..<3000 {
            let count = Int.random(in: 1...9, using: &rng)
            let format = (0..<count).map { _ in Self.pieces.randomElement(using: &rng)! }.joined(separator: " ")
            let args: [Any] = ["k", 1, 2]
            guard let p = try? NSPredicate(validatingFormat: format, argumentArray: args) else {
                _ = NSPredicate(format: format, argumentArray: args).evaluate(with: ["a": 1])
                continue
            }
            parsed += 1
            _ = p.evaluate(with: ["a": 1, "b": ["c": [1, 2]], "k": "s"])
            let printed = p.predicateFormat
            let q = try? NSPredicate(validatingFormat: printed, argumentArray: [])
            #expect(q.map { p.isEqual($0) } == true, "\(format) printed as \(printed)")
        }
        #expect(parsed > 10)
    }

    private static func expression(_ depth: Int, _ rng: inout SplitMix) -> String {
        let atoms = ["a", "b.c", "SELF", "$v", "1", "2.5", "-3", "'s'", "\"q\\\"\"", "nil", "TRUE", "{1, 'x'}", "#size", "b.c.@count", "%K", "%@"]
        if depth <= 0 || Bool.random(using: &rng) { return atoms.randomElement(using: &rng)! }
        let a = expression(depth - 1, &rng), b = expression(depth - 1, &rng)
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return "(\(a) + \(b))"
        case 1: return "\(a) * \(b) - \(b)"
        case 2: return "\(a) ** 2"
        case 3: return "sum:(\(a))"
        case 4: return "b.c[FIRST]"
        case 5: return "{\(a), \(b)}"
        case 6: return "-\(a)"
        default: return "TERNARY(\(a) == \(b), \(a), \(b))"
        }
    }

    private static func predicate(_ depth: Int, _ rng: inout SplitMix) -> String {
        let ops = ["==", "=", "!=", "<>", "<", "<=", ">", ">=", "IN", "CONTAINS", "BEGINSWITH[c]", "LIKE[cd]", "MATCHES", "BETWEEN", "ENDSWITH[n]"]
        let leaf = "\(expression(2, &rng)) \(ops.randomElement(using: &rng)!) \(expression(2, &rng))"
        if depth <= 0 { return leaf }
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: return "NOT \(predicate(depth - 1, &rng))"
        case 1: return "(\(predicate(depth - 1, &rng)) AND \(predicate(depth - 1, &rng)))"
        case 2: return "\(predicate(depth - 1, &rng)) OR \(predicate(depth - 1, &rng)) && \(predicate(depth - 1, &rng))"
        case 3: return "ANY b.c > 1"
        case 4: return "SUBQUERY(b.c, $x, \(predicate(depth - 1, &rng))).@count > 0"
        case 5: return Bool.random(using: &rng) ? "TRUEPREDICATE" : "NONE b.c == 2"
        default: return leaf
        }
    }

    @Test func generatedPredicatesRoundTrip() throws {
        var rng = SplitMix(state: 7)
        for _ in 0..<1500 {
            let format = Self.predicate(3, &rng)
            let p = try NSPredicate(validatingFormat: format, argumentArray: Array(repeating: "k", count: 40))
            _ = p.evaluate(with: ["a": 1, "b": ["c": [1, 2]], "k": "s"], substitutionVariables: ["v": 2, "x": 1])
            let printed = p.predicateFormat
            let q = try NSPredicate(validatingFormat: printed, argumentArray: [])
            #expect(p.isEqual(q), "\(format) printed as \(printed)")
            #expect(p.hash == q.hash, "\(format) printed as \(printed)")
        }
    }
}
