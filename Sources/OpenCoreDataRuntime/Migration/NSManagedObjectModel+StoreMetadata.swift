import Foundation

extension NSManagedObjectModel {
    /// The model a store with `metadata` was written with, merged from the model versions in
    /// `bundles` (the main bundle and the SwiftPM resource bundles beside the executable when
    /// `nil`); `nil` when no combination of versions matches the store's entity version hashes.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
    /// if let source = NSManagedObjectModel.mergedModel(from: [Bundle.module], forStoreMetadata: metadata) {
    ///     let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: model)
    /// }
    /// ```
    ///
    /// Each bundle's resource directory is searched (not recursively) for versioned bundles
    /// (`.momd`, `.xcdatamodeld`: every version in them) and single model files (`.mom`,
    /// `.xcdatamodel`). From each, the first version whose every entity has the version hash the
    /// store recorded is taken; the versions taken are merged as ``mergedModel(from:)`` merges, and
    /// the result is returned if it is compatible with the store
    /// (``isConfiguration(withName:compatibleWithStoreMetadata:)``).
    ///
    /// - Note: Linux: Apple searches only compiled models; the Xcode model sources are searched as
    ///   well. A model shipped both compiled and as source counts once (the first found, by name).
    ///
    /// Related Core Data documentation: [mergedModel(from:forStoreMetadata:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/mergedmodel(from:forstoremetadata:))
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any])
        -> NSManagedObjectModel?
    {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any], !stored.isEmpty else { return nil }
        var taken: [NSManagedObjectModel] = []
        var names = Set<String>()
        for file in modelFiles(in: bundles, extensions: ["momd", "mom", "xcdatamodeld", "xcdatamodel"]) {
            let versions =
                ModelVersionBundle.versionExtension(ofBundle: file) != nil
                ? ModelVersionBundle.versions(inBundle: file)
                : [try? NSManagedObjectModel.load(contentsOf: file)].compactMap { $0 }
            guard let match = versions.first(where: { $0.entitiesHaveVersionHashes(stored) }) else { continue }
            let entityNames = Set(match.entitiesByName.keys)
            // The same model compiled (.momd) and as source (.xcdatamodeld) is taken once.
            guard names.isDisjoint(with: entityNames) else { continue }
            names.formUnion(entityNames)
            taken.append(match)
        }
        guard !taken.isEmpty, let merged = merging(taken),
            merged.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return nil }
        return merged
    }

    /// Whether the model has entities and each has the version hash in `stored` (entity name → hash).
    private func entitiesHaveVersionHashes(_ stored: [String: Any]) -> Bool {
        !entities.isEmpty
            && entities.allSatisfy { entity in
                guard let name = entity.name, let hash = stored[name] as? Data else { return false }
                return hash == entity.versionHash
            }
    }
}
