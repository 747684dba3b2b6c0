import Foundation

/// Option: during lightweight migration, leave the clean-up (dropping removed columns and tables,
/// dropping indexes) for ``NSPersistentStoreCoordinator/finishDeferredLightweightMigration()``. The
/// store's metadata holds this key with `true` while work is pending; the store is fully usable
/// meanwhile.
///
/// ```swift
/// let options: [AnyHashable: Any] = [
///     NSPersistentStoreDeferredLightweightMigrationOptionKey: true,
///     NSMigratePersistentStoresAutomaticallyOption: true,
///     NSInferMappingModelAutomaticallyOption: true,
/// ]
/// let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
/// if coordinator.metadata(for: store)[NSPersistentStoreDeferredLightweightMigrationOptionKey] as? Bool == true {
///     try coordinator.finishDeferredLightweightMigration()
/// }
/// ```
///
/// Related Core Data documentation: [NSPersistentStoreDeferredLightweightMigrationOptionKey](https://developer.apple.com/documentation/coredata/nspersistentstoredeferredlightweightmigrationoptionkey)
public let NSPersistentStoreDeferredLightweightMigrationOptionKey = "NSPersistentStoreDeferredLightweightMigrationOptionKey"

/// A store that can leave migration clean-up for later (the SQLite store).
package protocol DeferredLightweightMigrationStore: NSPersistentStore {
    /// Does the clean-up a deferred lightweight migration left, and clears the metadata flag.
    func finishDeferredLightweightMigration() throws
}

extension NSPersistentStoreCoordinator {
    /// Finishes the clean-up that lightweight migrations with
    /// ``NSPersistentStoreDeferredLightweightMigrationOptionKey`` left in this coordinator's stores.
    /// Stores with nothing pending, and stores that never defer, are left alone.
    ///
    /// Related Core Data documentation: [finishDeferredLightweightMigration()](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/finishdeferredlightweightmigration())
    public func finishDeferredLightweightMigration() throws {
        try performAndWait {
            for case let store as any DeferredLightweightMigrationStore in persistentStores {
                try store.finishDeferredLightweightMigration()
            }
        }
    }
}
