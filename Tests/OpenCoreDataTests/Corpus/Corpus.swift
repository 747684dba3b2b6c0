import Foundation
import OpenCoreData

/// The shared test corpus (`shared/corpus`: `repos/` and `stores-reports/`, see its MANIFEST.md).
///
/// Found at `$OCD_CORPUS`, else `../shared/corpus` beside the package, else `/work/shared/corpus`.
/// CI runs from a clone elsewhere, so the absolute fallback matters; tests that need the corpus
/// are disabled (skipped, not failed) when none of these exists.
enum Corpus {
    static let root: URL? = {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["OCD_CORPUS"], !path.isEmpty {
            candidates.append(URL(fileURLWithPath: path))
        }
        let package = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(package.deletingLastPathComponent().appendingPathComponent("shared/corpus"))
        candidates.append(URL(fileURLWithPath: "/work/shared/corpus"))
        return candidates.first { candidate in
            FileManager.default.fileExists(atPath: candidate.appendingPathComponent("repos").path)
                && FileManager.default.fileExists(atPath: candidate.appendingPathComponent("stores-reports").path)
        }
    }()

    static var isPresent: Bool { root != nil }

    /// A file under `repos/`.
    static func repo(_ path: String) -> URL { root!.appendingPathComponent("repos").appendingPathComponent(path) }

    /// Copies a store and its `-wal`/`-shm` companions into `directory` (never open one in place:
    /// SQLite would checkpoint the WAL into the corpus file).
    static func copyStore(_ path: String, to directory: URL) throws -> URL {
        let source = repo(path)
        let copy = directory.appendingPathComponent(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: copy.path + suffix)
        }
        return copy
    }

    /// Registers a pass-through transformer under each transformer name `model`'s attributes use that
    /// has none: transformable attributes name the app's transformers, and reading needs one. Returns
    /// the names registered, for ``unregister(_:)``.
    static func registerPassThroughTransformers(for model: NSManagedObjectModel) -> [NSValueTransformerName] {
        var registered: [NSValueTransformerName] = []
        for entity in model.entities {
            for attribute in entity.attributesByName.values {
                guard let name = attribute.valueTransformerName.map({ NSValueTransformerName(rawValue: $0) }),
                      !ValueTransformer.valueTransformerNames().contains(name)
                else { continue }
                ValueTransformer.setValueTransformer(ValueTransformer(), forName: name)
                registered.append(name)
            }
        }
        return registered
    }

    static func unregister(_ names: [NSValueTransformerName]) {
        for name in names { ValueTransformer.setValueTransformer(nil, forName: name) }
    }

    /// The corpus's report for a store (`stores-reports/<path with / as __>.txt`).
    static func report(_ storePath: String) throws -> StoreReport {
        let name = storePath.replacingOccurrences(of: "/", with: "__").replacingOccurrences(of: " ", with: "_") + ".txt"
        let url = root!.appendingPathComponent("stores-reports").appendingPathComponent(name)
        return StoreReport(try String(contentsOf: url, encoding: .utf8))
    }
}

/// What a corpus store report says: rows per table, `Z_PRIMARYKEY` and the stored version hashes.
struct StoreReport {
    var rowCounts: [String: Int] = [:]
    /// `Z_ENT` → (name, `Z_SUPER`, `Z_MAX`).
    var primaryKeys: [Int: (name: String, superEntity: Int, max: Int)] = [:]
    var versionHashes: [String: String] = [:]
    var frameworkVersion: Int?

    init(_ text: String) {
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") { section = line; continue }
            if section == "## row counts" {
                let fields = line.split(separator: "\t")
                if fields.count == 2, let count = Int(fields[1]) { rowCounts[String(fields[0])] = count }
            } else if section.hasPrefix("## Z_PRIMARYKEY") {
                let fields = line.split(separator: "\t").map(String.init)
                if fields.count == 4, let ent = Int(fields[0]) {
                    primaryKeys[ent] = (fields[1], Int(fields[2]) ?? 0, Int(fields[3]) ?? 0)
                }
            } else if section == "## Z_METADATA" {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("NSPersistenceFrameworkVersion:") {
                    frameworkVersion = Int(trimmed.split(separator: " ").last ?? "")
                } else if let range = trimmed.range(of: ": <data "), line.hasPrefix("    ") {
                    versionHashes[String(trimmed[..<range.lowerBound])] =
                        String(trimmed[range.upperBound...].dropLast())
                }
            }
        }
    }

    /// The table that holds an entity's rows: its root entity's, `Z` + the name in capitals.
    func table(ofEntity ent: Int) -> String? {
        var current = ent
        var steps = 0
        while let entry = primaryKeys[current], entry.superEntity != 0, steps < 64 {
            current = entry.superEntity
            steps += 1
        }
        return primaryKeys[current].map { "Z" + $0.name.uppercased() }
    }
}
