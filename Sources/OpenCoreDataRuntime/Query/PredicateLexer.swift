import Foundation

/// A token of a predicate or expression format string.
package struct PredicateToken {
    package enum Kind: Equatable {
        /// A bare word: key path component, keyword or function name. `escaped` for `#word`.
        case word(String, escaped: Bool)
        case string(String)
        case integer(Int)
        case float(Double)
        /// `$name`
        case variable(String)
        /// `@count`, `@avg`, ...
        case atWord(String)
        /// A format specifier (`%@`, `%K`, `%ld`, ...): its conversion character and the index of
        /// the argument it consumes.
        case specifier(conversion: Character, text: String, argument: Int)
        /// Punctuation and operators: `( ) { } [ ] , . == != < <= > >= + - * / ** & | ^ && || ! := :`.
        case symbol(String)
        case end
    }

    package var kind: Kind
    /// Offset in characters from the start of the format string.
    package var offset: Int
    /// The source text of the token.
    package var text: String

    /// Whether this is the unescaped word `keyword`, compared case-insensitively.
    package func isKeyword(_ keyword: String) -> Bool {
        if case .word(let word, false) = kind { return word.uppercased() == keyword }
        return false
    }

    package func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = kind { return s == symbol }
        return false
    }
}

/// Splits a format string into tokens. Quoted strings are never scanned for specifiers, so `'%@'`
/// is the literal text `%@`.
package struct PredicateLexer {
    private let chars: [Character]
    private let format: String
    private var index = 0
    private var argumentCount = 0

    package init(_ format: String) {
        self.format = format
        chars = Array(format)
    }

    /// The tokens of `format`. Apps build the same few format strings over and over with new
    /// arguments (`"%K == %@"` in a lookup loop), and tokens do not depend on the arguments, so the
    /// tokens of recent format strings are kept (up to ``cacheLimit`` strings; the cache empties when full).
    package static func tokenize(_ format: String) throws -> [PredicateToken] {
        if let cached = cache.withLock({ $0[format] }) { return cached }
        var lexer = PredicateLexer(format)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { break }
        }
        if format.utf8.count <= 1_024 {
            cache.withLock { cache in
                if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[format] = tokens
            }
        }
        return tokens
    }

    package static let cacheLimit = 512
    private static let cache = Locked<[String: [PredicateToken]]>([:])

    private func peek(_ ahead: Int = 0) -> Character? {
        index + ahead < chars.count ? chars[index + ahead] : nil
    }

    private func error(_ message: String, at offset: Int) -> PredicateSyntaxError {
        PredicateSyntaxError(format: format, offset: offset, message: message)
    }

    private static func isWordStart(_ c: Character) -> Bool { c.isLetter || c == "_" }
    private static func isWordPart(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    private mutating func next() throws -> PredicateToken {
        while let c = peek(), c.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return PredicateToken(kind: .end, offset: chars.count, text: "") }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, offset: start, text: String(chars[start..<index]))
        }

        if Self.isWordStart(c) {
            while let d = peek(), Self.isWordPart(d) { index += 1 }
            return token(.word(String(chars[start..<index]), escaped: false))
        }
        if c == "#" {
            index += 1
            guard let d = peek(), Self.isWordStart(d) else { throw error("expected a key name after '#'", at: index) }
            let wordStart = index
            while let d = peek(), Self.isWordPart(d) { index += 1 }
            return token(.word(String(chars[wordStart..<index]), escaped: true))
        }
        if c == "$" || c == "@" {
            index += 1
            guard let d = peek(), Self.isWordStart(d) else {
                throw error(c == "$" ? "expected a variable name after '$'" : "expected an operator name after '@'", at: index)
            }
            let wordStart = index
            while let d = peek(), Self.isWordPart(d) { index += 1 }
            let word = String(chars[wordStart..<index])
            return token(c == "$" ? .variable(word) : .atWord(word))
        }
        if c.isASCII, c.isNumber || (c == "." && (peek(1).map { $0.isASCII && $0.isNumber } ?? false)) {
            return try number(start: start)
        }
        if c == "\"" || c == "'" { return try string(quote: c, start: start) }
        if c == "%" { return try specifier(start: start) }

        let threeOrTwo = ["**", "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", ":="]
        if let d = peek(1) {
            let pair = String([c, d])
            if threeOrTwo.contains(pair) {
                index += 2
                return token(.symbol(pair))
            }
        }
        if "(){}[],.=<>+-*/&|^!:".contains(c) {
            index += 1
            return token(.symbol(String(c)))
        }
        throw error("unexpected character '\(c)'", at: start)
    }

    private mutating func number(start: Int) throws -> PredicateToken {
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, offset: start, text: String(chars[start..<index]))
        }
        if peek() == "0", let p = peek(1), "xXoObB".contains(p) {
            let radix = "xX".contains(p) ? 16 : "oO".contains(p) ? 8 : 2
            index += 2
            let digitsStart = index
            while let d = peek(), d.isHexDigit { index += 1 }
            let digits = String(chars[digitsStart..<index])
            guard let value = Int(digits, radix: radix) else { throw error("expected base-\(radix) digits", at: digitsStart) }
            return token(.integer(value))
        }
        var isFloat = false
        while let d = peek(), d.isASCII, d.isNumber { index += 1 }
        if peek() == ".", let d = peek(1), d.isASCII, d.isNumber {
            isFloat = true
            index += 1
            while let d = peek(), d.isASCII, d.isNumber { index += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var ahead = 1
            if let s = peek(1), s == "+" || s == "-" { ahead = 2 }
            if let d = peek(ahead), d.isASCII, d.isNumber {
                isFloat = true
                index += ahead
                while let d = peek(), d.isASCII, d.isNumber { index += 1 }
            }
        }
        if let d = peek(), Self.isWordStart(d) { throw error("expected an operator or space after the number", at: index) }
        let text = String(chars[start..<index])
        if !isFloat, let value = Int(text) { return token(.integer(value)) }
        guard let value = Double(text) else { throw error("malformed number '\(text)'", at: start) }
        return token(.float(value))
    }

    private mutating func string(quote: Character, start: Int) throws -> PredicateToken {
        index += 1
        var value = ""
        while true {
            guard let c = peek() else { throw error("unterminated string: expected a closing \(quote)", at: start) }
            index += 1
            if c == quote { break }
            if c == "\\" {
                guard let e = peek() else { throw error("unterminated string: expected a closing \(quote)", at: start) }
                index += 1
                switch e {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "r": value.append("\r")
                case "0": value.append("\0")
                case "u":
                    let hex = String(chars[index..<min(index + 4, chars.count)])
                    guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                        throw error("expected four hex digits after \\u", at: index)
                    }
                    index += 4
                    value.unicodeScalars.append(scalar)
                default: value.append(e)
                }
            } else {
                value.append(c)
            }
        }
        return PredicateToken(kind: .string(value), offset: start, text: String(chars[start..<index]))
    }

    private mutating func specifier(start: Int) throws -> PredicateToken {
        index += 1
        if peek() == "%" {
            index += 1
            throw error("'%%' is a literal percent sign, which is only meaningful inside a quoted string", at: start)
        }
        while let c = peek(), "hlqLzjt".contains(c) { index += 1 }
        guard let conversion = peek(), "@KdiouxXDOUfFeEgGaAsScCp".contains(conversion) else {
            throw error("expected a format specifier such as %@, %K or %d after '%'", at: start)
        }
        index += 1
        let token = PredicateToken(
            kind: .specifier(conversion: conversion, text: String(chars[start..<index]), argument: argumentCount),
            offset: start, text: String(chars[start..<index]))
        argumentCount += 1
        return token
    }
}

/// Where and why a format string failed to parse. Carried as the `underlyingError` of the
/// ``OpenCoreDataError`` that parsing throws.
package struct PredicateSyntaxError: Error, Sendable, CustomStringConvertible {
    package var format: String
    /// Offset in characters.
    package var offset: Int
    /// What was expected, in words.
    package var message: String

    /// The message, the line of the format string holding the offset, and a caret under the spot.
    package var description: String {
        let chars = Array(format)
        let clamped = min(max(offset, 0), chars.count)
        var lineStart = clamped
        while lineStart > 0, !chars[lineStart - 1].isNewline { lineStart -= 1 }
        var lineEnd = clamped
        while lineEnd < chars.count, !chars[lineEnd].isNewline { lineEnd += 1 }
        let line = String(chars[lineStart..<lineEnd])
        return "\(message)\n\(line)\n\(String(repeating: " ", count: clamped - lineStart))^"
    }

    package var openCoreDataError: OpenCoreDataError {
        OpenCoreDataError(.invalidFormat, description, underlyingError: self)
    }
}
