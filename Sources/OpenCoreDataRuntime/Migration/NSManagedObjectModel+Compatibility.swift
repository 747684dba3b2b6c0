import Foundation

extension NSManagedObjectModel {
    /// Whether a store with `metadata` can be opened with this model without migration: every
    /// entity of the configuration (all entities for `nil`) has the version hash the store recorded
    /// in `NSStoreModelVersionHashes`, and, for the whole model, the store records no other entity.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
    /// if !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { /* migrate */ }
    /// ```
    ///
    /// Metadata without version hashes (not a Core Data store, or an unversioned one) is not compatible.
    ///
    /// Related Core Data documentation: [isConfiguration(withName:compatibleWithStoreMetadata:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/isconfiguration(withname:compatiblewithstoremetadata:))
    public func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any])
        -> Bool
    {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any],
            let members = entities(forConfigurationName: configuration)
        else { return false }
        var names: Set<String> = []
        for entity in members {
            guard let name = entity.name else { continue }
            names.insert(name)
            guard let hash = stored[name] as? Data, hash == entity.versionHash else { return false }
        }
        if entities(forConfigurationName: nil)?.count == members.count {
            return Set(stored.keys) == names
        }
        return true
    }
}
