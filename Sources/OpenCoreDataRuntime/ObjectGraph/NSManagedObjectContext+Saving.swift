import Foundation

extension Notification.Name {
    /// Posted after a context saves; user info holds `inserted`, `updated` and `deleted` sets.
    ///
    /// Related Core Data documentation: [NSManagedObjectContextDidSave](https://developer.apple.com/documentation/foundation/nsnotification/name/1506380-nsmanagedobjectcontextdidsave)
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagedObjectContextDidSaveNotification")
    /// Posted before a context saves.
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagedObjectContextWillSaveNotification")
    /// Posted when a context's objects change.
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name("NSManagedObjectContextObjectsDidChangeNotification")
}

/// User-info key for inserted objects in context notifications.
public let NSInsertedObjectsKey = "inserted"
/// User-info key for updated objects in context notifications.
public let NSUpdatedObjectsKey = "updated"
/// User-info key for deleted objects in context notifications.
public let NSDeletedObjectsKey = "deleted"

extension NSManagedObjectContext {
    /// Writes the context's changes to its stores: all of them or, if anything fails, none
    /// (the context then still holds its changes).
    ///
    /// Throws ``OpenCoreDataError``: validation errors (`validationMissingMandatoryProperty`, grouped
    /// as `validationMultipleErrors` with `NSDetailedErrorsKey`), store errors, conflicts.
    ///
    /// Related Core Data documentation: [save()](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/save())
    public func save() throws {
        try performAndWait { () throws(any Error) in try _save() }
    }

    private func _save() throws {
        processPendingChanges()
        guard hasChanges else { return }
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: self)

        var insertedNow = Array(inserted.values)
        var updatedNow = changed.values.filter { $0.isUpdated && !$0._isDeleted && !$0._isInserted }
        var deletedNow = Array(deleted.values)

        try validate(insertedNow + updatedNow, deleted: deletedNow)
        for object in insertedNow + updatedNow + deletedNow { object.willSave() }

        // Constraint and optimistic-locking conflicts go to the merge policy (+Conflicts.swift).
        try _executeSaveResolvingConflicts(coordinator, inserted: &insertedNow, updated: &updatedNow, deleted: &deletedNow)

        // The stores have the changes: commit them in memory.
        for object in insertedNow {
            object._isInserted = false
            object._version = 1
            object._snapshot = object._committedSnapshot()
            object._changedSlots.removeAll()
        }
        for object in updatedNow {
            if object.hasPersistentChangedValues { object._version += 1 }
            object._snapshot = object._committedSnapshot()
            object._changedSlots.removeAll()
        }
        for object in deletedNow {
            registry[object.objectID] = nil
            object._context = nil
        }
        inserted.removeAll()
        changed.removeAll()
        deleted.removeAll()
        for object in insertedNow + updatedNow + deletedNow { object.didSave() }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: [
            NSInsertedObjectsKey: Set(insertedNow), NSUpdatedObjectsKey: Set(updatedNow), NSDeletedObjectsKey: Set(deletedNow),
        ])
    }

    /// Checks what Apple's `validateForInsert`/`validateForUpdate`/`validateForDelete` check here:
    /// required properties, the count limits of to-many relationships, and deny delete rules.
    /// Throws one error, or `validationMultipleErrors` grouping them in `detailedErrors`.
    private func validate(_ objects: [NSManagedObject], deleted: [NSManagedObject]) throws {
        var errors: [OpenCoreDataError] = []
        func fail(_ code: OpenCoreDataError.Code, _ message: String, _ object: NSManagedObject, _ key: String) {
            errors.append(OpenCoreDataError(code, message, entityName: object.entity.name, key: key, objectID: object.objectID))
        }
        for object in objects {
            // A to-one slot holds an object or an object ID; either counts as a value.
            for slot in object._layout.requiredSlots where object._values[slot] == nil {
                let property = object._layout.properties[slot]
                fail(.validationMissingMandatoryProperty, "\(property.name) is a required value", object, property.name)
            }
            for slot in object._layout.relationshipSlots {
                let relationship = object._layout.relationships[slot]!
                guard relationship.isToMany, !relationship.isTransient else { continue }
                // A to-many relationship: an optional one may be empty; otherwise its count must lie
                // within minCount...maxCount (maxCount 0: no limit). Unloaded relationships of
                // updated objects are only loaded when there is a limit to check.
                let minimum = relationship.isOptional ? relationship.minCount : max(relationship.minCount, 1)
                guard minimum > 0 || relationship.maxCount > 1 else { continue }
                if !object._isInserted, !object._changedSlots.contains(slot) { continue }
                let count = object._toMany(slot: slot).count
                if count == 0, relationship.isOptional { continue }
                if count < minimum {
                    fail(.validationRelationshipLacksMinimumCount,
                         "\(relationship.name) holds \(count) objects, fewer than its minimum of \(minimum)", object, relationship.name)
                } else if relationship.maxCount > 1, count > relationship.maxCount {
                    fail(.validationRelationshipExceedsMaximumCount,
                         "\(relationship.name) holds \(count) objects, more than its maximum of \(relationship.maxCount)",
                         object, relationship.name)
                }
            }
        }
        for object in deleted {
            for slot in object._layout.relationshipSlots {
                let relationship = object._layout.relationships[slot]!
                guard relationship.deleteRule == .denyDeleteRule else { continue }
                let destinations = relationship.isToMany
                    ? object._toMany(slot: slot).objects : object._toOne(slot: slot).map { [$0] } ?? []
                // Destinations deleted in the same save do not count: they leave with the object.
                if destinations.contains(where: { !$0._isDeleted }) {
                    fail(.validationRelationshipDeniedDelete,
                         "\(relationship.name) is not empty and its delete rule is deny", object, relationship.name)
                }
            }
        }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw OpenCoreDataError(.validationMultipleErrors, "multiple validation errors occurred", detailedErrors: errors)
        }
    }
}

extension NSManagedObject {
    /// The values to keep as the committed snapshot: to-one relationships as object IDs,
    /// to-many relationships left out (they reload from the store).
    package func _committedSnapshot() -> ContiguousArray<Any?> {
        var snapshot = _values
        for slot in _layout.relationshipSlots {
            if _layout.relationships[slot]!.isToMany { snapshot[slot] = nil; continue }
            snapshot[slot] = (_values[slot] as? NSManagedObject)?.objectID ?? _values[slot] as? NSManagedObjectID
        }
        return snapshot
    }
}
