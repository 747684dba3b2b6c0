import Foundation

/// Conflict detection at save: uniqueness constraints are checked before anything is written, in
/// the same way for every store (through the fetch path any store implements); optimistic-locking
/// failures reported by a store become ``NSMergeConflict``s. Both go to the context's
/// ``NSManagedObjectContext/mergePolicy``.
extension NSManagedObjectContext {
    /// The merge policy in effect (a `mergePolicy` that is not an `NSMergePolicy` acts as `.error`).
    package var _effectiveMergePolicy: NSMergePolicy { mergePolicy as? NSMergePolicy ?? .error }

    /// How many times conflicts are detected and resolved before a save gives up on a policy that
    /// does not resolve them (a subclass that leaves them as they are).
    private static let conflictPasses = 4

    /// Writes the save's changes: resolves constraint conflicts first, obtains permanent IDs, runs
    /// the save request, and on an optimistic-locking failure resolves the conflicts and retries.
    /// The three lists are updated when resolution deletes or changes objects.
    package func _executeSaveResolvingConflicts(
        _ coordinator: NSPersistentStoreCoordinator, inserted insertedNow: inout [NSManagedObject],
        updated updatedNow: inout [NSManagedObject], deleted deletedNow: inout [NSManagedObject]
    ) throws {
        func refreshLists() {
            insertedNow = Array(inserted.values)
            updatedNow = _updatedForSave
            deletedNow = Array(deleted.values)
        }
        var pass = 0
        while true {
            let conflicts = try _constraintConflicts(coordinator, inserted: insertedNow, updated: updatedNow)
            if conflicts.isEmpty { break }
            pass += 1
            if pass > Self.conflictPasses { throw NSMergePolicy._constraintError(conflicts) }
            try _effectiveMergePolicy.resolve(mergeConflicts: conflicts)
            _propagatePendingDeletes()  // the delete rules of the objects merged away
            // Relationships moved to the kept objects: derived values that read them follow.
            try _updateDerivedAttributes()
            refreshLists()
        }
        // Primary keys in the order objects were created, so "the first" object of a later
        // conflict among saved objects (the lowest key) is the one created first.
        // (Keys read once: the comparator would read each object's ID about 2 log n times.)
        // (Usually in that order already: the context lists inserted objects as they were inserted.)
        let order = insertedNow.map(_creationOrder)
        if !zip(order, order.dropFirst()).allSatisfy({ $0 <= $1 }) {
            insertedNow = insertedNow.indices.sorted { order[$0] < order[$1] }.map { insertedNow[$0] }
        }
        try obtainPermanentIDs(for: insertedNow)
        pass = 0
        while true {
            // Usually every updated object has persistent changes: the list itself, not a copy (a
            // retain of every object and its release after the save: about 2 ms of case 5's 100,000).
            let persistent = updatedNow.allSatisfy(\.hasPersistentChangedValues)
                ? updatedNow : updatedNow.filter(\.hasPersistentChangedValues)
            let request = NSSaveChangesRequest(inserted: insertedNow, updated: persistent, deleted: deletedNow)
            do {
                _ = try coordinator.execute(request, with: self)
                return
            } catch let error as OpenCoreDataError where error.code == .persistentStoreSaveConflicts {
                let conflicts = _optimisticLockingConflicts(coordinator, updatedNow + deletedNow)
                pass += 1
                guard !conflicts.isEmpty, pass <= Self.conflictPasses else { throw error }
                try _effectiveMergePolicy.resolve(mergeConflicts: conflicts)
                // Resolution can change objects the save did not hold: a to-one kept against the
                // store changes the store's former destination (NSMergePolicy+Resolution.swift).
                updatedNow = _updatedForSave
            }
        }
    }

    // MARK: Optimistic locking

    /// One ``NSMergeConflict`` per updated or deleted object whose row's version in the store is not
    /// the one the object was read at.
    private func _optimisticLockingConflicts(
        _ coordinator: NSPersistentStoreCoordinator, _ objects: [NSManagedObject]
    ) -> [NSMergeConflict] {
        var conflicts: [NSMergeConflict] = []
        for object in objects where !object._hasTemporaryID && object._version > 0 {
            let node = try? coordinator.newValues(for: object.objectID, context: self)
            let newVersion = node.map { Int($0.version) } ?? 0
            guard newVersion != Int(object._version) else { continue }
            conflicts.append(NSMergeConflict(
                source: object, newVersion: newVersion, oldVersion: Int(object._version),
                cachedSnapshot: object._snapshot.map { object._snapshotDictionary($0) },
                persistedSnapshot: node.map { object._snapshotDictionary($0.slotValues) }))
        }
        return conflicts
    }

    // MARK: Uniqueness constraints

