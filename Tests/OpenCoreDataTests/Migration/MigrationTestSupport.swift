import Foundation
import OpenCoreData
import OpenCoreDataTestSupport

@testable import OpenCoreDataRuntime

/// Builds model versions in code and runs migrations on SQLite files in a temporary directory.
enum MigrationFixture {
    static func attribute(
        _ name: String, _ type: NSAttributeType = .stringAttributeType, optional: Bool = true, defaultValue: Any? = nil,
        renamedFrom: String? = nil
    ) -> NSAttributeDescription {
        let attribute = NSAttributeDescription(name: name, type: type, isOptional: optional, defaultValue: defaultValue)
        attribute.renamingIdentifier = renamedFrom
        return attribute
    }

    static func entity(_ name: String, _ properties: [NSPropertyDescription], renamedFrom: String? = nil)
        -> NSEntityDescription
    {
        let entity = NSEntityDescription(name: name, properties: properties)
        entity.renamingIdentifier = renamedFrom
        return entity
    }

    static func model(_ version: String, _ entities: [NSEntityDescription]) -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = entities
        model.versionIdentifiers = [version]
        return model
    }

    /// Options that ask for automatic lightweight migration with `sources` as earlier versions.
    static func options(_ sources: [NSManagedObjectModel], migrate: Bool = true, infer: Bool = true)
        -> [AnyHashable: Any]
    {
        [
            NSMigratePersistentStoresAutomaticallyOption: migrate, NSInferMappingModelAutomaticallyOption: infer,
            OpenCoreDataMigrationSourceModelsOption: sources,
        ]
    }

    /// A new SQLite store written with `model`, filled by `fill`, closed again.
    static func makeStore(
        _ model: NSManagedObjectModel, in directory: TemporaryDirectory, name: String = "Store.sqlite",
        fill: (NSManagedObjectContext) throws -> Void
    ) throws -> URL {
        let url = directory.file(name)
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        let context = StoreHarness.context(coordinator)
        try fill(context)
        try context.save()
        StoreHarness.close(coordinator)
        return url
    }

    /// Opens `url` with `model`, migrating from one of `sources`.
    static func open(
        _ url: URL, with model: NSManagedObjectModel, sources: [NSManagedObjectModel],
        options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStoreCoordinator {
        try StoreHarness.coordinator(
            model: model, storeType: NSSQLiteStoreType, url: url, options: options ?? Self.options(sources))
    }

    /// Every object of `entity` (no subentities), as `[attribute: value]` sorted by `key`.
    static func rows(_ entity: String, _ context: NSManagedObjectContext, sortedBy key: String) throws -> [[String: Any]] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.includesSubentities = false
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
        return try context.fetch(request).map { object in
            var values: [String: Any] = [:]
            for name in object.entity.attributesByName.keys {
                if let value = object.value(forKey: name) { values[name] = value }
            }
            return values
        }
    }

    /// The column names of a table, read straight from the file.
    static func columns(_ table: String, at url: URL) throws -> [String] {
        try RawDatabase(url).rows("SELECT name FROM pragma_table_info('\(table)')").compactMap { $0[0] as? String }
    }

    /// The store file and its side files, byte for byte.
    static func bytes(_ url: URL) throws -> [Data] {
        try ["", "-wal"].compactMap { suffix in
            let path = url.path + suffix
            return FileManager.default.fileExists(atPath: path) ? try Data(contentsOf: URL(fileURLWithPath: path)) : nil
        }
    }
}
