import Foundation

/// Why an object's values were reset from a snapshot, for ``NSManagedObject/awake(fromSnapshotEvents:)``.
///
/// ```swift
/// override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
///     super.awake(fromSnapshotEvents: flags)
///     if flags.contains(.rollback) { cachedTitle = nil }
/// }
/// ```
///
/// Related Core Data documentation: [NSSnapshotEventType](https://developer.apple.com/documentation/coredata/nssnapshoteventtype)
public struct NSSnapshotEventType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// An undo of the object's insertion.
    public static let undoInsertion = NSSnapshotEventType(rawValue: 1 << 1)
    /// An undo of the object's deletion.
    public static let undoDeletion = NSSnapshotEventType(rawValue: 1 << 2)
    /// An undo of a change to a property.
    public static let undoUpdate = NSSnapshotEventType(rawValue: 1 << 3)
    /// The context was rolled back.
    public static let rollback = NSSnapshotEventType(rawValue: 1 << 4)
    /// The object was refreshed, merging its changes with the store's values.
    public static let refresh = NSSnapshotEventType(rawValue: 1 << 5)
    /// A merge policy resolved a conflict on the object during a save.
    public static let mergePolicy = NSSnapshotEventType(rawValue: 1 << 6)
}

// When the lifecycle hooks run (Apple's documented semantics):
//
// - `awakeFromInsert()`: `insert(_:)` (so `init(entity:insertInto:)`/`init(context:)`), once.
// - `awakeFromFetch()`: when a fault fires (a fetch that returns full objects, a first access, a
//   batch), with change tracking off (`_awakeFromFetch()`).
// - `awake(fromSnapshotEvents:)`: `.rollback` for each object `rollback()` restores (updated or
//   deleted), `.refresh` after `refresh(_:mergeChanges: true)` of an object that is not a fault.
//   `.mergePolicy` for an object a merge policy changed at save (`NSMergePolicy+Resolution.swift`);
//   `.undoInsertion`, `.undoDeletion` and `.undoUpdate` when an undo puts an object back
//   (`NSManagedObjectContext+Undo.swift`).
// - `prepareForDeletion()`: `delete(_:)`, before the delete rules run, once per deletion.
// - `willSave()`: at save, for every inserted, updated and deleted object, before validation;
//   again for objects changed through accessors by a `willSave()` (`_runWillSave()`).
// - `didSave()`: after the stores committed, for the same objects.
// - `willTurnIntoFault()`/`didTurnIntoFault()`: `refresh(_:mergeChanges: false)`,
//   `refreshAllObjects()`, `reset()`, and for deleted objects after their deletion is saved.

extension NSManagedObjectContext {
    /// How many rounds of `willSave()` a save runs before giving up: the number of attempts after
    /// which Apple reports "the context is still dirty after 100 attempts".
    package static let willSaveRoundLimit = 100

    /// Calls `willSave()` on every object the save will write, then again on every object that
    /// was changed through accessors (with change notifications) since its last `willSave()`, and
    /// on objects inserted or deleted meanwhile, with `processPendingChanges()` before each round,
    /// until a round changes nothing. Primitive writes (`setPrimitiveValue(_:forKey:)`) do not
    /// count as changes here, as they post no change notification on Apple.
    ///
    /// Apple documents that a `willSave()` that keeps changing values is called "until your
    /// program crashes" and, in practice, gives up after 100 attempts; here the 101st round
    /// throws ``OpenCoreDataError`` (`coreDataError`, 134060) instead, and the save writes nothing.
    package func _runWillSave() throws {
        // The first round calls every object; its objects and their counts are kept in two arrays.
        // Usually no `willSave()` changes anything: then the objects to save are the same, in the
        // same order (the change tables were not touched), with the same counts, and one walk over
        // the tables says so, without a table of counts (three hash operations per object).
        processPendingChanges()
        _propagatePendingDeletes()  // also when `propagatesDeletesAtEndOfEvent` is off
        let first = _objectsToSave()
        if first.isEmpty { return }
        var firstCounts: [Int] = []
        firstCounts.reserveCapacity(first.count)
        for object in first {
            firstCounts.append(object._notifiedChangeCount)
            object.willSave()
        }
        processPendingChanges()
        _propagatePendingDeletes()
        if _objectsToSaveAreUnchanged(first, counts: firstCounts) { return }

        var countWhenCalled: [ObjectIdentifier: Int] = [:]
        countWhenCalled.reserveCapacity(first.count)  // one table, not one per doubling
        for (object, count) in zip(first, firstCounts) { countWhenCalled[ObjectIdentifier(object)] = count }
        var round = 1
        while true {
            processPendingChanges()
            _propagatePendingDeletes()  // also when `propagatesDeletesAtEndOfEvent` is off
            let pending = _objectsToSave().filter { countWhenCalled[ObjectIdentifier($0)] != $0._notifiedChangeCount }
            if pending.isEmpty { return }
            round += 1
            guard round <= Self.willSaveRoundLimit else {
                let names = Set(pending.compactMap { $0.entity.name }).sorted().joined(separator: ", ")
                throw OpenCoreDataError(
                    .coreDataError,
                    "failed to process pending changes before save: the context is still dirty after \(Self.willSaveRoundLimit) "
                        + "rounds of willSave(); a willSave() keeps changing values of \(names) through accessors "
                        + "(compare before setting, or use setPrimitiveValue(_:forKey:))",
                    entityName: pending.first?.entity.name)
            }
            for object in pending {
                countWhenCalled[ObjectIdentifier(object)] = object._notifiedChangeCount
                object.willSave()
            }
        }
    }

