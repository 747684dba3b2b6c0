import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSComparisonPredicate
import class OpenCoreDataRuntime.NSCompoundPredicate
import class OpenCoreDataRuntime.NSExpression
import class OpenCoreDataRuntime.NSPredicate
import class OpenCoreDataRuntime.NSSortDescriptor

@Suite struct NSExpressionTests {
    @Test func initializersAndProperties() {
        #expect(NSExpression(forConstantValue: 3).expressionType == .constantValue)
        #expect(NSExpression(forKeyPath: "a.b").keyPath == "a.b")
        #expect(NSExpression(forVariable: "v").variable == "v")
        #expect(NSExpression.expressionForEvaluatedObject().expressionType == .evaluatedObject)
        #expect(NSExpression.expressionForAnyKey().expressionType == .anyKey)
        let f = NSExpression(forFunction: "add:to:", arguments: [NSExpression(forConstantValue: 1), 2])
        #expect(f.function == "add:to:" && f.arguments?.count == 2)
        #expect(f.expressionValue(with: nil, context: nil) as? Int == 3)
        let aggregate = NSExpression(forAggregate: [NSExpression(forConstantValue: 1), 2])
        #expect((aggregate.collection as? [NSExpression])?.count == 2)
        let union = NSExpression(forUnionSet: aggregate, with: NSExpression(forConstantValue: [2, 3]))
        #expect(union.expressionType == .unionSet && union.left === aggregate)
        #expect((union.expressionValue(with: nil, context: nil) as? [Int])?.sorted() == [1, 2, 3])
        #expect((NSExpression(forIntersectSet: aggregate, with: NSExpression(forConstantValue: [2, 3])).expressionValue(with: nil, context: nil) as? [Int]) == [2])
        #expect((NSExpression(forMinusSet: aggregate, with: NSExpression(forConstantValue: [2, 3])).expressionValue(with: nil, context: nil) as? [Int]) == [1])
        let sub = NSExpression(forSubquery: NSExpression(forKeyPath: "xs"), usingIteratorVariable: "x", predicate: NSPredicate(format: "$x > 1"))
        #expect(sub.variable == "x" && sub.predicate.predicateFormat == "$x > 1")
        #expect((sub.expressionValue(with: ["xs": [1, 2, 3]], context: nil) as? [Int]) == [2, 3])
        let block = NSExpression(block: { object, args, _ in (object as? Int ?? 0) + args.count }, arguments: [NSExpression(forConstantValue: 0)])
        #expect(block.expressionType == .block && block.expressionValue(with: 41, context: nil) as? Int == 42)
        let conditional = NSExpression(forConditional: NSPredicate(format: "SELF > 1"), trueExpression: NSExpression(forConstantValue: "big"),
                                       falseExpression: NSExpression(forConstantValue: "small"))
        #expect(conditional.expressionValue(with: 5, context: nil) as? String == "big")
        #expect(conditional.trueExpression.constantValue as? String == "big")
        // Reading a property that does not fit the type does not crash.
        #expect(NSExpression(forConstantValue: 1).keyPath == "")
        #expect(NSExpression(forConstantValue: 1).arguments == nil)
    }

