import Foundation

extension SQLiteStore: IncrementalStoreBatchedRelationships {
    /// The most object IDs bound in one statement: below the 999 host parameters every SQLite
    /// version allows, and a power of two so that padded chunks share a few cached statements.
    static let prefetchChunkSize = 512

    /// Reads a to-many relationship of many objects with one statement per chunk of IDs, and the
    /// destinations' rows with it:
    /// - one-to-many: the destination table by its foreign key to the source, ordered by the
    ///   `Z_FOK_` column when the relationship is ordered;
    /// - many-to-many: the `Z_<n><NAME>` join table joined to the destination table, ordered by the
    ///   join table's `Z_FOK_` column when the relationship is ordered.
    /// The order within each source is the one `newValue(forRelationship:forObjectWith:with:)` gives.
    func newValues(forRelationship relationship: NSRelationshipDescription, forObjectsWith objectIDs: [NSManagedObjectID],
                   with context: NSManagedObjectContext?) throws -> IncrementalStoreRelationshipBatch {
        var result = IncrementalStoreRelationshipBatch()
        // Sources of one entity share a mapping; subentities may store the relationship elsewhere.
        var byEntity: [ObjectIdentifier: (NSEntityDescription, [NSManagedObjectID])] = [:]
        for id in objectIDs where id.primaryKey != nil {
            byEntity[ObjectIdentifier(id.entity), default: (id.entity, [])].1.append(id)
        }
        let connection = try db()
        for (entity, ids) in byEntity.values {
            for id in ids { result.destinations[id] = [] }
            guard let mapping = schema.mapping(for: entity), let slot = entity.layout.indexByName[relationship.name],
                let toMany = mapping.toMany[slot], let query = prefetchQuery(toMany)
            else { continue }
            let sourceByKey = Dictionary(ids.map { ($0.primaryKey!, $0) }, uniquingKeysWith: { first, _ in first })
            let keys = Array(sourceByKey.keys)
            for start in stride(from: 0, to: keys.count, by: Self.prefetchChunkSize) {
                let chunk = keys[start..<min(start + Self.prefetchChunkSize, keys.count)]
                // Pad to a power of two (repeating the last key) so few distinct statements are cached.
                var width = 1
                while width < chunk.count { width *= 2 }
                let placeholders = Array(repeating: "?", count: width).joined(separator: ", ")
                let statement = try connection.prepare(query.sql.replacingOccurrences(of: "%KEYS%", with: placeholders))
                defer { statement.reset() }
                for (index, key) in chunk.enumerated() { statement.bind(key, Int32(index + 1)) }
                for index in chunk.count..<width { statement.bind(chunk.last!, Int32(index + 1)) }
                while try statement.step() {
                    guard let source = sourceByKey[statement.int64(query.sourceColumn)],
                        let rowMapping = schema.mapping(forNumber: statement.int64(1))
                    else { continue }
                    let id = rowID(entity: rowMapping.entity, pk: statement.int64(0))
                    result.destinations[source, default: []].append(id)
                    if result.nodes[id] == nil {
                        result.nodes[id] = NSIncrementalStoreNode(
                            objectID: id, slotValues: decodeRow(statement, mapping: rowMapping, offset: 0),
                            version: UInt64(max(0, statement.int64(rowMapping.table.versionPosition))))
                    }
                }
            }
        }
        return result
    }

    /// The SELECT for a to-many relationship (`%KEYS%` stands for the source keys' placeholders):
    /// the destination table's `selectList`, then the source key at `sourceColumn`.
    private func prefetchQuery(_ toMany: SQLiteSchema.ToMany) -> (sql: String, sourceColumn: Int32)? {
        switch toMany {
        case .inverseForeignKey(let table, let column, let order, _):
            let sql = """
                SELECT \(table.selectList), t0.\(column) FROM \(table.name) t0 WHERE t0.\(column) IN (%KEYS%) \
                ORDER BY t0.\(column), \(order.map { "t0.\($0), " } ?? "")t0.Z_PK
                """
            return (sql, Int32(3 + table.columns.count))
        case .join(let join, let mine, let other, let otherOrder, let destination):
            guard let table = schema.table(for: destination) else { return nil }
            let sql = """
                SELECT \(table.selectList), j.\(mine) FROM \(join.name) j JOIN \(table.name) t0 ON t0.Z_PK = j.\(other) \
                WHERE j.\(mine) IN (%KEYS%) ORDER BY j.\(mine), \(otherOrder.map { "j.\($0), " } ?? "")j.\(other)
                """
            return (sql, Int32(3 + table.columns.count))
        }
    }
}
