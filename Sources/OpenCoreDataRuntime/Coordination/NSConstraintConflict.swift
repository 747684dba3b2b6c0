import Foundation

/// A uniqueness-constraint conflict found when a context saves.
///
/// It takes one of two forms, as on Apple:
/// - between objects saved together: no ``databaseObject``, two or more ``conflictingObjects``;
/// - between an object being saved and a row already in the store: the row's object as
///   ``databaseObject`` with its stored values in ``databaseSnapshot``, and one conflicting object.
///
/// ```swift
/// do { try context.save() } catch let error as OpenCoreDataError where error.code == .managedObjectConstraintMerge {
///     for case let conflict as NSConstraintConflict in error.conflictList {
///         print(conflict.constraint, conflict.constraintValues, conflict.conflictingObjects.count)
///     }
/// }
/// ```
///
/// Related Core Data documentation: [NSConstraintConflict](https://developer.apple.com/documentation/coredata/nsconstraintconflict)
open class NSConstraintConflict: NSObject {
    /// The names of the properties of the violated constraint.
    ///
    /// Related Core Data documentation: [constraint](https://developer.apple.com/documentation/coredata/nsconstraintconflict/constraint)
    public let constraint: [String]
    /// The constrained values the conflicting objects had when the conflict was found.
    ///
    /// Related Core Data documentation: [constraintValues](https://developer.apple.com/documentation/coredata/nsconstraintconflict/constraintvalues)
    public let constraintValues: [String: Any]
    /// The object whose stored row already uses the values; `nil` for a conflict among objects
    /// saved together.
    ///
    /// Related Core Data documentation: [databaseObject](https://developer.apple.com/documentation/coredata/nsconstraintconflict/databaseobject)
    public let databaseObject: NSManagedObject?
    /// The stored row of ``databaseObject``; `nil` for a conflict among objects saved together.
    ///
    /// Related Core Data documentation: [databaseSnapshot](https://developer.apple.com/documentation/coredata/nsconstraintconflict/databasesnapshot)
    public let databaseSnapshot: [String: Any]?
    /// The objects that violate the constraint.
    ///
    /// Related Core Data documentation: [conflictingObjects](https://developer.apple.com/documentation/coredata/nsconstraintconflict/conflictingobjects)
    public let conflictingObjects: [NSManagedObject]
    /// The original values of each conflicting object (as last fetched or, for a new object, its
    /// values when the conflict was found); `NSNull` for an object without changes.
    ///
    /// Related Core Data documentation: [conflictingSnapshots](https://developer.apple.com/documentation/coredata/nsconstraintconflict/conflictingsnapshots)
    public let conflictingSnapshots: [[AnyHashable: Any]]

    /// Creates a constraint conflict.
    ///
    /// Related Core Data documentation: [init(constraint:database:databaseSnapshot:conflicting:conflictingSnapshots:)](https://developer.apple.com/documentation/coredata/nsconstraintconflict/init(constraint:database:databasesnapshot:conflicting:conflictingsnapshots:))
    public init(constraint contraint: [String], database databaseObject: NSManagedObject?,
                databaseSnapshot: [AnyHashable: Any]?, conflicting conflictingObjects: [NSManagedObject],
                conflictingSnapshots: [Any]) {
        constraint = contraint
        self.databaseObject = databaseObject
        var stored: [String: Any]?
        if let databaseSnapshot {
            stored = [:]
            for (key, value) in databaseSnapshot { if let key = key as? String { stored![key] = value } }
        }
        self.databaseSnapshot = stored
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots.map { $0 as? [AnyHashable: Any] ?? [:] }
        var values: [String: Any] = [:]
        if let first = conflictingObjects.first, !first._isFault {
            for key in contraint {
                if let slot = first._layout.indexByName[key] {
                    values[key] = first._snapshotValue(slot: slot) ?? NSNull()
                }
            }
        }
        constraintValues = values
        super.init()
    }

    open override var description: String {
        let form = databaseObject.map { "database object \($0.objectID)" } ?? "no database object"
        return "<NSConstraintConflict: constraint \(constraint), \(form), \(conflictingObjects.count) conflicting objects>"
    }
}

extension NSManagedObject {
    /// A slot's value as snapshots hold it: to-one relationships as object IDs.
    package func _snapshotValue(slot: Int) -> Any? {
        let value = _values[slot]
        if _layout.relationships[slot] != nil {
            return (value as? NSManagedObject)?.objectID ?? value as? NSManagedObjectID
        }
        return value
    }
}