    /// A constraint as it applies to an object: declared by `scope` (the topmost entity of the
    /// object's hierarchy that declares it), checked among all instances of `scope` and its
    /// subentities.
    private struct AppliedConstraint: Hashable {
        let scope: ObjectIdentifier
        let names: [String]
    }

    private struct ConstraintKey: Hashable {
        let constraint: AppliedConstraint
        let values: [AnyHashable]
    }

    /// The constraints that apply to instances of `entity`: its own and its ancestors'.
    private func _constraints(of entity: NSEntityDescription) -> [(AppliedConstraint, NSEntityDescription)] {
        var chain: [NSEntityDescription] = []
        var next: NSEntityDescription? = entity
        while let current = next { chain.insert(current, at: 0); next = current.superentity }
        var seen: Set<[String]> = []
        var result: [(AppliedConstraint, NSEntityDescription)] = []
        for declaring in chain {
            for constraint in declaring.uniquenessConstraints {
                let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                guard !names.isEmpty, names.count == constraint.count, seen.insert(names.sorted()).inserted else { continue }
                result.append((AppliedConstraint(scope: ObjectIdentifier(declaring), names: names), declaring))
            }
        }
        return result
    }

    /// The constrained values of a row or object, normalized for comparison; `nil` if any is nil
    /// (nil values never conflict, as in a SQL unique index).
    fileprivate static func _constraintValues(_ names: [String], layout: EntityLayout, values: RowValues) -> [AnyHashable]? {
        var key: [AnyHashable] = []
        for name in names {
            if let element = CompositeValues.constrainedSlot(name, layout: layout) {  // `colorScheme.primary`
                guard element.slot < values.count,
                      let value = CompositeValues.constraintValue(values[element.slot], element.composite, path: element.path)
                else { return nil }
                key.append(value)
                continue
            }
            guard let slot = layout.indexByName[name], slot < values.count else { return nil }
            let value: AnyHashable?
            if let type = layout.attributeTypes[slot] {
                value = ValueConversion.canonicalize(values[slot], for: type) as? AnyHashable
            } else {
                value = (values[slot] as? NSManagedObject)?.objectID ?? values[slot] as? NSManagedObjectID
            }
            guard let value else { return nil }
            key.append(value)
        }
        return key
    }

    /// Finds the uniqueness-constraint conflicts of a save: among the inserted and updated objects
    /// (one conflict per set of equal constrained values), and between each of them and the rows
    /// the stores already hold (one conflict per object).
    private func _constraintConflicts(
        _ coordinator: NSPersistentStoreCoordinator, inserted: [NSManagedObject], updated: [NSManagedObject]
    ) throws -> [NSConstraintConflict] {
        guard coordinator.managedObjectModel.entities.contains(where: { !$0.uniquenessConstraints.isEmpty }) else { return [] }
        var constraintsByEntity: [ObjectIdentifier: [(AppliedConstraint, NSEntityDescription)]] = [:]
        var groups: [ConstraintKey: [NSManagedObject]] = [:]
        var groupOrder: [ConstraintKey] = []
        var scopes: [AppliedConstraint: NSEntityDescription] = [:]
        // The objects compared by their in-memory values, per constraint: their stored rows are
        // out of date and must not be matched.
        var members: [AppliedConstraint: Set<ObjectIdentifier>] = [:]
        func applies(_ object: NSManagedObject) -> Bool {
            let entityKey = ObjectIdentifier(object.entity)
            let applied = constraintsByEntity[entityKey] ?? _constraints(of: object.entity)
            constraintsByEntity[entityKey] = applied
            return !applied.isEmpty && !object._isFault
        }
        // Saved objects first, then inserted ones in the order they were created: the first of a
        // group is the one a resolving policy keeps.
        let ordered = updated.filter(applies).sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
            + inserted.filter(applies).sorted { _creationOrder($0) < _creationOrder($1) }
        for object in ordered {
            for (constraint, declaring) in constraintsByEntity[ObjectIdentifier(object.entity)] ?? [] {
                if !object._isInserted {
                    let touched = constraint.names.contains { name in
                        let slot = object._layout.indexByName[name] ?? CompositeValues.constrainedSlot(name, layout: object._layout)?.slot
                        return slot.map(object._changedSlotsContain) ?? false
                    }
                    if !touched { continue }
                }
                guard let values = Self._constraintValues(constraint.names, layout: object._layout, values: object._values) else { continue }
                let key = ConstraintKey(constraint: constraint, values: values)
                if groups[key] == nil { groupOrder.append(key) }
                groups[key, default: []].append(object)
                scopes[constraint] = declaring
                members[constraint, default: []].insert(ObjectIdentifier(object))
            }
        }
        guard !groups.isEmpty else { return [] }

        // Rows already stored with the same values, found with one fetch per constraint and batch.
        var stored: [ConstraintKey: (NSManagedObjectID, RowValues)] = [:]
        for (constraint, scope) in scopes {
            let keys = groupOrder.filter { $0.constraint == constraint }
                .filter { !$0.values.contains { ($0.base as? NSManagedObjectID)?.isTemporaryID == true } }
            // At most 900 bound values per query: under the 999 of SQLite builds before 3.32.
            let batch = max(1, 900 / constraint.names.count)
            for start in stride(from: 0, to: keys.count, by: batch) {
                let slice = keys[start..<min(start + batch, keys.count)]
                let request = NSFetchRequest<any NSFetchRequestResult>()
                request.entity = scope
                request.includesSubentities = true
                request.resultType = .managedObjectIDResultType
                request.predicate = ConstraintLookupPredicate(constraint.names, slice.map(\.values))
                let ids = try coordinator.execute(request, with: self) as? [Any] ?? []
                for case let id as NSManagedObjectID in ids {
                    if let registered = registry.object(for: id),
                       members[constraint]?.contains(ObjectIdentifier(registered)) == true || registered._isDeleted { continue }
                    guard let node = try? coordinator.newValues(for: id, context: self),
                          let values = Self._constraintValues(constraint.names, layout: id.entity.layout, values: node.slotValues)
                    else { continue }
                    let key = ConstraintKey(constraint: constraint, values: values)
                    if groups[key] != nil, stored[key] == nil { stored[key] = (id, node.slotValues) }
                }
            }
        }

        var conflicts: [NSConstraintConflict] = []
        for key in groupOrder {
            let objects = groups[key]!
            if let (id, values) = stored[key] {
                let database = object(with: id)
                let snapshot = database._snapshotDictionary(values)
                for object in objects {
                    conflicts.append(NSConstraintConflict(
                        constraint: key.constraint.names, database: database, databaseSnapshot: snapshot,
                        conflicting: [object], conflictingSnapshots: [_originalSnapshot(object)]))
                }
            } else if objects.count > 1 {
                conflicts.append(NSConstraintConflict(
                    constraint: key.constraint.names, database: nil, databaseSnapshot: nil,
                    conflicting: objects, conflictingSnapshots: objects.map(_originalSnapshot)))
            }
        }
        return conflicts
    }

