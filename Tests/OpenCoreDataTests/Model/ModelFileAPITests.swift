import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Fetch request templates, configurations, merging and unknown elements of Xcode model files.
@Suite struct ModelFileAPITests {
    /// Writes `<name>.xcdatamodel/contents` holding `body` inside `<model>` into `directory`.
    @discardableResult
    private func writeModel(_ name: String, _ body: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let text = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            \(body)
            </model>
            """
        try Data(text.utf8).write(to: url.appendingPathComponent("contents"))
        return url
    }

    private let humans = """
        <entity name="Human" representedClassName="Human" syncable="YES">
            <attribute name="humanName" optional="YES" attributeType="String"/>
            <attribute name="age" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
        </entity>
        <fetchRequest name="byHumanName" entity="Human" predicateString="humanName == $humanName"/>
        <fetchRequest name="adults" entity="Human" predicateString="age &gt;= 18" fetchLimit="2"/>
        """

    // MARK: Fetch request templates

    /// momcom's test model (atomicbird/momcom) has three templates with every option Xcode writes.
    @Test func templatesFromTheModelFileCarryTheirOptions() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momcom))
        #expect(Set(model.fetchRequestTemplatesByName.keys) == ["FetchRequestDictionaries", "FetchRequestObjectIDs", "FetchRequestObjects"])
        let objects = try #require(model.fetchRequestTemplate(forName: "FetchRequestObjects"))
        #expect(objects.entityName == "Entity")
        #expect(objects.entity === model.entitiesByName["Entity"])
        #expect(objects.predicate?.predicateFormat == "booleanAttribute == 1 AND floatAttribute > 5")
        #expect(objects.fetchLimit == 100)
        #expect(objects.fetchBatchSize == 10)
        #expect(objects.resultType == .managedObjectResultType)
        let dictionaries = try #require(model.fetchRequestTemplate(forName: "FetchRequestDictionaries"))
        #expect(dictionaries.resultType == .dictionaryResultType)
        #expect(dictionaries.includesSubentities && dictionaries.returnsDistinctResults && dictionaries.returnsObjectsAsFaults)
        #expect(model.fetchRequestTemplate(forName: "FetchRequestObjectIDs")?.resultType == .managedObjectIDResultType)
        #expect(model.fetchRequestTemplate(forName: "NoSuchTemplate") == nil)
    }

    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType])
    func fetchRequestFromTemplateSubstitutesVariables(_ storeType: String) throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let model = try NSManagedObjectModel.load(contentsOf: try writeModel("Humans", humans, in: scratch))
        let store = try TestStore(storeType, model: model)
        let context = store.newContext()
        for (name, age) in [("Ada", 36), ("Alan", 41), ("Grace", 12), ("Ada", 7)] {
            insertObject("Human", ["humanName": name, "age": Int32(age)], into: context)
        }
        try context.save()

        let request = try #require(model.fetchRequestFromTemplate(withName: "byHumanName", substitutionVariables: ["humanName": "Ada"]))
        let adas = try store.newContext().fetch(request) as? [NSManagedObject] ?? []
        #expect(adas.count == 2)
        #expect(adas.allSatisfy { $0.value(forKey: "humanName") as? String == "Ada" })
        // The template keeps its variable: each call substitutes afresh.
        #expect(model.fetchRequestTemplate(forName: "byHumanName")?.predicate?.predicateFormat == "humanName == $humanName")
        let alan = try #require(model.fetchRequestFromTemplate(withName: "byHumanName", substitutionVariables: ["humanName": "Alan"]))
        #expect(try store.newContext().count(for: alan) == 1)
        // A template without variables, with its fetch limit.
        let adults = try #require(model.fetchRequestFromTemplate(withName: "adults", substitutionVariables: [:]))
        #expect(try store.newContext().fetch(adults).count == 2)
        #expect(model.fetchRequestFromTemplate(withName: "missing", substitutionVariables: [:]) == nil)
    }

    @Test func templateWithAPredicateThatDoesNotParseNamesFileAndTemplate() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = try writeModel("Bad", """
            <entity name="Human" syncable="YES"><attribute name="humanName" optional="YES" attributeType="String"/></entity>
            <fetchRequest name="broken" entity="Human" predicateString="humanName ==== "/>
            """, in: scratch)
        let error = try #require(throws: OpenCoreDataError.self) { try NSManagedObjectModel.load(contentsOf: url) }
        #expect(error.message.contains(url.appendingPathComponent("contents").path))
        #expect(error.message.contains("broken"))
        #expect(NSManagedObjectModel(contentsOf: url) == nil)
    }

    // MARK: Configurations

    @Test func configurationsFromTheModelFile() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momcom))
        #expect(model.configurations == ["UnrelatedConfiguration"])
        #expect(model.entities(forConfigurationName: "UnrelatedConfiguration")?.compactMap(\.name) == ["UnrelatedEntity"])
        // The default configuration is every entity (Apple: nil or "PF_DEFAULT_CONFIGURATION_NAME").
        #expect(model.entities(forConfigurationName: nil)?.count == model.entities.count)
        #expect(model.entities(forConfigurationName: "NoSuchConfiguration") == nil)
    }

    // MARK: Unknown elements

    /// An element the reader does not know is listed with its line, not dropped silently; the
    /// model still loads. Every model Xcode wrote in the fixtures has none.
    @Test func unknownElementsAreReportedWithTheirLine() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = try writeModel("Future", """
            <entity name="Human" syncable="YES">
                <attribute name="humanName" optional="YES" attributeType="String"/>
                <hologram name="h"/>
            </entity>
            <timeMachine/>
            """, in: scratch)
        let model = try NSManagedObjectModel.load(contentsOf: url)
        #expect(model.entitiesByName["Human"]?.attributesByName["humanName"] != nil)
        #expect(model._xcodeModelFile?.unrecognizedElements == ["line 5: <hologram> in entity Human", "line 7: <timeMachine> in <model>"])

        let fixtures = FileManager.default.enumerator(at: ModelFixtures.root, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent == "contents" }
        #expect(fixtures.count > 10)
        for file in fixtures {
            let loaded = try NSManagedObjectModel.load(contentsOf: file)
            #expect(loaded._xcodeModelFile?.unrecognizedElements == [], "\(file.path)")
        }
    }

    // MARK: Finding models in the program's resource bundles

    /// SwiftPM builds the Moods example's resources (`OpenCoreData_MoodsExample.resources`) beside the
    /// test runner, as it puts an app's beside the app: the lookup `NSPersistentContainer(name:)`
    /// and `mergedModel(from: nil)` make finds `Moods.xcdatamodeld` there.
    @Test func containerAndMergedModelFindModelsInResourceBundles() throws {
        let directory = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        let resources = directory.appendingPathComponent("OpenCoreData_MoodsExample.resources/Moods.xcdatamodeld")
        try #require(FileManager.default.fileExists(atPath: resources.path), "the Moods example's resources are not built")
        let container = NSPersistentContainer(name: "Moods")
        #expect(Set(container.managedObjectModel.entities.compactMap(\.name)) == ["Continent", "Country", "Mood"])
        let merged = try #require(NSManagedObjectModel.mergedModel(from: nil))
        #expect(Set(merged.entities.compactMap(\.name)).isSuperset(of: ["Continent", "Country", "Mood"]))
    }

    // MARK: Merging

    @Test func mergedModelFromABundleJoinsItsModels() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try writeModel("Humans", humans, in: scratch)
        try writeModel("Pets", """
            <entity name="Pet" syncable="YES"><attribute name="name" optional="YES" attributeType="String"/></entity>
            <configuration name="Animals"><memberEntity name="Pet"/></configuration>
            """, in: scratch)
        let bundle = try #require(Bundle(url: scratch))
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [bundle]))
        #expect(Set(merged.entities.compactMap(\.name)) == ["Human", "Pet"])
        #expect(merged.entitiesByName["Pet"]?.managedObjectModel === merged)
        #expect(merged.configurations == ["Animals"])
        #expect(Set(merged.fetchRequestTemplatesByName.keys) == ["adults", "byHumanName"])
        // The merged model works with a store.
        let store = try TestStore(NSSQLiteStoreType, model: merged)
        let context = store.newContext()
        insertObject("Pet", ["name": "Rex"], into: context)
        insertObject("Human", ["humanName": "Ada"], into: context)
        try context.save()
        try store.reopen()
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Pet")) == 1)
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Human")) == 1)
    }

    @Test func mergedModelRefusesTwoEntitiesWithOneName() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try writeModel("A", humans, in: scratch)
        try writeModel("B", humans, in: scratch)
        #expect(NSManagedObjectModel.mergedModel(from: [try #require(Bundle(url: scratch))]) == nil)
    }

    /// Apple's result for bundles without a model is not documented; ours is an empty model.
    @Test func mergedModelOfBundlesWithoutModelsIsEmpty() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(NSManagedObjectModel.mergedModel(from: [try #require(Bundle(url: scratch))])?.entities.isEmpty == true)
    }
}
