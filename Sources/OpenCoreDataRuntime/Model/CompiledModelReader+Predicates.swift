import Foundation

/// Turns archived `NSPredicate`, `NSExpression` and `NSSortDescriptor` objects (Foundation's
/// private subclasses, as a compiled model stores them) into this module's classes.
///
/// Classes and keys [obs, docs/compiled-models.md]: `NSComparisonPredicate` (`NSLeftExpression`,
/// `NSRightExpression`, `NSPredicateOperator` whose `NSOperatorType` is Apple's
/// `NSComparisonPredicate.Operator` raw value, `NSModifier`, `NSOptions`/`NSFlags`),
/// `NSCompoundPredicate` (`NSCompoundPredicateType`, `NSSubpredicates`), and the expressions
/// `NSConstantValueExpression`, `NSSelfExpression`, `NSVariableExpression`, `NSKeyPathExpression`
/// (a function `valueForKey:`/`valueForKeyPath:` on an operand, with an
/// `NSKeyPathSpecifierExpression` argument) and `NSFunctionExpression`. Anything else throws: a
/// predicate that is decoded wrong would silently select the wrong objects.
struct ArchivedPredicateDecoder {
    typealias Object = KeyedArchive.Object
    let archive: KeyedArchive

    func predicate(_ object: Object) throws -> NSPredicate {
        switch object.className {
        case "NSComparisonPredicate":
            guard let left = try object.object("NSLeftExpression"), let right = try object.object("NSRightExpression"),
                  let op = try object.object("NSPredicateOperator")
            else { throw archive.error("\(object) lacks an expression or its operator") }
            let code = try op.int("NSOperatorType") ?? -1
            guard code >= 0, let type = NSComparisonPredicate.Operator(rawValue: UInt(code)), type != .customSelector else {
                throw archive.error("\(object): predicate operator \(code) (\(op.className)) is not supported")
            }
            let modifierCode = try op.int("NSModifier") ?? 0
            guard modifierCode >= 0, let modifier = NSComparisonPredicate.Modifier(rawValue: UInt(modifierCode)) else {
                throw archive.error("\(object): predicate modifier \(modifierCode) is not supported")
            }
            let options = try op.int("NSOptions") ?? op.int("NSFlags") ?? 0
            return NSComparisonPredicate(
                leftExpression: try expression(left), rightExpression: try expression(right), modifier: modifier, type: type,
                options: NSComparisonPredicate.Options(rawValue: UInt(clamping: max(options, 0))))
        case "NSCompoundPredicate":
            let code = try object.int("NSCompoundPredicateType") ?? -1
            guard code >= 0, let type = NSCompoundPredicate.LogicalType(rawValue: UInt(code)) else {
                throw archive.error("\(object): compound predicate type \(code) is not supported")
            }
            let subpredicates = try (object.array("NSSubpredicates") ?? []).map { item -> NSPredicate in
                guard let sub = item as? Object else { throw archive.error("\(object) holds a subpredicate that is not an object") }
                return try predicate(sub)
            }
            return NSCompoundPredicate(type: type, subpredicates: subpredicates)
        case "NSTruePredicate": return NSPredicate(value: true)
        case "NSFalsePredicate": return NSPredicate(value: false)
        default:
            throw archive.error("\(object): predicate class \(object.className) is not supported")
        }
    }

    func expression(_ object: Object) throws -> NSExpression {
        switch object.className {
        case "NSConstantValueExpression":
            let value = try object.value("NSConstantValue")
            if let archived = value as? Object { throw archive.error("\(object): a constant of class \(archived.className) is not supported") }
            return NSExpression(forConstantValue: value)
        case "NSSelfExpression":
            return .expressionForEvaluatedObject()
        case "NSVariableExpression":
            guard let name = try object.string("NSVariable") else { throw archive.error("\(object) has no NSVariable") }
            return NSExpression(forVariable: name)
        case "NSKeyPathSpecifierExpression":
            guard let path = try object.string("NSKeyPath") else { throw archive.error("\(object) has no NSKeyPath") }
            return NSExpression(forKeyPath: path)
        case "NSAnyKeyExpression":
            return .expressionForAnyKey()
        case "NSKeyPathExpression":
            guard let arguments = try object.array("NSArguments"), arguments.count == 1,
                  let specifier = arguments.first as? Object, specifier.className == "NSKeyPathSpecifierExpression",
                  let path = try specifier.string("NSKeyPath")
            else { throw archive.error("\(object) has no key path argument") }
            guard let operandObject = try object.object("NSOperand") else { return NSExpression(forKeyPath: path) }
            let operand = try expression(operandObject)
            switch operand._node {
            case .evaluatedObject: return NSExpression(forKeyPath: path)
            case .keyPath(let base, let prefix): return NSExpression(_node: .keyPath(operand: base, path: prefix + "." + path))
            default: return NSExpression(_node: .keyPath(operand: operand, path: path))
            }
        case "NSFunctionExpression":
            guard let name = try object.string("NSSelectorName") else { throw archive.error("\(object) has no NSSelectorName") }
            let arguments = try (object.array("NSArguments") ?? []).map { item -> NSExpression in
                guard let argument = item as? Object else { throw archive.error("\(object) has an argument that is not an expression") }
                return try expression(argument)
            }
            // The predefined functions are sent to a constant naming `_NSPredicateUtilities`.
            if let operand = try object.object("NSOperand"), !(try Self.isPredicateUtilities(operand)) {
                return NSExpression(forFunction: try expression(operand), selectorName: name, arguments: arguments)
            }
            return NSExpression(forFunction: name, arguments: arguments)
        default:
            throw archive.error("\(object): expression class \(object.className) is not supported")
        }
    }

    func sortDescriptor(_ object: Object) throws -> NSSortDescriptor {
        guard object.className == "NSSortDescriptor" else { throw archive.error("\(object) is not a sort descriptor") }
        let key = try object.string("NSKey")
        let ascending = object.contains("NSAscending") ? try object.bool("NSAscending") : true
        let selector = try object.string("NSSelector") ?? "compare:"
        return NSSortDescriptor(key: key, ascending: ascending, selector: Selector(selector))
    }

    private static func isPredicateUtilities(_ operand: Object) throws -> Bool {
        guard operand.className == "NSConstantValueExpression" else { return false }
        let className = try operand.string("NSConstantValueClassName")
        let value = try operand.value("NSConstantValue")
        return className == "_NSPredicateUtilities" && value == nil
    }

    /// A derivation expression as an Xcode model file spells it (`pages.@count` for `count:(pages)`),
    /// which is what the version hash of a derived attribute covers (see `_derivationExpressionFormat`).
    static func modelFileFormat(of expression: NSExpression) -> String {
        if case .function("count:", nil, let arguments) = expression._node, arguments.count == 1,
           case .keyPath(nil, let path) = arguments[0]._node
        {
            return path + ".@count"
        }
        return expression.description
    }
}
