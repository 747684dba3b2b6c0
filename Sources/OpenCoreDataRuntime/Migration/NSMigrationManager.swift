import Foundation

/// A store class that can migrate a file of its own type: copy it, and migrate a file in place
/// with a mapping model. The SQLite store adopts it; a store class that does not cannot migrate.
package protocol MigratingPersistentStore: NSPersistentStore {
    /// Copies the store at `source` (consistently, including uncommitted-to-main-file pages) to a new file at `destination`.
    static func copyStoreForMigration(from source: URL, to destination: URL) throws
    /// Migrates the store at `url` from `plan.sourceModel` to `plan.destinationModel`, all or nothing.
    static func migrateStoreInPlace(at url: URL, plan: LightweightMigrationPlan) throws
}

extension MigratingPersistentStore {
    /// Puts the store file at `work` in the place of the store at `url`, in one rename, after the old
    /// store's `-wal` and `-shm` files are gone (they belong to the file being replaced). If the
    /// rename fails, `work` is removed and the store at `url` is left as it is, with `code`.
    package static func moveStoreFile(at work: URL, over url: URL, code: OpenCoreDataError.Code) throws {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        guard rename(work.path, url.path) == 0 else {
            let failure = errno
            try? destroyStore(at: work, options: nil)
            throw OpenCoreDataError(code, "cannot move the new store file into place (errno \(failure))", url: url)
        }
    }
}

/// Migrates a store from one model version to another with a mapping model, into a new store.
///
/// ```swift
/// let mapping = NSMappingModel(contentsOf: bundle.url(forResource: "V2ToV3", withExtension: "xcmappingmodel"))!
/// let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
/// try manager.migrateStore(from: oldURL, type: NSSQLiteStoreType, options: nil, mapping: mapping,
///                          to: newURL, type: NSSQLiteStoreType, options: nil)
/// ```
///
/// A migration runs Apple's three stages over the entity mappings in order, each through the
/// mapping's ``NSEntityMigrationPolicy``: it creates the destination instances of every mapping
/// (``sourceContext`` → ``destinationContext``), then their relationships, then validates them and
/// saves the destination. Source and destination may be of different store types.
///
/// All or nothing: the source store is never changed (the SQLite store is read from a consistent
/// copy), the destination is written beside `dURL` and moved there only when every stage succeeded,
/// and a failure or ``cancelMigrationWithError(_:)`` leaves no destination file. The error names
/// the entity mapping and the stage that failed.
///
/// - Note: Linux: when ``usesStoreSpecificMigrationManager`` is true (the default), source and
///   destination are of the same store type that migrates itself (SQLite), and the mapping only
///   copies values (no entity migration policy; copy, transform, add and remove mappings whose
///   property mappings are `$source.key`, as inferred mappings are), the store migrates a copy of
///   the file in SQL instead of object by object; the policy callbacks do not run then.
///
/// Related Core Data documentation: [NSMigrationManager](https://developer.apple.com/documentation/coredata/nsmigrationmanager)
///
/// `@unchecked Sendable` invariant: one migration at a time, on the thread that called
/// `migrateStore`; its state is read by the policies it calls and after it returns. Only
/// ``cancelMigrationWithError(_:)`` may be called from another thread (it takes a lock).
open class NSMigrationManager: NSObject, @unchecked Sendable {
    /// The model the source store was written with.
    ///
    /// Related Core Data documentation: [sourceModel](https://developer.apple.com/documentation/coredata/nsmigrationmanager/sourcemodel)
    open private(set) var sourceModel: NSManagedObjectModel
    /// The model of the destination store.
    ///
    /// Related Core Data documentation: [destinationModel](https://developer.apple.com/documentation/coredata/nsmigrationmanager/destinationmodel)
    open private(set) var destinationModel: NSManagedObjectModel
    /// The mapping model of the current (or last) migration.
    ///
    /// Related Core Data documentation: [mappingModel](https://developer.apple.com/documentation/coredata/nsmigrationmanager/mappingmodel)
    open private(set) var mappingModel: NSMappingModel!
    /// The context on the source store during a migration (`nil` before the first one).
    ///
    /// Related Core Data documentation: [sourceContext](https://developer.apple.com/documentation/coredata/nsmigrationmanager/sourcecontext)
    open package(set) var sourceContext: NSManagedObjectContext!
    /// The context that creates the destination instances during a migration. After a migration into
    /// an in-memory store it still holds the migrated objects, until ``reset()``.
    ///
    /// Related Core Data documentation: [destinationContext](https://developer.apple.com/documentation/coredata/nsmigrationmanager/destinationcontext)
    open package(set) var destinationContext: NSManagedObjectContext!
    /// The entity mapping being processed.
    ///
    /// Related Core Data documentation: [currentEntityMapping](https://developer.apple.com/documentation/coredata/nsmigrationmanager/currententitymapping)
    open package(set) var currentEntityMapping: NSEntityMapping!
    /// Developer information.
    ///
    /// Related Core Data documentation: [userInfo](https://developer.apple.com/documentation/coredata/nsmigrationmanager/userinfo)
    open var userInfo: [AnyHashable: Any]?
    /// Whether a store that migrates itself may run the migration (SQLite, in SQL) when the mapping
    /// only copies values. Defaults to true.
    ///
    /// Related Core Data documentation: [usesStoreSpecificMigrationManager](https://developer.apple.com/documentation/coredata/nsmigrationmanager/usesstorespecificmigrationmanager)
    open var usesStoreSpecificMigrationManager: Bool = true
    /// How far the migration is, from 0 to 1: the share of the three stages of every entity mapping done.
    ///
    /// Related Core Data documentation: [migrationProgress](https://developer.apple.com/documentation/coredata/nsmigrationmanager/migrationprogress)
    open package(set) var migrationProgress: Float = 0

