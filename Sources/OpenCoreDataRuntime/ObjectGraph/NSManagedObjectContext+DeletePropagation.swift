import Foundation

/// Delete propagation: `delete(_:)` only marks an object (after `prepareForDeletion()`); its
/// relationships' delete rules run later,
/// in `processPendingChanges()` or at save, as Apple documents ("deletes are deferred to the end of
/// the event or to the save"; `propagatesDeletesAtEndOfEvent`).
///
/// The rules work through a list rather than by recursion, so a cascade through a chain of any depth
/// (A → B → C …, 100,000 long) runs in constant stack space.
extension NSManagedObjectContext {
    /// Marks `object` deleted and queues its delete rules, after `prepareForDeletion()` (so for an
    /// object a cascade reaches, while its own relationships are still intact). An inserted object
    /// that was never saved leaves `insertedObjects` at once; it leaves the context when its rules
    /// have run.
    package func _markDeleted(_ object: NSManagedObject) {
        guard object._contextLink === _link, !object._isDeleted else { return }
        object.prepareForDeletion()
        let neverSaved = inserted.contains(object)
        object._isDeleted = true
        if neverSaved {
            inserted.remove(object)
            changed.remove(object)
            object._isInserted = false
        } else {
            deleted.insert(object)
        }
        _pendingDeletes.append((object, neverSaved))
    }

    /// Runs the delete rules of every queued object, including the objects a cascade reaches (they
    /// join the queue) and objects deleted meanwhile by `prepareForDeletion()` overrides.
    package func _propagatePendingDeletes() {
        guard !_isPropagatingDeletes, !_pendingDeletes.isEmpty else { return }
        _isPropagatingDeletes = true
        defer { _isPropagatingDeletes = false }
        // Keyed by ``ObjectTableKey`` (one multiply, where an
        // `ObjectIdentifier` hashes with a full `Hasher` round, about 150 instructions an object,
        // callgrind case 6).
        var done = Set<ObjectTableKey>(minimumCapacity: _pendingDeletes.count)
        var next = 0
        while next < _pendingDeletes.count {
            let (object, neverSaved) = _pendingDeletes[next]
            next += 1
            // Skipped: undeleted (re-inserted) or rolled back since, or already handled in this pass.
            guard object._isDeleted, object._contextLink === _link, done.insert(ObjectTableKey(id: ObjectIdentifier(object))).inserted
            else { continue }
            _applyDeleteRules(to: object, neverSaved: neverSaved)
            if neverSaved, object._isDeleted {
                registry.remove(object.objectID)
                object._context = nil
                object._dropRelationshipsOnLeaving()
            }
        }
        _pendingDeletes.removeAll()
    }

    /// Forgets the queued delete rules (rollback): new objects deleted before their rules ran leave
    /// the context with the other inserted objects; saved ones are restored by the rollback itself.
    package func _discardPendingDeletes() {
        for (object, neverSaved) in _pendingDeletes where neverSaved && object._isDeleted && object._contextLink === _link {
            registry.remove(object.objectID)
            object._isDeleted = false
            object._context = nil
            object._dropRelationshipsOnLeaving()
        }
        _pendingDeletes.removeAll()
    }

    /// Applies the delete rules of the object's relationships.
    ///
    /// A fault fires and relationships not loaded yet load from the store first, so the rules see
    /// every destination. Cascade queues the destinations for deletion and, like nullify, takes the
    /// object out of each destination's inverse. Deny leaves the relationship as it is: the save
    /// checks it (`NSValidationRelationshipDeniedDeleteError`), except for an object that was never
    /// saved, which leaves the context and is nullified. No action leaves the destinations pointing
    /// at the deleted object, as on Apple.
    private func _applyDeleteRules(to object: NSManagedObject, neverSaved: Bool) {
        // No relationships, no rules: a fault that holds its row's version (for the save's
        // optimistic-locking check) is left as it is (firing it was about 190 instructions per
        // deleted object, callgrind case 6).
        if object._layout.relationshipSlots.isEmpty, !object._isFault || object._version > 0 { return }
        if object._isFault { object._fireFault() }
        for slot in object._layout.relationshipSlots {
            let relationship = object._layout.relationships[slot]!
            switch relationship.deleteRule {
            case .cascadeDeleteRule:
                let destinations: [NSManagedObject] = relationship.isToMany
                    ? object._toMany(slot: slot).objects : object._toOne(slot: slot).map { [$0] } ?? []
                for destination in destinations { _markDeleted(destination) }
                _nullify(slot: slot, of: object)
            case .nullifyDeleteRule:
                _nullify(slot: slot, of: object)
            case .denyDeleteRule:
                if neverSaved { _nullify(slot: slot, of: object) }
            case .noActionDeleteRule:
                break
            }
        }
    }

    private func _nullify(slot: Int, of object: NSManagedObject) {
        if object._layout.relationships[slot]!.isToMany {
            object._replaceToMany(slot: slot, with: [])
        } else {
            object._setToOne(nil, slot: slot)
        }
    }
}