    /// The values an object had before this save's changes (as last fetched); a new object's
    /// current values.
    private func _originalSnapshot(_ object: NSManagedObject) -> [AnyHashable: Any] {
        let values = object._isInserted ? object._values : (object._snapshot ?? object._values)
        var result: [AnyHashable: Any] = [:]
        for (key, value) in object._snapshotDictionary(values) { result[key] = value }
        return result
    }

    /// The order objects were created in (temporary IDs count up); saved objects first.
    private func _creationOrder(_ object: NSManagedObject) -> UInt64 {
        if let n = object._lazyTemporaryNumber { return n }
        if case .temporary(let n) = object.objectID.reference { return n }
        return 0
    }
}

/// The lookup of stored rows by constrained values: `name IN {values}` for one property, an OR of
/// ANDs of `==` for several. A store that runs predicates as SQL reads the subpredicates; one that
/// evaluates them row by row (the in-memory store) gets a hash lookup instead of comparing each row
/// with every value.
///
/// `@unchecked Sendable`: immutable after init, like every predicate.
private final class ConstraintLookupPredicate: NSCompoundPredicate, @unchecked Sendable {
    private let names: [String]
    private let keys: Set<[AnyHashable]>

    init(_ names: [String], _ keys: [[AnyHashable]]) {
        self.names = names
        self.keys = Set(keys)
        let lookup: NSPredicate
        if names.count == 1 {
            lookup = NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: names[0]),
                rightExpression: NSExpression(forConstantValue: keys.map { $0[0].base }),
                modifier: .direct, type: .in)
        } else {
            lookup = NSCompoundPredicate(type: .or, subpredicates: keys.map { key in
                NSCompoundPredicate(type: .and, subpredicates: zip(names, key).map { name, value in
                    NSComparisonPredicate(
                        leftExpression: NSExpression(forKeyPath: name), rightExpression: NSExpression(forConstantValue: value.base),
                        modifier: .direct, type: .equalTo)
                })
            })
        }
        super.init(type: .or, subpredicates: [lookup])
    }

    override func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        guard let object = object as? NSManagedObject else { return false }
        if object._isFault { object._fireFault() }
        guard let values = NSManagedObjectContext._constraintValues(names, layout: object._layout, values: object._values)
        else { return false }
        return keys.contains(values)
    }
}
