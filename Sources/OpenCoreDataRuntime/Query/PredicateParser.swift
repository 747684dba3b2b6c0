import Foundation

/// Recursive-descent parser for Apple's predicate format syntax.
///
/// Precedence, loosest first: `OR`/`||`, `AND`/`&&`, `NOT`/`!`, then comparisons. This is what
/// Apple's parser does (`a OR b AND c` is `a OR (b AND c)`; `NOT a OR b` is `(NOT a) OR b`): see
/// MIOCoreData's Apple-run parse tests (corpus cases 0109, 0110), and `PredicateParserTests`.
/// Chains of one operator make one compound predicate (`a AND b AND c` has three subpredicates).
///
/// Expressions, loosest first: `UNION`/`INTERSECT`/`MINUS`, `|`, `^`, `&`, `+ -`, `* /`, `**`,
/// unary `-`, then postfix `.key`, `[index]`, and primaries.
package struct PredicateParser {
    private let format: String
    private let tokens: [PredicateToken]
    private let arguments: [Any]
    private var position = 0
    /// Parsing a template (``PredicateTemplates``): specifiers become slot variables, and any step
    /// whose outcome depends on an argument's value throws ``PredicateTemplates/ValueDependent``.
    private let templating: Bool
    /// Set (and kept through backtracking) once a template parse met a value-dependent step.
    private var valueDependent = false
    /// Nesting depth of the recursive descent, bounded so hostile input cannot overflow the stack.
    private var depth = 0
    private static let maximumDepth = 256

    private init(format: String, arguments: [Any], templating: Bool = false) throws {
        self.format = format
        self.arguments = arguments
        self.templating = templating
        tokens = try PredicateLexer.tokenize(format)
    }

    package static func parsePredicate(_ format: String, arguments: [Any]) throws -> NSPredicate {
        if let predicate = PredicateTemplates.predicate(format, arguments: arguments) { return predicate }
        return try parsePredicateUncached(format, arguments: arguments)
    }

    /// ``parsePredicate(_:arguments:)`` with `NSPredicate(format:_:)`'s variadic arguments (`nil` for `NSNull`).
    package static func parsePredicate(_ format: String, optionalArguments arguments: [Any?]) throws -> NSPredicate {
        if let predicate = PredicateTemplates.predicate(format, optionalArguments: arguments) { return predicate }
        return try parsePredicateUncached(format, arguments: formatArguments(arguments))
    }

    /// Parses `format` without ``PredicateTemplates`` (which falls back to this, and tests compare with it).
    package static func parsePredicateUncached(_ format: String, arguments: [Any]) throws -> NSPredicate {
        try reporting { try parsePredicateThrowingSyntaxError(format, arguments: arguments) }
    }

    /// Parses `format` as a template: each specifier becomes the variable
    /// ``PredicateTemplates/slotName(_:)``, and the specifier tokens are returned in order.
    /// Throws ``PredicateTemplates/ValueDependent`` where the parse would depend on an argument.
    static func parseTemplate(_ format: String) throws -> (NSPredicate, [PredicateToken]) {
        var parser = try PredicateParser(format: format, arguments: [], templating: true)
        if parser.current.kind == .end { throw PredicateTemplates.ValueDependent() }
        let predicate = try parser.parseOr()
        // A backtracking branch may have met a value-dependent step and been abandoned: unusable too.
        guard parser.current.kind == .end, !parser.valueDependent else { throw PredicateTemplates.ValueDependent() }
        let slots = parser.tokens.filter { if case .specifier = $0.kind { true } else { false } }
        // Specifiers are numbered in order of appearance; templates rely on it.
        guard slots.indices.allSatisfy({ if case .specifier(_, _, $0) = slots[$0].kind { true } else { false } }) else {
            throw PredicateTemplates.ValueDependent()
        }
        return (predicate, slots)
    }

    /// Throws ``PredicateTemplates/ValueDependent`` when templating and `expression` is a slot.
    private mutating func requireValueIndependent(_ expressions: some Collection<NSExpression>) throws {
        guard templating, expressions.contains(where: PredicateTemplates.isSlot) else { return }
        valueDependent = true
        throw PredicateTemplates.ValueDependent()
    }

    package static func parseExpression(_ format: String, arguments: [Any]) throws -> NSExpression {
        try reporting { try parseExpressionThrowingSyntaxError(format, arguments: arguments) }
    }

    private static func parsePredicateThrowingSyntaxError(_ format: String, arguments: [Any]) throws -> NSPredicate {
        var parser = try PredicateParser(format: format, arguments: arguments)
        if parser.current.kind == .end { throw parser.error("expected a predicate", at: parser.current) }
        let predicate = try parser.parseOr()
        guard parser.current.kind == .end else {
            throw parser.error("expected AND, OR or the end of the predicate", at: parser.current)
        }
        return predicate
    }

    private static func parseExpressionThrowingSyntaxError(_ format: String, arguments: [Any]) throws -> NSExpression {
        var parser = try PredicateParser(format: format, arguments: arguments)
        let expression = try parser.parseExpression()
        guard parser.current.kind == .end else {
            throw parser.error("expected an operator or the end of the expression", at: parser.current)
        }
        return expression
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[position] }
    private var previous: PredicateToken? { position > 0 ? tokens[position - 1] : nil }
    private func peek(_ ahead: Int) -> PredicateToken { tokens[min(position + ahead, tokens.count - 1)] }

    private mutating func advance() -> PredicateToken {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private mutating func accept(symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func accept(keyword: String) -> Bool {
        guard current.isKeyword(keyword) else { return false }
        position += 1
        return true
    }

    private mutating func expect(symbol: String, _ what: String) throws {
        guard accept(symbol: symbol) else { throw error("expected \(what)", at: current) }
    }

    /// Errors stay cheap `PredicateSyntaxError`s while parsing (backtracking throws many); the
    /// entry points turn the one that escapes into an ``OpenCoreDataError``.
    private func error(_ message: String, at token: PredicateToken) -> PredicateSyntaxError {
        PredicateSyntaxError(format: format, offset: token.offset, message: message)
    }

    private func afterPrevious() -> String {
        guard let previous, !previous.text.isEmpty else { return "" }
        return " after '\(previous.text)'"
    }

    private static func offset(of error: any Error) -> Int {
        (error as? PredicateSyntaxError)?.offset ?? -1
    }

    private static func reporting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PredicateSyntaxError {
            throw error.openCoreDataError
        }
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw error("nesting deeper than \(Self.maximumDepth) levels", at: current) }
    }

    // MARK: Predicates

    private mutating func parseOr() throws -> NSPredicate {
        try enter()
        defer { depth -= 1 }
        var subpredicates = [try parseAnd()]
        while accept(keyword: "OR") || accept(symbol: "||") { subpredicates.append(try parseAnd()) }
        return subpredicates.count == 1 ? subpredicates[0] : NSCompoundPredicate(type: .or, subpredicates: subpredicates)
    }

    private mutating func parseAnd() throws -> NSPredicate {
        var subpredicates = [try parseNot()]
        while accept(keyword: "AND") || accept(symbol: "&&") { subpredicates.append(try parseNot()) }
        return subpredicates.count == 1 ? subpredicates[0] : NSCompoundPredicate(type: .and, subpredicates: subpredicates)
    }

    private mutating func parseNot() throws -> NSPredicate {
        try enter()
        defer { depth -= 1 }
        if accept(keyword: "NOT") || accept(symbol: "!") {
            if current.kind == .end { throw error("expected a predicate\(afterPrevious())", at: current) }
            return NSCompoundPredicate(type: .not, subpredicates: [try parseNot()])
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws -> NSPredicate {
        if accept(keyword: "TRUEPREDICATE") { return NSPredicate(value: true) }
        if accept(keyword: "FALSEPREDICATE") { return NSPredicate(value: false) }
        if current.isSymbol("(") {
            // Either a parenthesised predicate or a comparison whose left side starts with a
            // parenthesised expression (`(a + 1) > 2`): try the first, fall back to the second.
            let start = position
            var predicateError: (any Error)?
            do {
                position += 1
                let predicate = try parseOr()
                try expect(symbol: ")", "')' to close the parenthesis")
                if !startsExpressionContinuation(current) { return predicate }
            } catch {
                predicateError = error
            }
            position = start
            do {
                return try parseComparison(modifier: .direct)
            } catch {
                if let predicateError, Self.offset(of: predicateError) > Self.offset(of: error) { throw predicateError }
                throw error
            }
        }
        if accept(keyword: "ANY") || accept(keyword: "SOME") { return try parseComparison(modifier: .any) }
        if accept(keyword: "ALL") { return try parseComparison(modifier: .all) }
        if accept(keyword: "NONE") {
            // Apple parses NONE as NOT ANY.
            return NSCompoundPredicate(type: .not, subpredicates: [try parseComparison(modifier: .any)])
        }
        return try parseComparison(modifier: .direct)
    }

    private func startsExpressionContinuation(_ token: PredicateToken) -> Bool {
        if comparisonOperator(token) != nil { return true }
        if case .symbol(let s) = token.kind { return ["+", "-", "*", "/", "**", "&", "|", "^", ".", "["].contains(s) }
        return token.isKeyword("UNION") || token.isKeyword("INTERSECT") || token.isKeyword("MINUS")
    }

    private func comparisonOperator(_ token: PredicateToken) -> NSComparisonPredicate.Operator? {
        switch token.kind {
        case .symbol(let s):
            switch s {
            case "=", "==": return .equalTo
            case "!=", "<>": return .notEqualTo
            case "<": return .lessThan
            case "<=", "=<": return .lessThanOrEqualTo
            case ">": return .greaterThan
            case ">=", "=>": return .greaterThanOrEqualTo
            default: return nil
            }
        case .word(let word, false):
            switch word.uppercased() {
            case "MATCHES": return .matches
            case "LIKE": return .like
            case "BEGINSWITH": return .beginsWith
            case "ENDSWITH": return .endsWith
            case "IN": return .in
            case "CONTAINS": return .contains
            case "BETWEEN": return .between
            default: return nil
            }
        default: return nil
        }
    }

    private mutating func parseComparison(modifier: NSComparisonPredicate.Modifier) throws -> NSPredicate {
        if current.kind == .end { throw error("expected a predicate\(afterPrevious())", at: current) }
        let lhs = try parseExpression()
        guard let type = comparisonOperator(current) else {
            if current.kind == .end {
                throw error("expected a comparison operator (==, <, IN, CONTAINS, ...) after '\(PredicateFormatter.format(lhs))'", at: current)
            }
            throw error("expected a comparison operator (==, <, IN, CONTAINS, ...)", at: current)
        }
        let operatorToken = advance()
        var options: NSComparisonPredicate.Options = []
        if current.isSymbol("["), current.offset == operatorToken.offset + operatorToken.text.count {
            position += 1
            guard case .word(let letters, false) = current.kind else {
                throw error("expected comparison options c, d or n inside '[ ]'", at: current)
            }
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                default: throw error("unknown comparison option '\(letter)': expected c, d or n", at: current)
                }
            }
            position += 1
            try expect(symbol: "]", "']' to close the comparison options")
        }
        let rhs = try parseExpression()
        return NSComparisonPredicate(leftExpression: lhs, rightExpression: rhs, modifier: modifier, type: type, options: options)
    }

    // MARK: Expressions

    private mutating func parseExpression() throws -> NSExpression {
        try enter()
        defer { depth -= 1 }
        var lhs = try parseBitOr()
        while true {
            let type: NSExpression.ExpressionType
            if accept(keyword: "UNION") { type = .unionSet }
            else if accept(keyword: "INTERSECT") { type = .intersectSet }
            else if accept(keyword: "MINUS") { type = .minusSet }
            else { return lhs }
            lhs = NSExpression(_node: .setOperation(type, lhs, try parseBitOr()))
        }
    }

    // Operator tables of the binary levels, built once (a literal here was built on every parse).
    private static let bitOrOperators: [String: String] = ["|": "bitwiseOr:with:"]
    private static let bitXorOperators: [String: String] = ["^": "bitwiseXor:with:"]
    private static let bitAndOperators: [String: String] = ["&": "bitwiseAnd:with:"]
    private static let additiveOperators: [String: String] = ["+": "add:to:", "-": "from:subtract:"]
    private static let multiplicativeOperators: [String: String] = ["*": "multiply:by:", "/": "divide:by:"]
    private static let powerOperators: [String: String] = ["**": "raise:toPower:"]

    private mutating func binary(_ symbols: [String: String], operand: (inout Self) throws -> NSExpression) throws -> NSExpression {
        var lhs = try operand(&self)
        while case .symbol(let s) = current.kind, let function = symbols[s] {
            position += 1
            let rhs = try operand(&self)
            lhs = NSExpression(_node: .function(name: function, operand: nil, arguments: [lhs, rhs]))
        }
        return lhs
    }

    private mutating func parseBitOr() throws -> NSExpression {
        try binary(Self.bitOrOperators) { try $0.parseBitXor() }
    }

    private mutating func parseBitXor() throws -> NSExpression {
        try binary(Self.bitXorOperators) { try $0.parseBitAnd() }
    }

    private mutating func parseBitAnd() throws -> NSExpression {
        try binary(Self.bitAndOperators) { try $0.parseAdditive() }
    }

    private mutating func parseAdditive() throws -> NSExpression {
        try binary(Self.additiveOperators) { try $0.parseMultiplicative() }
    }

    private mutating func parseMultiplicative() throws -> NSExpression {
        try binary(Self.multiplicativeOperators) { try $0.parsePower() }
    }

    private mutating func parsePower() throws -> NSExpression {
        try binary(Self.powerOperators) { try $0.parseUnary() }
    }

    private mutating func parseUnary() throws -> NSExpression {
        try enter()
        defer { depth -= 1 }
        if accept(symbol: "-") {
            let operand = try parseUnary()
            try requireValueIndependent([operand])
            if case .constant(let value) = operand._node, let negated = PredicateValues.negate(value) {
                return NSExpression(_node: .constant(negated))
            }
            return NSExpression(_node: .function(name: "from:subtract:", operand: nil, arguments: [NSExpression(_node: .constant(0)), operand]))
        }
        return try parsePostfix(try parsePrimary())
    }

    private mutating func parsePostfix(_ base: NSExpression) throws -> NSExpression {
        var expression = base
        while true {
            if accept(symbol: ".") {
                let key: String
                switch current.kind {
                case .word(let word, _): key = word
                case .atWord(let word): key = "@" + word
                case .specifier(let conversion, _, _) where conversion == "K":
                    if templating {
                        valueDependent = true
                        throw PredicateTemplates.ValueDependent()
                    }
                    key = try keyPathArgument(current)
                default: throw error("expected a key after '.'", at: current)
                }
                position += 1
                try requireValueIndependent([expression])
                expression = Self.appending(key, to: expression)
            } else if current.isSymbol("[") {
                position += 1
                let index: NSExpression
                if case .word(let word, false) = current.kind, ["FIRST", "LAST", "SIZE"].contains(word.uppercased()), peek(1).isSymbol("]") {
                    position += 1
                    index = NSExpression(_node: .symbolic(word.uppercased()))
                } else {
                    if current.isSymbol("]") { throw error("expected an index, FIRST, LAST, SIZE or a key inside '[ ]'", at: current) }
                    index = try parseExpression()
                }
                try expect(symbol: "]", "']' to close the subscript")
                expression = NSExpression(_node: .function(name: "objectFrom:withIndex:", operand: nil, arguments: [expression, index]))
            } else {
                return expression
            }
        }
    }

    /// `base.key`: extends a key path, or makes a key path whose operand is `base`.
    private static func appending(_ key: String, to base: NSExpression) -> NSExpression {
        switch base._node {
        case .keyPath(let operand, let path): return NSExpression(_node: .keyPath(operand: operand, path: path + "." + key))
        case .evaluatedObject: return NSExpression(_node: .keyPath(operand: nil, path: key))
        default: return NSExpression(_node: .keyPath(operand: base, path: key))
        }
    }

    private mutating func parsePrimary() throws -> NSExpression {
        let token = current
        switch token.kind {
        case .end:
            throw error("expected an expression\(afterPrevious())", at: token)
        case .integer(let value):
            position += 1
            return NSExpression(_node: .constant(value))
        case .float(let value):
            position += 1
            return NSExpression(_node: .constant(value))
        case .string(let value):
            position += 1
            return NSExpression(_node: .constant(value))
        case .variable(let name):
            position += 1
            if current.isSymbol(":=") { throw error("assignment ':=' is not supported", at: current) }
            return NSExpression(_node: .variable(name))
        case .atWord(let word):
            position += 1
            return NSExpression(_node: .keyPath(operand: nil, path: "@" + word))
        case .specifier:
            position += 1
            return try argumentExpression(token)
        case .symbol("{"):
            position += 1
            var items: [NSExpression] = []
            if !accept(symbol: "}") {
                repeat { items.append(try parseExpression()) } while accept(symbol: ",")
                try expect(symbol: "}", "',' or '}' in the aggregate")
            }
            return NSExpression(_node: .aggregate(items))
        case .symbol("("):
            position += 1
            let inner = try parseExpression()
            try expect(symbol: ")", "')' to close the parenthesis")
            return inner
        case .symbol:
            throw error("expected an expression\(afterPrevious())", at: token)
        case .word(let word, let escaped):
            if escaped { position += 1; return NSExpression(_node: .keyPath(operand: nil, path: word)) }
            return try parseWord(word, token)
        }
    }

    private static let operatorWords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "ALL", "SOME", "NONE", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH",
        "ENDSWITH", "BETWEEN", "TRUEPREDICATE", "FALSEPREDICATE", "UNION", "INTERSECT", "MINUS",
    ]

    private mutating func parseWord(_ word: String, _ token: PredicateToken) throws -> NSExpression {
        let upper = word.uppercased()
        if Self.operatorWords.contains(upper) { throw error("expected an expression\(afterPrevious())", at: token) }
        let call = peek(1).isSymbol("(")
        position += 1
        switch upper {
        case "SELF": return NSExpression(_node: .evaluatedObject)
        case "NULL", "NIL": return NSExpression(_node: .constant(nil))
        case "TRUE", "YES": return NSExpression(_node: .constant(true))
        case "FALSE", "NO": return NSExpression(_node: .constant(false))
        case "ANYKEY": return NSExpression(_node: .anyKey)
        case "SUBQUERY" where call: return try parseSubquery()
        case "FUNCTION" where call: return try parseFunctionCall()
        case "FETCH" where call:  // FETCH(request, context, countOnly): NSFetchRequestExpression
            return NSExpression(_node: .function(name: "FETCH", operand: nil, arguments: try parseArguments()))
        case "CAST" where call: return try parseCast()
        case "TERNARY" where call: return try parseTernary()
        default: break
        }
        if call || current.isSymbol(":") { return try parseNamedFunction(word, token) }
        return NSExpression(_node: .keyPath(operand: nil, path: word))
    }

    private mutating func parseArguments() throws -> [NSExpression] {
        try expect(symbol: "(", "'('")
        var items: [NSExpression] = []
        if accept(symbol: ")") { return items }
        repeat { items.append(try parseExpression()) } while accept(symbol: ",")
        try expect(symbol: ")", "',' or ')' in the argument list")
        return items
    }

    /// `sum:(a)`, `add:to:(1, 2)`, `now()`, and GNUstep's `sum(a)`.
    private mutating func parseNamedFunction(_ word: String, _ token: PredicateToken) throws -> NSExpression {
        var name = word
        while accept(symbol: ":") {
            name += ":"
            if case .word(let part, false) = current.kind, peek(1).isSymbol(":") {
                name += part
                position += 1
            }
        }
        var arguments = try parseArguments()
        guard let canonical = PredicateFunctions.canonicalName(name, argumentCount: arguments.count) else {
            throw error("unknown function '\(name)'", at: token)
        }
        if arguments.count > 1, PredicateFunctions.takesCollection(canonical) {
            arguments = [NSExpression(_node: .aggregate(arguments))]
        }
        return NSExpression(_node: .function(name: canonical, operand: nil, arguments: arguments))
    }

    /// `FUNCTION(receiver, 'selector', args...)`
    private mutating func parseFunctionCall() throws -> NSExpression {
        let open = current
        var arguments = try parseArguments()
        if arguments.count >= 2 { try requireValueIndependent([arguments[1]]) }
        guard arguments.count >= 2, case .constant(let selector as String) = arguments[1]._node else {
            throw error("FUNCTION expects a receiver and a selector name string", at: open)
        }
        let receiver = arguments[0]
        arguments.removeFirst(2)
        return NSExpression(_node: .function(name: selector, operand: receiver, arguments: arguments))
    }

    /// `CAST(value, 'NSDate')`: folded to a constant when the value is a constant.
    private mutating func parseCast() throws -> NSExpression {
        let open = current
        let arguments = try parseArguments()
        try requireValueIndependent(arguments.prefix(2))
        guard arguments.count == 2, case .constant(let type as String) = arguments[1]._node else {
            throw error("CAST expects a value and a type name string", at: open)
        }
        if case .constant(let value) = arguments[0]._node, let folded = PredicateFunctions.cast(value, to: type) {
            return NSExpression(_node: .constant(folded))
        }
        return NSExpression(_node: .function(name: "castObject:toType:", operand: nil, arguments: arguments))
    }

    private mutating func parseSubquery() throws -> NSExpression {
        try expect(symbol: "(", "'('")
        let collection = try parseExpression()
        try expect(symbol: ",", "',' after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected an iteration variable ($name) in SUBQUERY", at: current)
        }
        position += 1
        try expect(symbol: ",", "',' after the SUBQUERY variable")
        let predicate = try parseOr()
        try expect(symbol: ")", "')' to close SUBQUERY")
        return NSExpression(_node: .subquery(collection: collection, variable: variable, predicate: predicate))
    }

    private mutating func parseTernary() throws -> NSExpression {
        try expect(symbol: "(", "'('")
        let predicate = try parseOr()
        try expect(symbol: ",", "',' after the TERNARY condition")
        let yes = try parseExpression()
        try expect(symbol: ",", "',' after the TERNARY true value")
        let no = try parseExpression()
        try expect(symbol: ")", "')' to close TERNARY")
        return NSExpression(_node: .conditional(predicate, yes, no))
    }

    // MARK: Format arguments

    /// The variadic arguments of `NSPredicate(format:_:)` and `NSExpression(format:_:)` as an
    /// argument array: `nil` becomes `NSNull` (read back as nil), so no argument is an `Optional`
    /// boxed in `Any`, which would cost a conformance lookup per argument to unwrap.
    package static func formatArguments(_ args: [Any?]) -> [Any] {
        args.map { $0 ?? NSNull() }
    }

    private func argument(for token: PredicateToken) throws -> Any? {
        guard case .specifier(_, let text, let index) = token.kind else { return nil }
        guard index < arguments.count else {
            throw error("missing argument for '\(text)': the format has more specifiers than the \(arguments.count) argument\(arguments.count == 1 ? "" : "s") given", at: token)
        }
        return Self.argumentValue(arguments[index])
    }

    /// An argument as the parser reads it: `NSNull` (a `nil` argument) as `nil`, optionals unwrapped.
    static func argumentValue(_ value: Any) -> Any? {
        // A metadata comparison: `is NSNull` on a Swift value would look for a bridge first.
        if ObjectIdentifier(type(of: value)) == ObjectIdentifier(NSNull.self) { return nil }
        return ValueConversion.unwrap(value)
    }

    private func keyPathArgument(_ token: PredicateToken) throws -> String {
        try Self.keyPath(from: try argument(for: token), token, format: format)
    }

    private static func keyPath(from value: Any?, _ token: PredicateToken, format: String) throws -> String {
        if let value, let string = ValueConversion.exactly(value, as: String.self) { return string }
        if let string = value as? String { return string }
        if let string = value as? NSString { return String(string) }
        if let string = value as? Substring { return String(string) }
        let typeName = value.map { "\(type(of: $0))" } ?? "nil"
        throw PredicateSyntaxError(format: format, offset: token.offset, message: "'%K' expects a key path string, got \(typeName)")
    }

    private func argumentExpression(_ token: PredicateToken) throws -> NSExpression {
        guard case .specifier(let conversion, _, let index) = token.kind else { return NSExpression(_node: .constant(nil)) }
        if templating { return NSExpression(_node: .variable(PredicateTemplates.slotName(index))) }
        if conversion == "K" { return NSExpression(_node: .keyPath(operand: nil, path: try keyPathArgument(token))) }
        return try Self.argumentExpression(token, value: try argument(for: token), format: format)
    }

    /// The expression a specifier stands for, given its argument (read by ``argumentValue(_:)``).
    static func argumentExpression(_ token: PredicateToken, value: Any?, format: String) throws -> NSExpression {
        guard case .specifier(let conversion, let text, _) = token.kind else { return NSExpression(_node: .constant(nil)) }
        if conversion == "K" { return NSExpression(_node: .keyPath(operand: nil, path: try keyPath(from: value, token, format: format))) }
        func mismatch(_ expected: String) -> PredicateSyntaxError {
            let typeName = value.map { "\(type(of: $0))" } ?? "nil"
            return PredicateSyntaxError(format: format, offset: token.offset, message: "'\(text)' expects \(expected), got \(typeName)")
        }
        switch conversion {
        case "@":
            if value is NSNull { return NSExpression(_node: .constant(nil)) }
            return NSExpression(forConstantValue: value)
        case "d", "i", "o", "u", "x", "X", "D", "O", "U":
            guard let value, let number = PredicateValues.number(value) else { throw mismatch("an integer") }
            switch number {
            case .integer(let i): return NSExpression(_node: .constant(i))
            case .unsigned(let u): return NSExpression(_node: .constant(u))
            case .double(let d):
                guard let i = Int(exactly: d) else { throw mismatch("an integer") }
                return NSExpression(_node: .constant(i))
            case .decimal(let d):
                guard let i = Int(exactly: NSDecimalNumber(decimal: d).doubleValue) else { throw mismatch("an integer") }
                return NSExpression(_node: .constant(i))
            }
        case "f", "F", "e", "E", "g", "G", "a", "A":
            guard let value, let number = PredicateValues.number(value) else { throw mismatch("a number") }
            return NSExpression(_node: .constant(number.doubleValue))
        case "s", "S":
            guard let value, let string = PredicateValues.string(value) else { throw mismatch("a string") }
            return NSExpression(_node: .constant(string))
        case "c", "C":
            if let value, let string = PredicateValues.string(value), string.count == 1 { return NSExpression(_node: .constant(string)) }
            if let character = value as? Character { return NSExpression(_node: .constant(String(character))) }
            if let value, case .integer(let code)? = PredicateValues.number(value), let scalar = Unicode.Scalar(UInt32(clamping: code)) {
                return NSExpression(_node: .constant(String(Character(scalar))))
            }
            throw mismatch("a character")
        default:
            throw PredicateSyntaxError(format: format, offset: token.offset, message: "'\(text)' is not supported")
        }
    }
}
