import Foundation
import OpenCoreData
import Testing

/// Compiles against the public API only, the way users see it (`import Foundation` next to
/// `import OpenCoreData`): no ambiguity with Foundation's unavailable Linux declarations.
@Suite struct PredicatePublicAPITests {
    @Test func usersSpellings() throws {
        let p = NSPredicate(format: "name BEGINSWITH[c] %@ AND age >= %d", "a", 18)
        #expect(p.evaluate(with: ["name": "Ann", "age": 30]))
        #expect(p is NSCompoundPredicate)
        let q = try NSPredicate(validatingFormat: "%K == %@", "name", "x")
        #expect((q as? NSComparisonPredicate)?.leftExpression.keyPath == "name")
        #expect(NSCompoundPredicate(orPredicateWithSubpredicates: [p, q]).subpredicates.count == 2)
        #expect(NSExpression(format: "1 + 2").expressionValue(with: nil, context: nil) as? Int == 3)
        #expect(NSSortDescriptor(key: "a", ascending: true).compare(["a": 1], to: ["a": 2]) == .orderedAscending)
        let block = NSPredicate { object, _ in object != nil }
        #expect(block.evaluate(with: 1))
        #expect(NSPredicate(format: "a == $v").withSubstitutionVariables(["v": 1]).evaluate(with: ["a": 1]))
    }
}
