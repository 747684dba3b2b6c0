import Foundation

/// The kinds of merge policy Core Data provides.
///
/// Related Core Data documentation: [NSMergePolicyType](https://developer.apple.com/documentation/coredata/nsmergepolicytype)
public enum NSMergePolicyType: UInt, Sendable {
    /// Conflicts fail the save; the error lists them under `conflictList`. The default.
    case errorMergePolicyType = 0x00
    /// Merge by property; for properties changed in both places, the store's value wins.
    case mergeByPropertyStoreTrumpMergePolicyType = 0x01
    /// Merge by property; for properties changed in both places, the in-memory value wins.
    case mergeByPropertyObjectTrumpMergePolicyType = 0x02
    /// The whole in-memory object replaces the stored one.
    case overwriteMergePolicyType = 0x03
    /// The in-memory changes of objects in conflict are discarded; the store's version is kept.
    case rollbackMergePolicyType = 0x04
}

/// A policy that resolves conflicts found when a context saves: uniqueness-constraint conflicts
/// (``NSConstraintConflict``) and optimistic-locking conflicts (``NSMergeConflict``).
///
/// ```swift
/// viewContext.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy   // or NSMergePolicy.mergeByPropertyStoreTrump
///
/// final class KeepNewestPolicy: NSMergePolicy, @unchecked Sendable {
///     init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
///     override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
///         // inspect or adjust the conflicting objects, then let Core Data's policy finish
///         try super.resolve(constraintConflicts: list)
///     }
/// }
/// ```
///
/// When a save finds conflicts, the context hands them to its policy's
/// ``resolve(mergeConflicts:)``, which resolves optimistic-locking conflicts
/// (``resolve(optimisticLockingConflicts:)``) and then constraint conflicts
/// (``resolve(constraintConflicts:)``); the save then goes on with the resolved objects. The
/// error policy throws instead, and nothing is written.
///
/// - Note: Linux: the class is `Sendable` (one policy serves contexts on any queue), so Swift 6 asks
///   a subclass to restate `@unchecked Sendable`. `init()` is not available (as on Apple, where it
///   is `NS_UNAVAILABLE`); subclasses call `super.init(merge:)`.
///
/// Related Core Data documentation: [NSMergePolicy](https://developer.apple.com/documentation/coredata/nsmergepolicy)
///
/// `@unchecked Sendable` invariant: the policy's only state, `mergeType`, never changes; a
/// subclass that adds mutable state must keep it safe to use from any context's queue.
open class NSMergePolicy: NSObject, @unchecked Sendable {
    private let type: NSMergePolicyType

    /// The policy's type.
    ///
    /// Related Core Data documentation: [mergeType](https://developer.apple.com/documentation/coredata/nsmergepolicy/mergetype)
    open var mergeType: NSMergePolicyType { type }

    /// Creates a policy of the given type. A subclass passes the type closest to what it wants and
    /// customizes the results of `super`'s resolution.
    ///
    /// Related Core Data documentation: [init(merge:)](https://developer.apple.com/documentation/coredata/nsmergepolicy/init(merge:))
    public init(merge ty: NSMergePolicyType) {
        type = ty
        super.init()
    }

    /// Resolves a save's conflicts: the ``NSMergeConflict``s (optimistic locking) first with
    /// ``resolve(optimisticLockingConflicts:)``, then the ``NSConstraintConflict``s with
    /// ``resolve(constraintConflicts:)``. The error policy throws.
    ///
    /// Related Core Data documentation: [resolve(mergeConflicts:)](https://developer.apple.com/documentation/coredata/nsmergepolicy/resolve(mergeconflicts:))
    open func resolve(mergeConflicts list: [Any]) throws {
        let locking = list.compactMap { $0 as? NSMergeConflict }
        let constraints = list.compactMap { $0 as? NSConstraintConflict }
        if !locking.isEmpty { try resolve(optimisticLockingConflicts: locking) }
        if !constraints.isEmpty { try resolve(constraintConflicts: constraints) }
    }

