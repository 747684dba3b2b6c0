import Foundation

/// `predicateFormat` and expression descriptions, in Apple's style: `a == 1` (never `=`), strings
/// in double quotes, compound subpredicates in parentheses, arithmetic infix with nested
/// arithmetic parenthesised (`("b" + $b) + $c`). The output parses back to an equal predicate.
package enum PredicateFormatter {
    /// Words that must be escaped with `#` when used as key path components (Apple's reserved words
    /// plus the ones our parser also treats as operators).
    private static let reservedWords: Set<String> = [
        "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI", "MATCHES", "CONTAINS",
        "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO", "FIRST", "LAST",
        "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "TRUEPREDICATE", "FALSEPREDICATE", "UNION", "INTERSECT", "MINUS",
        "FUNCTION", "TERNARY",
    ]

    private static let infix: [String: String] = [
        "add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "raise:toPower:": "**",
        "bitwiseAnd:with:": "&", "bitwiseOr:with:": "|", "bitwiseXor:with:": "^",
    ]

    package static func format(_ predicate: NSPredicate) -> String {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            return format(comparison)
        case let compound as NSCompoundPredicate:
            let subs = compound._subpredicates
            func operand(_ sub: NSPredicate) -> String {
                sub is NSCompoundPredicate ? "(\(format(sub)))" : format(sub)
            }
            switch compound.compoundPredicateType {
            case .and: return subs.isEmpty ? "TRUEPREDICATE" : subs.map(operand).joined(separator: " AND ")
            case .or: return subs.isEmpty ? "FALSEPREDICATE" : subs.map(operand).joined(separator: " OR ")
            case .not: return "NOT " + (subs.first.map(operand) ?? "TRUEPREDICATE")
            }
        default:
            switch predicate._storage {
            case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
            case .block: return "BLOCKPREDICATE(\(ObjectIdentifier(predicate)))"
            case .invalid(_, let format): return format
            case .subclass: return "FALSEPREDICATE"
            }
        }
    }

    private static func format(_ comparison: NSComparisonPredicate) -> String {
        var result = ""
        switch comparison.comparisonPredicateModifier {
        case .direct: break
        case .any: result = "ANY "
        case .all: result = "ALL "
        }
        let op: String = switch comparison.predicateOperatorType {
        case .lessThan: "<"
        case .lessThanOrEqualTo: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqualTo: ">="
        case .equalTo: "=="
        case .notEqualTo: "!="
        case .matches: "MATCHES"
        case .like: "LIKE"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .in: "IN"
        case .customSelector: "CUSTOMSELECTOR"
        case .contains: "CONTAINS"
        case .between: "BETWEEN"
        }
        var options = ""
        if comparison.options.contains(.caseInsensitive) { options += "c" }
        if comparison.options.contains(.diacriticInsensitive) { options += "d" }
        if comparison.options.contains(.normalized) { options += "n" }
        if !options.isEmpty { options = "[\(options)]" }
        result += "\(format(comparison.leftExpression)) \(op)\(options) \(format(comparison.rightExpression))"
        return result
    }

    package static func format(_ expression: NSExpression) -> String {
        switch expression._node {
        case .constant(let value):
            return constant(value)
        case .symbolic(let name):
            return name
        case .evaluatedObject:
            return "SELF"
        case .variable(let name):
            return "$" + name
        case .keyPath(let operand, let path):
            let escaped = keyPath(path)
            guard let operand else { return escaped }
            return "\(postfixOperand(operand)).\(escaped)"
        case .function(let name, let operand, let arguments):
            if let operand {
                return "FUNCTION(\(([format(operand), constant(name)] + arguments.map(format)).joined(separator: ", ")))"
            }
            if let symbol = infix[name], arguments.count == 2 {
                return "\(infixOperand(arguments[0])) \(symbol) \(infixOperand(arguments[1]))"
            }
            if name == "objectFrom:withIndex:", arguments.count == 2 {
                return "\(postfixOperand(arguments[0]))[\(format(arguments[1]))]"
            }
            if name == "castObject:toType:", arguments.count == 2 {
                return "CAST(\(format(arguments[0])), \(format(arguments[1])))"
            }
            return "\(name)(\(arguments.map(format).joined(separator: ", ")))"
        case .aggregate(let items):
            return "{" + items.map(format).joined(separator: ", ") + "}"
        case .setOperation(let type, let left, let right):
            let word = type == .unionSet ? "UNION" : type == .intersectSet ? "INTERSECT" : "MINUS"
            return "\(format(left)) \(word) \(format(right))"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(format(collection)), $\(variable), \(format(predicate)))"
        case .anyKey:
            return "ANYKEY"
        case .block(_, let arguments):
            return "BLOCK(\(ObjectIdentifier(expression)), {\((arguments ?? []).map(format).joined(separator: ", "))})"
        case .conditional(let predicate, let yes, let no):
            return "TERNARY(\(format(predicate)), \(format(yes)), \(format(no)))"
        }
    }

    private static func isInfix(_ expression: NSExpression) -> Bool {
        if case .function(let name, nil, let arguments) = expression._node { return infix[name] != nil && arguments.count == 2 }
        if case .setOperation = expression._node { return true }
        return false
    }

    private static func infixOperand(_ expression: NSExpression) -> String {
        isInfix(expression) ? "(\(format(expression)))" : format(expression)
    }

    private static func postfixOperand(_ expression: NSExpression) -> String {
        if case .constant(let value) = expression._node, PredicateValues.number(value ?? "") != nil { return "(\(format(expression)))" }
        return isInfix(expression) ? "(\(format(expression)))" : format(expression)
    }

    private static func keyPath(_ path: String) -> String {
        path.split(separator: ".", omittingEmptySubsequences: false).map { component in
            reservedWords.contains(component.uppercased()) ? "#" + component : String(component)
        }.joined(separator: ".")
    }

    /// A constant in format syntax.
    package static func constant(_ value: Any?) -> String {
        guard let value = PredicateValues.normalize(value) else { return "nil" }
        if let string = PredicateValues.string(value) { return quoted(string) }
        if let number = PredicateValues.number(value) {
            switch number {
            case .integer(let i): return String(i)
            case .unsigned(let u): return String(u)
            case .decimal(let d): return d.description
            case .double(let d):
                if d.isFinite, d == d.rounded(), Swift.abs(d) < 1e15 { return String(Int(d)) }
                if d.isNaN || d.isInfinite { return "CAST(\(quoted(String(d))), \"NSNumber\")" }
                return String(d)
            }
        }
        if let date = PredicateValues.date(value) {
            return "CAST(\(constant(date.timeIntervalSinceReferenceDate)), \"NSDate\")"
        }
        switch value {
        case let uuid as UUID: return "CAST(\(quoted(uuid.uuidString)), \"UUID\")"
        case let data as Data: return "CAST(\(quoted(data.base64EncodedString())), \"NSData\")"
        case let url as URL: return "CAST(\(quoted(url.absoluteString)), \"NSURL\")"
        case let object as NSManagedObject: return object.objectID.description
        case is NSManagedObjectID: return String(describing: value)
        default: break
        }
        if let items = PredicateValues.elements(value), !(value is [String: Any]), !(value is NSDictionary) {
            return "{" + items.map(constant).joined(separator: ", ") + "}"
        }
        return String(describing: value)
    }

    private static func quoted(_ string: String) -> String {
        var result = "\""
        for c in string {
            switch c {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default: result.append(c)
            }
        }
        return result + "\""
    }
}
