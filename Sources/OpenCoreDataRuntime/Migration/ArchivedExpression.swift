import Foundation

/// Reads the `NSKeyedArchiver` archives Xcode keeps in mapping model files: value expressions
/// (`valueexpressiondata`: `NSFunctionExpression`, `NSKeyPathExpression`, …) and user info
/// dictionaries (`userinfodata`), without an Objective-C runtime.
///
/// Foundation's unarchiver does the archive format; the expression classes are decoded by
/// ``ArchivedExpressionBox`` (registered under Apple's private class names), which builds our
/// ``NSExpression`` from the coder keys Apple writes (`NSExpressionType`, `NSOperand`,
/// `NSSelectorName`, `NSArguments`, `NSVariable`, `NSConstantValue`, `NSKeyPath`, …).
enum ArchivedExpression {
    /// Apple's expression classes, all decoded by ``ArchivedExpressionBox``.
    static let expressionClassNames = [
        "NSExpression", "NSConstantValueExpression", "NSVariableExpression", "NSKeyPathExpression",
        "NSKeyPathSpecifierExpression", "NSFunctionExpression", "NSSelfExpression", "NSAggregateExpression",
        "NSFetchRequestExpression", "NSTernaryExpression", "NSAnyKeyExpression",
    ]
    /// Foundation classes an archive may hold besides expressions.
    private static let foundationClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSString", "NSMutableString", "NSNumber",
        "NSDate", "NSData", "NSMutableData", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet", "NSNull",
        "NSUUID", "NSURL", "NSDecimalNumber",
    ]

    /// The expression archived in `data`.
    static func expression(from data: Data) throws -> NSExpression {
        guard let box = try object(from: data) as? ArchivedExpressionBox else {
            throw OpenCoreDataError(.migration, "the archive does not hold an expression")
        }
        return box.expression
    }

    /// The root object of an archive of expressions and Foundation values (a user info dictionary
    /// comes back as `[AnyHashable: Any]`-bridgeable `NSDictionary`).
    static func object(from data: Data) throws -> Any? {
        // The unarchiver stops the process on a class it cannot resolve: check the names first.
        guard let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
            let archive = plist as? [String: Any], let objects = archive["$objects"] as? [Any]
        else { throw OpenCoreDataError(.migration, "the data is not a keyed archive") }
        for case let description as [String: Any] in objects {
            guard let name = description["$classname"] as? String else { continue }
            guard foundationClassNames.contains(name) || expressionClassNames.contains(name) else {
                throw OpenCoreDataError(
                    .migration, "the archive holds an object of class \(name), which cannot be read on Linux")
            }
        }
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        for name in expressionClassNames { unarchiver.setClass(ArchivedExpressionBox.self, forClassName: name) }
        defer { unarchiver.finishDecoding() }
        let root = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
        if let error = unarchiver.error { throw OpenCoreDataError(.migration, "cannot read the archive: \(error)") }
        return root
    }
}

/// Decodes one archived `NSExpression` subclass into our ``NSExpression``.
final class ArchivedExpressionBox: NSObject, NSCoding {
    let expression: NSExpression
    /// The key path of an `NSKeyPathSpecifierExpression` (the argument of `valueForKeyPath:`).
    private(set) var keyPathSpecifier: String?

    func encode(with coder: NSCoder) {}

    required init?(coder: NSCoder) {
        func object(_ key: String) -> Any? { coder.containsValue(forKey: key) ? coder.decodeObject(forKey: key) : nil }
        func expression(_ key: String) -> NSExpression? { (object(key) as? ArchivedExpressionBox)?.expression }
        func boxes(_ key: String) -> [ArchivedExpressionBox] {
            (object(key) as? [Any] ?? (object(key) as? NSArray).map { $0.map { $0 } } ?? [])
                .compactMap { $0 as? ArchivedExpressionBox }
        }
        func string(_ key: String) -> String? {
            (object(key) as? String) ?? (object(key) as? NSString).map(String.init)
        }
        switch coder.decodeInteger(forKey: "NSExpressionType") {
        case 0:  // constant; a class constant (`_NSPredicateUtilities`) keeps its class name
            let value = object("NSConstantValue")
            let className = string("NSConstantValueClassName")
            self.expression = NSExpression(forConstantValue: value ?? className)
        case 1:
            self.expression = NSExpression(_node: .evaluatedObject)
        case 2:
            self.expression = NSExpression(_node: .variable(string("NSVariable") ?? ""))
        case 3:
            self.expression = NSExpression(_node: .keyPath(operand: nil, path: string("NSKeyPath") ?? ""))
        case 10:
            let path = string("NSKeyPath") ?? ""
            self.expression = NSExpression(_node: .constant(path))
            self.keyPathSpecifier = path
        case 4:
            let selector = string("NSSelectorName") ?? ""
            let operandBox = object("NSOperand") as? ArchivedExpressionBox
            let arguments = boxes("NSArguments")
            if selector == "valueForKeyPath:", arguments.count == 1, let path = arguments[0].keyPathSpecifier {
                // NSKeyPathExpression: `$source.name` is `valueForKeyPath:` sent to `$source`.
                var operand = operandBox?.expression
                if case .evaluatedObject? = operand?._node { operand = nil }
                self.expression = NSExpression(_node: .keyPath(operand: operand, path: path))
            } else {
                // A predefined function's receiver is the `_NSPredicateUtilities` class: no operand here.
                var operand = operandBox?.expression
                if case .constant(let value as String)? = operand?._node, value == "_NSPredicateUtilities" {
                    operand = nil
                }
                self.expression = NSExpression(
                    _node: .function(name: selector, operand: operand, arguments: arguments.map(\.expression)))
            }
        case 14:
            self.expression = NSExpression(_node: .aggregate(boxes("NSCollection").map(\.expression)))
        case 15:
            self.expression = NSExpression(_node: .anyKey)
        case 50:  // NSFetchRequestExpression
            guard let request = expression("NSFRExpression"), let context = expression("NSMOCExpression") else {
                return nil
            }
            let countOnly = coder.decodeBool(forKey: "NSCountOnlyFlag")
            self.expression = NSExpression(
                _node: .function(
                    name: "FETCH", operand: nil,
                    arguments: [request, context, NSExpression(forConstantValue: countOnly)]))
        default:
            return nil
        }
        super.init()
    }
}
