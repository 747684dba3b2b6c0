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

    /// A cache entry. One class reference, so that taking an entry out of the cache is one retain.
    private enum Entry {
        case template(Template)
        case unusable
    }

    /// A parsed template and what instantiating it needs.
    private final class Template: Sendable {
        let predicate: NSPredicate
        let slots: [Slot]
        let validations = TemplateValidations()
        /// Set when the template is one comparison whose sides are each a slot or a leaf: its
        /// instances are then made directly, not by the substitution walk (which looked at each
        /// side's node and each slot's name: about 700 instructions an instance, callgrind case 4).
        let comparison: Comparison?
        /// The origin every instance shares, when the template is one comparison whose sides hold
        /// all its slots: an instance's slots are then read from its sides, and no origin is made
        /// per instance (making one and freeing it was about 300 instructions an instance,
        /// callgrind case 4).
        let sharedOrigin: PredicateTemplateOrigin?
        /// The integer slot (`%d`, `%lld`) of a template with a shared origin, whose instances leave
        /// it pending when it is given an `Int64` or `Int` (``pendingInstance(_:other:)``).
        let pendingSlot: Int?

        init(predicate: NSPredicate, slots: [Slot]) {
            self.predicate = predicate
            self.slots = slots
            let comparison = Comparison(predicate, slotCount: slots.count)
            self.comparison = comparison
            let validations = validations
            sharedOrigin = comparison?.slotSides(count: slots.count).map { sides in
                PredicateTemplateOrigin(template: predicate, validations: validations, sides: sides)
            }
            pendingSlot = sharedOrigin == nil ? nil : slots.firstIndex { $0.conversion == .integer }
        }

        /// The instance whose integer slot is the pending constant `arguments[pendingSlot]` (see
        /// ``NSComparisonPredicate/_left``), its other slot, if any, `other(slots[i], i)`; `nil` when
        /// the template has no such slot or the argument is not exactly an `Int64` or `Int` (the
        /// caller then makes the instance as usual), or `other` gives `nil`.
        @inline(__always)
        func pendingInstance(_ arguments: [Any?], other: (Slot, Int) -> NSExpression?) -> NSPredicate? {
            guard let pendingSlot, let comparison, let sharedOrigin, slots.count <= arguments.count,
                let integer = ValueConversion.exactly(in: arguments, at: pendingSlot, as: Int64.self)
                    ?? ValueConversion.exactly(in: arguments, at: pendingSlot, as: Int.self).map(Int64.init)
            else { return nil }
            var otherExpression: NSExpression?
            if slots.count == 2 {
                let index = 1 - pendingSlot
                guard let made = other(slots[index], index) else { return nil }
                otherExpression = made
            }
            let instance = comparison.instance(pending: pendingSlot, integer, other: otherExpression)
            instance._templateOrigin = sharedOrigin
            return instance
        }

        /// The instance whose slot `i` is `expression(slots[i], i)`, given `count` arguments; `nil`
        /// if one of them is. A method, so that the template's parts are read from it in place
        /// (copied out of it by a caller, each was retained and released).
        @inline(__always)
        func instance(count: Int, expression: (Slot, Int) -> NSExpression?) -> NSPredicate? {
            if slots.isEmpty { return predicate }  // immutable: shared
            // Specifiers are numbered in order, so slot `%i` is the i-th specifier and argument.
            guard slots.count <= count else { return nil }
            if slots.count <= 2 {
                guard let first = expression(slots[0], 0) else { return nil }
                var second: NSExpression?
                if slots.count == 2 {
                    guard let made = expression(slots[1], 1) else { return nil }
                    second = made
                }
                // The expressions are held here while views of them are used (and then by the
                // instance, and its own origin).
                return withExtendedLifetime((first, second)) {
                    instance(TemplateSlots(first, second), first: first, second: second, all: nil)
                }
            }
            var expressions: [NSExpression] = []
            expressions.reserveCapacity(slots.count)
            for index in slots.indices {
                guard let expression = expression(slots[index], index) else { return nil }
                expressions.append(expression)
            }
            return instance(TemplateSlots(expressions), first: nil, second: nil, all: expressions)
        }

        /// The instance with `slots`, which are `first` and `second`, or `all`.
        private func instance(
            _ slots: TemplateSlots, first: NSExpression?, second: NSExpression?, all: [NSExpression]?
        ) -> NSPredicate {
            if let comparison, let sharedOrigin {
                let instance = comparison.instance(slots)
                instance._templateOrigin = sharedOrigin
                return instance
            }
            let instance =
                comparison?.instance(slots)
                ?? predicate._substituting(SubstitutionVariables(named: [:], slots: Array(slots)))
            if instance !== predicate {  // never mark the shared template itself
                instance._templateOrigin = PredicateTemplateOrigin(
                    template: predicate, first: first, second: second, all: all, validations: validations)
            }
            return instance
        }
    }

    /// A one-comparison template's operator and sides. A class, so that reading it out of its
    /// template is a retain: a struct was copied out and destroyed with its sides' payloads (about
    /// 80 instructions an instance, callgrind case 4).
    private final class Comparison: Sendable {
        let left: Side
        let right: Side
        let modifier: NSComparisonPredicate.Modifier
        let type: NSComparisonPredicate.Operator
        let options: NSComparisonPredicate.Options

        init?(_ predicate: NSPredicate, slotCount: Int) {
            guard Swift.type(of: predicate) == NSComparisonPredicate.self, let comparison = predicate as? NSComparisonPredicate,
                let left = Side(comparison.leftExpression, slotCount: slotCount),
                let right = Side(comparison.rightExpression, slotCount: slotCount)
            else { return nil }
            (self.left, self.right) = (left, right)
            modifier = comparison.comparisonPredicateModifier
            type = comparison.predicateOperatorType
            options = comparison.options
        }

        /// Which side holds each of the template's `count` slots, when the sides hold them all.
        func slotSides(count: Int) -> PredicateTemplateOrigin.SlotSides? {
            func isLeft(_ index: Int) -> Bool? {
                if case .slot(index) = left { return true }
                if case .slot(index) = right { return false }
                return nil
            }
            switch count {
            case 1: return isLeft(0).map { PredicateTemplateOrigin.SlotSides(firstIsLeft: $0, secondIsLeft: nil) }
            case 2:
                guard let first = isLeft(0), let second = isLeft(1) else { return nil }
                return PredicateTemplateOrigin.SlotSides(firstIsLeft: first, secondIsLeft: second)
            default: return nil
            }
        }

        /// The instance whose slot `pending` is the pending constant `integer` and whose other slot,
        /// if any, is `other` (see ``Template/pendingInstance(_:other:)``).
        func instance(pending: Int, _ integer: Int64, other: NSExpression?) -> NSPredicate {
            let slot = { (index: Int) in index == pending ? nil : other }
            return NSComparisonPredicate(
                _templateLeft: left.expression(slot: slot), right: right.expression(slot: slot),
                pendingInteger: integer, modifier: modifier, type: type, options: options)
        }

        /// The instance with `slots`: what `_substituting` makes of the template.
        func instance(_ slots: TemplateSlots) -> NSPredicate {
            NSComparisonPredicate(
                leftExpression: left.expression(slots), rightExpression: right.expression(slots), modifier: modifier,
                type: type, options: options)
        }
    }

    /// One side of a one-comparison template, as substitution treats it.
    private enum Side: Sendable {
        /// The slot `%i`: the instance's `slots[i]`.
        case slot(Int)
        /// A key path without an operand: substitution makes a new expression with the same path.
        case keyPath(String)
        /// An expression substitution returns as it is (a constant, a `$variable`, `SELF`).
        case same(NSExpression)

        init?(_ expression: NSExpression, slotCount: Int) {
            switch expression._node {
            case .variable(let name):
                guard let index = PredicateTemplates.slotIndex(name) else { self = .same(expression); return }
                guard index < slotCount else { return nil }
                self = .slot(index)
            case .keyPath(nil, let path): self = .keyPath(path)
            case .constant, .symbolic, .evaluatedObject, .anyKey: self = .same(expression)
            default: return nil
            }
        }

        func expression(_ slots: TemplateSlots) -> NSExpression {
            expression { slots[$0] }.unsafelyUnwrapped
        }

        /// The side's expression, `slot(i)` for the slot `%i`.
        @inline(__always)
        func expression(slot: (Int) -> NSExpression?) -> NSExpression? {
            switch self {
            case .slot(let index): slot(index)
            case .keyPath(let path): NSExpression(_node: .keyPath(operand: nil, path: path))
            case .same(let expression): expression
            }
        }
    }

    /// A template slot: its specifier (for the parser's conversions and messages), and which of
    /// the common conversions it is, which are made here without going through the token.
    /// A class, so that reading one out of the template's array does not copy the token.
    private final class Slot: Sendable {
        enum Conversion { case keyPath, object, integer, other }
        let token: PredicateToken
        let conversion: Conversion

        init(_ token: PredicateToken) {
            self.token = token
            guard case .specifier(let conversion, _, _) = token.kind else {
                self.conversion = .other
                return
            }
            switch conversion {
            case "K": self.conversion = .keyPath
            case "@": self.conversion = .object
            case "d", "i", "u", "D", "U": self.conversion = .integer
            default: self.conversion = .other
            }
        }

        /// The slot's expression for the argument `value` (already read as the parser reads it),
        /// as ``PredicateParser/argumentExpression(_:value:format:)`` makes it; `nil` if that throws.
        func expression(_ value: Any?, format: String) -> NSExpression? {
            switch conversion {
            case .keyPath:
                if let value, let path = ValueConversion.exactly(value, as: String.self) {
                    return NSExpression(_node: .keyPath(operand: nil, path: path))
                }
            case .integer:
                if let value, let integer = ValueConversion.exactly(value, as: Int.self) {
                    return NSExpression(_integerConstant: integer)
                }
                if let value, let integer = ValueConversion.exactly(value, as: Int64.self) {
                    return NSExpression(_integerConstant: Int(integer))
                }
            case .object:
                if let value, let string = ValueConversion.exactly(value, as: String.self) {
                    return NSExpression(_node: .constant(string))  // what normalizing a String gives
                }
            case .other:
                break
            }
            return try? PredicateParser.argumentExpression(token, value: value, format: format)
        }

        /// The key path expression for `path`: the one made last, when `path` is the same. A loop
        /// passes one key over and over, and an expression is immutable, so instances can share it
        /// (making one and freeing it with its predicate was about 400 instructions an instance,
        /// callgrind case 4).
        ///
        /// The slot's first key path is also kept where it is read without the lock (set once, so a
        /// reader cannot see it go): about 50 instructions an instance fewer (callgrind case 4), and
        /// a slot is mostly given one key.
        private func keyPathExpression(_ path: String) -> NSExpression {
            if let expression = firstKeyPath.withObject({ $0.path == path ? $0.expression : nil }) { return expression }
            let expression = lastKeyPath.withLock { last in
                if let last, last.path == path { return last.expression }
                let made = NSExpression(_node: .keyPath(operand: nil, path: path))
                last = (path, made)
                return made
            }
            firstKeyPath.setIfUnset(KeyPathExpression(path: path, expression: expression))
            return expression
        }

        private let lastKeyPath = Locked<(path: String, expression: NSExpression)?>(nil)
        private let firstKeyPath = SetOnceReference<KeyPathExpression>()

        private final class KeyPathExpression: Sendable {
            let path: String
            let expression: NSExpression

            init(path: String, expression: NSExpression) {
                self.path = path
                self.expression = expression
            }
        }

        /// ``expression(_:format:)`` for `arguments[index]` when it is exactly a `String` (`%K`, `%@`)
        /// or an `Int` or `Int64` (an integer specifier), read in place: the general path copies the
        /// argument out of the array and through ``PredicateParser/argumentValue(_:)`` (about 250
        /// instructions a slot, callgrind case 4). Such values are neither optionals nor `NSNull`, so
        /// that reading changes nothing. `nil` when the argument is of another type.
        func expression(in arguments: [Any?], at index: Int) -> NSExpression? {
            switch conversion {
            case .keyPath:
                if let path = ValueConversion.exactly(in: arguments, at: index, as: String.self) {
                    return keyPathExpression(path)
                }
            case .integer:
                if let integer = ValueConversion.exactly(in: arguments, at: index, as: Int64.self) {
                    return NSExpression(_integerConstant: Int(integer))
                }
                if let integer = ValueConversion.exactly(in: arguments, at: index, as: Int.self) {
                    return NSExpression(_integerConstant: integer)
                }
            case .object:
                if let string = ValueConversion.exactly(in: arguments, at: index, as: String.self) {
                    return NSExpression(_node: .constant(string))
                }
            case .other:
                break
            }
            return nil
        }
    }

    /// The last format used, checked before the dictionary: a loop uses one format over and over,
    /// and comparing a short string costs less than hashing it.
    private static let last = Locked<(format: String, entry: Entry)?>(nil)

    /// Bounded as the lexer's token cache is, so formats built by interpolating values cannot grow it
    /// without limit: when full it is emptied (the next uses parse again).
    private static let capacity = PredicateLexer.cacheLimit
    private static let cache = Locked<[String: Entry]>([:])

    private static let slotNames = (0..<16).map { "%\($0)" }

    /// The variable name standing for the argument at `index` in a template.
    static func slotName(_ index: Int) -> String {
        index < slotNames.count ? slotNames[index] : "%\(index)"
    }

    /// The index of the slot variable `name` (`%` and decimal digits), if it is one.
    static func slotIndex(_ name: String) -> Int? {
        var utf8 = name.utf8.makeIterator()
        guard utf8.next() == UInt8(ascii: "%") else { return nil }
        var index = 0
        var digits = 0
        while let byte = utf8.next() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 else { return nil }
            index = index * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? index : nil
    }

    /// Whether `expression` is a template slot.
    static func isSlot(_ expression: NSExpression) -> Bool {
        if case .variable(let name) = expression._node { return name.utf8.first == UInt8(ascii: "%") }
        return false
    }

    /// The predicate `format` with `arguments`, from the cached template; `nil` when the format must
    /// be parsed directly (see the type's documentation).
    static func predicate(_ format: String, arguments: [Any]) -> NSPredicate? {
        instantiate(format, count: arguments.count) { slot, index in
            slot.expression(PredicateParser.argumentValue(arguments[index]), format: format)
        }
    }

    /// ``predicate(_:arguments:)`` with `NSPredicate(format:_:)`'s optional arguments, without
    /// first making them an array of non-optionals.
    static func predicate(_ format: String, optionalArguments arguments: [Any?]) -> NSPredicate? {
        guard case .template(let template) = entry(format) else { return nil }
        let expression = { (slot: Slot, index: Int) -> NSExpression? in
            slot.expression(in: arguments, at: index)
                ?? slot.expression(arguments[index].flatMap(PredicateParser.argumentValue), format: format)
        }
        if let instance = template.pendingInstance(arguments, other: expression) { return instance }
        return template.instance(count: arguments.count, expression: expression)
    }

    private static func entry(_ format: String) -> Entry {
        if let entry = last.withLock({ last in last.flatMap { $0.format == format ? $0.entry : nil } }) { return entry }
        let entry = cache.withLock { $0[format] } ?? store(format)
        last.withLock { $0 = (format, entry) }
        return entry
    }

    /// The template's instance whose slot `i` is `expression(slots[i], i)`; `nil` if one of them is.
    @inline(__always)
    private static func instantiate(
        _ format: String, count: Int, expression: (Slot, Int) -> NSExpression?
    ) -> NSPredicate? {
        guard case .template(let template) = entry(format) else { return nil }
        return template.instance(count: count, expression: expression)
    }

    /// Whether `format` can be parsed as a template (for tests).
    static func usesTemplate(_ format: String) -> Bool {
        (try? PredicateParser.parseTemplate(format)) != nil
    }

    private static func store(_ format: String) -> Entry {
        let entry: Entry
        if let (template, tokens) = try? PredicateParser.parseTemplate(format) {
            entry = .template(Template(predicate: template, slots: tokens.map(Slot.init)))
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
///
/// An instance of a one-comparison template whose sides hold every slot has the origin its
/// template shares with all its instances, and its slots are read from its sides; any other
/// instance has an origin of its own, which holds its slots. So the slots are asked of an origin
/// with the instance they are wanted for (``slots(of:)``).
final class PredicateTemplateOrigin: Sendable {
    /// For an origin shared by a comparison template's instances: the side of slot 0, and of slot 1
    /// when there is one (`true`: the left).
    struct SlotSides: Sendable {
        let firstIsLeft: Bool
        let secondIsLeft: Bool?
    }

    let template: NSPredicate
    let validations: TemplateValidations
    /// An instance's own origin: its slots, held. A shared origin: its slots' `sides`.
    private let first: NSExpression?
    private let second: NSExpression?
    private let all: [NSExpression]?
    private let sides: SlotSides?

    /// The origin of one instance, whose slots are `first` (and `second`), or `all` when there
    /// are more than two.
    init(
        template: NSPredicate, first: NSExpression?, second: NSExpression?, all: [NSExpression]?,
        validations: TemplateValidations
    ) {
        self.template = template
        self.validations = validations
        (self.first, self.second, self.all) = (first, second, all)
        sides = nil
    }

    /// The origin shared by the instances of a comparison template whose slots are on `sides`.
    init(template: NSPredicate, validations: TemplateValidations, sides: SlotSides) {
        self.template = template
        self.validations = validations
        (first, second, all) = (nil, nil, nil)
        self.sides = sides
    }

    /// The expressions that replaced the template's slots in `instance`, a predicate whose origin
    /// this is; a view that is valid while `instance` is.
    @inline(__always)
    func slots(of instance: NSPredicate) -> TemplateSlots {
        guard let sides else {
            if let all { return TemplateSlots(all) }
            return TemplateSlots(first.unsafelyUnwrapped, second)
        }
        // A shared origin is set only on comparisons `PredicateTemplates.Comparison` made.
        let comparison = unsafeDowncast(instance, to: NSComparisonPredicate.self)
        let left = comparison._left, right = comparison._right
        let first = sides.firstIsLeft ? left : right
        let second = sides.secondIsLeft.flatMap { $0 ? left : right }
        let count = sides.secondIsLeft == nil ? 1 : 2
        if left == nil || right == nil {
            return TemplateSlots(pendingIn: comparison, first: first, second: second, count: count)
        }
        return TemplateSlots(first.unsafelyUnwrapped, second)
    }

    /// The key paths of `slots`' `%K` slots, in order.
    static func keyPathSlots(_ slots: TemplateSlots) -> [String] {
        slots.indices.compactMap { slots.plainKeyPath(at: $0) }
    }

    /// Whether the key paths of `instance` are known to be valid for `entity`: an instance of the
    /// same template with the same `%K` key paths passed ``NSPredicate/_ocdValidate(for:)``.
    /// (Validation checks key paths only; constants take no part.)
    func isValidated(for entity: NSEntityDescription, instance: NSPredicate) -> Bool {
        let slots = slots(of: instance)
        if validations.firstIs(entity, where: { Self.keyPaths(of: slots, equal: $0) }) { return true }
        return validations.entries.withLock { entries in
            entries.contains { $0.entity === entity && Self.keyPaths(of: slots, equal: $0.keyPaths) }
        }
    }

    func noteValidated(for entity: NSEntityDescription, instance: NSPredicate) {
        validations.note(entity, keyPaths: Self.keyPathSlots(slots(of: instance)))
    }

    private static func keyPaths(of slots: TemplateSlots, equal keyPaths: [String]) -> Bool {
        var index = 0
        for slot in 0..<slots.count {
            guard let path = slots.plainKeyPath(at: slot) else { continue }
            guard index < keyPaths.count, keyPaths[index] == path else { return false }
            index += 1
        }
        return index == keyPaths.count
    }
}

/// The entities (and `%K` key paths) instances of one template were validated for. Entities are
/// held strongly, so that a freed entity's address cannot stand for another; a few per template.
///
/// The first entry is also kept where it is read without the lock (set once, released with this):
/// a loop of fetches validates one template for one entity, and the lock and the list's walk were
/// about 100 instructions a fetch (callgrind case 4).
final class TemplateValidations: Sendable {
    static let limit = 8
    let entries = Locked<[(entity: NSEntityDescription, keyPaths: [String])]>([])
    private let first = SetOnceReference<Entry>()

    private final class Entry: Sendable {
        let entity: NSEntityDescription
        let keyPaths: [String]

        init(entity: NSEntityDescription, keyPaths: [String]) {
            self.entity = entity
            self.keyPaths = keyPaths
        }
    }

    /// Whether the first entry is for `entity` and has key paths that `matches`.
    @inline(__always)
    func firstIs(_ entity: NSEntityDescription, where matches: ([String]) -> Bool) -> Bool {
        first.withObject { $0.entity === entity && matches($0.keyPaths) } ?? false
    }

    /// Adds an entry (under the lock, and as the first one if there is none yet).
    func note(_ entity: NSEntityDescription, keyPaths: [String]) {
        entries.withLock { entries in
            if entries.count >= Self.limit { entries.removeFirst() }
            entries.append((entity, keyPaths))
        }
        first.setIfUnset(Entry(entity: entity, keyPaths: keyPaths))
    }
}

/// A template instance's slot expressions, in order: one or two (most formats have one or two
/// specifiers) kept inline, more in an array. An array of them was allocated for every instance and
/// freed with it (about 350 instructions an instance, callgrind case 4).
///
/// One inline slot may be pending: an instance's integer constant not yet made into its expression
/// (``NSComparisonPredicate/_pendingInteger``). ``constantInteger(at:)``, ``constantType(at:)`` and
/// ``plainKeyPath(at:)`` read it as it is; the subscript and ``withSlot(_:_:)`` make its expression.
///
/// A view: the inline expressions are not held (a copy of the view, passed along a fetch, retained
/// and released each), so it is valid only while what holds them is (the instance predicate, or
/// the caller that made them).
struct TemplateSlots: RandomAccessCollection, @unchecked Sendable {
    // @unchecked Sendable: a view of immutable expressions (see above).
    private let first: Unmanaged<NSExpression>?
    private let second: Unmanaged<NSExpression>?
    /// All of them, when there are more than two.
    private let all: [NSExpression]?
    /// The instance whose pending constant is the inline slot that is `nil`, if one is.
    private let pendingOwner: Unmanaged<NSComparisonPredicate>?
    let endIndex: Int

    var startIndex: Int { 0 }

    /// One slot, or two.
    init(_ first: NSExpression, _ second: NSExpression?) {
        self.first = Unmanaged.passUnretained(first)
        self.second = second.map(Unmanaged.passUnretained)
        all = nil
        pendingOwner = nil
        endIndex = second == nil ? 1 : 2
    }

    init(_ expressions: [NSExpression]) {
        if expressions.count <= 2 {
            first = expressions.first.map(Unmanaged.passUnretained)
            second = expressions.count == 2 ? Unmanaged.passUnretained(expressions[1]) : nil
            all = nil
        } else {
            first = nil
            second = nil
            all = expressions
        }
        pendingOwner = nil
        endIndex = expressions.count
    }

    /// `count` (one or two) slots of `owner`, one of which, the one that is `nil`, is its pending
    /// constant.
    init(pendingIn owner: NSComparisonPredicate, first: NSExpression?, second: NSExpression?, count: Int) {
        self.first = first.map(Unmanaged.passUnretained)
        self.second = second.map(Unmanaged.passUnretained)
        all = nil
        pendingOwner = Unmanaged.passUnretained(owner)
        endIndex = count
    }

    subscript(index: Int) -> NSExpression {
        if let all { return all[index] }
        precondition(index >= 0 && index < endIndex, "TemplateSlots: index \(index) out of range")
        if let slot = index == 0 ? first : second { return slot.takeUnretainedValue() }
        return pendingOwner.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0._pendingExpression() }
    }

    /// `body` of slot `index`, read without a retain (the view's owner holds it): the loops a fetch
    /// runs over its slots (validation, the plan's lookup) retained and released each slot read,
    /// and copied the view to iterate it.
    @inline(__always)
    func withSlot<R>(_ index: Int, _ body: (NSExpression) -> R) -> R {
        if let all { return body(all[index]) }
        precondition(index >= 0 && index < endIndex, "TemplateSlots: index \(index) out of range")
        if let slot = index == 0 ? first : second { return slot._withUnsafeGuaranteedRef(body) }
        return body(pendingOwner.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0._pendingExpression() })
    }

    /// The pending constant's value, if slot `index` is one.
    @inline(__always)
    private func pendingInteger(_ index: Int) -> Int64? {
        guard let pendingOwner, all == nil, index < endIndex, (index == 0 ? first : second) == nil else { return nil }
        return pendingOwner._withUnsafeGuaranteedRef { $0._pendingInteger }
    }

    /// Slot `index`'s ``NSExpression/_constantInteger``, read without making a pending slot's expression.
    @inline(__always)
    func constantInteger(at index: Int) -> Int64? {
        if let pending = pendingInteger(index) { return pending }
        return withSlot(index) { $0._constantInteger }
    }

    /// Slot `index`'s ``NSExpression/_constantType``, read without making a pending slot's expression.
    @inline(__always)
    func constantType(at index: Int) -> ObjectIdentifier? {
        if pendingInteger(index) != nil { return ObjectIdentifier(Int.self) }
        return withSlot(index) { $0._constantType }
    }

    /// Slot `index`'s ``NSExpression/_plainKeyPath``, read without making a pending slot's expression.
    @inline(__always)
    func plainKeyPath(at index: Int) -> String? {
        if pendingInteger(index) != nil { return nil }
        return withSlot(index) { $0._plainKeyPath }
    }
}
