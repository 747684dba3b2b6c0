import ArgumentParser
import Foundation
import OpenCoreDataRuntime

/// `ocd store <path> [--model <path>]`: metadata, entities with row counts, a sample of objects, and
/// whether the store fits a model. Without `--model`, the model Core Data cached in the store
/// (`Z_MODELCACHE`) is printed and used instead, when there is one. Works on a scratch copy, so the
/// store (and its `-wal`) is never touched: opening a WAL store in place would checkpoint it.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Inspect a Core Data SQLite store: metadata, entities with row counts, sample objects, model compatibility.")

    @Argument(help: "A Core Data SQLite store (its -wal and -shm companions are read too).")
    var path: String

    @Option(name: .long, help: "A model (.xcdatamodeld, .xcdatamodel, contents, .momd or .mom) to check the store against and read objects with; without it, the model cached in the store (Z_MODELCACHE) is used.")
    var model: String?

    @Option(name: .long, help: "How many objects of each entity to print.")
    var sample: Int = 3

    func run() throws {
        let source = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isDirectory) else {
            throw ToolError("\(path): no such file or directory")
        }
        guard !isDirectory.boolValue else { throw ToolError("\(path): is a directory, not a store file") }
        let loadedModel = try model.map(ModelFile.load)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let copy = scratch.appendingPathComponent(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: copy.path + suffix)
        }
        let metadata: [String: Any]
        do {
            metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: copy)
        } catch {
            throw ToolError(error, path: path).replacing(copy.path, with: path)
        }
        var out = "store: \(path)\n"
        let raw = try RawSQLite(copy)
        out += "journal mode: \(try raw.scalar("PRAGMA journal_mode") ?? "?")\n"
        out += StorePrinter.metadata(metadata)
        out += try StorePrinter.entities(raw)
        out += try StorePrinter.tables(raw)
        var readingModel = loadedModel
        var modelLabel = model
        if loadedModel == nil {
            do {
                if let cached = try NSManagedObjectModel.cachedModel(ofStoreAt: copy) {
                    out += StorePrinter.cachedModel(cached)
                    readingModel = cached
                    modelLabel = "Z_MODELCACHE (the model cached in the store)"
                } else {
                    out += "\nmodel cache (Z_MODELCACHE): none in this store\n"
                }
            } catch {
                out += "\nmodel cache (Z_MODELCACHE): unreadable: \(ToolError(error, path: path).replacing(copy.path, with: path))\n"
            }
        }
        if let loadedModel = readingModel, let modelPath = modelLabel {
            let compatible = StorePrinter.compatibility(metadata, loadedModel, modelPath: modelPath, into: &out)
            if compatible {
                out += StorePrinter.registerPassThroughTransformers(for: loadedModel)
                out += try StorePrinter.sample(copy, model: loadedModel, limit: sample)
            } else {
                out += "\nsample: not read (the model does not fit the store)\n"
            }
        } else {
            out += "\nsample: give --model to read objects\n"
        }
        print(out, terminator: "")
    }
}

extension ToolError {
    func replacing(_ old: String, with new: String) -> ToolError {
        ToolError(description.replacingOccurrences(of: old, with: new))
    }
}

