import Foundation

/// Parsed predicate format strings, kept per format string, so that a predicate built in a loop
/// (`NSPredicate(format: "%K == %lld", "id", id)`, the seeds' `findOrCreate`) is tokenized and
/// parsed once.
///
/// A template is the parse of the format with every specifier as a slot: the variable
/// `%0`, `%1`, ... (a name no format string can write, since `$` must be followed by a letter).
/// Instantiating it substitutes, for each slot, the expression the direct parse builds from the
/// argument (``PredicateParser/argumentExpression(_:value:format:)``), through the same walk as
/// `withSubstitutionVariables(_:)`; the result is the tree the direct parse gives.
///
/// Formats whose parse depends on an argument's value (`-%d`, which folds to a constant; `%K.name`
/// and `name.%K`, which join key paths; `FUNCTION(x, %@)`; `CAST(%@, ...)`) are marked unusable and
/// always parsed directly, as are malformed formats. So is any instantiation whose arguments are
/// missing or of the wrong kind, so that errors are the direct parse's, with its messages.
enum PredicateTemplates {
    /// Thrown while parsing a template where the parse would depend on an argument's value.
    struct ValueDependent: Error {}

    private enum Entry {
        case template(NSPredicate, slots: [PredicateToken])
        case unusable
    }

    /// Bounded as the lexer's token cache is, so formats built by interpolating values cannot grow it
    /// without limit: when full it is emptied (the next uses parse again).
    private static let capacity = PredicateLexer.cacheLimit
    private static let cache = Locked<[String: Entry]>([:])

    private static let slotNames = (0..<16).map { "%\($0)" }

    /// The variable name standing for the argument at `index` in a template.
    static func slotName(_ index: Int) -> String {
        index < slotNames.count ? slotNames[index] : "%\(index)"
    }

    /// Whether `expression` is a template slot.
    static func isSlot(_ expression: NSExpression) -> Bool {
        if case .variable(let name) = expression._node { return name.utf8.first == UInt8(ascii: "%") }
        return false
    }

    /// The predicate `format` with `arguments`, from the cached template; `nil` when the format must
    /// be parsed directly (see the type's documentation).
    static func predicate(_ format: String, arguments: [Any]) -> NSPredicate? {
        let entry = cache.withLock { $0[format] } ?? store(format)
        guard case .template(let template, let slots) = entry else { return nil }
        if slots.isEmpty { return template }  // immutable: shared
        var expressions: [NSExpression] = []
        expressions.reserveCapacity(slots.count)
        // Specifiers are numbered in order, so slot `%i` is the i-th specifier and argument.
        guard slots.count <= arguments.count else { return nil }
        for index in slots.indices {
            guard let expression = try? PredicateParser.argumentExpression(
                    slots[index], value: PredicateParser.argumentValue(arguments[index]), format: format)
            else { return nil }
            expressions.append(expression)
        }
        let predicate = template._substituting(SubstitutionVariables(named: [:], slots: expressions))
        if predicate !== template {  // never mark the shared template itself
            predicate._templateOrigin = PredicateTemplateOrigin(template: template, slots: expressions)
        }
        return predicate
    }

    /// Whether `format` can be parsed as a template (for tests).
    static func usesTemplate(_ format: String) -> Bool {
        (try? PredicateParser.parseTemplate(format)) != nil
    }

    private static func store(_ format: String) -> Entry {
        let entry: Entry
        if let (template, slots) = try? PredicateParser.parseTemplate(format) {
            entry = .template(template, slots: slots)
        } else {
            entry = .unusable
        }
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[format] = entry
        }
        return entry
    }
}

/// Where a predicate instantiated from a format template came from: the template (whose identity
/// stands for the format string) and the expressions that replaced its slots `%0`, `%1`, ...; the
/// instance's tree holds these same expression objects where the template had the slots.
struct PredicateTemplateOrigin {
    let template: NSPredicate
    let slots: [NSExpression]
}
