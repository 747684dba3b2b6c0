import Foundation

/// Compiles fetch-request predicates and sort descriptors to SQL over Core Data's layout, with every
/// constant bound as a parameter (never interpolated).
///
/// Semantics follow Apple's in-memory evaluation, so a store answers like the in-memory store:
/// - every compiled condition is 0 or 1, never NULL, so `NOT` and `!=` treat nil as a value
///   (`attr != 5` matches rows where `attr` is nil);
/// - key paths through to-one relationships use `LEFT JOIN`s, so a nil relationship gives nil values;
/// - string operators (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, `==`/`!=`/`IN` with
///   `[c]`/`[d]` or with non-ASCII constants) run through the `ocd_strop` function
///   (``SQLiteFunctions``): Unicode folding and canonical equivalence, not SQLite's ASCII rules;
/// - `ANY`/`ALL` over a to-many relationship of the fetched entity become correlated `EXISTS`
///   subqueries that skip nil values (a key path's values form a set without nils), `rel.@count` a
///   `COUNT(*)` subquery, and `rel.@sum.x`/`@avg`/`@min`/`@max` scalar subqueries (sum and average
///   of no values 0, minimum and maximum nil, as in memory);
/// - `<`, `<=`, `>`, `>=` on strings with `[c]`/`[d]` run the in-memory comparison through
///   `ocd_strop`; any ordering against nil is false;
/// - a constant of another kind than the attribute (a string against a number or date) is left to
///   memory, where it never matches, rather than converted by SQLite's column affinity;
/// - sorts use SQLite's BINARY order (code points), which is Swift's `<` for NFC text, or for
///   selector-based descriptors (`caseInsensitiveCompare:`, `localized...Compare:`) a collation that
///   runs the in-memory string comparison; decimals and descriptors with comparator closures sort in
///   memory.
///
/// Compiled: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `IN`, `BETWEEN`) of attributes of every
/// stored type and of to-one relationships (through any chain of to-one key paths) with constants or
/// aggregates of constants, `SELF == object`, `AND`/`OR`/`NOT`, `TRUEPREDICATE`/`FALSEPREDICATE`.
/// Anything else (to-many key paths after a to-one, functions, two key paths, `SUBQUERY`, decimal
/// comparisons, block predicates, subclasses) returns `nil`, and the store evaluates it in memory.
final class SQLiteQuery {
    private let schema: SQLiteSchema
    private let mapping: SQLiteSchema.EntityMapping
    private(set) var joins: [String] = []
    private var aliasByPath: [String: (alias: String, entity: NSEntityDescription)] = [:]
    private(set) var bindings: [SQLiteValue] = []
    /// Table aliases are `<prefix>0` (the fetched entity), `<prefix>1`... (joined to-one destinations).
    private let aliasPrefix: String
    private var rootAlias: String { aliasPrefix + "0" }
    /// Subqueries opened so far, for unique alias prefixes.
    private var subqueryCount = 0

    // Reuse by later instances of the same format template (``SQLiteStore/FetchPlan``).
    /// The expressions that filled the template's slots: a constant that is one of them is bound
    /// as that slot's value in ``recipe``.
    private let slots: [NSExpression]
    /// How each binding was made, in order: from a slot's value, or fixed by the template.
    private(set) var recipe: [SQLiteStore.FetchPlan.Binding] = []
    /// Cleared when the SQL depends on a slot's value in a way the plan's slot kinds do not
    /// capture (a temporary object ID compiles to `0`; a slot inside an aggregate).
    private(set) var reusable = true
    /// The slot the constant being compiled came from.
    private var currentSlot: Int?

    init(
        schema: SQLiteSchema, mapping: SQLiteSchema.EntityMapping, aliasPrefix: String = "t",
        slots: [NSExpression] = []
    ) {
        self.schema = schema
        self.mapping = mapping
        self.aliasPrefix = aliasPrefix
        self.slots = slots
    }

    /// What a key path leads to: a column expression and how to read it.
    private enum Target {
        case attribute(String, NSAttributeType)
        case toOne(String)
    }

    // MARK: Key paths