    @Test func predefinedFunctions() {
        func value(_ name: String, _ args: Any...) -> Any? {
            NSExpression(forFunction: name, arguments: args.map { NSExpression(forConstantValue: $0) }).expressionValue(with: nil, context: nil)
        }
        #expect(value("sum:", [1, 2, 3]) as? Int == 6)
        #expect(value("average:", [1, 2, 3]) as? Double == 2)
        #expect(value("count:", [1, 2, 3]) as? Int == 3)
        #expect(value("min:", [3, 1, 2]) as? Int == 1)
        #expect(value("max:", [3, 1, 2]) as? Int == 3)
        #expect(value("median:", [3, 1, 2, 10]) as? Double == 2.5)
        #expect(value("stddev:", [2, 4, 4, 4, 5, 5, 7, 9]) as? Double == 2)
        #expect(value("from:subtract:", 5, 7) as? Int == -2)
        #expect(value("multiply:by:", 2.5, 2) as? Double == 5)
        #expect(value("divide:by:", 1, 4) as? Double == 0.25)
        #expect(value("divide:by:", 1, 0) == nil)
        #expect(value("modulus:by:", 7, 3) as? Int == 1)
        #expect(value("raise:toPower:", 2, 10) as? Double == 1024)
        #expect(value("sqrt:", 9) as? Double == 3)
        #expect(value("abs:", -4) as? Int == 4)
        #expect(value("floor:", 2.7) as? Double == 2)
        #expect(value("ceiling:", 2.2) as? Double == 3)
        #expect(value("lowercase:", "ABC") as? String == "abc")
        #expect(value("canonical:", "Crème") as? String == "creme")
        #expect(value("bitwiseXor:with:", 6, 3) as? Int == 5)
        #expect(value("onesComplement:", 0) as? Int == -1)
        #expect(value("now") is Date)
        #expect(value("nosuchfunction:", 1) == nil, "Apple raises; we evaluate to nil")
    }

    /// Derived-attribute expressions seen in models (docs/FORMATS.md §4.2).
    @Test func derivedAttributeForms() throws {
        let object: [String: Any] = ["title": "Crème", "articles": [["wordCount": 3], ["wordCount": 4]]]
        func value(_ format: String) throws -> Any? {
            try NSExpression(validatingFormat: format).expressionValue(with: object, context: nil)
        }
        #expect(try value("uppercase:(title)") as? String == "CRÈME")
        #expect(try value("lowercase:(title)") as? String == "crème")
        #expect(try value("canonical:(title)") as? String == "creme")
        #expect(try value("now()") is Date)
        #expect(try value("articles.@count") as? Int == 2)
        #expect(try value("articles.wordCount.@sum") as? Int == 7)
        #expect(try value("articles.@sum.wordCount") as? Int == 7)
        #expect(try NSExpression(validatingFormat: "uppercase:(title)").function == "uppercase:")
    }

    @Test func formatAndEquality() {
        let e = NSExpression(format: "price * %d", 2)
        #expect(e.description == "price * 2")
        #expect(e.isEqual(NSExpression(format: "price * 2")))
        #expect(!e.isEqual(NSExpression(format: "price * 3")))
        #expect(e.expressionValue(with: ["price": 1.5], context: nil) as? Double == 3)
        #expect(NSExpression(format: "%K", "a.b").keyPath == "a.b")
    }

    /// The plain key path and constant type kept beside the node (what fetch plans compare) say
    /// what the node says, for every kind of expression.
    @Test func plainKeyPathAndConstantTypeFollowTheNode() {
        #expect(NSExpression(forKeyPath: "a.b")._plainKeyPath == "a.b")
        #expect(NSExpression(format: "%K", "name")._plainKeyPath == "name")
        let withOperand = NSExpression(_node: .keyPath(operand: NSExpression(forKeyPath: "a"), path: "b"))
        #expect(withOperand._plainKeyPath == nil && withOperand.expressionType == .keyPath)
        #expect(NSExpression(forVariable: "v")._plainKeyPath == nil)
        #expect(NSExpression(forConstantValue: "name")._plainKeyPath == nil)
        #expect(NSExpression(forConstantValue: Int64(3))._constantType == ObjectIdentifier(Int64.self))
        #expect(NSExpression(forConstantValue: "s")._constantType == ObjectIdentifier(String.self))
        #expect(NSExpression(forConstantValue: 2.5)._constantType == ObjectIdentifier(Double.self))
        #expect(NSExpression(forConstantValue: nil)._constantType == nil)
        #expect(NSExpression(forKeyPath: "a")._constantType == nil)
        let function = NSExpression(format: "count(xs)")
        #expect(function._constantType == nil && function._plainKeyPath == nil)
    }
}
