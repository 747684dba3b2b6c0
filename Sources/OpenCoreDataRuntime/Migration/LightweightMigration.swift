import Foundation

/// Option (OpenCoreData): earlier versions of the model that existing stores may have been written
/// with, for automatic lightweight migration. The value is an array (`[NSManagedObjectModel]` or an
/// `NSArray`) of models, or of file URLs of versioned bundles (`.xcdatamodeld`, `.momd`) whose
/// versions are loaded, or of single model files (`.xcdatamodel`, `.mom`); a single model or URL
/// also works.
///
/// Apple finds the source model of a migration by searching the app's bundles for compiled models
/// whose entity version hashes match the store's. On Linux there is no app bundle to search, so the
/// source model is looked up among:
/// 1. the versions of the bundle the coordinator's model was loaded from with
///    ``NSManagedObjectModel/init(contentsOf:)`` or `NSPersistentContainer(name:)` (found without
///    any option): the `.xcdatamodel` versions of a `.xcdatamodeld`, or the `.mom` versions of a
///    compiled `.momd`;
/// 2. the models and bundles given with this option (for models built in code);
/// 3. last, the model Apple's Core Data cached in a SQLite store (`Z_MODELCACHE`), when its entity
///    version hashes equal the store's (OpenCoreData's behaviour: Apple does not document whether
///    it migrates from the cache).
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: [
///     NSMigratePersistentStoresAutomaticallyOption: true,
///     NSInferMappingModelAutomaticallyOption: true,
///     OpenCoreDataMigrationSourceModelsOption: [modelV1, modelV2],
/// ])
/// // With a description: description.setOption(NSArray(array: [modelV1, modelV2]), forKey: OpenCoreDataMigrationSourceModelsOption)
/// ```
///
/// - Note: Linux: not an Apple option; the name cannot collide with one.
///
/// Related Core Data documentation: [Migrating your data model automatically](https://developer.apple.com/documentation/coredata/migrating-your-data-model-automatically)
public let OpenCoreDataMigrationSourceModelsOption = "OpenCoreDataMigrationSourceModelsOption"

/// What a store needs to migrate in place: the model it was written with and the inferred mapping.
package struct LightweightMigrationPlan {
    package var sourceModel: NSManagedObjectModel
    package var destinationModel: NSManagedObjectModel
    package var mapping: NSMappingModel
}

/// Decides whether and how a store whose metadata does not match the model migrates. Stores call it
/// while opening; the coordinator knows nothing of migration.
package enum LightweightMigration {
    /// `nil` when the store matches `model`; a plan when it can migrate by lightweight migration.
    ///
    /// `cachedModel` reads the model the store caches (SQLite's `Z_MODELCACHE`), used as the source
    /// when no known version matches and its hashes are the store's.
    ///
    /// Throws 134100 when migration is off, 134130 when no known model version (nor the store's
    /// cached model) matches the store (unversioned, unknown or newer store), 134140 when inference is off (no mapping model files on
    /// Linux), and 134190 when the change is not lightweight-eligible. Nothing is written.
    ///
    /// With ``NSIgnorePersistentStoreVersioningOption`` the hashes are not compared at all (`nil`).
    package static func plan(
        storeMetadata metadata: [String: Any], model: NSManagedObjectModel, options: [AnyHashable: Any]?, url: URL?,
        cachedModel: (() throws -> NSManagedObjectModel?)? = nil
    ) throws -> LightweightMigrationPlan? {
        if bool(options?[NSIgnorePersistentStoreVersioningOption]) { return nil }
        if model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return nil }
        guard bool(options?[NSMigratePersistentStoresAutomaticallyOption]) else {
            throw OpenCoreDataError(
                .persistentStoreIncompatibleVersionHash,
                "the model used to open the store is incompatible with the one used to create the store", url: url)
        }
        guard let storedHashes = metadata[NSStoreModelVersionHashesKey] as? [String: Any], !storedHashes.isEmpty else {
            throw OpenCoreDataError(
                .migrationMissingSourceModel,
                "cannot migrate: the store's metadata has no model version hashes (an unversioned store), so its model cannot be identified",
                url: url)
        }
        let candidates = sourceModelCandidates(for: model, options: options)
        guard
            let source = candidates.first(where: { $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) })
                ?? cachedSourceModel(cachedModel, metadata: metadata)
        else {
            throw OpenCoreDataError(
                .migrationMissingSourceModel, missingSourceModelReason(metadata, model: model, searched: candidates.count),
                url: url)
        }
        guard bool(options?[NSInferMappingModelAutomaticallyOption]) else {
            throw OpenCoreDataError(
                .migrationMissingMappingModel,
                "cannot migrate: NSInferMappingModelAutomaticallyOption is off and no mapping model file maps the store's model to this one",
                url: url)
        }
        do {
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: model)
            return LightweightMigrationPlan(sourceModel: source, destinationModel: model, mapping: mapping)
        } catch var error as OpenCoreDataError {
            error.url = url
            throw error
        }
    }

    /// The models a store may have been written with: the other versions of the versioned bundle
    /// (`.xcdatamodeld` or `.momd`) the model was loaded from, then those given with
    /// ``OpenCoreDataMigrationSourceModelsOption``.
    package static func sourceModelCandidates(for model: NSManagedObjectModel, options: [AnyHashable: Any]?)
        -> [NSManagedObjectModel]
    {
        var result: [NSManagedObjectModel] = []
        if let bundle = ModelVersionBundle.enclosingBundle(of: model) { result += ModelVersionBundle.versions(inBundle: bundle) }
        func add(_ value: Any) {
            switch value {
            case let candidate as NSManagedObjectModel: result.append(candidate)
            case let url as URL:
                if ModelVersionBundle.versionExtension(ofBundle: url) != nil {
                    result += ModelVersionBundle.versions(inBundle: url)
                } else if let loaded = try? NSManagedObjectModel.load(contentsOf: url) {
                    result.append(loaded)
                }
            case let list as [Any]: list.forEach(add)
            case let list as NSArray: list.forEach { add($0) }
            default: break
            }
        }
        if let option = options?[OpenCoreDataMigrationSourceModelsOption] { add(option) }
        return result.filter { $0 !== model }
    }

    /// The model cached in the store (`Z_MODELCACHE`), when its entity version hashes are the
    /// store's: the source model of last resort. OpenCoreData's behaviour; Apple documents the cache
    /// only as an implementation detail.
    private static func cachedSourceModel(
        _ cachedModel: (() throws -> NSManagedObjectModel?)?, metadata: [String: Any]
    ) -> NSManagedObjectModel? {
        guard let cached = try? cachedModel?(),
            cached.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return nil }
        return cached
    }

    /// Says why no source model was found: a store from a newer model version, or an unknown one.
    private static func missingSourceModelReason(_ metadata: [String: Any], model: NSManagedObjectModel, searched: Int)
        -> String
    {
        let stored = (metadata[NSStoreModelVersionIdentifiersKey] as? [Any])?.map { "\($0)" }.filter { !$0.isEmpty } ?? []
        let current = model.versionIdentifiers.map { "\($0.base)" }
        if let storedVersion = stored.compactMap(Double.init).max(),
            let currentVersion = current.compactMap(Double.init).max(), storedVersion > currentVersion
        {
            return "cannot migrate: the store was written by a newer version of the model (version identifier \(stored.joined(separator: ", ")); this model is \(current.joined(separator: ", "))); the store is left as it is"
        }
        if let framework = metadata[NSPersistenceFrameworkVersionKey].flatMap({ ValueConversion.int64($0) }),
            framework > Int64(sqliteStoreFrameworkVersion)
        {
            return "cannot migrate: no known model version matches the store, which was written by a newer Core Data (framework version \(framework)); the store is left as it is"
        }
        return "cannot migrate: none of the \(searched) known model versions matches the store's entity version hashes and the store holds no cached model that does (add the model it was written with to the .xcdatamodeld or .momd bundle or pass it with OpenCoreDataMigrationSourceModelsOption); the store is left as it is"
    }

    /// An option's truth value (`Bool`, `NSNumber`, or a number).
    package static func bool(_ value: Any?) -> Bool {
        switch value {
        case let flag as Bool: flag
        case let number as NSNumber: number.boolValue
        case let other?: ValueConversion.int64(other).map { $0 != 0 } ?? false
        case nil: false
        }
    }
}
