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
    /// Each bundle's resource directory is searched (not recursively) for `.xcdatamodeld` bundles
    /// (their current version) and `.xcdatamodel` directories. The entities, configurations and
    /// fetch request templates of all of them go into the one model.
    ///
    /// - Note: Linux: Apple merges the compiled `.mom`/`.momd` files Xcode puts in the bundle; here the
    ///   Xcode model sources are read (compiled models are not supported). A model file that does not
    ///   load is reported on standard error and left out, where Apple raises.
    ///
    /// Related Core Data documentation: [mergedModel(from:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/mergedmodel(from:))
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for file in modelFiles(in: bundles, extensions: ["xcdatamodeld", "xcdatamodel"]) {
            do {
                models.append(try NSManagedObjectModel.load(contentsOf: file))
            } catch {
                reportMisuse("NSManagedObjectModel.mergedModel(from:): \(error)")
            }
        }
        return merging(models)
    }

    /// The model files with one of `extensions` directly in the resource directories of `bundles`
    /// (the program's model search directories when `nil`), each once, sorted by name per directory.
    package static func modelFiles(in bundles: [Bundle]?, extensions: Set<String>) -> [URL] {
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
            for file in children.sorted(by: { $0.lastPathComponent < $1.lastPathComponent })
            where extensions.contains(file.pathExtension) && seen.insert(file.standardizedFileURL.path).inserted {
                files.append(file)
            }
        }
        return files
    }

    /// One model holding the entities, configurations and templates of `models`, which must not be
    /// used afterwards: their entities move to the merged model.
    static func merging(_ models: [NSManagedObjectModel]) -> NSManagedObjectModel? {
        if models.count == 1 { return models[0] }
        let merged = NSManagedObjectModel()
        var entities: [NSEntityDescription] = []
        var names = Set<String>()
        for model in models {
            for entity in model.entities {
                guard names.insert(entity.name ?? "").inserted else {
                    reportMisuse("NSManagedObjectModel: cannot merge models with two entities named \(entity.name ?? "")")
                    return nil
                }
                entities.append(entity)
            }
        }
        merged.entities = entities
        var configurations: [String: [NSEntityDescription]] = [:]
        for model in models {
            for name in model.configurations {
                configurations[name, default: []] += model.entities(forConfigurationName: name) ?? []
            }
            for (name, template) in model.fetchRequestTemplatesByName {
                merged.setFetchRequestTemplate(template, forName: name)
            }
            merged.versionIdentifiers.formUnion(model.versionIdentifiers)
        }
        for (name, members) in configurations { merged.setEntities(members, forConfigurationName: name) }
        return merged
    }
}