    /// The objects a save writes: inserted, updated (with changed values) and deleted.
    private func _objectsToSave() -> [NSManagedObject] {
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(inserted.count + changed.count + deleted.count)
        objects.append(contentsOf: inserted.values)
        for object in changed.values where object.isUpdated { objects.append(object) }
        objects.append(contentsOf: deleted.values)
        return objects
    }

    /// Whether `_objectsToSave()` would return `objects`, in order, each with the count in `counts`:
    /// then a round of `willSave()` would find nothing to do.
    private func _objectsToSaveAreUnchanged(_ objects: [NSManagedObject], counts: [Int]) -> Bool {
        var i = 0
        func next(_ object: NSManagedObject) -> Bool {
            guard i < objects.count, objects[i] === object, object._notifiedChangeCount == counts[i] else { return false }
            i += 1
            return true
        }
        for object in inserted.values where !next(object) { return false }
        for object in changed.values where object.isUpdated && !next(object) { return false }
        for object in deleted.values where !next(object) { return false }
        return i == objects.count
    }

    /// Runs `validateForInsert()`, `validateForUpdate()` and `validateForDelete()` (with any
    /// overrides) on the objects of a save and throws what they throw: a single error as it is,
    /// several as `validationMultipleErrors` with all of them in `NSDetailedErrorsKey`.
    package func _validateForSave(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) throws {
        var errors: [(error: any Error, object: NSManagedObject)] = []
        inserted.forEachBorrowed { object in
            do { try object.validateForInsert() } catch { errors.append((error, object)) }
        }
        updated.forEachBorrowed { object in
            do { try object.validateForUpdate() } catch { errors.append((error, object)) }
        }
        deleted.forEachBorrowed { object in
            do { try object.validateForDelete() } catch { errors.append((error, object)) }
        }
        if let error = OpenCoreDataError.grouping(anyErrors: errors) { throw error }
    }

    /// After a save: deleted objects turn into faults (`willTurnIntoFault()`, `didTurnIntoFault()`).
    package func _turnSavedDeletionsIntoFaults(_ deleted: [NSManagedObject]) {
        deleted.forEachBorrowed { $0._turnIntoFault() }
    }
}

extension NSManagedObject {
    /// `awakeFromFetch()` with change tracking off, as Apple documents: values set there (through
    /// accessors too) do not make the object updated or its context changed.
    ///
    /// `_noteChange` records nothing while the flag is set. Before, the object's change state was
    /// saved and restored around the call, which looked its context up through a weak reference
    /// for every fetched object (a weak load and two slow reference-count operations, as the
    /// context has a side table).
    package func _awakeFromFetch() {
        let wasAwaking = _isAwakingFromFetch
        _isAwakingFromFetch = true
        awakeFromFetch()
        _isAwakingFromFetch = wasAwaking
    }

    /// Turns an object the context forgets (`reset()`) into a fault, inserted objects included.
    package func _turnIntoFaultForReset() {
        guard !_isFault else { return }
        willTurnIntoFault()
        _values = RowValues()
        _snapshot = nil
        _clearChangedSlots()
        _dropFetchedPropertyValues()
        _isInserted = false
        _isFault = true
        didTurnIntoFault()
    }
}
