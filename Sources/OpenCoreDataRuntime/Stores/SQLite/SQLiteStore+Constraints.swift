import Foundation

extension SQLiteStore {
    /// Clears the constrained columns updated rows are about to change, before any row of the
    /// save is inserted or updated.
    ///
    /// SQLite checks a unique index after each statement, not at commit, so values that move
    /// between rows in one save (two rows swapping names, a row renamed and a new row taking its
    /// old name) would trip the index halfway through even though the final rows are unique. The
    /// context has already checked the final values (`NSManagedObjectContext+Conflicts.swift`);
    /// each row gets its constrained values back when it is updated later in the transaction.
    func releaseConstrainedValues(_ updated: [NSManagedObject], _ connection: SQLiteConnection) throws {
        // Most models have no constraints: no pass over the updated objects then (each one read again
        // from memory: 64 instructions an object, callgrind case 5, and about 1% of its `perf` samples).
        guard schema.hasUniquenessConstraints else { return }
        // Whether the entity or an ancestor declares constraints, asked once per run of one entity
        // (most saves have none, and the walk up the hierarchy is per object otherwise).
        // (Keyed by the object's layout, one per entity: `entity` is an unowned reference to retain.)
        var last: (layout: ObjectIdentifier, constrained: Bool)?
        for object in updated {
            if last?.layout != ObjectIdentifier(object._layout) {
                var constrained = false
                var next: NSEntityDescription? = object.entity
                while let current = next, !constrained {
                    constrained = !current.uniquenessConstraints.isEmpty
                    next = current.superentity
                }
                last = (ObjectIdentifier(object._layout), constrained)
            }
            if last?.constrained == false { continue }
            var columns: [String] = []
            var entity: NSEntityDescription? = object.entity
            while let current = entity {
                for constraint in current.uniquenessConstraints {
                    for case let name as String in constraint {
                        // A composite or one of its elements (`colorScheme.primary`): all its columns.
                        let composite = CompositeValues.constrainedSlot(name, layout: object._layout)
                        guard let slot = composite?.slot ?? object._layout.indexByName[name], object._changedSlotsContain(slot)
                        else { continue }
                        let property = object._layout.properties[slot]
                        let named = schema.columnByProperty[ObjectIdentifier(property)].map { [$0] }
                            ?? (schema.compositeColumnsByProperty[ObjectIdentifier(property)] ?? []).map(\.name)
                        for column in named where !columns.contains(column) { columns.append(column) }
                    }
                }
                entity = current.superentity
            }
            guard !columns.isEmpty, let pk = object.objectID.primaryKey,
                  let mapping = schema.mapping(for: object.entity) else { continue }
            try connection.run(
                "UPDATE \(mapping.table.name) SET \(columns.map { "\($0) = NULL" }.joined(separator: ", ")) WHERE Z_PK = ?",
                [.integer(pk)])
        }
    }
}