    private func resolve(_ keyPath: String) -> Target? {
        let parts = PredicateKeyPath.components(keyPath)
        guard !parts.isEmpty, !parts.contains(where: \.isEmpty) else { return nil }
        var alias = rootAlias
        var entity = mapping.entity
        var prefix = ""
        for (i, name) in parts.enumerated() {
            guard let property = entity.layout.propertiesByName[name], !property.isTransient else { return nil }
            let isLast = i == parts.count - 1
            if let attribute = property as? NSAttributeDescription {
                if !isLast, attribute is NSCompositeAttributeDescription {  // a namespaced key path: one element's column
                    guard let element = schema.compositeColumn(of: property, path: parts[(i + 1)...]) else { return nil }
                    return .attribute("\(alias).\(element.name)", element.type)
                }
                guard isLast, let column = schema.columnByProperty[ObjectIdentifier(property)] else { return nil }
                return .attribute("\(alias).\(column)", attribute.attributeType)
            }
            guard let relationship = property as? NSRelationshipDescription, !relationship.isToMany,
                let column = schema.columnByProperty[ObjectIdentifier(property)]
            else { return nil }
            if isLast { return .toOne("\(alias).\(column)") }
            guard let destination = relationship.destinationEntity, let table = schema.table(for: destination) else {
                return nil
            }
            prefix += (prefix.isEmpty ? "" : ".") + name
            if let known = aliasByPath[prefix] {
                alias = known.alias
                entity = known.entity
                continue
            }
            let next = "\(aliasPrefix)\(aliasByPath.count + 1)"
            joins.append("LEFT JOIN \(table.name) \(next) ON \(next).Z_PK = \(alias).\(column)")
            aliasByPath[prefix] = (next, destination)
            alias = next
            entity = destination
        }
        return nil
    }

    /// The column expression and type of an attribute key path (through to-one relationships,
    /// adding joins), or `nil` if it does not lead to a stored attribute.
    func attributeColumn(_ keyPath: String) -> (column: String, type: NSAttributeType)? {
        guard case .attribute(let column, let type)? = resolve(keyPath) else { return nil }
        return (column, type)
    }

    private func bind(_ value: SQLiteValue, _ role: SQLiteStore.FetchPlan.Role) -> String {
        bindings.append(value)
        recipe.append(currentSlot.map { .slot($0, role) } ?? .fixed(value))
        return "?"
    }

    /// Notes which slot `constant` is (for ``recipe``); a slot nested in an aggregate cannot be reused.
    private func noteSource(_ constant: NSExpression) {
        guard !slots.isEmpty else { return }
        currentSlot = slots.firstIndex { $0 === constant }
        if currentSlot == nil, case .aggregate(let items) = constant._node,
            items.contains(where: { item in slots.contains { $0 === item } })
        {
            reusable = false
        }
    }

    // MARK: Predicates

    /// SQL for `predicate`, or `nil` if some part cannot run in SQL. On `nil`, bindings and joins
    /// added so far are rolled back.
    func compile(_ predicate: NSPredicate) -> String? {
        let (savedBindings, savedRecipe, savedJoins, savedAliases) = (bindings, recipe, joins, aliasByPath)
        if let sql = compileAny(predicate) { return sql }
        (bindings, recipe, joins, aliasByPath) = (savedBindings, savedRecipe, savedJoins, savedAliases)
        return nil
    }

    private func compileAny(_ predicate: NSPredicate) -> String? {
        switch predicate {
        case let comparison as NSComparisonPredicate: return compileComparison(comparison)
        case let compound as NSCompoundPredicate:
            let parts = compound.subpredicates.map { ($0 as? NSPredicate).flatMap(compileAny) }
            if parts.contains(where: { $0 == nil }) { return nil }
            let sql = parts.compactMap { $0 }
            switch compound.compoundPredicateType {
            case .and: return sql.isEmpty ? "1" : "(" + sql.joined(separator: " AND ") + ")"
            case .or: return sql.isEmpty ? "0" : "(" + sql.joined(separator: " OR ") + ")"
            case .not: return sql.count == 1 ? "(NOT \(sql[0]))" : nil
            }
        default:
            guard type(of: predicate) == NSPredicate.self else { return nil }
            switch predicate.predicateFormat {
            case "TRUEPREDICATE": return "1"
            case "FALSEPREDICATE": return "0"
            default: return nil
            }
        }
    }

    private static func flipped(_ op: NSComparisonPredicate.Operator) -> NSComparisonPredicate.Operator? {
        switch op {
        case .equalTo, .notEqualTo: op
        case .lessThan: .greaterThan
        case .lessThanOrEqualTo: .greaterThanOrEqualTo
        case .greaterThan: .lessThan
        case .greaterThanOrEqualTo: .lessThanOrEqualTo
        default: nil
        }
    }

