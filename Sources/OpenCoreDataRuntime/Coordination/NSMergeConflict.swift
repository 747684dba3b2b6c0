import Foundation

/// An optimistic-locking conflict: the store's row changed (or was deleted) after the saving
/// context read it.
///
/// ```swift
/// do { try context.save() } catch let error as OpenCoreDataError where error.code == .persistentStoreSaveConflicts {
///     for case let conflict as NSMergeConflict in error.conflictList {
///         print(conflict.sourceObject.objectID, conflict.oldVersionNumber, "→", conflict.newVersionNumber)
///     }
/// }
/// ```
///
/// Snapshots hold every attribute and to-one relationship (as `NSManagedObjectID`; `NSNull` for
/// nil), never to-many relationships.
///
/// - Note: Linux: no coordinator-level row cache sits between the context and the store, so every
///   conflict is one between the object's last-read state and the store: `cachedSnapshot` is the
///   row as the context last read it, `persistedSnapshot` the row in the store now (`nil`, with a
///   `newVersionNumber` of 0, when the row was deleted), and `objectSnapshot` the object's current
///   in-memory values.
///
/// Related Core Data documentation: [NSMergeConflict](https://developer.apple.com/documentation/coredata/nsmergeconflict)
open class NSMergeConflict: NSObject {
    /// The object whose save conflicted.
    public let sourceObject: NSManagedObject
    /// The object's values in the context when the conflict was found.
    public let objectSnapshot: [String: Any]?
    /// The row's values as the context last read them.
    public let cachedSnapshot: [String: Any]?
    /// The row's values in the store now; `nil` if the row was deleted.
    public let persistedSnapshot: [String: Any]?
    /// The row's version in the store now (`Z_OPT`); 0 if the row was deleted.
    public let newVersionNumber: Int
    /// The row's version the context last read.
    public let oldVersionNumber: Int

    /// Creates a merge conflict.
    ///
    /// Related Core Data documentation: [init(source:newVersion:oldVersion:cachedSnapshot:persistedSnapshot:)](https://developer.apple.com/documentation/coredata/nsmergeconflict/init(source:newversion:oldversion:cachedsnapshot:persistedsnapshot:))
    public init(source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
                cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?) {
        sourceObject = srcObject
        objectSnapshot = srcObject._isFault ? nil : srcObject._snapshotDictionary(srcObject._values)
        cachedSnapshot = cachesnap
        persistedSnapshot = persnap
        newVersionNumber = newvers
        oldVersionNumber = oldvers
        super.init()
    }

    open override var description: String {
        "<NSMergeConflict: \(sourceObject.objectID) oldVersion \(oldVersionNumber), newVersion \(newVersionNumber)>"
    }
}

extension NSManagedObject {
    /// Slot values as a snapshot dictionary: attributes and to-one relationships by name (to-ones as
    /// object IDs, nil as `NSNull`), to-many relationships left out.
    package func _snapshotDictionary(_ values: RowValues) -> [String: Any] {
        var result: [String: Any] = [:]
        for (slot, property) in _layout.properties.enumerated() where slot < values.count && !property.isTransient {
            if let relationship = _layout.relationships[slot] {
                if relationship.isToMany { continue }
                let id = (values[slot] as? NSManagedObject)?.objectID ?? values[slot] as? NSManagedObjectID
                result[property.name] = id ?? NSNull()
            } else {
                result[property.name] = values[slot] ?? NSNull()
            }
        }
        return result
    }
}
