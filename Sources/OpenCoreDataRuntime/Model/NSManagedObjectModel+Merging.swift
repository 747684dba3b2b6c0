import Foundation

extension NSManagedObjectModel {
    /// A model made of every model file in `bundles` (the main bundle and the SwiftPM resource
    /// bundles beside the executable when `nil`); `nil` when two models define an entity of the same
    /// name, which Apple's Core Data refuses too.
    ///
    /// ```swift
    /// let model = NSManagedObjectModel.mergedModel(from: [Bundle.module])!
    /// ```
    ///
    /// Each bundle's resource directory is searched (not recursively) for compiled `.momd` bundles
    /// (their current version) and `.mom` files, and for Xcode's `.xcdatamodeld` bundles (their
    /// current version) and `.xcdatamodel` directories. The entities, configurations and fetch
    /// request templates of all of them go into the one model.
    ///
    /// - Note: Linux: Apple merges the compiled `.momd`/`.mom` files Xcode puts in the bundle; SwiftPM
    ///   copies the Xcode model sources instead, so both are read, and a compiled model with the same
    ///   name as a model source beside it is left out (it would define the same entities). A model
    ///   file that does not load is reported on standard error and left out, where Apple raises.
    ///
    /// Related Core Data documentation: [mergedModel(from:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/mergedmodel(from:))
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for file in modelFiles(in: bundles) {
            do {
                models.append(try NSManagedObjectModel.load(contentsOf: file))
            } catch {
                reportMisuse("NSManagedObjectModel.mergedModel(from:): \(error)")
            }
        }
        if models.count == 1 { return models[0] }  // keeps what the file said (`_xcodeModelFile`)
        return NSManagedObjectModel(byMerging: models)
    }

    /// The model, merged from the model files in `bundles`, that a store with `metadata` was
    /// written with: every version of each `.xcdatamodeld` bundle is a candidate, and the models
    /// whose entities all have the version hashes the store recorded (`NSStoreModelVersionHashes`)
    /// are merged. `nil` when no such models cover exactly the store's entities.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
    /// let sourceModel = NSManagedObjectModel.mergedModel(from: [Bundle.module], forStoreMetadata: metadata)
    /// ```
    ///
    /// - Note: Linux: model sources are read as well as compiled models, as for ``mergedModel(from:)``.
    ///
    /// Related Core Data documentation: [mergedModel(from:forStoreMetadata:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/mergedmodel(from:forstoremetadata:))
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any]) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for file in modelFiles(in: bundles) {
            if ModelVersionBundle.versionExtension(ofBundle: file) != nil {  // .xcdatamodeld, .momd: every version
                models += ModelVersionBundle.versions(inBundle: file)
            } else if let model = try? NSManagedObjectModel.load(contentsOf: file) {
                models.append(model)
            }
        }
        return NSManagedObjectModel(byMerging: models, forStoreMetadata: metadata)
    }

    /// Creates a single model from the entities, configurations and fetch request templates of
    /// `models`; `nil` when two of them define an entity of the same name.
    ///
    /// ```swift
    /// let model = NSManagedObjectModel(byMerging: [appModel, frameworkModel])
    /// ```
    ///
    /// - Note: Linux: the merged model shares the entity descriptions of `models` (Apple copies
    ///   them), so use the merged model, not the models it was made from, with a coordinator. A name
    ///   clash is also reported on standard error.
    ///
    /// Related Core Data documentation: [init(byMerging:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/init(bymerging:))
    public convenience init?(byMerging models: [NSManagedObjectModel]?) {
        self.init()
        let models = models ?? []
        var names = Set<String>()
        for model in models {
            for entity in model.entities where !names.insert(entity.name ?? "").inserted {
                reportMisuse("NSManagedObjectModel: cannot merge models with two entities named \(entity.name ?? "")")
                return nil
            }
        }
        entities = models.flatMap(\.entities)
        var configurations: [String: [NSEntityDescription]] = [:]
        for model in models {
            for name in model.configurations {
                configurations[name, default: []] += model.entities(forConfigurationName: name) ?? []
            }
            for (name, template) in model.fetchRequestTemplatesByName {
                setFetchRequestTemplate(template, forName: name)
            }
            versionIdentifiers.formUnion(model.versionIdentifiers)
        }
        for (name, members) in configurations { setEntities(members, forConfigurationName: name) }
    }

    /// Creates the model, merged from some of `models`, that a store with `metadata` was written
    /// with: the models whose entities all have the version hashes the store recorded
    /// (`NSStoreModelVersionHashes`), in order, skipping one whose entities an earlier one already
    /// brought. `nil` if the result does not have exactly the store's entities with its hashes.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
    /// let sourceModel = NSManagedObjectModel(byMerging: [v1, v2, v3], forStoreMetadata: metadata)
    /// ```
    ///
    /// - Note: Linux: Apple does not document how it picks among the models; this is the rule above.
    ///
    /// Related Core Data documentation: [init(byMerging:forStoreMetadata:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/init(bymerging:forstoremetadata:))
    public convenience init?(byMerging models: [NSManagedObjectModel], forStoreMetadata metadata: [String: Any]) {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] else { return nil }
        var selected: [NSManagedObjectModel] = []
        var names = Set<String>()
        for model in models where !model.entities.isEmpty {
            let hashes = model.entityVersionHashesByName
            guard hashes.allSatisfy({ stored[$0.key] as? Data == $0.value }), names.isDisjoint(with: hashes.keys) else { continue }
            names.formUnion(hashes.keys)
            selected.append(model)
        }
        guard names == Set(stored.keys) else { return nil }
        self.init(byMerging: selected)
    }

    /// The model files (`.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`) in each bundle's resource
    /// directory (not recursively), or, for `nil`, in the main bundle and the SwiftPM resource
    /// bundles beside the executable; a compiled model named like a model source in the same
    /// directory is left out.
    private static func modelFiles(in bundles: [Bundle]?) -> [URL] {
        let directories: [URL]
        if let bundles {
            directories = bundles.flatMap { bundle in [bundle.resourceURL, bundle.bundleURL].compactMap { $0 } }
        } else {
            directories = NSPersistentContainer.modelSearchDirectories()
        }
        var seen = Set<String>()
        var files: [URL] = []
        for directory in directories where seen.insert(directory.standardizedFileURL.path).inserted {
            let children = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            let sources: Set<String> = ["xcdatamodeld", "xcdatamodel"]
            let sourceNames = Set(children.filter { sources.contains($0.pathExtension) }.map { $0.deletingPathExtension().lastPathComponent })
            for file in children.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
                let isSource = sources.contains(file.pathExtension)
                let isCompiled = file.pathExtension == "momd" || file.pathExtension == "mom"
                guard isSource || (isCompiled && !sourceNames.contains(file.deletingPathExtension().lastPathComponent)) else { continue }
                if seen.insert(file.standardizedFileURL.path).inserted { files.append(file) }
            }
        }
        return files
    }
}
