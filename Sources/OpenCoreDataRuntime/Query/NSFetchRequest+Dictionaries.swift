import Foundation

/// Dictionary results with computed columns, grouping and distinctness: `propertiesToFetch` with
/// ``NSExpressionDescription``s, `propertiesToGroupBy`, `havingPredicate`, `returnsDistinctResults`.
///
/// Every store computes these the same way, from the objects its fetch selects (predicate and sort
/// applied, limit and offset not): the objects are grouped by the group-by values (in order of first
/// appearance, so the sort orders the groups), each group gives one row, aggregates run over the
/// group's non-nil values, `havingPredicate` filters rows, distinct rows are kept once, and limit and
/// offset apply to the rows, as SQL's `GROUP BY`/`HAVING`/`DISTINCT`/`LIMIT` do.
package enum FetchDictionaryResults {
    /// Aggregate functions and the `@` operators that name them in key paths.
    private static let aggregates: [String: String] = [
        "sum:": "sum:", "count:": "count:", "min:": "min:", "max:": "max:", "average:": "average:",
        "@sum": "sum:", "@count": "count:", "@min": "min:", "@max": "max:", "@avg": "average:",
    ]

    /// Whether `request` needs this path rather than one dictionary per object: computed columns,
    /// grouping, distinctness, or key paths (`colorScheme.primary`, `department.name`), whose values
    /// the stores' one-row-per-object readers do not follow.
    package static func applies(to request: NSFetchRequest<any NSFetchRequestResult>) -> Bool {
        guard request.resultType == .dictionaryResultType else { return false }
        return request.returnsDistinctResults || !(request.propertiesToGroupBy ?? []).isEmpty
            || request.havingPredicate != nil
            || (request.propertiesToFetch ?? []).contains { $0 is NSExpressionDescription || ($0 as? String)?.contains(".") == true }
    }

    /// Checks every `propertiesToFetch` and `propertiesToGroupBy` item against `entity`: names and
    /// key paths must lead to properties, expression descriptions must have an expression. Apple
    /// raises for an invalid key path here; this throws ``OpenCoreDataError/Code/unknownKey``.
    package static func validate(_ request: NSFetchRequest<any NSFetchRequestResult>, entity: NSEntityDescription)
        throws
    {
        let fetched = request.propertiesToFetch, grouped = request.propertiesToGroupBy
        if fetched == nil, grouped == nil { return }  // most requests: no array to concatenate
        for item in (fetched ?? []) + (grouped ?? []) {
            let column = try column(item, entity: entity)
            if let keyPath = column.keyPath { try entity._ocdValidateKeyPath(keyPath) }
        }
    }

    /// A copy of `request` that fetches the underlying objects: all of them, in the request's order.
    package static func objectRequest(for request: NSFetchRequest<any NSFetchRequestResult>)
        -> NSFetchRequest<any NSFetchRequestResult>
    {
        let copy = NSFetchRequest<any NSFetchRequestResult>()
        copy.copySettings(from: request)
        copy.resultType = .managedObjectResultType
        copy.fetchLimit = 0
        copy.fetchOffset = 0
        copy.propertiesToFetch = nil
        copy.propertiesToGroupBy = nil
        copy.havingPredicate = nil
        copy.returnsDistinctResults = false
        return copy
    }

    /// One column: its result name and how to compute it over a group of objects.
    package struct Column {
        package let name: String
        /// The aggregate function, or nil for a per-object value (taken from the group's first object).
        package let function: String?
        /// The key path the value (or the aggregate's argument) comes from; nil for other expressions.
        package let keyPath: String?
        let expression: NSExpression?
        package let resultType: NSAttributeType

        func value(_ group: [NSManagedObject]) -> Any? {
            func single(_ object: NSManagedObject) -> Any? {
                if let keyPath { return PredicateKeyPath.value(of: object, keyPath: keyPath) }
                return expression?.expressionValue(with: object, context: nil)
            }
            let value: Any?
            if let function {
                let values = group.compactMap { object -> Any? in
                    guard let value = PredicateValues.normalize(single(object)) else { return nil }
                    return value
                }
                value = PredicateFunctions.call(function, [values])
            } else {
                value = group.first.flatMap(single)
            }
            return FetchDictionaryResults.resultValue(value, resultType)
        }
    }

    /// A value as a dictionary result holds it: objects as their IDs, converted to the result type.
    package static func resultValue(_ value: Any?, _ type: NSAttributeType) -> Any? {
        guard let value = PredicateValues.normalize(value), !(value is NSNull) else { return nil }
        if let object = value as? NSManagedObject { return object.objectID }
        guard type != .undefinedAttributeType else { return value }
        return ValueConversion.canonicalize(value, for: type) ?? value
    }

    /// The column a `propertiesToFetch` or `propertiesToGroupBy` item describes.
    package static func column(_ item: Any, entity: NSEntityDescription) throws -> Column {
        if let description = item as? NSExpressionDescription {
            guard let expression = description.expression else {
                throw OpenCoreDataError(
                    .invalidFormat, "NSExpressionDescription \(description.name) has no expression",
                    entityName: entity.name, key: description.name)
            }
            var function: String?
            var keyPath: String?
            var perObject: NSExpression? = expression
            if expression.expressionType == .function, let name = aggregates[expression.function],
                name.hasSuffix(":"), let argument = expression.arguments?.first, expression.arguments?.count == 1
            {
                function = name
                perObject = argument
                if argument.expressionType == .keyPath { keyPath = argument.keyPath }
            } else if expression.expressionType == .keyPath {
                let parts = expression.keyPath.split(separator: ".", maxSplits: 1).map(String.init)
                if parts.count == 2, let name = aggregates[parts[0]], parts[0].hasPrefix("@") {
                    function = name
                    keyPath = parts[1]
                } else {
                    keyPath = expression.keyPath
                }
            }
            return Column(
                name: description.name, function: function, keyPath: keyPath,
                expression: keyPath == nil ? perObject : nil, resultType: description.expressionResultType)
        }
        let name = (item as? String) ?? (item as? NSPropertyDescription)?.name
        guard let name, !name.isEmpty else {
            throw OpenCoreDataError(
                .invalidFormat, "propertiesToFetch holds \(type(of: item)), not a name or property description",
                entityName: entity.name)
        }
        let type = (entity.propertiesByName[name] as? NSAttributeDescription)?.attributeType ?? .undefinedAttributeType
        return Column(name: name, function: nil, keyPath: name, expression: nil, resultType: type)
    }

    /// The dictionary rows for `objects` (already filtered and sorted by the store).
    package static func rows(
        _ objects: [NSManagedObject], request: NSFetchRequest<any NSFetchRequestResult>, entity: NSEntityDescription
    ) throws -> [NSDictionary] {
        let groupBy = try (request.propertiesToGroupBy ?? []).map { try column($0, entity: entity) }
        let fetched =
            try request.propertiesToFetch.map { try $0.map { try column($0, entity: entity) } }
            ?? entity.layout.properties.filter { !(($0 as? NSRelationshipDescription)?.isToMany ?? false) }.map {
                try column($0.name, entity: entity)
            }
        let aggregating = fetched.contains { $0.function != nil }

        // Groups: by the group-by values; without group-by, one group when aggregating, else one per object.
        var groups: [[NSManagedObject]] = []
        if !groupBy.isEmpty {
            var indexByKey: [[AnyHashable?]: Int] = [:]
            for object in objects {
                let key = groupBy.map { column -> AnyHashable? in
                    column.value([object]).map { ($0 as? AnyHashable) ?? AnyHashable(String(describing: $0)) }
                }
                if let index = indexByKey[key] {
                    groups[index].append(object)
                } else {
                    indexByKey[key] = groups.count
                    groups.append([object])
                }
            }
        } else if aggregating {
            groups = [objects]
        } else {
            groups = objects.map { [$0] }
        }

        var rows: [NSDictionary] = []
        for group in groups {
            var row: [String: Any] = [:]
            for column in fetched {
                if let value = column.value(group) { row[column.name] = value }
            }
            let dictionary = NSDictionary(dictionary: row)
            if let having = request.havingPredicate, !having.evaluate(with: dictionary) { continue }
            rows.append(dictionary)
        }
        return finish(rows, request: request)
    }

    /// Drops repeated rows (for `returnsDistinctResults`), then applies offset and limit.
    package static func finish(_ rows: [NSDictionary], request: NSFetchRequest<any NSFetchRequestResult>)
        -> [NSDictionary]
    {
        var rows = rows
        if request.returnsDistinctResults {
            var seen: [NSDictionary] = []
            rows = rows.filter { row in
                if seen.contains(where: { $0.isEqual(row) }) { return false }
                seen.append(row)
                return true
            }
        }
        return Array(request.page(rows))
    }
}
