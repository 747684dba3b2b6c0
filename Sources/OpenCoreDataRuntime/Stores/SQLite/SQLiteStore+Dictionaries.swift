import CSQLite
import Foundation

extension SQLiteStore {
    /// Dictionary fetches with expression descriptions, grouping, `HAVING` or `DISTINCT`.
    ///
    /// When every piece compiles, one SQL statement does the work: `SELECT <columns and aggregates>
    /// ... WHERE ... GROUP BY ... ORDER BY <sorts>, MIN(t0.Z_PK)`. Ordering groups by their first row
    /// reproduces the in-memory rule (groups in order of first appearance among the sorted objects),
    /// and `SUM`/`AVG` of no values give 0 as the in-memory functions do. Otherwise the store selects
    /// and sorts the objects (in SQL where the predicate and sort compile) and
    /// ``FetchDictionaryResults`` builds the rows exactly as the in-memory store does. Distinctness,
    /// offset and limit always apply to the rows afterwards.
    func executeDictionaryFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext)
        throws -> [Any]
    {
        if let rows = try groupedInSQL(request) { return FetchDictionaryResults.finish(rows, request: request) }
        let objects = try executeFetch(FetchDictionaryResults.objectRequest(for: request), context: context)
        return try FetchDictionaryResults.rows(objects.managedObjects, request: request, entity: request.entity!)
    }

    /// One selected column: its SQL, how to read it, and its result name and type.
    private struct SelectedColumn {
        let name: String
        let sql: String
        /// The attribute type to decode with, or nil to read SQLite's value as a number.
        let decodeAs: NSAttributeType?
        let resultType: NSAttributeType
    }

    /// The grouped rows computed in SQL, or `nil` if some piece does not compile.
    private func groupedInSQL(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> [NSDictionary]? {
        guard request.havingPredicate == nil, let entity = request.entity, let mapping = schema.mapping(for: entity),
            let properties = request.propertiesToFetch, !properties.isEmpty
        else { return nil }
        let query = SQLiteQuery(schema: schema, mapping: mapping)
        var conditions: [String] = []
        let table = mapping.table
        if !request.includesSubentities || mapping.subentityRange.count == 1 {
            if table.entityCount > 1 { conditions.append("t0.Z_ENT = \(mapping.number)") }
        } else if entity.superentity != nil {
            conditions.append(
                "(t0.Z_ENT >= \(mapping.subentityRange.lowerBound) AND t0.Z_ENT <= \(mapping.subentityRange.upperBound))"
            )
        }
        if let predicate = request.predicate {
            for part in Self.conjuncts(of: predicate) {
                guard let sql = query.compile(part) else { return nil }
                conditions.append(sql)
            }
        }

        // Columns: stored attributes (through to-one key paths) and aggregates of them.
        let sortable: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .dateAttributeType, .stringAttributeType, .booleanAttributeType,
        ]
        let numeric: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .booleanAttributeType,
        ]
        var selected: [SelectedColumn] = []
        var plainColumns: [String] = []
        for item in properties {
            let column = try FetchDictionaryResults.column(item, entity: entity)
            guard let keyPath = column.keyPath, let (sql, type) = query.attributeColumn(keyPath), sortable.contains(type)
            else { return nil }
            switch column.function {
            case nil:
                selected.append(SelectedColumn(name: column.name, sql: sql, decodeAs: type, resultType: column.resultType))
                plainColumns.append(sql)
            case "sum:"?, "average:"?:
                guard numeric.contains(type) else { return nil }
                let function = column.function == "sum:" ? "SUM" : "AVG"
                selected.append(
                    SelectedColumn(
                        name: column.name, sql: "COALESCE(\(function)(\(sql)), 0)", decodeAs: nil,
                        resultType: column.resultType))
            case "count:"?:
                selected.append(
                    SelectedColumn(name: column.name, sql: "COUNT(\(sql))", decodeAs: nil, resultType: column.resultType))
            case "min:"?, "max:"?:
                let function = column.function == "min:" ? "MIN" : "MAX"
                selected.append(
                    SelectedColumn(
                        name: column.name, sql: "\(function)(\(sql))", decodeAs: type, resultType: column.resultType))
            default:
                return nil
            }
        }
        let aggregating = selected.count != plainColumns.count

        // Groups: the group-by columns; distinct rows without aggregates group by every column.
        var groupBy: [String] = []
        for item in request.propertiesToGroupBy ?? [] {
            let column = try FetchDictionaryResults.column(item, entity: entity)
            guard column.function == nil, let keyPath = column.keyPath, let (sql, _) = query.attributeColumn(keyPath)
            else { return nil }
            groupBy.append(sql)
        }
        if groupBy.isEmpty, !aggregating {
            guard request.returnsDistinctResults else { return nil }  // one row per object: nothing to gain
            groupBy = plainColumns
        }
        // A plain column outside the groups would be an arbitrary row's value in SQL (memory takes the first).
        guard groupBy.isEmpty || plainColumns.allSatisfy(groupBy.contains) else { return nil }

        var orderBy: [String] = []
        if !groupBy.isEmpty {
            let sorts = request.sortDescriptors ?? []
            guard let terms = query.orderBy(sorts) else { return nil }
            for (sort, term) in zip(sorts, terms) {
                guard let key = sort.key, let (sql, _) = query.attributeColumn(key), groupBy.contains(sql) else {
                    return nil
                }
                orderBy.append(term)
            }
            orderBy.append("MIN(t0.Z_PK)")
        }

        var sql = "SELECT \(selected.map(\.sql).joined(separator: ", ")) FROM \(table.name) t0"
        if !query.joins.isEmpty { sql += " " + query.joins.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !groupBy.isEmpty { sql += " GROUP BY " + groupBy.joined(separator: ", ") }
        if !orderBy.isEmpty { sql += " ORDER BY " + orderBy.joined(separator: ", ") }

        let statement = try db().prepare(sql)
        defer { statement.reset() }
        statement.bind(query.bindings)
        var rows: [NSDictionary] = []
        while try statement.step() {
            var row: [String: Any] = [:]
            for (index, column) in selected.enumerated() {
                let position = Int32(index)
                if statement.isNull(position) { continue }
                let raw: Any?
                if let type = column.decodeAs {
                    raw = decodeAttribute(statement, position, type)
                } else if statement.columnType(position) == SQLITE_INTEGER {
                    raw = statement.int64(position)
                } else {
                    raw = statement.double(position)
                }
                if let value = FetchDictionaryResults.resultValue(raw, column.resultType) { row[column.name] = value }
            }
            rows.append(NSDictionary(dictionary: row))
        }
        return rows
    }
}
