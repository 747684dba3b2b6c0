import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// `NSManagedObjectModel(byMerging:)`, `init(byMerging:forStoreMetadata:)` and
/// `mergedModel(from:forStoreMetadata:)`: one model out of several, and the one a store was written with.
@Suite("Merging models")
struct ModelMergingTests {
    /// `Person` v1 (`name`) or v2 (`name`, `age`).
    static func people(version: Int) -> NSManagedObjectModel {
        var properties: [NSPropertyDescription] = [NSAttributeDescription(name: "name", type: .stringAttributeType)]
        if version > 1 { properties.append(NSAttributeDescription(name: "age", type: .integer16AttributeType)) }
        let model = NSManagedObjectModel()
        model.entities = [NSEntityDescription(name: "Person", properties: properties)]
        model.versionIdentifiers = ["people \(version)"]
        return model
    }

    /// `Pet` with a configuration `Animals` and a fetch request template.
    static func pets() -> NSManagedObjectModel {
        let pet = NSEntityDescription(name: "Pet", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [pet]
        model.setEntities([pet], forConfigurationName: "Animals")
        let named = NSFetchRequest<any NSFetchRequestResult>(entityName: "Pet")
        named.predicate = NSPredicate(format: "name == $name")
        model.setFetchRequestTemplate(named, forName: "petNamed")
        return model
    }

    static func metadata(_ model: NSManagedObjectModel) -> [String: Any] {
        [NSStoreModelVersionHashesKey: model.entityVersionHashesByName as [String: Any]]
    }

    // MARK: init(byMerging:)

    @Test func mergingJoinsEntitiesConfigurationsAndTemplates() throws {
        let merged = try #require(NSManagedObjectModel(byMerging: [Self.people(version: 1), Self.pets()]))
        #expect(Set(merged.entitiesByName.keys) == ["Person", "Pet"])
        #expect(merged.entitiesByName["Pet"]?.managedObjectModel === merged)
        #expect(merged.entities(forConfigurationName: "Animals")?.map(\.name) == ["Pet"])
        #expect(merged.fetchRequestTemplate(forName: "petNamed")?.entityName == "Pet")
        #expect(merged.versionIdentifiers == ["people 1"])
        // The hashes are the parts' hashes: a store of the merged model is one of both.
        #expect(merged.entityVersionHashesByName["Person"] == Self.people(version: 1).entityVersionHashesByName["Person"])
        #expect(NSManagedObjectModel(byMerging: nil)?.entities.isEmpty == true)
    }

    @Test func mergingModelsWithTwoEntitiesOfOneNameIsNil() throws {
        let first = Self.people(version: 1)
        let second = Self.people(version: 2)
        #expect(NSManagedObjectModel(byMerging: [first, Self.pets(), second]) == nil)
        // The models are left as they were.
        #expect(first.entitiesByName["Person"]?.managedObjectModel === first)
        #expect(second.entitiesByName["Person"]?.managedObjectModel === second)
    }

    // MARK: init(byMerging:forStoreMetadata:)

    @Test func theModelsAStoreWasWrittenWithAreSelected() throws {
        // A SQLite store written with people v1 + pets, and its metadata as read from the file.
        let written = try #require(NSManagedObjectModel(byMerging: [Self.people(version: 1), Self.pets()]))
        let store = try TestStore(NSSQLiteStoreType, model: written)
        let context = store.newContext()
        try context.performAndWait {
            insertObject("Person", ["name": "Ada"], into: context)
            try context.save()
        }
        StoreHarness.close(store.coordinator)
        let url = try #require(store.url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)

        // Among v2, v1 and pets, v1 and pets are picked; v2's Person does not match the store.
        let candidates = [Self.people(version: 2), Self.people(version: 1), Self.pets()]
        let model = try #require(NSManagedObjectModel(byMerging: candidates, forStoreMetadata: metadata))
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(model.entitiesByName["Person"]?.attributesByName.keys.sorted() == ["name"])
        #expect(model.entitiesByName["Person"] === candidates[1].entitiesByName["Person"])
        #expect(model.fetchRequestTemplate(forName: "petNamed") != nil)
        // The same entity twice (an unchanged model given twice) is taken once.
        #expect(NSManagedObjectModel(byMerging: [Self.people(version: 1), Self.people(version: 1), Self.pets()],
                                     forStoreMetadata: metadata)?.entities.count == 2)
        // The selected model opens the store and reads what was saved.
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let reader = StoreHarness.context(coordinator)
        try reader.performAndWait {
            let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(people.map { $0.value(forKey: "name") as? String } == ["Ada"])
        }
    }

    @Test func noModelForTheStoreIsNil() {
        let v2 = Self.metadata(Self.people(version: 2))
        // No candidate has v2's Person.
        #expect(NSManagedObjectModel(byMerging: [Self.people(version: 1), Self.pets()], forStoreMetadata: v2) == nil)
        // The store has an entity no candidate covers.
        let both = Self.metadata(NSManagedObjectModel(byMerging: [Self.people(version: 1), Self.pets()])!)
        #expect(NSManagedObjectModel(byMerging: [Self.people(version: 1)], forStoreMetadata: both) == nil)
        // A model with more entities than the store has is not the store's.
        #expect(NSManagedObjectModel(byMerging: [NSManagedObjectModel(byMerging: [Self.people(version: 1), Self.pets()])!],
                                     forStoreMetadata: Self.metadata(Self.people(version: 1))) == nil)
        // Metadata without version hashes (not a Core Data store).
        #expect(NSManagedObjectModel(byMerging: [Self.people(version: 1)], forStoreMetadata: [:]) == nil)
    }

    // MARK: mergedModel(from:forStoreMetadata:)

    /// alemar11/CoreDataPlus ships `SampleModel.xcdatamodeld` (three versions) and stores Apple's
    /// Core Data wrote with its first two versions; each store's metadata picks its version.
    @Test(arguments: [("SampleModel_V1.sqlite", "SampleModel.xcdatamodel"), ("SampleModel_V2.sqlite", "SampleModel2.xcdatamodel")])
    func appleWrittenStoresFindTheirModelVersion(store: String, version: String) throws {
        let resources = try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(store)
        try FileManager.default.copyItem(at: resources.appendingPathComponent("Fixtures/\(store)"), to: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)

        let bundle = try #require(Bundle(url: resources))
        let model = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata))
        let expected = try NSManagedObjectModel.load(
            contentsOf: resources.appendingPathComponent("SampleModel.xcdatamodeld/\(version)"))
        #expect(model.entityVersionHashesByName == expected.entityVersionHashesByName)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // The versions differ, so picking the right one is what made the hashes match.
        let versions = ModelVersionBundle.versions(inBundle: resources.appendingPathComponent("SampleModel.xcdatamodeld"))
        #expect(versions.count == 3)
        #expect(versions.filter { $0.entityVersionHashesByName == expected.entityVersionHashesByName }.count == 1)
    }

    /// The same with the compiled model Xcode built from that bundle (`SampleModel.momd`, as Apple's
    /// apps ship it): each version inside is a candidate.
    @Test(.enabled(if: Corpus.isPresent),
          arguments: [("SampleModel_V1.sqlite", "SampleModel.mom"), ("SampleModel_V2.sqlite", "SampleModel2.mom")])
    func appleWrittenStoresFindTheirCompiledModelVersion(store: String, version: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sampleModel = "alemar11+CoreDataPlus/Tests/Resources/SampleModel"
        let resources = directory.file("App.resources")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        let momd = Corpus.repo("\(sampleModel)/Fixtures/SampleModel.momd")
        try FileManager.default.copyItem(at: momd, to: resources.appendingPathComponent("SampleModel.momd"))
        let url = try Corpus.copyStore("\(sampleModel)/Fixtures/\(store)", to: directory.url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)

        let bundle = try #require(Bundle(url: resources))
        let model = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata))
        let expected = try NSManagedObjectModel.load(contentsOf: momd.appendingPathComponent(version))
        #expect(model.entityVersionHashesByName == expected.entityVersionHashesByName)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // mergedModel(from:) reads the compiled model too (its current version).
        #expect(NSManagedObjectModel.mergedModel(from: [bundle])?.entities.isEmpty == false)
        // Beside its source, the compiled model is left out rather than clash with it.
        try FileManager.default.copyItem(
            at: try fixture("\(sampleModel)/SampleModel.xcdatamodeld"), to: resources.appendingPathComponent("SampleModel.xcdatamodeld"))
        #expect(NSManagedObjectModel.mergedModel(from: [try #require(Bundle(url: resources))]) != nil)
    }
}