/// The sections `ocd store` prints.
enum StorePrinter {
    /// The entities of the model cached in the store: name, parent, version hash, properties.
    static func cachedModel(_ model: NSManagedObjectModel) -> String {
        var out = "\nmodel cache (Z_MODELCACHE): \(model.entities.count) entities\n"
        let hashes = model.entityVersionHashesByName
        for entity in model.sortedEntities {
            let name = entity.name ?? "?"
            var flags: [String] = []
            if entity.isAbstract { flags.append("abstract") }
            if let parent = entity.superentity?.name { flags.append("parent \(parent)") }
            out += "  entity \(name)\(flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")"
            out += " versionHash \(hashes[name]?.base64EncodedString() ?? "-")\n"
            let own = entity.ownProperties.sorted { $0.name < $1.name }
            let attributes = own.compactMap { $0 as? NSAttributeDescription }.map { "\($0.name): \($0.attributeType.xcodeName)" }
            let relationships = own.compactMap { $0 as? NSRelationshipDescription }
                .map { "\($0.name) -> \($0.destinationEntity?.name ?? "?")\($0.isToMany ? " (to-many)" : "")" }
            if !attributes.isEmpty { out += "    attributes: \(attributes.joined(separator: ", "))\n" }
            if !relationships.isEmpty { out += "    relationships: \(relationships.joined(separator: ", "))\n" }
        }
        return out
    }

    /// A model names the app's value transformers, which this tool does not have (the store's cached
    /// model, or one given with `--model`): values of transformable attributes whose transformer is
    /// not registered are read as their stored bytes instead of failing the sample (134070). Returns
    /// a note naming those attributes, empty when there are none.
    static func registerPassThroughTransformers(for model: NSManagedObjectModel) -> String {
        var missing: [String: [String]] = [:]  // transformer name → "Entity.attribute"
        for entity in model.sortedEntities {
            for attribute in entity.ownProperties.compactMap({ $0 as? NSAttributeDescription }).sorted(by: { $0.name < $1.name }) {
                guard let name = attribute.valueTransformerName.map({ NSValueTransformerName(rawValue: $0) }),
                      missing[name.rawValue] != nil || !ValueTransformer.valueTransformerNames().contains(name) else { continue }
                missing[name.rawValue, default: []].append("\(entity.name ?? "?").\(attribute.name)")
            }
        }
        var note = ""
        for name in missing.keys.sorted() {
            ValueTransformer.setValueTransformer(ValueTransformer(), forName: NSValueTransformerName(rawValue: name))
            note += "\nnote: ocd has no value transformer named \(name): \(missing[name]!.joined(separator: ", "))"
            note += " shown as stored bytes\n"
        }
        return note
    }

    static func metadata(_ metadata: [String: Any]) -> String {
        var out = "\nmetadata:\n"
        for key in metadata.keys.sorted() {
            let value = metadata[key]!
            if let hashes = value as? [String: Any] {
                out += "  \(key):\n"
                for name in hashes.keys.sorted() { out += "    \(name): \(format(hashes[name]!))\n" }
            } else {
                out += "  \(key): \(format(value))\n"
            }
        }
        return out
    }

    /// One line per `Z_PRIMARYKEY` entity: the rows of its table with its `Z_ENT`.
    static func entities(_ raw: RawSQLite) throws -> String {
        let keys = try raw.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        let superOf = Dictionary(keys.map { ($0[0] ?? "", $0[2] ?? "0") }, uniquingKeysWith: { a, _ in a })
        let nameOf = Dictionary(keys.map { ($0[0] ?? "", $0[1] ?? "?") }, uniquingKeysWith: { a, _ in a })
        let tables = Set(try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] })
        var out = "\nentities (Z_PRIMARYKEY):\n"
        for key in keys {
            let number = key[0] ?? "?"
            var root = number
            var steps = 0
            while let parent = superOf[root], parent != "0", steps < 64 { root = parent; steps += 1 }
            let table = "Z" + (nameOf[root] ?? "?").uppercased()
            var rows = "no table"
            if tables.contains(table) {
                rows = "\(try raw.scalar("SELECT COUNT(*) FROM \(table) WHERE Z_ENT = \(Int(number) ?? -1)") ?? "?") rows"
            }
            out += "  \(key[1] ?? "?"): \(rows) (Z_ENT \(number), table \(table), Z_MAX \(key[3] ?? "NULL"))\n"
        }
        return out
    }

    /// Every table with its row count, as the corpus's store reports list them.
    static func tables(_ raw: RawSQLite) throws -> String {
        var out = "\ntables:\n"
        for row in try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
            guard let name = row[0], !name.hasPrefix("sqlite_") else { continue }
            out += "  \(name): \(try raw.scalar("SELECT COUNT(*) FROM \"\(name)\"") ?? "?")\n"
        }
        return out
    }

    /// Compares the stored entity version hashes with the model's, as Core Data does when it opens
    /// a store; prints each difference.
    static func compatibility(_ metadata: [String: Any], _ model: NSManagedObjectModel, modelPath: String,
                              into out: inout String) -> Bool {
        let stored = (metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]).compactMapValues { $0 as? Data }
        let ours = model.entityVersionHashesByName
        var differences: [String] = []
        for name in Set(stored.keys).union(ours.keys).sorted() {
            switch (stored[name], ours[name]) {
            case let (a?, b?) where a != b: differences.append("\(name): version hash differs")
            case (nil, _?): differences.append("\(name): only in the model")
            case (_?, nil): differences.append("\(name): only in the store")
            default: break
            }
        }
        out += "\nmodel: \(modelPath)\n"
        out += "compatible: \(differences.isEmpty ? "yes" : "no")\n"
        for difference in differences { out += "  \(difference)\n" }
        return differences.isEmpty
    }

    /// The first `limit` objects of every concrete entity, read through a coordinator.
    static func sample(_ url: URL, model: NSManagedObjectModel, limit: Int) throws -> String {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } catch {
            throw ToolError("cannot open the store with the model: \(ToolError(error, path: url.path).description)")
        }
        defer { for store in coordinator.persistentStores { try? coordinator.remove(store) } }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var out = "\nsample (up to \(limit) per entity):\n"
        try context.performAndWait {
            for entity in model.sortedEntities where !entity.isAbstract {
                let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
                request.includesSubentities = false
                let total = try context.count(for: request)
                request.fetchLimit = max(limit, 0)
                out += "  \(entity.name!): \(total) objects\n"
                for object in try context.fetch(request) {
                    out += "    \(reference(object)) \(describe(object))\n"
                }
            }
        }
        return out
    }

    private static func describe(_ object: NSManagedObject) -> String {
        let entity = object.entity
        var parts: [String] = []
        for property in entity.properties.sorted(by: { $0.name < $1.name }) where !(property is NSFetchedPropertyDescription) {
            let value = object.value(forKey: property.name)
            if let relationship = property as? NSRelationshipDescription {
                if relationship.isToMany {
                    let count = (value as? Set<NSManagedObject>)?.count ?? (value as? NSOrderedSet)?.count
                        ?? (value as? NSSet)?.count ?? 0
                    parts.append("\(property.name)=\(count) objects")
                } else {
                    parts.append("\(property.name)=\((value as? NSManagedObject).map(reference) ?? "nil")")
                }
            } else {
                parts.append("\(property.name)=\(value.map { format($0, base64: false) } ?? "nil")")
            }
        }
        return parts.joined(separator: " ")
    }

    /// `Entity p<primary key>`, from the object ID's URI.
    private static func reference(_ object: NSManagedObject) -> String {
        "\(object.entity.name ?? "?") \(object.objectID.uriRepresentation().lastPathComponent)"
    }

    /// `Data` in a sample: its size and its first bytes in hex.
    private static func bytes(_ data: Data) -> String {
        let shown = data.prefix(16).map { String(format: "%02x", $0) }.joined()
        return data.isEmpty ? "<0 bytes>" : "<\(data.count) bytes 0x\(shown)\(data.count > 16 ? "…" : "")>"
    }

    /// A value as one short line; `Data` in base64 in metadata (version hashes), as its size and first
    /// bytes in objects.
    static func format(_ value: Any) -> String { format(value, base64: true) }

    static func format(_ value: Any, base64: Bool) -> String {
        switch value {
        case let data as Data: base64 ? data.base64EncodedString() : bytes(data)
        case let string as String: "\"\(string)\""
        case let date as Date: ISO8601DateFormatter().string(from: date)
        case let array as [Any]: "[" + array.map(format).joined(separator: ", ") + "]"
        case let set as Set<AnyHashable>: "{" + set.map(format).sorted().joined(separator: ", ") + "}"
        default: "\(value)"
        }
    }
}
