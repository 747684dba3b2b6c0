import Foundation

/// Undo for a context: while it has an ``UndoManager``, each ``NSManagedObjectContext/processPendingChanges()``
/// (which the undo manager's checkpoints also call) compares the objects that changed with their
/// state at the previous call and registers one undo operation that puts that state back. Undoing
/// changes the objects, and the checkpoint that closes the undo's group records the reverse, which
/// the undo manager files as the redo operation.
///
/// Without an undo manager none of this exists (``NSManagedObjectContext/_undoState`` is nil): no
/// state is kept and nothing runs per change.
package final class ContextUndoState {
    /// An object's state at a recording: whether it is in the context (inserted, or saved and not
    /// deleted) and its values (empty when they were not loaded).
    struct ObjectState {
        let object: NSManagedObject
        let isAlive: Bool
        let values: RowValues
    }

    let undoManager: UndoManager
    /// Each object that had changes at the last recording, as it was then. Objects not here had
    /// none: saved ones were as last saved, new ones were not in the context.
    var baseline: [ObjectIdentifier: ObjectState] = [:]
    var isRecording = false

    init(undoManager: UndoManager) { self.undoManager = undoManager }
}

extension NSManagedObjectContext: UndoCheckpointClient {
    /// The undo manager that records the context's changes; nil (the default) records none.
    ///
    /// Changes are recorded by ``processPendingChanges()``, which the undo manager's checkpoints
    /// call (before an undo or redo, when a group opens or closes), so an undo group holds the
    /// changes made while it was open.
    ///
    /// - Note: Linux: declared in an extension, so not `open`.
    ///
    /// Related Core Data documentation: [undoManager](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/undomanager)
    public var undoManager: UndoManager? {
        get { _undoState?.undoManager }
        set {
            if let old = _undoState?.undoManager {
                if old === newValue { return }
                old._removeCheckpointClient(self)
            }
            guard let newValue else {
                _undoState = nil
                return
            }
            let state = ContextUndoState(undoManager: newValue)
            // Changes made before there was an undo manager are not undoable: they are the baseline.
            for object in inserted.values { state.baseline[ObjectIdentifier(object)] = _undoCurrentState(of: object) }
            for object in changed.values { state.baseline[ObjectIdentifier(object)] = _undoCurrentState(of: object) }
            for object in deleted.values { state.baseline[ObjectIdentifier(object)] = _undoCurrentState(of: object) }
            _undoState = state
            newValue._addCheckpointClient(self)
        }
    }

    /// Undoes the last group of changes of the context's undo manager (after recording pending
    /// changes, which are then the last group).
    ///
    /// Related Core Data documentation: [undo()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/undo())
    public func undo() {
        _assertOnQueue("undo()")
        guard let undoManager else { return }
        processPendingChanges()
        undoManager.undo()
    }

    /// Redoes the last undone group of changes.
    ///
    /// Related Core Data documentation: [redo()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/redo())
    public func redo() {
        _assertOnQueue("redo()")
        undoManager?.redo()
    }

    package func _undoManagerCheckpoint(_ undoManager: UndoManager) {
        processPendingChanges()
    }

    /// After `rollback()` or `reset()`: the undo stack goes (Apple: rollback "removes everything
    /// from the undo stack"; for reset Apple says nothing, but its objects are gone), and the
    /// recorded states with it.
    package func _undoDiscardAll() {
        guard let state = _undoState else { return }
        state.baseline.removeAll()
        state.undoManager.removeAllActions()
    }

    // MARK: Recording

    /// Registers an undo operation for the changes since the last call (`processPendingChanges()`
    /// calls it, after the delete rules ran).
    package func _registerUndoForPendingChanges() {
        guard let state = _undoState, !state.isRecording else { return }
        state.isRecording = true
        defer { state.isRecording = false }
        var before: [ContextUndoState.ObjectState] = []
        var seen = Set<ObjectIdentifier>()
        func consider(_ object: NSManagedObject) {
            let id = ObjectIdentifier(object)
            guard seen.insert(id).inserted else { return }
            let now = _undoCurrentState(of: object)
            let then = state.baseline[id] ?? _undoCommittedState(of: object, now: now)
            if _undoStatesDiffer(then, now) { before.append(then) }
            // Unchanged objects (saved, or gone) need no baseline: theirs is as last saved, or absent.
            let keep = now.isAlive ? object.hasChanges : object._contextLink === _link
            state.baseline[id] = keep ? now : nil
        }
        for object in inserted.values { consider(object) }
        for object in changed.values { consider(object) }
        for object in deleted.values { consider(object) }
        for entry in Array(state.baseline.values) { consider(entry.object) }
        guard !before.isEmpty else { return }
        state.undoManager.registerUndo(withTarget: self) { context in context._applyUndoStates(before) }
    }

    private func _undoIsAlive(_ object: NSManagedObject) -> Bool {
        object._contextLink === _link && (object._isInserted || !object._isDeleted)
    }

