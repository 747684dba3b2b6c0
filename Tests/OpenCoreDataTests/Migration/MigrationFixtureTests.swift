import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The migration fixture sets of the corpus: stores written by Apple's Core Data with an older
/// version of a versioned `.xcdatamodeld`. Each migrates to the newest version found in the bundle
/// (the source version is found in the bundle, no option needed), and every row of every mapped
/// entity is still there with the same primary key, the same value for each attribute the mapping
/// keeps, and the same destinations for each relationship it keeps.
///
/// Found in `../shared/corpus/repos`: CoreDataPlus SampleModel (V1 and V2 stores → V3; the project
/// itself uses a custom `V2toV3.cdm` that moves `Car.maker` into the new `Maker` entity, which
/// lightweight migration drops), CoreDataPlus SampleModel3 (V1 → v3), hwaxxer BookMigration
/// (Model1 → Model3; the project ships custom mapping models, but the change is lightweight-eligible),
/// MWKCoreData (v1 → v2; v3 needs its custom mapping model, see MappingModelMigrationTests), BigNerdRanch CoreDataStack (an empty
/// TestModel store → TestModel 2). RestKit VersionedModel and CoreStore EvolutionDemo have
/// versioned bundles but no store files, so they only feed the mapping-inference tests indirectly.
@Suite("Migration: Apple-written fixture stores")
struct MigrationFixtureTests {
    struct FixtureSet: CustomTestStringConvertible, Sendable {
        var store: String
        var bundle: String
        /// The version to migrate to (a `.xcdatamodel` name), when not the newest.
        var destination: String? = nil
        /// Whether the store holds rows (BigNerdRanch's TestModel store is empty).
        var hasRows = true
        var testDescription: String { (store as NSString).lastPathComponent }
    }

