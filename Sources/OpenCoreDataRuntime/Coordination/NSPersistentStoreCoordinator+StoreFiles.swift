import Foundation

/// Option: open the store without comparing the version hashes of the coordinator's model with
/// those in the store's metadata. The value is a Boolean (`true` or an `NSNumber`).
///
/// A store written with a model whose hashes differ (a changed `versionHashModifier`, say) is
/// added instead of failing with `NSPersistentStoreIncompatibleVersionHashError` (134100), and no
/// migration runs, even with ``NSMigratePersistentStoresAutomaticallyOption``. The file is not
/// changed when the store is added; as Apple documents, the coordinator "will, however, continue to
/// update the version hash information in the metadata": the model's hashes are written with the
/// store's next save. The store's schema must still fit the model: that is the caller's promise.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
///                                    options: [NSIgnorePersistentStoreVersioningOption: true])
/// ```
///
/// Related Core Data documentation: [NSIgnorePersistentStoreVersioningOption](https://developer.apple.com/documentation/coredata/nsignorepersistentstoreversioningoption)
public let NSIgnorePersistentStoreVersioningOption = "NSIgnorePersistentStoreVersioningOption"

// Moving and replacing store files: both spellings of each call, one implementation each.
extension NSPersistentStoreCoordinator {
    /// Moves `store` to `URL` as a store of `storeType` ("Save As"): its objects are copied into a
    /// new store there, which replaces `store` in the coordinator. `store` is removed and is no
    /// longer a useful reference; its file stays as it was.
    ///
    /// The copy is a migration from the coordinator's model to itself (``NSMigrationManager`` with the
    /// inferred mapping): between two SQLite stores it is a consistent copy of the file, and between
    /// store types it goes object by object. The destination is written beside `URL` and moved there
    /// at the end, so a failure leaves no file at `URL` and `store` still added.
    ///
    /// Throws `NSPersistentStoreOperationError` (134070) if `store` does not belong to the
    /// coordinator, if a file already exists at `URL`, or if either side is an in-memory store.
    ///
    /// - Note: Linux: a store can move from and to a file-backed store only (not an in-memory one),
    ///   and onto a URL where no file is (Apple does not document what it does with one).
    ///
    /// Related Core Data documentation: [migratePersistentStore(_:to:options:withType:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/migratepersistentstore(_:to:options:withtype:))
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to URL: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws -> NSPersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store does not belong to this coordinator", url: store.url)
        }
        guard store.type != NSInMemoryStoreType, storeType != NSInMemoryStoreType, let sourceURL = store.url else {
            throw OpenCoreDataError(
                .persistentStoreOperation,
                "migratePersistentStore moves between file-backed stores only, not in-memory ones",
                url: store.url)
        }
        guard !FileManager.default.fileExists(atPath: URL.path) else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "a file already exists at the destination URL; it is left as it is", url: URL
            )
        }
        let configuration = store.configurationName == "PF_DEFAULT_CONFIGURATION_NAME" ? nil : store.configurationName
        let mapping = try NSMappingModel.inferredMappingModel(
            forSourceModel: managedObjectModel, destinationModel: managedObjectModel)
        let manager = NSMigrationManager(sourceModel: managedObjectModel, destinationModel: managedObjectModel)
        try manager.migrateStore(
            from: sourceURL, sourceType: store.type, options: store.options, with: mapping, toDestinationURL: URL,
            destinationType: storeType, destinationOptions: options)
        manager.reset()
        do {
            let moved = try addPersistentStore(
                ofType: storeType, configurationName: configuration, at: URL, options: options)
            try remove(store)
            return moved
        } catch {
            if let added = persistentStore(for: URL) { try? remove(added) }
            try? Self.storeClass(for: storeType).destroyStore(at: URL, options: options)
            throw error
        }
    }

    /// Moves `store` to `storeURL` as a store of `storeType`: the same as
    /// ``migratePersistentStore(_:to:options:withType:)``.
    ///
    /// Related Core Data documentation: [migratePersistentStore(_:to:options:type:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/migratepersistentstore(_:to:options:type:))
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to storeURL: URL, options: [AnyHashable: Any]? = nil,
        type storeType: NSPersistentStore.StoreType
    ) throws -> NSPersistentStore {
        try migratePersistentStore(store, to: storeURL, options: options, withType: storeType.rawValue)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`, both of
    /// `storeType`; with no store at `destinationURL`, the copy is made there. The source is not
    /// changed.
    ///
    /// The copy is consistent (committed transactions still in a `-wal` file included) and is made
    /// beside the destination, then moved over it in one rename, so the destination is either the old
    /// store or the new one.
    ///
    /// Throws `NSPersistentStoreOperationError` (134070) if the store at `destinationURL` is added to
    /// this coordinator (remove it first) or if the store type has no files (in-memory), and the
    /// source's open error if `sourceURL` is not a store of `storeType`; the destination is then
    /// left as it was.
    ///
    /// - Note: Linux: replacing a store this coordinator holds is refused; Apple does not document
    ///   what it does then.
    ///
    /// Related Core Data documentation: [replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/replacepersistentstore(at:destinationoptions:withpersistentstorefrom:sourceoptions:oftype:))
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        guard let copying = try Self.storeClass(for: storeType) as? any MigratingPersistentStore.Type else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "a store of type \(storeType) has no file to copy", url: sourceURL)
        }
        guard persistentStore(for: destinationURL) == nil else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store to replace is added to this coordinator; remove it first",
                url: destinationURL)
        }
        // Read first: a source that is not a store of this type leaves the destination untouched.
        _ = try copying.metadataForPersistentStore(with: sourceURL)
        if sourceURL.standardizedFileURL == destinationURL.standardizedFileURL { return }
        let work = destinationURL.deletingLastPathComponent().appendingPathComponent(
            ".\(destinationURL.lastPathComponent).replacing-\(UUID().uuidString)")
        do {
            try copying.copyStoreForMigration(from: sourceURL, to: work)
        } catch {
            try? copying.destroyStore(at: work, options: nil)
            throw error
        }
        try copying.moveStoreFile(at: work, over: destinationURL, code: .persistentStoreOperation)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`: the same as
    /// ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    ///
    /// Related Core Data documentation: [replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/replacepersistentstore(at:destinationoptions:withpersistentstorefrom:sourceoptions:type:))
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, type sourceType: NSPersistentStore.StoreType
    ) throws {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
            sourceOptions: sourceOptions, ofType: sourceType.rawValue)
    }
}
