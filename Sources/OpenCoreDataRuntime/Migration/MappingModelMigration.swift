import Foundation

/// Automatic migration with a mapping model file: before a store opens with
/// `NSMigratePersistentStoresAutomaticallyOption`, a mapping model that maps the store's model
/// version to the coordinator's model is looked for, as Apple does before it infers one; if there
/// is one, ``NSMigrationManager`` migrates the store into a new file that then replaces it.
/// Without one, the store's own lightweight migration runs as before.
///
/// Apple searches the app's bundles. Here the search covers the main bundle's resources and,
/// for a model read from an `.xcdatamodeld` or `.momd`, the folder that holds it (two levels down,
/// e.g. `Model/MappingModels/V2ToV3.xcmappingmodel` beside `Model/Model.xcdatamodeld`, or
/// `V2toV3.cdm` beside `Model.momd`).
package enum MappingModelMigration {
    package static func migrateStoreIfNeeded(
        at url: URL, storeClass: NSPersistentStore.Type, type: String, to model: NSManagedObjectModel,
        options: [AnyHashable: Any]?
    ) throws {
        guard LightweightMigration.bool(options?[NSMigratePersistentStoresAutomaticallyOption]),
            !LightweightMigration.bool(options?[NSReadOnlyPersistentStoreOption]),
            !LightweightMigration.bool(options?[NSIgnorePersistentStoreVersioningOption]),
            let migrating = storeClass as? any MigratingPersistentStore.Type,
            FileManager.default.fileExists(atPath: url.path),
            let metadata = try? storeClass.metadataForPersistentStore(with: url),
            !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata),
            let source = LightweightMigration.sourceModelCandidates(for: model, options: options).first(where: {
                $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            }),
            let mapping = find(source, model)
        else { return }
        let work = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).mapped-\(UUID().uuidString)")
        let manager = NSMigrationManager(sourceModel: source, destinationModel: model)
        do {
            try manager.migrateStore(
                from: url, type: type, options: nil, mapping: mapping, to: work, type: type, options: nil)
        } catch var error as OpenCoreDataError {
            error.message += " (mapping model \(mapping._fileURL?.lastPathComponent ?? "?"))"
            throw error
        }
        manager.reset()
        // The migrated file replaces the store in one rename.
        try migrating.moveStoreFile(at: work, over: url, code: .migration)
    }

    /// A mapping model from `source` to `model`: in the folder of the model's `.xcdatamodeld` (two
    /// levels down), then at the top of the main bundle's resources.
    private static func find(_ source: NSManagedObjectModel, _ model: NSManagedObjectModel) -> NSMappingModel? {
        if let contents = model._xcodeModelFile?.url {
            // contents → Version.xcdatamodel → Model.xcdatamodeld → the folder that holds it
            // (Version.mom → Model.momd → the folder, for a compiled model).
            var folder = contents.deletingLastPathComponent()
            while folder.pathExtension.lowercased().hasPrefix("xcdatamodel") || folder.pathExtension.lowercased() == "momd" {
                folder = folder.deletingLastPathComponent()
            }
            if let found = NSMappingModel._find(in: [folder], sourceModel: source, destinationModel: model) {
                return found
            }
        }
        let bundle = [Bundle.main.resourceURL, Bundle.main.bundleURL].compactMap { $0 }
        return NSMappingModel._find(in: bundle, sourceModel: source, destinationModel: model, depth: 0)
    }
}
