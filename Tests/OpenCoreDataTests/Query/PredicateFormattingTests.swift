import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSComparisonPredicate
import class OpenCoreDataRuntime.NSCompoundPredicate
import class OpenCoreDataRuntime.NSExpression
import class OpenCoreDataRuntime.NSPredicate
import class OpenCoreDataRuntime.NSSortDescriptor

@Suite struct PredicateFormattingTests {
    @Test func applesSpellings() {
        #expect(NSPredicate(format: "a = 1").predicateFormat == "a == 1")
        #expect(NSPredicate(format: "a <> 1").predicateFormat == "a != 1")
        #expect(NSPredicate(format: "a =< 1").predicateFormat == "a <= 1")
        #expect(NSPredicate(format: "name = 'x'").predicateFormat == "name == \"x\"")
        #expect(NSPredicate(format: "name beginswith[cd] 'x'").predicateFormat == "name BEGINSWITH[cd] \"x\"")
        #expect(NSPredicate(format: "available = true").predicateFormat == "available == 1")
        #expect(NSPredicate(format: "a == nil").predicateFormat == "a == nil")
        #expect(NSPredicate(format: "any kids.age > 3").predicateFormat == "ANY kids.age > 3")
        #expect(NSPredicate(format: "none kids.age > 3").predicateFormat == "NOT ANY kids.age > 3")
        #expect(NSPredicate(format: "a IN %@", [1, 2]).predicateFormat == "a IN {1, 2}")
        #expect(NSPredicate(format: "a == %f", 1.5).predicateFormat == "a == 1.5")
        #expect(NSPredicate(format: "%K like %@+$b+$c", "$single", "b\"").predicateFormat == "$single LIKE (\"b\\\"\" + $b) + $c")
        #expect(NSPredicate(format: "#size == 1").predicateFormat == "#size == 1")
        #expect(NSPredicate(format: "a == 1 AND (b == 2 OR c == 3)").predicateFormat == "a == 1 AND (b == 2 OR c == 3)")
        #expect(NSPredicate(format: "NOT (a == 1 AND b == 2)").predicateFormat == "NOT (a == 1 AND b == 2)")
        #expect(NSPredicate(value: true).predicateFormat == "TRUEPREDICATE")
        #expect(NSPredicate(format: "SELF[LAST] == 1").predicateFormat == "SELF[LAST] == 1")
        #expect(NSPredicate(format: "SUBQUERY(kids, $k, $k.age > 3).@count > 0").predicateFormat == "SUBQUERY(kids, $k, $k.age > 3).@count > 0")
    }

    /// Every format parses back from its `predicateFormat` to an equal predicate with an equal hash.
    @Test(arguments: [
        "a == 1", "a = 1.25", "name ==[c] 'x'", "a != nil", "a BETWEEN {1, 10}", "ANY a.b IN {'x', \"y\"}",
        "ALL kids.age >= 3", "NONE kids.age >= 3", "a == 1 AND b == 2 OR NOT c == 3", "(a + 2) * 3 ** 2 > -b / 4",
        "a.@count == 0", "sum:(a.b) > 1", "SELF[FIRST] == $v", "d > CAST(12.5, 'NSDate')", "x MATCHES 'a\\\\d+'",
        "SUBQUERY(kids, $k, $k.age > 3 AND $k.name BEGINSWITH 'a').@count > 0", "TERNARY(a > 1, 'x', 'y') == 'x'",
        "now() > d", "FUNCTION(name, 'uppercaseString') == 'X'", "a UNION b CONTAINS 1", "#in == 1", "s == 'tab\\t\"quote\"'",
        "(key & 1) > 0", "TRUEPREDICATE", "FALSEPREDICATE", "a == -3", "%K['k'] == 1",
    ])
    func roundTrip(format: String) throws {
        let args: [Any] = format.contains("%K") ? ["d"] : []
        let p = try NSPredicate(validatingFormat: format, argumentArray: args)
        let printed = p.predicateFormat
        let q = try NSPredicate(validatingFormat: printed, argumentArray: [])
        #expect(p.isEqual(q), "\(format) printed as \(printed)")
        #expect(p.hash == q.hash)
        #expect(q.predicateFormat == printed)
    }

    @Test func constantsThatRoundTrip() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123.456)
        let id = UUID()
        for value: Any in [date, id, Data([0, 1, 255]), URL(string: "https://x.org/a?b")!, Decimal(string: "1.25")!, ["a", "b"], Int64.max] {
            let p = NSPredicate(format: "v == %@", value)
            let q = try NSPredicate(validatingFormat: p.predicateFormat)
            #expect(p.isEqual(q), "\(p.predicateFormat)")
        }
    }

    @Test func structuralEquality() {
        #expect(NSPredicate(format: "name == 'x'").isEqual(NSPredicate(format: "name = \"x\"")))
        #expect(!NSPredicate(format: "name == 'x'").isEqual(NSPredicate(format: "name ==[c] 'x'")))
        #expect(!NSPredicate(format: "a == 1").isEqual(NSPredicate(format: "a == '1'")))
        #expect(NSPredicate(format: "a == 1").isEqual(NSPredicate(format: "a == 1.0")))
        #expect(NSPredicate(format: "a == 1").hash == NSPredicate(format: "a == 1.0").hash)
        #expect(!NSPredicate(format: "a == 1 AND b == 2").isEqual(NSPredicate(format: "a == 1 OR b == 2")))
        #expect(NSPredicate(value: true).isEqual(NSPredicate(format: "TRUEPREDICATE")))
        let hand = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "name"), rightExpression: NSExpression(forConstantValue: "y"),
            modifier: .direct, type: .contains, options: [])
        #expect(hand.isEqual(NSPredicate(format: "name CONTAINS 'y'")))
        #expect(hand.predicateFormat == NSPredicate(format: "name CONTAINS 'y'").predicateFormat)
        #expect(Set([NSPredicate(format: "a == 1"), NSPredicate(format: "a = 1")]).count == 1)
        let p = NSPredicate(format: "a == 1")
        #expect((p.copy() as? NSPredicate)?.isEqual(p) == true)
    }

    @Test func substitutionPrinting() {
        let p = NSPredicate(format: "%K like %@+$b+$c", "$single", "b\"")
        let q = p.withSubstitutionVariables(["single": "val_for_single_string", "b": "val_for_$b", "c": "val_for_$c"])
        #expect(q.predicateFormat == "$single LIKE (\"b\\\"\" + \"val_for_$b\") + \"val_for_$c\"")
        #expect(q is NSComparisonPredicate)
    }
}