    /// The value of a constant expression (`.some(nil)` for nil), or of an aggregate of constants
    /// (`{1, 2}` in a format string) as an array; `nil` for any other expression.
    static func constant(_ expression: NSExpression) -> Any?? {
        switch expression.expressionType {
        case .constantValue:
            return .some(ValueConversion.unwrap(expression.constantValue).flatMap { ValueConversion.isNull($0) ? nil : $0 })
        case .aggregate:
            guard let items = expression.collection as? [NSExpression] else { return nil }
            var values: [Any] = []
            for item in items {
                guard item.expressionType == .constantValue, let value = ValueConversion.unwrap(item.constantValue),
                    !ValueConversion.isNull(value)
                else { return nil }
                values.append(value)
            }
            return .some(values)
        default:
            return nil
        }
    }

    private func compileComparison(_ predicate: NSComparisonPredicate) -> String? {
        if let sql = compileToManyComparison(predicate) { return sql }
        guard predicate.comparisonPredicateModifier == .direct else { return nil }
        var subject = predicate.leftExpression
        var constant = predicate.rightExpression
        var op = predicate.predicateOperatorType
        if subject.expressionType == .constantValue, constant.expressionType != .constantValue {
            guard let flippedOp = Self.flipped(op) else { return nil }
            (subject, constant, op) = (constant, subject, flippedOp)
        }
        guard let value = Self.constant(constant) else { return nil }
        noteSource(constant)
        switch subject.expressionType {
        case .evaluatedObject:
            return compileObjectComparison("\(rootAlias).Z_PK", op: op, value: value)
        case .keyPath:
            switch resolve(subject.keyPath) {
            case .attribute(let column, let type)?:
                return compileAttribute(column, type: type, op: op, options: predicate.options, value: value)
            case .toOne(let column)?:
                return compileObjectComparison(column, op: op, value: value)
            case nil:
                return nil
            }
        default:
            return nil
        }
    }

    // MARK: To-many key paths