    fileprivate func _undoCurrentState(of object: NSManagedObject) -> ContextUndoState.ObjectState {
        ContextUndoState.ObjectState(object: object, isAlive: _undoIsAlive(object), values: object._isFault ? RowValues() : object._values)
    }

    /// The state of an object that had no changes at the last recording: a new object was not in
    /// the context; a saved one had its committed values (to-many relationships as the store has
    /// them, for those it changed: the snapshot does not hold them).
    private func _undoCommittedState(of object: NSManagedObject, now: ContextUndoState.ObjectState) -> ContextUndoState.ObjectState {
        guard !object._hasTemporaryID, !now.values.isEmpty, var values = object._snapshot, values.count == now.values.count else {
            return ContextUndoState.ObjectState(object: object, isAlive: false, values: RowValues())
        }
        for slot in object._changedSlots where values[slot] == nil {
            guard let relationship = object._layout.relationships[slot], relationship.isToMany else { continue }
            let loaded = _loadToMany(relationship, of: object, asSaved: true)
            values[slot] = relationship.isOrdered ? ManagedObjectList.ordered(loaded) : ManagedObjectList.unordered(Set(loaded))
        }
        return ContextUndoState.ObjectState(object: object, isAlive: true, values: values)
    }

    private func _undoStatesDiffer(_ a: ContextUndoState.ObjectState, _ b: ContextUndoState.ObjectState) -> Bool {
        if a.isAlive != b.isAlive { return true }
        guard a.isAlive, !a.values.isEmpty, a.values.count == b.values.count else { return false }
        let derived = a.object._layout.derivedSlots
        return a.values.indices.contains { slot in !derived.contains(slot) && !Self._undoValuesEqual(a.values[slot], b.values[slot]) }
    }

    /// Registers `object`, whose deletion was saved, as inserted again with `values` (every slot
    /// that holds a value counts as changed, as for a new object); it keeps its object ID.
    private func _reinsertSavedDeletion(_ object: NSManagedObject, values: RowValues) {
        register(object)
        object._snapshot = nil
        object._values = values
        object._isFault = false
        object._isDeleted = false
        object._isInserted = true
        inserted.insert(object)
        for slot in values.indices where values[slot] != nil { object._insertChangedSlot(slot) }
    }

    /// Whether two slot values are the same: objects by identity (or ID), lists by their objects.
    private static func _undoValuesEqual(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let x as ManagedObjectList, let y as ManagedObjectList):
            switch (x, y) {
            case (.unordered(let s), .unordered(let t)): return s.count == t.count && s.allSatisfy { o in t.contains { $0 === o } }
            case (.ordered(let s), .ordered(let t)): return s.count == t.count && zip(s, t).allSatisfy { $0 === $1 }
            default: return false
            }
        case (let x as NSManagedObject, let y as NSManagedObject): return x === y
        case (let x as NSManagedObject, let y as NSManagedObjectID): return x.objectID == y
        case (let x as NSManagedObjectID, let y as NSManagedObject): return x == y.objectID
        default: return PredicateValues.equal(a, b)
        }
    }

    // MARK: Undoing

    /// Puts objects back in recorded states: in or out of the context, and their values.
    fileprivate func _applyUndoStates(_ states: [ContextUndoState.ObjectState]) {
        for state in states {
            let object = state.object
            let isAlive = _undoIsAlive(object)
            if state.isAlive, !isAlive {
                if object._contextLink == nil, !object._hasTemporaryID {
                    // The deletion was saved: as on Apple, the object comes back as a new insert
                    // with the values and relationships it had (the other objects' states in
                    // this group put the inverses back); the next save writes it again.
                    guard !state.values.isEmpty else { continue }
                    _reinsertSavedDeletion(object, values: state.values)
                    object.awake(fromSnapshotEvents: .undoDeletion)
                    continue
                }
                insert(object)  // undeletes a deleted object, inserts again a new one taken out
                object.awake(fromSnapshotEvents: .undoDeletion)
            } else if !state.isAlive, isAlive {
                if object._isInserted {  // an insertion undone: the object leaves, as in a rollback
                    inserted.remove(object)
                    changed.remove(object)
                    registry.remove(object.objectID)
                    object._isInserted = false
                    object._context = nil
                    object.awake(fromSnapshotEvents: .undoInsertion)
                } else {  // a deletion redone (its delete rules' effects are other objects' states)
                    object._isDeleted = true
                    deleted.insert(object)
                }
                continue
            }
            guard state.isAlive, !state.values.isEmpty else { continue }
            if object._isFault { object._fireFault() }
            guard object._values.count == state.values.count else { continue }
            var restored = false
            for slot in state.values.indices where !Self._undoValuesEqual(object._values[slot], state.values[slot]) {
                object._values[slot] = state.values[slot]
                object._noteChange(slot: slot)
                restored = true
            }
            if restored { object.awake(fromSnapshotEvents: .undoUpdate) }
        }
    }
}
