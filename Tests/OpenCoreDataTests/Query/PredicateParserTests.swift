import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSComparisonPredicate
import class OpenCoreDataRuntime.NSCompoundPredicate
import class OpenCoreDataRuntime.NSExpression
import class OpenCoreDataRuntime.NSPredicate
import class OpenCoreDataRuntime.NSSortDescriptor

@Suite struct PredicateParserTests {
    private func comparison(_ format: String, _ args: Any?...) throws -> NSComparisonPredicate {
        let predicate = try NSPredicate(validatingFormat: format, argumentArray: args.map { $0 as Any })
        return try #require(predicate as? NSComparisonPredicate, "\(format) should parse to a comparison")
    }

    private func compound(_ predicate: NSPredicate) throws -> NSCompoundPredicate {
        try #require(predicate as? NSCompoundPredicate)
    }

    @Test func operatorsAndSpellings() throws {
        let cases: [(String, NSComparisonPredicate.Operator)] = [
            ("a = 1", .equalTo), ("a == 1", .equalTo), ("a != 1", .notEqualTo), ("a <> 1", .notEqualTo),
            ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqualTo), ("a =< 1", .lessThanOrEqualTo),
            ("a > 1", .greaterThan), ("a >= 1", .greaterThanOrEqualTo), ("a => 1", .greaterThanOrEqualTo),
            ("a BETWEEN {1, 2}", .between), ("a in {1, 2}", .in), ("a CONTAINS 'x'", .contains),
            ("a beginswith 'x'", .beginsWith), ("a EndsWith 'x'", .endsWith), ("a LIKE 'x*'", .like), ("a MATCHES 'x.*'", .matches),
        ]
        for (format, type) in cases {
            #expect(try comparison(format).predicateOperatorType == type, "\(format)")
        }
    }

    @Test func options() throws {
        #expect(try comparison("a ==[c] 'x'").options == [.caseInsensitive])
        #expect(try comparison("a CONTAINS[d] 'x'").options == [.diacriticInsensitive])
        #expect(try comparison("a LIKE[cd] 'x'").options == [.caseInsensitive, .diacriticInsensitive])
        #expect(try comparison("a BEGINSWITH[n] 'x'").options == [.normalized])
    }

    @Test func modifiers() throws {
        #expect(try comparison("ANY kids.name == 'x'").comparisonPredicateModifier == .any)
        #expect(try comparison("some kids.name == 'x'").comparisonPredicateModifier == .any)
        #expect(try comparison("ALL kids.age > 3").comparisonPredicateModifier == .all)
        let none = try compound(try NSPredicate(validatingFormat: "NONE kids.age > 3"))
        #expect(none.compoundPredicateType == .not)
        #expect((none.subpredicates[0] as? NSComparisonPredicate)?.comparisonPredicateModifier == .any)
    }

    /// Apple's precedence, which we rely on: NOT binds tighter than AND, AND tighter than OR.
    /// Evidence: MIOCoreData's AppleCoreDataTests (run against Apple's Foundation) expect
    /// `available = true or value >= 1 and value <= 10.5` to be OR(…, AND(…, …)) and
    /// `not available = true or …` to be OR(NOT(…), AND(…)) (corpus cases 0109, 0110). Apple's
    /// BNF does not state it; GNUstep's parser differs (binds OR tighter than AND).
    @Test func precedenceNotAndOr() throws {
        let p = try compound(try NSPredicate(validatingFormat: "NOT a == 1 OR b == 2 AND c == 3"))
        #expect(p.compoundPredicateType == .or)
        #expect(try compound(p.subpredicates[0] as! NSPredicate).compoundPredicateType == .not)
        #expect(try compound(p.subpredicates[1] as! NSPredicate).compoundPredicateType == .and)
        let q = try compound(try NSPredicate(validatingFormat: "a == 1 && b == 2 || !c == 3"))
        #expect(q.compoundPredicateType == .or)
        #expect(q.predicateFormat == "(a == 1 AND b == 2) OR (NOT c == 3)")
    }

    @Test func chainsFlattenParenthesesDoNot() throws {
        #expect(try compound(try NSPredicate(validatingFormat: "a == 1 AND b == 2 AND c == 3")).subpredicates.count == 3)
        let nested = try compound(try NSPredicate(validatingFormat: "a == 1 AND (b == 2 AND c == 3)"))
        #expect(nested.subpredicates.count == 2)
    }

    @Test func parenthesisedExpressionOrPredicate() throws {
        let bitwise = try comparison("(key & 1) > 0")
        #expect(bitwise.leftExpression.function == "bitwiseAnd:with:")
        #expect(try comparison("(a == 1)").predicateOperatorType == .equalTo)
        #expect(try comparison("(a + 1) * 2 == 4").leftExpression.function == "multiply:by:")
    }

    @Test func literals() throws {
        #expect(try comparison("a == \"q\\\"x\"").rightExpression.constantValue as? String == "q\"x")
        #expect(try comparison("a == 'tab\\there'").rightExpression.constantValue as? String == "tab\there")
        #expect(try comparison("a == 42").rightExpression.constantValue as? Int == 42)
        #expect(try comparison("a == 1.5").rightExpression.constantValue as? Double == 1.5)
        #expect(try comparison("a == 1e3").rightExpression.constantValue as? Double == 1000)
        #expect(try comparison("a == 0x1F").rightExpression.constantValue as? Int == 31)
        #expect(try comparison("a == 0o17").rightExpression.constantValue as? Int == 15)
        #expect(try comparison("a == 0b101").rightExpression.constantValue as? Int == 5)
        #expect(try comparison("a == -7").rightExpression.constantValue as? Int == -7)
        for word in ["TRUE", "yes"] { #expect(try comparison("a == \(word)").rightExpression.constantValue as? Bool == true) }
        for word in ["FALSE", "No"] { #expect(try comparison("a == \(word)").rightExpression.constantValue as? Bool == false) }
        for word in ["NULL", "nil"] {
            let p = try comparison("a == \(word)")
            #expect(p.rightExpression.expressionType == .constantValue)
            #expect(p.rightExpression.constantValue == nil)
        }
    }

    @Test func expressionsKinds() throws {
        #expect(try comparison("SELF == 1").leftExpression.expressionType == .evaluatedObject)
        #expect(try comparison("$x == 1").leftExpression.variable == "x")
        let path = try comparison("a.b.@count == 1").leftExpression
        #expect(path.expressionType == .keyPath && path.keyPath == "a.b.@count")
        #expect(try comparison("#in == 1").leftExpression.keyPath == "in")
        #expect(try comparison("a.#and == 1").leftExpression.keyPath == "a.and")
        let aggregate = try comparison("a IN {1, 'two', $three}").rightExpression
        #expect(aggregate.expressionType == .aggregate && (aggregate.collection as? [NSExpression])?.count == 3)
        let sub = try comparison("SELF[FIRST] == 1").leftExpression
        #expect(sub.function == "objectFrom:withIndex:")
        #expect(try comparison("a ** 2 + -b * 3 / c - d == 0").leftExpression.function == "from:subtract:")
        #expect(try comparison("sum:(a) == 3").leftExpression.function == "sum:")
        #expect(try comparison("sum(a) == 3").leftExpression.function == "sum:")
        #expect(try comparison("now() > d").leftExpression.function == "now")
        #expect(try comparison("add:to:(1, 2) == 3").leftExpression.function == "add:to:")
        let f = try comparison("FUNCTION(name, 'uppercaseString') == 'X'").leftExpression
        #expect(f.function == "uppercaseString" && f.operand.keyPath == "name")
        let subquery = try comparison("SUBQUERY(kids, $k, $k.age > 3).@count > 0").leftExpression
        #expect(subquery.expressionType == .keyPath && subquery.keyPath == "@count")
        #expect(subquery.operand.expressionType == .subquery && subquery.operand.variable == "k")
        let date = try comparison("d > CAST(0, 'NSDate')").rightExpression.constantValue as? Date
        #expect(date == Date(timeIntervalSinceReferenceDate: 0))
        #expect(try comparison("TERNARY(a > 1, 'big', 'small') == 'big'").leftExpression.expressionType == .conditional)
        #expect(try comparison("a UNION b CONTAINS 1").leftExpression.expressionType == .unionSet)
        #expect(NSPredicate(format: "TRUEPREDICATE").evaluate(with: nil))
        #expect(!NSPredicate(format: "falsepredicate").evaluate(with: nil))
    }

    @Test func specifiers() throws {
        #expect(try comparison("%K == %@", "name", "x").leftExpression.keyPath == "name")
        #expect(try comparison("%K.%K == 1", "a", "b").leftExpression.keyPath == "a.b")
        #expect(try comparison("%K['k'] == 1", "d").leftExpression.function == "objectFrom:withIndex:")
        #expect(try comparison("a == %@", "x").rightExpression.constantValue as? String == "x")
        #expect(try comparison("a == '%@'", "x").rightExpression.constantValue as? String == "%@")
        for spec in ["%d", "%i", "%ld", "%lld", "%u", "%lu", "%llu", "%hd", "%hi", "%qd"] {
            #expect(try comparison("a == \(spec)", Int32(5)).rightExpression.constantValue as? Int == 5, "\(spec)")
        }
        #expect(try comparison("a == %d", UInt8(5)).rightExpression.constantValue as? Int == 5)
        #expect(try comparison("a == %d", NSNumber(value: 5)).rightExpression.constantValue as? Int == 5)
        #expect(try comparison("a == %d", true).rightExpression.constantValue as? Int == 1)
        for spec in ["%f", "%lf", "%g", "%e"] {
            #expect(try comparison("a == \(spec)", Float(1.5)).rightExpression.constantValue as? Double == 1.5, "\(spec)")
        }
        #expect(try comparison("a == %s", "c").rightExpression.constantValue as? String == "c")
        #expect(try comparison("a == %c", "c").rightExpression.constantValue as? String == "c")
        #expect(try comparison("a == %@", nil).rightExpression.constantValue == nil)
        let optional: Int? = 3
        #expect(try comparison("a == %@", optional).rightExpression.constantValue as? Int == 3)
        #expect(try comparison("a IN %@", [1, 2]).rightExpression.constantValue as? [Int] == [1, 2])
        let id = UUID()
        #expect(try comparison("a == %@", id).rightExpression.constantValue as? UUID == id)
    }

    @Test func keywordsAreCaseInsensitive() throws {
        let p = try compound(try NSPredicate(validatingFormat: "not a == 1 and any b.c like[c] 'x' or self in {1}"))
        #expect(p.compoundPredicateType == .or)
    }

    // MARK: Errors

    private func parseError(_ format: String, _ args: Any?...) -> OpenCoreDataError? {
        do {
            _ = try NSPredicate(validatingFormat: format, argumentArray: args.map { $0 as Any })
            return nil
        } catch {
            return error as? OpenCoreDataError
        }
    }

    @Test func errorMessageWithCaretAfterOperator() throws {
        let error = try #require(parseError("name == AND x"))
        #expect(error.code == .invalidFormat)
        #expect(error.message == """
            expected an expression after '=='
            name == AND x
                    ^
            """)
    }

    @Test func errorMessageWithCaretForMissingArgument() throws {
        let error = try #require(parseError("a == %@ AND b == %@", "x"))
        #expect(error.message == """
            missing argument for '%@': the format has more specifiers than the 1 argument given
            a == %@ AND b == %@
                             ^
            """)
    }

    @Test func otherErrors() {
        #expect(parseError("%K == 1", 5)?.message.hasPrefix("'%K' expects a key path string, got Int") == true)
        #expect(parseError("a == 'open")?.message.hasPrefix("unterminated string") == true)
        #expect(parseError("a ==")?.message.hasPrefix("expected an expression after '=='") == true)
        #expect(parseError("a")?.message.hasPrefix("expected a comparison operator") == true)
        #expect(parseError("a == 1 b == 2")?.message.hasPrefix("expected AND, OR or the end") == true)
        #expect(parseError("(a == 1")?.message.hasPrefix("expected ')'") == true)
        #expect(parseError("a ==[x] 1")?.message.hasPrefix("unknown comparison option") == true)
        #expect(parseError("nosuch:(a) == 1")?.message.hasPrefix("unknown function") == true)
        #expect(parseError("a == %d", "x")?.message.hasPrefix("'%d' expects an integer") == true)
        #expect(parseError("")?.message.hasPrefix("expected a predicate") == true)
        #expect(parseError("a == 1 AND")?.message.hasPrefix("expected a predicate after 'AND'") == true)
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        let deep = String(repeating: "(", count: 100_000) + "a == 1" + String(repeating: ")", count: 100_000)
        #expect(parseError(deep)?.message.hasPrefix("nesting deeper than 256 levels") == true)
        #expect(parseError(String(repeating: "NOT ", count: 10_000) + "a == 1") != nil)
        #expect(parseError("a == " + String(repeating: "-", count: 10_000) + "1") != nil)
        let fine = String(repeating: "(", count: 50) + "a == 1" + String(repeating: ")", count: 50)
        #expect(NSPredicate(format: fine).evaluate(with: ["a": 1]))
    }

    @Test func malformedFormatNeverCrashesAndFetchCheckThrows() {
        let p = NSPredicate(format: "name == AND x")
        #expect(!p.evaluate(with: ["name": "x"]))
        #expect(throws: OpenCoreDataError.self) { try p._ocdCheckValid() }
        let wrapped = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(value: true), p])
        #expect(throws: OpenCoreDataError.self) { try wrapped._ocdCheckValid() }
        #expect(throws: Never.self) { try NSPredicate(format: "a == 1")._ocdCheckValid() }
        // Too few arguments does not crash either.
        #expect(!NSPredicate(format: "a == %@").evaluate(with: ["a": 1]))
    }

    @Test func formatInitReturnsSubclasses() {
        #expect(NSPredicate(format: "a == 1") is NSComparisonPredicate)
        #expect(NSPredicate(format: "a == 1 OR b == 2") is NSCompoundPredicate)
        #expect(!(NSPredicate(format: "TRUEPREDICATE") is NSComparisonPredicate))
    }

    @Test func expressionFormat() throws {
        let e = try NSExpression(validatingFormat: "%d * %f", 3, 3.5)
        #expect(e.expressionValue(with: nil, context: nil) as? Double == 10.5)
        #expect(NSExpression(format: "a +").expressionType == .constantValue)
        #expect(throws: OpenCoreDataError.self) { try NSExpression(validatingFormat: "a +") }
    }
}