    /// Source ↔ destination instances, by entity mapping name.
    package var _associations: [String: MigrationAssociations] = [:]
    /// The error given to ``cancelMigrationWithError(_:)`` (from any thread) while a migration runs.
    package let _cancellation = Locked<(error: NSError, description: String)?>(nil)
    /// An error thrown inside an expression evaluation (a policy's function), rethrown after it.
    package var _expressionError: (any Error)?
    /// The property mapping whose expression is being evaluated.
    package var _currentPropertyMapping: NSPropertyMapping?

    /// A manager for migrations from `sourceModel` to `destinationModel`.
    ///
    /// Related Core Data documentation: [init(sourceModel:destinationModel:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/init(sourcemodel:destinationmodel:))
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        super.init()
    }

    /// Migrates the store at `sourceURL` into a new store at `dURL` using `mapping`.
    ///
    /// Throws `NSMigrationMissingMappingModelError` (134140) without a mapping,
    /// `NSMigrationManagerSourceStoreError` (134150) if the source store was not written with
    /// ``sourceModel``, `NSMigrationManagerDestinationStoreError` (134160) if something other than a
    /// store of ``destinationModel`` exists at `dURL` (such a store gets the new instances added: a
    /// migration in several passes, one mapping model each),
    /// `NSMigrationCancelledError` (134120) after ``cancelMigrationWithError(_:)``, and
    /// `NSMigrationError` (134110) or the policy's own error code when a stage fails (naming the
    /// entity mapping). Nothing is left at `dURL` after a failure; the source is never changed.
    ///
    /// Related Core Data documentation: [migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/migratestore(from:sourcetype:options:with:todestinationurl:destinationtype:destinationoptions:))
    open func migrateStore(
        from sourceURL: URL, sourceType sStoreType: String, options sOptions: [AnyHashable: Any]? = nil,
        with mapping: NSMappingModel?, toDestinationURL dURL: URL, destinationType dStoreType: String,
        destinationOptions dOptions: [AnyHashable: Any]? = nil
    ) throws {
        migrationProgress = 0
        _cancellation.withLock { $0 = nil }
        guard let mapping else {
            throw OpenCoreDataError(.migrationMissingMappingModel, "migrateStore needs a mapping model", url: sourceURL)
        }
        let sourceClass = try NSPersistentStoreCoordinator.storeClass(for: sStoreType)
        let destinationClass = try NSPersistentStoreCoordinator.storeClass(for: dStoreType)
        if sStoreType != NSInMemoryStoreType {
            let metadata = try sourceClass.metadataForPersistentStore(with: sourceURL)
            guard sourceModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else {
                throw OpenCoreDataError(
                    .migrationManagerSourceStore,
                    "the source store was not written with the migration manager's source model", url: sourceURL)
            }
        }
        // A store of the destination model already there is a later pass (Apple's guide: "Multiple
        // Passes"): the new instances are added to it. Any other file is left alone.
        var appending = false
        if dStoreType != NSInMemoryStoreType, FileManager.default.fileExists(atPath: dURL.path) {
            guard let existing = try? destinationClass.metadataForPersistentStore(with: dURL),
                destinationModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: existing),
                destinationClass is any MigratingPersistentStore.Type
            else {
                throw OpenCoreDataError(
                    .migrationManagerDestinationStore,
                    "a file that is not a store of the destination model already exists at the destination URL; it is left as it is",
                    url: dURL)
            }
            appending = true
        }
        mapping._resolveAutogeneratedExpressions(sourceModel: sourceModel, destinationModel: destinationModel)
        mappingModel = mapping
        if !appending, usesStoreSpecificMigrationManager, sourceClass == destinationClass,
            let migrating = destinationClass as? any MigratingPersistentStore.Type, mapping._onlyCopiesValues
        {
            try migrating.copyStoreForMigration(from: sourceURL, to: dURL)
            do {
                try migrating.migrateStoreInPlace(
                    at: dURL,
                    plan: LightweightMigrationPlan(sourceModel: sourceModel, destinationModel: destinationModel, mapping: mapping))
            } catch {
                try? destinationClass.destroyStore(at: dURL, options: dOptions)
                throw error
            }
            migrationProgress = 1
            return
        }
        try _migrateInStages(
            from: sourceURL, type: sStoreType, class: sourceClass, options: sOptions, mapping: mapping,
            to: dURL, type: dStoreType, class: destinationClass, options: dOptions, appending: appending)
    }

    /// Migrates the store at `sourceURL` into a new store at `destinationURL` using `mapping`: the
    /// same migration as
    /// ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``,
    /// with the store types as `NSPersistentStore.StoreType`.
    ///
    /// Related Core Data documentation: [migrateStore(from:type:options:mapping:to:type:options:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/migratestore(from:type:options:mapping:to:type:options:))
    open func migrateStore(
        from sourceURL: URL, type sourceType: NSPersistentStore.StoreType,
        options sourceOptions: [AnyHashable: Any]? = nil, mapping: NSMappingModel, to destinationURL: URL,
        type destinationType: NSPersistentStore.StoreType, options destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        try migrateStore(
            from: sourceURL, sourceType: sourceType.rawValue, options: sourceOptions, with: mapping,
            toDestinationURL: destinationURL, destinationType: destinationType.rawValue,
            destinationOptions: destinationOptions)
    }

    /// The newer spelling with the store types as strings (`NSSQLiteStoreType`) and an optional
    /// mapping, as the package's own callers and tests use it.
    ///
    /// - Note: Linux: not an Apple spelling (Apple's takes `NSPersistentStore.StoreType` and a
    ///   non-optional mapping); it forwards to
    ///   ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``.
    open func migrateStore(
        from sourceURL: URL, type sStoreType: String, options sOptions: [AnyHashable: Any]? = nil,
        mapping: NSMappingModel?, to dURL: URL, type dStoreType: String, options dOptions: [AnyHashable: Any]? = nil
    ) throws {
        try migrateStore(
            from: sourceURL, sourceType: sStoreType, options: sOptions, with: mapping, toDestinationURL: dURL,
            destinationType: dStoreType, destinationOptions: dOptions)
    }

    /// Stops the running migration: `migrateStore` throws `NSMigrationCancelledError` (134120)
    /// carrying `error`, at the next instance or stage boundary, and leaves no destination.
    ///
    /// Related Core Data documentation: [cancelMigrationWithError(_:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/cancelmigrationwitherror(_:))
    open func cancelMigrationWithError(_ error: any Error) {
        _cancellation.withLock { $0 = (error as NSError, "\(error)") }
    }

    /// Forgets the associations and contexts of the last migration.
    ///
    /// Related Core Data documentation: [reset()](https://developer.apple.com/documentation/coredata/nsmigrationmanager/reset())
    open func reset() {
        _associations = [:]
        _cancellation.withLock { $0 = nil }
        currentEntityMapping = nil
        sourceContext = nil
        destinationContext = nil
        migrationProgress = 0
    }

    /// The source model's entity of `mEntity` (`nil` for an add mapping).
    ///
    /// Related Core Data documentation: [sourceEntity(for:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/sourceentity(for:))
    open func sourceEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
    }

    /// The destination model's entity of `mEntity` (`nil` for a remove mapping).
    ///
    /// Related Core Data documentation: [destinationEntity(for:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/destinationentity(for:))
    open func destinationEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
    }

    /// Records that `destinationInstance` was made from `sourceInstance` by `entityMapping`.
    ///
    /// Related Core Data documentation: [associate(sourceInstance:withDestinationInstance:for:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/associate(sourceinstance:withdestinationinstance:for:))
    open func associate(
        sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject,
        for entityMapping: NSEntityMapping
    ) {
        let name = entityMapping.name ?? ""
        _associations[name, default: MigrationAssociations()].add(source: sourceInstance, destination: destinationInstance)
    }

    /// The destination instances `mappingName` made from `sourceInstances` (all of them for `nil`).
    ///
    /// Related Core Data documentation: [destinationInstances(forEntityMappingName:sourceInstances:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/destinationinstances(forentitymappingname:sourceinstances:))
    open func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        guard let associations = _associations[mappingName] else { return [] }
        guard let sourceInstances else { return associations.destinations }
        return sourceInstances.flatMap { associations.destinations(of: $0) }
    }

    /// The source instances `mappingName` made `destinationInstances` from (all of them for `nil`).
    ///
    /// Related Core Data documentation: [sourceInstances(forEntityMappingName:destinationInstances:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/sourceinstances(forentitymappingname:destinationinstances:))
    open func sourceInstances(forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        guard let associations = _associations[mappingName] else { return [] }
        guard let destinationInstances else { return associations.sources }
        return destinationInstances.flatMap { associations.sources(of: $0) }
    }
}

/// Which source instances an entity mapping turned into which destination instances (both ways),
/// in creation order. Holds the objects, so identities stay valid for the migration.
package struct MigrationAssociations {
    private(set) var sources: [NSManagedObject] = []
    private(set) var destinations: [NSManagedObject] = []
    private var bySource: [ObjectIdentifier: [NSManagedObject]] = [:]
    private var byDestination: [ObjectIdentifier: [NSManagedObject]] = [:]

    mutating func add(source: NSManagedObject, destination: NSManagedObject) {
        if bySource[ObjectIdentifier(source)] == nil { sources.append(source) }
        if byDestination[ObjectIdentifier(destination)] == nil { destinations.append(destination) }
        bySource[ObjectIdentifier(source), default: []].append(destination)
        byDestination[ObjectIdentifier(destination), default: []].append(source)
    }

    func destinations(of source: NSManagedObject) -> [NSManagedObject] { bySource[ObjectIdentifier(source)] ?? [] }
    func sources(of destination: NSManagedObject) -> [NSManagedObject] {
        byDestination[ObjectIdentifier(destination)] ?? []
    }
}