    /// Resolves optimistic-locking conflicts: rows changed in the store since the context read them.
    ///
    /// By type: the error policy throws `managedObjectMerge` (133020, as Apple's does) with the conflicts
    /// under `conflictList`; store trump takes the store's value for every property the store
    /// changed; object trump keeps the object's value for every property it changed and takes the
    /// store's for the others; overwrite keeps all the object's values; rollback drops the object's
    /// changes and takes the store's values. The object then carries the store's version, so the
    /// save can be retried, and gets `awake(fromSnapshotEvents: .mergePolicy)`.
    ///
    /// - Note: Linux: a deleted object in conflict stays deleted under every resolving policy. An
    ///   updated object whose row was deleted (`newVersionNumber` 0) is not resolved: the save
    ///   throws `persistentStoreSaveConflicts` with that conflict.
    ///
    /// Related Core Data documentation: [resolve(optimisticLockingConflicts:)](https://developer.apple.com/documentation/coredata/nsmergepolicy/resolve(optimisticlockingconflicts:))
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        try _resolveOptimisticLockingConflicts(list)
    }

    /// Resolves uniqueness-constraint conflicts.
    ///
    /// The error policy throws `managedObjectConstraintMerge` (133021) with the conflicts under
    /// `conflictList`. The other policies keep one object per set of constrained values (the
    /// ``NSConstraintConflict/databaseObject`` if there is one, else the first object: an already
    /// saved one, else the first inserted), merge each other conflicting object into it and delete
    /// that object. Relationships of a merged object move to the kept one (to-many relationships
    /// are united; a to-one moves where the kept object has none, or where the policy lets the
    /// merged object win). Attribute values: store trump keeps the kept object's values and only
    /// fills its nil ones; object trump takes the values the merged object set; overwrite takes
    /// all the merged object's values; rollback keeps the kept object's values unchanged. The kept
    /// object gets `awake(fromSnapshotEvents: .mergePolicy)`.
    ///
    /// Related Core Data documentation: [resolve(constraintConflicts:)](https://developer.apple.com/documentation/coredata/nsmergepolicy/resolve(constraintconflicts:))
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        try _resolveConstraintConflicts(list)
    }

    private static let errorPolicy = NSMergePolicy(merge: .errorMergePolicyType)
    private static let storeTrumpPolicy = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    private static let objectTrumpPolicy = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    private static let overwritePolicy = NSMergePolicy(merge: .overwriteMergePolicyType)
    private static let rollbackPolicy = NSMergePolicy(merge: .rollbackMergePolicyType)

    /// The default policy: a conflict fails the save.
    ///
    /// Related Core Data documentation: [error](https://developer.apple.com/documentation/coredata/nsmergepolicy/error)
    public class var error: NSMergePolicy { errorPolicy }
    /// Property-by-property merge in which the store's changes win.
    ///
    /// Related Core Data documentation: [mergeByPropertyStoreTrump](https://developer.apple.com/documentation/coredata/nsmergepolicy/mergebypropertystoretrump)
    public class var mergeByPropertyStoreTrump: NSMergePolicy { storeTrumpPolicy }
    /// Property-by-property merge in which the in-memory changes win.
    ///
    /// Related Core Data documentation: [mergeByPropertyObjectTrump](https://developer.apple.com/documentation/coredata/nsmergepolicy/mergebypropertyobjecttrump)
    public class var mergeByPropertyObjectTrump: NSMergePolicy { objectTrumpPolicy }
    /// The whole in-memory object is written over the stored one.
    ///
    /// Related Core Data documentation: [overwrite](https://developer.apple.com/documentation/coredata/nsmergepolicy/overwrite)
    public class var overwrite: NSMergePolicy { overwritePolicy }
    /// The in-memory changes of objects in conflict are discarded.
    ///
    /// Related Core Data documentation: [rollback](https://developer.apple.com/documentation/coredata/nsmergepolicy/rollback)
    public class var rollback: NSMergePolicy { rollbackPolicy }
}

/// The default merge policy of every context: a conflict fails the save with the conflicts in the
/// error's `conflictList`.
///
/// - Note: Linux: a `let` of type ``NSMergePolicy`` (Apple: a `var` of type `AnyObject`); Swift 6
///   strict concurrency allows no mutable or non-`Sendable` globals. Assigning it to
///   `mergePolicy` reads the same.
///
/// Related Core Data documentation: [NSErrorMergePolicy](https://developer.apple.com/documentation/coredata/nserrormergepolicy)
public let NSErrorMergePolicy: NSMergePolicy = .error
/// Property-by-property merge in which the store's changes win.
///
/// - Note: Linux: a `let` of type ``NSMergePolicy`` (see ``NSErrorMergePolicy``).
///
/// Related Core Data documentation: [NSMergeByPropertyStoreTrumpMergePolicy](https://developer.apple.com/documentation/coredata/nsmergebypropertystoretrumpmergepolicy)
public let NSMergeByPropertyStoreTrumpMergePolicy: NSMergePolicy = .mergeByPropertyStoreTrump
/// Property-by-property merge in which the in-memory changes win.
///
/// - Note: Linux: a `let` of type ``NSMergePolicy`` (see ``NSErrorMergePolicy``).
///
/// Related Core Data documentation: [NSMergeByPropertyObjectTrumpMergePolicy](https://developer.apple.com/documentation/coredata/nsmergebypropertyobjecttrumpmergepolicy)
public let NSMergeByPropertyObjectTrumpMergePolicy: NSMergePolicy = .mergeByPropertyObjectTrump
/// The whole in-memory object is written over the stored one.
///
/// - Note: Linux: a `let` of type ``NSMergePolicy`` (see ``NSErrorMergePolicy``).
///
/// Related Core Data documentation: [NSOverwriteMergePolicy](https://developer.apple.com/documentation/coredata/nsoverwritemergepolicy)
public let NSOverwriteMergePolicy: NSMergePolicy = .overwrite
/// The in-memory changes of objects in conflict are discarded.
///
/// - Note: Linux: a `let` of type ``NSMergePolicy`` (see ``NSErrorMergePolicy``).
///
/// Related Core Data documentation: [NSRollbackMergePolicy](https://developer.apple.com/documentation/coredata/nsrollbackmergepolicy)
public let NSRollbackMergePolicy: NSMergePolicy = .rollback