    /// `ANY rel.path op c`, `ALL rel.path op c` and `rel.@count op n`, where `rel` is a to-many
    /// relationship of the fetched entity: correlated subqueries over the destination rows.
    private func compileToManyComparison(_ predicate: NSComparisonPredicate) -> String? {
        let subject = predicate.leftExpression
        guard subject.expressionType == .keyPath, PredicateKeyPath.isCompound(subject.keyPath) else { return nil }
        let parts = subject.keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let slot = mapping.entity.layout.indexByName[parts[0]],
            let toMany = mapping.toMany[slot], Self.constant(predicate.rightExpression) != nil
        else { return nil }
        noteSource(predicate.rightExpression)
        let destination: NSEntityDescription
        let from: String
        let link: String
        let alias = "\(aliasPrefix)s\(subqueryCount)"
        switch toMany {
        case .inverseForeignKey(let table, let column, _, let target):
            destination = target
            from = "\(table.name) \(alias)0"
            link = "\(alias)0.\(column) = \(rootAlias).Z_PK"
        case .join(let join, let mine, let other, _, let target):
            guard let table = schema.table(for: target) else { return nil }
            destination = target
            from = "\(join.name) \(alias)j JOIN \(table.name) \(alias)0 ON \(alias)0.Z_PK = \(alias)j.\(other)"
            link = "\(alias)j.\(mine) = \(rootAlias).Z_PK"
        }
        if parts[1] == "@count" {
            guard predicate.comparisonPredicateModifier == .direct,
                let count = ValueConversion.unwrap(predicate.rightExpression.constantValue).flatMap(
                    ValueConversion.int64)
            else { return nil }
            let symbols: [NSComparisonPredicate.Operator: String] = [
                .equalTo: "=", .notEqualTo: "!=", .lessThan: "<", .lessThanOrEqualTo: "<=", .greaterThan: ">",
                .greaterThanOrEqualTo: ">=",
            ]
            guard let symbol = symbols[predicate.predicateOperatorType] else { return nil }
            subqueryCount += 1
            return "(SELECT COUNT(*) FROM \(from) WHERE \(link)) \(symbol) \(bind(.integer(count), .count))"
        }
        if let sql = compileToManyAggregate(
            predicate, path: parts[1], destination: destination, from: from, link: link, alias: alias)
        {
            return sql
        }
        let modifier = predicate.comparisonPredicateModifier
        guard modifier == .any || modifier == .all, let destinationMapping = schema.mapping(for: destination) else {
            return nil
        }
        let inner = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: parts[1]), rightExpression: predicate.rightExpression,
            modifier: .direct, type: predicate.predicateOperatorType, options: predicate.options)
        let child = SQLiteQuery(schema: schema, mapping: destinationMapping, aliasPrefix: alias, slots: slots)
        guard let condition = child.compile(inner) else { return nil }
        // In memory the key path yields the set of destination values, which holds no nils: a
        // destination whose value is nil takes no part in ANY or ALL.
        let valueColumn: String
        switch child.resolve(parts[1]) {
        case .attribute(let column, _)?, .toOne(let column)?: valueColumn = column
        case nil: return nil
        }
        subqueryCount += 1
        let joined = child.joins.isEmpty ? "" : " " + child.joins.joined(separator: " ")
        bindings.append(contentsOf: child.bindings)
        recipe.append(contentsOf: child.recipe)
        if !child.reusable { reusable = false }
        let rows = "SELECT 1 FROM \(from)\(joined) WHERE \(link) AND \(valueColumn) IS NOT NULL"
        if modifier == .any { return "EXISTS (\(rows) AND \(condition))" }
        return "NOT EXISTS (\(rows) AND NOT \(condition))"
    }

    /// `rel.@sum.x`, `@avg`, `@min`, `@max` compared with a constant: a scalar subquery over the
    /// destination rows, compared as an attribute is. As in memory, nil values take no part, the sum
    /// and average of no values are 0, and the minimum and maximum of no values are nil.
    private func compileToManyAggregate(
        _ predicate: NSComparisonPredicate, path: String, destination: NSEntityDescription, from: String,
        link: String, alias: String
    ) -> String? {
        let functions = ["@sum": "SUM", "@avg": "AVG", "@min": "MIN", "@max": "MAX"]
        let pieces = path.split(separator: ".", maxSplits: 1).map(String.init)
        guard predicate.comparisonPredicateModifier == .direct, pieces.count == 2, let function = functions[pieces[0]],
            !pieces[1].contains("."), let destinationMapping = schema.mapping(for: destination),
            let value = Self.constant(predicate.rightExpression)
        else { return nil }
        let child = SQLiteQuery(schema: schema, mapping: destinationMapping, aliasPrefix: alias)
        let numeric: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType,
        ]
        guard let (column, type) = child.attributeColumn(pieces[1]), numeric.contains(type) else { return nil }
        let aggregate =
            function == "SUM" || function == "AVG" ? "COALESCE(\(function)(\(column)), 0)" : "\(function)(\(column))"
        let subquery = "(SELECT \(aggregate) FROM \(from) WHERE \(link))"
        let resultType: NSAttributeType = function == "AVG" ? .doubleAttributeType : type
        let saved = (bindings, recipe)
        guard
            let sql = compileAttribute(
                subquery, type: resultType, op: predicate.predicateOperatorType, options: predicate.options,
                value: value)
        else {
            (bindings, recipe) = saved
            return nil
        }
        subqueryCount += 1
        return sql
    }

    static func sqlValue(_ value: Any, _ type: NSAttributeType) -> SQLiteValue? {
        // Decimals are stored as text and compare numerically only in memory; object IDs and
        // composites have no comparable column value; transformable columns hold transformer output.
        switch type {
        case .decimalAttributeType, .objectIDAttributeType, .compositeAttributeType, .transformableAttributeType,
            .undefinedAttributeType:
            return nil
        // Integer and boolean columns compare numerically with any number, as in memory: bind the number itself
        // rather than the attribute's type, which would truncate 30.5 to 30 or wrap 70000 in an Int16.
        // Booleans are stored as 0 and 1 and compare as those numbers in memory (`flag == 2` is false).
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
            return Self.number(value)
        default:
            break
        }
        // A string never equals a number in memory; SQLite would convert it, so leave it to memory.
        if value is String || value is NSString, type != .stringAttributeType, type != .URIAttributeType,
            type != .UUIDAttributeType
        {
            return nil
        }
        guard let canonical = ValueConversion.canonicalize(value, for: type) else { return nil }
        // SQLite binds NaN as NULL, which would match nil values; memory decides (NaN equals nothing).
        if let number = canonical as? Double, number.isNaN { return nil }
        if let number = canonical as? Float, number.isNaN { return nil }
        return SQLiteStore.sqliteValue(canonical, type)
    }

    /// A numeric constant as SQLite compares it: integral values as integers, others as reals;
    /// `nil` for anything that is not a number (strings, decimals), which memory then compares.
    private static func number(_ value: Any) -> SQLiteValue? {
        switch PredicateValues.number(value) {
        case .integer(let v)?: return .integer(Int64(v))
        case .double(let v)?:
            guard v.isFinite else { return nil }
            if v == v.rounded(), let exact = Int64(exactly: v) { return .integer(exact) }
            return .real(v)
        // Beyond Int64 (SQLite's integers) and decimals: compared in memory.
        case .unsigned?, .decimal?, nil: return nil
        }
    }

    /// Whether `value` is an array, set or ordered set (compared element by element).
    static func isCollection(_ value: Any) -> Bool { collection(value) != nil }

    private static func collection(_ value: Any?) -> [Any]? {
        switch value {
        case let array as [Any]: array
        case let set as Set<AnyHashable>: Array(set)
        case let array as NSArray: array.map { $0 }
        case let set as NSSet: set.allObjects
        case let ordered as NSOrderedSet: ordered.array
        default: nil
        }
    }

    private func compileAttribute(
        _ column: String, type: NSAttributeType, op: NSComparisonPredicate.Operator,
        options: NSComparisonPredicate.Options, value: Any?
    ) -> String? {
        let isString = type == .stringAttributeType
        let folding = options.subtracting(.normalized)
        func stringOperation(_ op: NSComparisonPredicate.Operator, _ pattern: String) -> String {
            "\(SQLiteFunctions.stringOperationName)(\(op.rawValue), \(options.rawValue), \(column), \(bind(.text(pattern), .text)))"
        }
        // Swift's (and NSString's) string equality is canonical equivalence, SQLite's `=` is byte
        // equality: they agree when the constant is ASCII, so only other constants need the function.
        func needsFunction(_ pattern: String) -> Bool { !folding.isEmpty || !pattern.utf8.allSatisfy { $0 < 0x80 } }
        if [.beginsWith, .endsWith, .contains, .like, .matches].contains(op) {
            guard isString, let pattern = value as? String else { return nil }
            return stringOperation(op, pattern)
        }
        if isString, op == .equalTo || op == .notEqualTo, let pattern = value as? String, needsFunction(pattern) {
            let call = stringOperation(.equalTo, pattern)
            return op == .notEqualTo ? "(NOT \(call))" : call
        }
        if isString, op == .in, let items = Self.collection(value) {
            let patterns = items.compactMap { $0 as? String }
            if patterns.count == items.count, patterns.contains(where: needsFunction) {
                if patterns.isEmpty { return "0" }
                return "(" + patterns.map { stringOperation(.equalTo, $0) }.joined(separator: " OR ") + ")"
            }
        }
        let ordering: [NSComparisonPredicate.Operator] = [.lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo]
        if isString, ordering.contains(op), !folding.isEmpty, let pattern = value as? String {
            return stringOperation(op, pattern)  // folded order: the in-memory comparison, in ocd_strop
        }
        if isString, !folding.isEmpty { return nil }
        // Nothing orders against nil (in memory the comparison is undefined, so false).
        if ordering.contains(op), value == nil { return "0" }
        switch op {
        case .equalTo, .notEqualTo:
            guard let value else { return op == .equalTo ? "\(column) IS NULL" : "\(column) IS NOT NULL" }
            guard let bound = Self.sqlValue(value, type) else { return nil }
            return op == .equalTo
                ? "\(column) IS \(bind(bound, .value(type)))" : "(\(column) != \(bind(bound, .value(type))) OR \(column) IS NULL)"
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let value, let bound = Self.sqlValue(value, type) else { return nil }
            let symbol = [
                NSComparisonPredicate.Operator.lessThan: "<", .lessThanOrEqualTo: "<=", .greaterThan: ">",
                .greaterThanOrEqualTo: ">=",
            ][op]!
            return "(\(column) IS NOT NULL AND \(column) \(symbol) \(bind(bound, .value(type))))"
        case .in:
            guard let items = Self.collection(value) else { return nil }
            let bound = items.map { Self.sqlValue($0, type) }
            if bound.contains(where: { $0 == nil }) { return nil }
            if bound.isEmpty { return "0" }
            return "(\(column) IS NOT NULL AND \(column) IN (\(bound.map { bind($0!, .value(type)) }.joined(separator: ", "))))"
        case .between:
            guard let items = Self.collection(value), items.count == 2,
                let low = Self.sqlValue(items[0], type), let high = Self.sqlValue(items[1], type)
            else { return nil }
            return "(\(column) IS NOT NULL AND \(column) >= \(bind(low, .value(type))) AND \(column) <= \(bind(high, .value(type))))"
        default:
            return nil
        }
    }

    /// Comparisons of a to-one relationship (or the object itself) with objects or object IDs.
    private func compileObjectComparison(_ column: String, op: NSComparisonPredicate.Operator, value: Any?) -> String? {
        func key(_ item: Any) -> Int64?? {
            let id = (item as? NSManagedObject)?.objectID ?? item as? NSManagedObjectID
            guard let id else { return nil }  // not an object: cannot compile
            return .some(id.primaryKey)  // a temporary ID matches no row
        }
        switch op {
        case .equalTo, .notEqualTo:
            guard let value else { return op == .equalTo ? "\(column) IS NULL" : "\(column) IS NOT NULL" }
            guard let found = key(value) else { return nil }
            guard let pk = found else {
                reusable = false  // a temporary ID: the SQL is a constant, not a binding
                return op == .equalTo ? "0" : "1"
            }
            return op == .equalTo
                ? "\(column) IS \(bind(.integer(pk), .primaryKey))"
                : "(\(column) != \(bind(.integer(pk), .primaryKey)) OR \(column) IS NULL)"
        case .in:
            let keys: [Int64??]
            if let ids = value as? [NSManagedObjectID] {  // a batched fetch's IDs: no cast per item
                keys = ids.map { .some($0.primaryKey) }
            } else {
                guard let items = Self.collection(value) else { return nil }
                keys = items.map(key)
            }
            if keys.contains(where: { $0 == nil }) { return nil }
            let known = keys.compactMap { $0 ?? nil }
            if known.count != keys.count { reusable = false }  // temporary IDs are left out of the SQL
            if known.isEmpty { return "0" }
            // Consecutive keys (a batched fetch's batch in primary-key order): a range, which SQLite
            // walks in the table without building a temporary index of the list, and one SQL text
            // for every batch. Not kept in a fetch plan: another instance's list may not be a range.
            if known.count == keys.count, known.count >= 8, let range = Self.consecutiveRange(known) {
                reusable = false
                return "\(column) BETWEEN \(bind(.integer(range.lowerBound), .primaryKey)) AND \(bind(.integer(range.upperBound), .primaryKey))"
            }
            return
                "(\(column) IS NOT NULL AND \(column) IN (\(known.map { bind(.integer($0), .primaryKey) }.joined(separator: ", "))))"
        default:
            return nil
        }
    }

    /// `keys` as a closed range, if they are every integer in it once, ascending or descending.
    static func consecutiveRange(_ keys: [Int64]) -> ClosedRange<Int64>? {
        guard let first = keys.first, let last = keys.last else { return nil }
        let step: Int64 = last >= first ? 1 : -1
        guard last &- first == step &* Int64(keys.count - 1) else { return nil }
        var expected = first
        for key in keys {
            guard key == expected else { return nil }
            expected &+= step
        }
        return min(first, last)...max(first, last)
    }

    // MARK: Sorting

    /// Whether a sort descriptor was made with a comparator closure, which SQL cannot run.
    static func hasComparator(_ sort: NSSortDescriptor) -> Bool {
        guard type(of: sort) == NSSortDescriptor.self else { return true }  // a subclass may override compare
        return sort._ocdHasComparator
    }

    /// `ORDER BY` terms for the sort descriptors, or `nil` if one cannot be sorted in SQL.
    /// Strings sort by code point (SQLite's BINARY collation on UTF-8), as the in-memory comparison does.
    func orderBy(_ sorts: [NSSortDescriptor]) -> [String]? {
        var terms: [String] = []
        for sort in sorts {
            guard !Self.hasComparator(sort), let key = sort.key, case .attribute(let column, let type)? = resolve(key)
            else { return nil }
            guard type != .decimalAttributeType else { return nil }  // text column; numeric order needs memory
            // Selector-based string orders use the collation that calls the same comparison.
            let collation = type == .stringAttributeType ? sort._ocdSortSelector.collationName : nil
            terms.append("\(column)\(collation.map { " COLLATE \($0)" } ?? "") \(sort.ascending ? "ASC" : "DESC")")
        }
        return terms
    }
}