    static let lightweightSets = [
        FixtureSet(
            store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            bundle: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld"),
        FixtureSet(
            store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
            bundle: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"),
        FixtureSet(
            store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
            bundle: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"),
        FixtureSet(
            store: "hwaxxer+BookMigration/BookMigration/Model1.sqlite",
            bundle: "hwaxxer+BookMigration/BookMigration/Model.xcdatamodeld"),
        FixtureSet(
            store: "mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests.sqlite",
            bundle: "mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld", destination: "MWKCoreDataTests2"),
        FixtureSet(
            store: "bignerdranch+CoreDataStack/Sample Model/Deprecated/TestModel.sqlite",
            bundle: "bignerdranch+CoreDataStack/Sample Model/Deprecated/Sample.xcdatamodeld", hasRows: false),
    ]

    /// The newest version in a bundle: the highest numeric version identifier if every version has
    /// one, else the bundle's current version.
    private func newestVersion(_ bundle: URL) throws -> NSManagedObjectModel {
        let versions = ModelVersionBundle.versions(inBundle: bundle)
        let numbered = versions.compactMap { model in
            model.versionIdentifiers.compactMap { Double("\($0.base)") }.max().map { (model, $0) }
        }
        if numbered.count == versions.count, let newest = numbered.max(by: { $0.1 < $1.1 }) { return newest.0 }
        return try NSManagedObjectModel.load(contentsOf: bundle)
    }

    private func copy(_ store: String, into directory: TemporaryDirectory, as name: String) throws -> URL {
        let url = directory.file(name)
        try FileManager.default.copyItem(at: try fixture(store), to: url)
        return url
    }

    /// Object key (entity and primary key) → property → value description, for `properties` of each entity.
    private func snapshot(_ coordinator: NSPersistentStoreCoordinator, _ properties: [String: [String]]) throws
        -> [String: [String: String]]
    {
        let context = StoreHarness.context(coordinator)
        var result: [String: [String: String]] = [:]
        func describe(_ value: Any?) -> String {
            switch value {
            case nil: "nil"
            case let object as NSManagedObject: object.objectID.uriRepresentation().lastPathComponent
            case let set as Set<NSManagedObject>: set.map { describe($0) }.sorted().joined(separator: ",")
            case let ordered as NSOrderedSet: ordered.array.map { describe($0) }.joined(separator: ",")
            case let value?: "\(value)"
            }
        }
        for (entity, keys) in properties {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.includesSubentities = false
            for object in try context.fetch(request) {
                let key = "\(entity)/\(object.objectID.uriRepresentation().lastPathComponent)"
                result[key] = Dictionary(uniqueKeysWithValues: keys.map { ($0, describe(object.value(forKey: $0))) })
            }
        }
        return result
    }

    @Test(arguments: lightweightSets)
    func storeMigratesToTheNewestVersionWithEveryRow(_ set: FixtureSet) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // The bundle alone, copied: a mapping model file beside it (CoreDataPlus's V2toV3) would be
        // used before inference, as on Apple (MappingModelMigrationTests covers that path).
        let bundle = directory.file((set.bundle as NSString).lastPathComponent)
        try FileManager.default.copyItem(at: try fixture(set.bundle), to: bundle)
        let newest =
            try set.destination.map { try NSManagedObjectModel.load(contentsOf: bundle.appendingPathComponent($0 + ".xcdatamodel")) }
            ?? newestVersion(bundle)
        let original = try copy(set.store, into: directory, as: "Original.sqlite")
        let migrated = try copy(set.store, into: directory, as: "Migrated.sqlite")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: original)
        let source = try #require(
            ModelVersionBundle.versions(inBundle: bundle).first {
                $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            })
        #expect(!newest.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: newest)

        // What each kept entity and property was called before and is called now.
        var before: [String: [String]] = [:]
        var after: [String: [String]] = [:]
        var renamed: [String: (entity: String, properties: [String: String])] = [:]
        for entityMapping in mapping.entityMappings
        where entityMapping.mappingType == .copyEntityMappingType || entityMapping.mappingType == .transformEntityMappingType {
            let old = entityMapping.sourceEntityName!, new = entityMapping.destinationEntityName!
            if source.entitiesByName[old]!.isAbstract { continue }
            var properties: [String: String] = [:]
            for propertyMapping in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) {
                guard let from = propertyMapping._sourcePropertyName, let to = propertyMapping.name else { continue }
                properties[from] = to
            }
            before[old] = properties.keys.sorted()
            after[new] = properties.values.sorted()
            renamed[old] = (new, properties)
        }

        let reader = try StoreHarness.coordinator(model: source, storeType: NSSQLiteStoreType, url: original)
        let expected = try snapshot(reader, before)
        StoreHarness.close(reader)
        #expect(expected.isEmpty == !set.hasRows, "the fixture has rows to check")

        // The coordinator finds the source model among the bundle's versions by itself.
        let coordinator = try StoreHarness.coordinator(
            model: newest, storeType: NSSQLiteStoreType, url: migrated,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        let actual = try snapshot(coordinator, after)
        StoreHarness.close(coordinator)

        var translated: [String: [String: String]] = [:]
        for (key, values) in expected {
            let parts = key.split(separator: "/").map(String.init)
            let (entity, properties) = renamed[parts[0]]!
            translated["\(entity)/\(parts[1])"] = Dictionary(
                uniqueKeysWithValues: values.map { (properties[$0.key]!, $0.value) })
        }
        #expect(actual.count == translated.count)
        for (key, values) in translated.sorted(by: { $0.key < $1.key }) {
            #expect(actual[key] == values, "\(key)")
        }

        // It reopens with the newest version without migrating again.
        let reopened = try StoreHarness.coordinator(model: newest, storeType: NSSQLiteStoreType, url: migrated)
        #expect(try sqliteStore(reopened).migrationStatements.isEmpty)
        StoreHarness.close(reopened)
    }

    // MWKCoreData's version 3 needs its custom mapping model: MappingModelMigrationTests.swift
    // (inference alone fails there; the mapping model file migrates every row).
}
