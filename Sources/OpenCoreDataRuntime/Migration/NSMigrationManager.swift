import Foundation

/// A store class that can migrate a file of its own type: copy it, and migrate a file in place
/// with a mapping model. The SQLite store adopts it; a store class that does not cannot migrate.
package protocol MigratingPersistentStore: NSPersistentStore {
    /// Copies the store at `source` (consistently, including uncommitted-to-main-file pages) to a new file at `destination`.
    static func copyStoreForMigration(from source: URL, to destination: URL) throws
    /// Migrates the store at `url` from `plan.sourceModel` to `plan.destinationModel`, all or nothing.
    static func migrateStoreInPlace(at url: URL, plan: LightweightMigrationPlan) throws
}

/// Migrates a store from one model version to another with a mapping model, into a new file.
///
/// ```swift
/// let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
/// let manager = NSMigrationManager(sourceModel: v1, destinationModel: v2)
/// try manager.migrateStore(from: oldURL, type: NSSQLiteStoreType, options: nil, mapping: mapping,
///                          to: newURL, type: NSSQLiteStoreType, options: nil)
/// ```
///
/// The source store is never changed. The destination file must not exist yet; if the migration
/// fails, the half-made destination is removed.
///
/// - Note: Linux: the migration runs in the store, in SQL (the SQLite store copies the file and
///   migrates the copy in place), not object by object. Source and destination must be of the same
///   store type, and the mapping may only copy values: copy, transform, add and remove entity
///   mappings whose property mappings are `$source.key` or `FUNCTION($source, "valueForKey:", "key")`
///   (what inferred mappings hold). Custom entity mappings, entity migration policies and other value
///   expressions throw `NSMigrationError` (134110) before anything is written.
///
/// Related Core Data documentation: [NSMigrationManager](https://developer.apple.com/documentation/coredata/nsmigrationmanager)
///
/// `@unchecked Sendable` invariant: one migration at a time; its state is only read after it returns.
open class NSMigrationManager: NSObject, @unchecked Sendable {
    /// The model the source store was written with.
    ///
    /// Related Core Data documentation: [sourceModel](https://developer.apple.com/documentation/coredata/nsmigrationmanager/sourcemodel)
    open private(set) var sourceModel: NSManagedObjectModel
    /// The model of the destination store.
    ///
    /// Related Core Data documentation: [destinationModel](https://developer.apple.com/documentation/coredata/nsmigrationmanager/destinationmodel)
    open private(set) var destinationModel: NSManagedObjectModel
    /// The mapping model of the last migration.
    ///
    /// Related Core Data documentation: [mappingModel](https://developer.apple.com/documentation/coredata/nsmigrationmanager/mappingmodel)
    open private(set) var mappingModel: NSMappingModel!
    /// Developer information.
    open var userInfo: [AnyHashable: Any]?
    /// How far the migration is, from 0 to 1 (1 after success; the migration runs in one step).
    ///
    /// Related Core Data documentation: [migrationProgress](https://developer.apple.com/documentation/coredata/nsmigrationmanager/migrationprogress)
    open private(set) var migrationProgress: Float = 0

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
    /// ``sourceModel``, `NSMigrationManagerDestinationStoreError` (134160) if `dURL` exists, and
    /// `NSMigrationError` (134110) when the stores cannot migrate (naming the step and entity).
    ///
    /// Related Core Data documentation: [migrateStore(from:type:options:mapping:to:type:options:)](https://developer.apple.com/documentation/coredata/nsmigrationmanager/migratestore(from:type:options:mapping:to:type:options:))
    open func migrateStore(
        from sourceURL: URL, type sStoreType: String, options sOptions: [AnyHashable: Any]? = nil,
        mapping: NSMappingModel?, to dURL: URL, type dStoreType: String, options dOptions: [AnyHashable: Any]? = nil
    ) throws {
        migrationProgress = 0
        guard let mapping else {
            throw OpenCoreDataError(.migrationMissingMappingModel, "migrateStore needs a mapping model", url: sourceURL)
        }
        let sourceClass = try NSPersistentStoreCoordinator.storeClass(for: sStoreType)
        let destinationClass = try NSPersistentStoreCoordinator.storeClass(for: dStoreType)
        guard sourceClass == destinationClass, let migrating = destinationClass as? any MigratingPersistentStore.Type else {
            throw OpenCoreDataError(
                .migration,
                "cannot migrate from a \(sStoreType) store to a \(dStoreType) store: only stores that migrate themselves, within one store type, are supported on Linux",
                url: sourceURL)
        }
        let metadata = try sourceClass.metadataForPersistentStore(with: sourceURL)
        guard sourceModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else {
            throw OpenCoreDataError(
                .migrationManagerSourceStore, "the source store was not written with the migration manager's source model",
                url: sourceURL)
        }
        guard !FileManager.default.fileExists(atPath: dURL.path) else {
            throw OpenCoreDataError(
                .migrationManagerDestinationStore, "a file already exists at the destination URL; it is left as it is",
                url: dURL)
        }
        try migrating.copyStoreForMigration(from: sourceURL, to: dURL)
        do {
            try migrating.migrateStoreInPlace(
                at: dURL,
                plan: LightweightMigrationPlan(sourceModel: sourceModel, destinationModel: destinationModel, mapping: mapping))
        } catch {
            try? destinationClass.destroyStore(at: dURL, options: dOptions)
            throw error
        }
        mappingModel = mapping
        migrationProgress = 1
    }
}
