import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSComparisonPredicate
import class OpenCoreDataRuntime.NSExpression
import class OpenCoreDataRuntime.NSPredicate

/// ``PredicateTemplates``: a format string is parsed once and its template instantiated with each
/// call's arguments. The corpus-wide comparison with the direct parse is
/// `PredicateCorpusTests.templatesGiveTheDirectParse`.
@Suite struct PredicateTemplateTests {
    /// Parses twice (the second from the template, if any) and checks both against the direct parse.
    private func check(_ format: String, _ args: Any?..., expect printed: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let arguments = PredicateParser.formatArguments(args)
        let direct = try PredicateParser.parsePredicateUncached(format, arguments: arguments)
        #expect(direct.predicateFormat == printed, sourceLocation: sourceLocation)
        for _ in 0..<2 {
            let parsed = NSPredicate(format: format, argumentArray: arguments)
            #expect(parsed == direct, sourceLocation: sourceLocation)
            #expect(parsed.predicateFormat == printed, sourceLocation: sourceLocation)
        }
    }

    @Test func eachCallGetsItsOwnArguments() throws {
        let first = NSPredicate(format: "%K == %lld AND name BEGINSWITH[c] %@", "id", Int64(1), "a")
        let second = NSPredicate(format: "%K == %lld AND name BEGINSWITH[c] %@", "code", Int64(2), "b")
        #expect(first.predicateFormat == #"id == 1 AND name BEGINSWITH[c] "a""#)
        #expect(second.predicateFormat == #"code == 2 AND name BEGINSWITH[c] "b""#)
        #expect(first.evaluate(with: ["id": 1, "name": "Ann"]))
        #expect(!second.evaluate(with: ["id": 1, "name": "Ann"]))
        #expect(second.evaluate(with: ["code": 2, "name": "Bob"]))
        #expect(PredicateTemplates.usesTemplate("%K == %lld AND name BEGINSWITH[c] %@"))
    }

    /// Where the parse depends on an argument's value, the format is parsed directly every time.
    /// Fetches skip validating an instance whose template and `%K` key paths were validated for
    /// the entity before; another key path, or another entity, is still checked.
    @Test func validationIsRememberedPerEntityAndKeyPath() throws {
        let person = NSEntityDescription(
            name: "Person",
            properties: [
                NSAttributeDescription(name: "age", type: .integer64AttributeType),
                NSAttributeDescription(name: "name", type: .stringAttributeType),
            ])
        let pet = NSEntityDescription(name: "Pet", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let format = "%K == %d AND name != %@"
        for value in 0..<3 { try NSPredicate(format: format, "age", value, "x")._ocdValidate(for: person) }
        for entity in [person, pet] {
            let error = #expect(throws: OpenCoreDataError.self) {
                try NSPredicate(format: format, "weight", 1, "x")._ocdValidate(for: entity)
            }
            #expect(error?.code == .unknownKey && error?.key == "weight")
        }
        // Valid for Person, not for Pet, in either order.
        #expect(throws: OpenCoreDataError.self) { try NSPredicate(format: format, "age", 1, "x")._ocdValidate(for: pet) }
        try NSPredicate(format: format, "name", 1, "x")._ocdValidate(for: pet)
        try NSPredicate(format: format, "age", 4, "y")._ocdValidate(for: person)
    }

    @Test func valueDependentFormatsParseDirectly() throws {
        try check("x == -%d", 5, expect: "x == -5")  // folded to a constant
        try check("x == -%d", 7, expect: "x == -7")
        try check("%K.name == 'a'", "owner", expect: #"owner.name == "a""#)
        try check("owner.%K == 'a'", "name", expect: #"owner.name == "a""#)
        try check("CAST(%@, 'NSNumber') == 3", "3", expect: "3 == 3")
        for format in ["x == -%d", "%K.name == 'a'", "owner.%K == 'a'", "CAST(%@, 'NSNumber') == 3", "FUNCTION(x, %@) == 1"] {
            #expect(!PredicateTemplates.usesTemplate(format), "\(format)")
        }
    }

    @Test func slotsThroughTheWholeGrammar() throws {
        try check("ANY %K IN %@", "tags", ["a", "b"], expect: #"ANY tags IN {"a", "b"}"#)
        try check("x BETWEEN {%d, %d}", 1, 9, expect: "x BETWEEN {1, 9}")
        try check("SUBQUERY(%K, $p, $p.age > %d).@count == %d", "pets", 3, 2, expect: "SUBQUERY(pets, $p, $p.age > 3).@count == 2")
        try check("%K == nil OR %K == %@", "a", "b", nil, expect: "a == nil OR b == nil")
        try check("NOT (%K CONTAINS[cd] %s)", "name", "é", expect: #"NOT name CONTAINS[cd] "é""#)
        try check("x == $VALUE AND y == %f", 2.5, expect: "x == $VALUE AND y == 2.5")
        try check("TRUEPREDICATE", expect: "TRUEPREDICATE")
        // The variables of a format survive, and substitute as in any predicate.
        let predicate = NSPredicate(format: "x == $VALUE AND y == %d", 1).withSubstitutionVariables(["VALUE": 3])
        #expect(predicate.predicateFormat == "x == 3 AND y == 1")
    }

    /// Errors are the direct parse's, with its messages and offsets.
    @Test func argumentErrorsAreTheDirectParses() throws {
        let format = "name == %@ AND age > %d"
        _ = NSPredicate(format: format, "Ann", 3)  // cache the template
        for args: [Any?] in [["Ann"], ["Ann", "three"], []] {
            let arguments = PredicateParser.formatArguments(args)
            let direct = Result { try PredicateParser.parsePredicateUncached(format, arguments: arguments) }
            let cached = Result { try NSPredicate(validatingFormat: format, argumentArray: arguments) }
            guard case .failure(let expected) = direct, case .failure(let got) = cached else {
                Issue.record("\(args): expected an error, got \(cached)")
                continue
            }
            #expect("\(got)" == "\(expected)")
        }
        #expect(throws: OpenCoreDataError.self) { try NSPredicate(validatingFormat: "%K == 1", 42) }
        let invalid = NSPredicate(format: "name == %@ AND", "Ann")
        #expect(throws: OpenCoreDataError.self) { try invalid._ocdCheckValid() }
    }

    @Test func concurrentUseIsSafe() async throws {
        await withTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    (0..<500).allSatisfy { i in
                        let value = task * 1000 + i
                        let predicate = NSPredicate(format: "%K == %d", i % 2 == 0 ? "a" : "b", value)
                        return predicate.evaluate(with: [i % 2 == 0 ? "a" : "b": value])
                            && !predicate.evaluate(with: ["a": value + 1, "b": value + 1])
                    }
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
