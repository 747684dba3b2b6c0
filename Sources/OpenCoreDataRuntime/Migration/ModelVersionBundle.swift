import Foundation

/// A versioned model bundle: an Xcode `.xcdatamodeld` (versions are `.xcdatamodel` directories) or
/// its compiled form, a `.momd` (versions are `.mom` files; its optimized `.omo` is not a version).
/// Migration looks for a store's source model among the versions of the bundle the app's model was
/// loaded from, and ``NSManagedObjectModelReference`` resolves version names in it.
package enum ModelVersionBundle {
    /// The file extension of a bundle's versions: `xcdatamodel` in a `.xcdatamodeld`, `mom` in a
    /// `.momd`; `nil` when `url` is not a versioned bundle.
    package static func versionExtension(ofBundle url: URL) -> String? {
        switch url.pathExtension.lowercased() {
        case "xcdatamodeld": "xcdatamodel"
        case "momd": "mom"
        default: nil
        }
    }

    /// The bundle `model` was loaded from with ``NSManagedObjectModel/init(contentsOf:)``: the
    /// `.xcdatamodeld` around its `.xcdatamodel/contents`, or the `.momd` around its `.mom` (also when
    /// the `.momd` itself was loaded, which loads its current `.mom`). `nil` for models built in code,
    /// single model files and store caches.
    package static func enclosingBundle(of model: NSManagedObjectModel) -> URL? {
        guard let file = model._xcodeModelFile?.url else { return nil }
        let parent = file.deletingLastPathComponent()
        if file.pathExtension.lowercased() == "mom" {
            return versionExtension(ofBundle: parent) == "mom" ? parent : nil
        }
        let grandparent = parent.deletingLastPathComponent()
        return versionExtension(ofBundle: grandparent) == "xcdatamodel" ? grandparent : nil
    }

    /// The version files of a bundle, in numeric name order (`Model`, `Model 2`, `Model 10`).
    package static func versionURLs(inBundle bundle: URL) -> [URL] {
        guard let ext = versionExtension(ofBundle: bundle) else { return [] }
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: bundle.path))?
            .filter { ($0 as NSString).pathExtension.lowercased() == ext }
            .sorted { $0.compare($1, options: [.numeric]) == .orderedAscending } ?? []
        return names.map { bundle.appendingPathComponent($0) }
    }

    /// Every version in a bundle that loads (versions that fail to load are skipped: a store
    /// written with one of them reports a missing source model).
    package static func versions(inBundle bundle: URL) -> [NSManagedObjectModel] {
        versionURLs(inBundle: bundle).compactMap { try? NSManagedObjectModel.load(contentsOf: $0) }
    }

    /// The version named `name` (without extension) in a bundle, if it is there.
    package static func versionURL(named name: String, inBundle bundle: URL) -> URL? {
        guard let ext = versionExtension(ofBundle: bundle) else { return nil }
        let url = bundle.appendingPathComponent(name).appendingPathExtension(ext)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }
}
