import Foundation
import Testing

@testable import OpenCoreDataRuntime

/// Model files under `Fixtures/`, copied byte for byte from the test corpus (`<owner>+<repo>/<path
/// in the repository>`; see the corpus MANIFEST §1 for each repository's commit).
enum ModelFixtures {
    static var root: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
    }

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    static let sampleModel = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
    static let momcom = "atomicbird+momcom/momcomTests/momcomTests.xcdatamodeld"
    static let bignerdranch = "bignerdranch+CoreDataStack/Sample Model/Deprecated/Sample.xcdatamodeld"
    static let contentful = "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/Test.xcdatamodeld"
    static let employeeDirectory = "ashalkhakov+FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.xcdatamodeld"
    static let cloudKitShare = "delawaremathguy+CoreDataCloudKitShare/Persistence/CoreDataCloudKitShare.xcdatamodeld"
    static let momXML = "phimage+MomXML/Tests/Model.xcdatamodeld"

    /// A fresh scratch directory, removed by the caller.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

@Suite struct ModelFileTests {
    // MARK: Finding the model

    @Test func bundleLoadsTheVersionNamedByXCCurrentVersion() throws {
        // `.xccurrentversion` names "TestModel 2.xcdatamodel" (three entities; v1 has two).
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.bignerdranch))
        #expect(Set(model.entitiesByName.keys) == ["Author", "Book", "Publisher"])

        let mwkirk = try NSManagedObjectModel.load(
            contentsOf: ModelFixtures.url("mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld"))
        #expect(mwkirk.versionIdentifiers == ["1"])  // current is v1 although v2 and v3 sort after it
        let hwaxxer = try NSManagedObjectModel.load(
            contentsOf: ModelFixtures.url("hwaxxer+BookMigration/BookMigration/Model.xcdatamodeld"))
        #expect(hwaxxer.entities.count == 4)  // Model3
    }

    @Test func bundleWithoutXCCurrentVersionLoadsItsOnlyVersion() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.contentful))
        #expect(Set(model.entitiesByName.keys) == ["Asset", "Author", "Category", "Post", "SyncInfo"])
    }

    @Test func bundleWithoutXCCurrentVersionLoadsTheLastVersion() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = ModelFixtures.url("mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld")
        let bundle = scratch.appendingPathComponent("Copy.xcdatamodeld")
        try FileManager.default.copyItem(at: source, to: bundle)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent(".xccurrentversion"))
        let model = try NSManagedObjectModel.load(contentsOf: bundle)
        #expect(model.versionIdentifiers == ["3"])
    }

    @Test func versionDirectoryAndBareContentsFileLoad() throws {
        let version = ModelFixtures.url(ModelFixtures.sampleModel).appendingPathComponent("SampleModel2.xcdatamodel")
        let fromDirectory = try NSManagedObjectModel.load(contentsOf: version)
        let fromFile = try NSManagedObjectModel.load(contentsOf: version.appendingPathComponent("contents"))
        #expect(fromDirectory.versionIdentifiers == ["2"])
        #expect(fromDirectory.entityVersionHashesByName == fromFile.entityVersionHashesByName)
        #expect(NSManagedObjectModel(contentsOf: version) != nil)
    }

    // MARK: What is read

    @Test func inheritanceIsWiredThroughSubentities() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.sampleModel))
        let entities = model.entitiesByName
        let car = try #require(entities["Car"])
        let sportCar = try #require(entities["SportCar"])
        let expensive = try #require(entities["ExpensiveSportCar"])
        #expect(car.superentity == nil)
        #expect(car.subentities.map(\.name) == ["SportCar"])
        #expect(sportCar.superentity === car)
        #expect(sportCar.subentities.map(\.name) == ["ExpensiveSportCar"])
        #expect(expensive.superentity === sportCar)
        #expect(expensive.isKindOf(entity: car))
        // Inherited properties come first, then the entity's own.
        #expect(expensive.properties.map(\.name).last == "isLimitedEdition")
        #expect(expensive.propertiesByName["numberPlate"] === car.propertiesByName["numberPlate"])
        #expect(expensive.managedObjectClassName == "ExpensiveSportCar")
        #expect(car.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["numberPlate"]])
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test func inversesAreResolvedAfterAllEntitiesLoad() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.sampleModel))
        let owner = try #require(model.entitiesByName["Car"]?.relationshipsByName["owner"])
        let cars = try #require(model.entitiesByName["Person"]?.relationshipsByName["cars"])
        #expect(owner.destinationEntity === model.entitiesByName["Person"])
        #expect(owner.inverseRelationship === cars)
        #expect(cars.inverseRelationship === owner)
        #expect(!owner.isToMany && owner.maxCount == 1)
        #expect(cars.isToMany && cars.maxCount == 0 && cars.minCount == 0)
        // A subentity sees the inherited relationship with its inverse.
        #expect(model.entitiesByName["SportCar"]?.relationshipsByName["owner"]?.inverseRelationship === cars)
    }

    @Test func attributesAndTheirOptions() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.sampleModel))
        let car = try #require(model.entitiesByName["Car"])
        let person = try #require(model.entitiesByName["Person"])
        let color = try #require(car.attributesByName["color"])
        #expect(color.attributeType == .transformableAttributeType)
        #expect(color.valueTransformerName == "ColorTransformer")
        #expect(color._xcodeModelExtras?.customClassName == "Color")
        let speed = try #require(car.attributesByName["currentDrivingSpeed"])
        #expect(speed.isTransient && speed.isOptional)
        #expect(speed.attributeType == .integer64AttributeType)
        #expect(speed.defaultValue as? Int64 == 0)
        let numberPlate = try #require(car.attributesByName["numberPlate"])
        #expect(!numberPlate.isOptional)
        let id = try #require(person.attributesByName["id"])
        #expect(id.attributeType == .UUIDAttributeType && id.preservesValueInHistoryOnDeletion)
        #expect(person.attributesByName["isDriving"]?.defaultValue as? Bool == false)
    }

    /// momcom's test model exercises most of the format: abstract parents, renaming identifiers,
    /// version hash modifiers, user info, validation bounds, defaults of every type, fetched
    /// properties, fetch request templates, configurations and compound indexes.
    @Test func momcomModelReadsEverything() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momcom))
        let entity = try #require(model.entitiesByName["Entity"])
        #expect(model.entitiesByName["AbstractEntity"]?.isAbstract == true)
        #expect(entity.superentity?.name == "AbstractEntity")
        #expect(entity.managedObjectClassName == "EntityClass")
        #expect(model.entitiesByName["OtherEntity"]?.managedObjectClassName == "NSManagedObject")
        #expect(entity.renamingIdentifier == "myRenamingIdentifier")
        #expect(entity.versionHashModifier == "myVersionHashModifier")
        #expect(entity.userInfo?["someKey"] as? String == "randomValue")

        let binary = try #require(entity.attributesByName["binaryAttribute"])
        #expect(binary.isTransient && binary.isIndexedBySpotlight)
        #expect(binary.userInfo?["binaryFoo"] as? String == "YES")
        let date = try #require(entity.attributesByName["dateAttribute"])
        #expect(date.defaultValue as? Date == Date(timeIntervalSinceReferenceDate: 388_411_200))
        #expect(date._xcodeModelExtras?.minValueString == "2010-01-01 01:00:00")
        #expect(date._xcodeModelExtras?.maxDateTimeInterval == 602_395_200)
        #expect(entity.attributesByName["decimalAttribute"]?.defaultValue as? Decimal == 0)
        #expect(entity.attributesByName["decimalAttribute"]?._xcodeModelExtras?.maxValueString == "4.5")
        #expect(entity.attributesByName["doubleAttribute"]?.defaultValue as? Double == 0)
        #expect(entity.attributesByName["floatAttribute"]?.defaultValue as? Float == 0)
        #expect(entity.attributesByName["int16Attribute"]?.defaultValue as? Int16 == 0)
        #expect(entity.attributesByName["int16Attribute"]?._xcodeModelExtras?.minValueString == "-3")
        #expect(entity.attributesByName["int32Attribute"]?.defaultValue as? Int32 == 0)
        #expect(entity.attributesByName["transformableAttribute"]?.valueTransformerName == "myValueTransformer")

        let others = try #require(entity.relationshipsByName["otherEntities"])
        #expect(others.isToMany && others.minCount == 1 && others.maxCount == 9)
        #expect(others.inverseRelationship?.name == "mainEntity")
        #expect(others.inverseRelationship?.inverseRelationship === others)

        let info = try #require(model._xcodeModelFile)
        #expect(info.fetchedPropertiesByEntity["Entity"]?.first?.name == "yesBooleans")
        #expect(info.fetchedPropertiesByEntity["Entity"]?.first?.fetchRequest?.predicateString == "booleanAttribute = YES")
        #expect(info.fetchRequestTemplates.map(\.name) == ["FetchRequestDictionaries", "FetchRequestObjectIDs", "FetchRequestObjects"])
        #expect(info.fetchRequestTemplates.last?.fetchLimit == 100)
        #expect(info.fetchRequestTemplates.last?.fetchBatchSize == 10)
        #expect(info.fetchRequestTemplates.first?.resultType == 2)
        #expect(info.fetchRequestTemplates.first?.predicateString == "booleanAttribute == 1 AND floatAttribute > 5")
        #expect(info.compoundIndexesByEntity["Entity"] == [["booleanAttribute", "dateAttribute"], ["decimalAttribute", "doubleAttribute"]])
        // Fetched properties are recorded, not (yet) entity properties.
        #expect(entity.propertiesByName["yesBooleans"] == nil)

        #expect(model.configurationNames == ["UnrelatedConfiguration"])
        #expect(model.entities(forConfigurationName: "UnrelatedConfiguration")?.map(\.name) == ["UnrelatedEntity"])
    }

    @Test func deletionRulesIncludingNoAction() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.employeeDirectory))
        #expect(model.entitiesByName["Department"]?.relationshipsByName["employees"]?.deleteRule == .noActionDeleteRule)
        #expect(model.entitiesByName["Person"]?.isAbstract == true)
        #expect(model.entitiesByName["Person"]?.subentities.map(\.name) == ["Contractor", "Employee"])
        #expect(model.entitiesByName["Employee"]?.attributesByName["salary"]?._xcodeModelExtras?.minValueString == "0")
        #expect(model.entitiesByName["Employee"]?.managedObjectClassName == "EDEmployee")

        let recipes = try NSManagedObjectModel.load(
            contentsOf: ModelFixtures.url("alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.xcdatamodeld"))
        #expect(recipes.entitiesByName["Recipe"]?.relationshipsByName["ingredients"]?.deleteRule == .cascadeDeleteRule)
        #expect(recipes.entitiesByName["Recipe"]?.relationshipsByName["type"]?.deleteRule == .nullifyDeleteRule)
    }

    @Test func derivedAttributesAndExternalStorage() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.cloudKitShare))
        let photoCount = try #require(model.entitiesByName["Tag"]?.attributesByName["photoCount"])
        let derived = try #require(photoCount as? NSDerivedAttributeDescription)
        #expect(derived._derivationExpressionFormat == "photos.@count")
        #expect(derived.derivationExpression?.keyPath == "photos.@count")
        #expect(derived._isReadOnly)
        #expect(model.entitiesByName["PhotoData"]?.attributesByName["data"]?.allowsExternalBinaryDataStorage == true)
    }

    @Test func compositeAttributesLoad() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momXML))
        let attribute = try #require(model.entitiesByName["Produit"]?.attributesByName["attribute1"])
        #expect(attribute.attributeType == .compositeAttributeType)
        #expect(attribute._xcodeModelExtras?.compositeName == "Composite")
        #expect(model._xcodeModelFile?.composites["Composite"]?.map(\.name) == ["one", "two", "three"])
    }

    // MARK: Errors

    @Test func malformedXMLNamesFileAndLine() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("Broken.xcdatamodel/contents")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="A">
                    <attribute name="x" attributeType="String"/>
                <entity name="B"/>
            </model>
            """.utf8).write(to: file)
        let error = try #require(throws: OpenCoreDataError.self) {
            try NSManagedObjectModel.load(contentsOf: file.deletingLastPathComponent())
        }
        #expect(error.message.contains(file.path))
        #expect(error.message.contains("malformed XML: end tag does not match the open element"))
        let line = try #require(Self.lineNumber(in: error.message, after: file.path))
        #expect((5...6).contains(line), "reported line \(line)")
        #expect(NSManagedObjectModel(contentsOf: file) == nil)
    }

    /// More broken files: the reported line is where the parser noticed the problem.
    @Test(arguments: [
        ("<model>\n  <entity name=\"A\">\n    <attribute name=x attributeType=\"String\"/>\n  </entity>\n</model>", 3),
        ("<model>\n  <entity name=\"A\">\n    <attribute name=\"x\" attributeType=\"String\"/>\n", 3),
        ("<model>\n  <entity name=\"A\" name=\"B\"/>\n</model>", 2),
        ("<model>\n</model>\n<model/>", 3),
    ])
    func malformedXMLVariants(_ xml: String, _ expectedLine: Int) throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("contents")
        try Data(xml.utf8).write(to: file)
        let error = try #require(throws: OpenCoreDataError.self) { try NSManagedObjectModel.load(contentsOf: file) }
        #expect(Self.lineNumber(in: error.message, after: file.path) == expectedLine, "\(error.message)")
    }

    @Test func inconsistentModelNamesFileAndLine() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("contents")
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="A">
                    <relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B"/>
                </entity>
            </model>
            """.utf8).write(to: file)
        let error = try #require(throws: OpenCoreDataError.self) { try NSManagedObjectModel.load(contentsOf: file) }
        #expect(error.message.hasPrefix("\(file.path):4:"))
        #expect(error.message.contains("destinationEntity B"))
        #expect(error.entityName == "A")
        #expect(error.code == .fileReadCorruptFile)  // 259, as the compiled-model and archive readers
    }

    @Test func unsupportedFormatsGiveClearErrors() throws {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let legacy = scratch.appendingPathComponent("Old.xcdatamodel")
        try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
        try Data("bplist00".utf8).write(to: legacy.appendingPathComponent("elements"))
        let legacyError = try #require(throws: OpenCoreDataError.self) { try NSManagedObjectModel.load(contentsOf: legacy) }
        #expect(legacyError.message.contains("elements"))

        let momd = scratch.appendingPathComponent("Model.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        let momdError = try #require(throws: OpenCoreDataError.self) { try NSManagedObjectModel.load(contentsOf: momd) }
        #expect(momdError.message.contains(".momd"))
        #expect(NSManagedObjectModel(contentsOf: momd) == nil)
        #expect(NSManagedObjectModel(contentsOf: scratch.appendingPathComponent("Missing.xcdatamodeld")) == nil)
    }

    // MARK: Every model in the corpus

    /// Loads every `contents` file, every `.xcdatamodeld` bundle with a `contents` model and every
    /// Xcode-format `.xml` model under `$OCD_MODEL_CORPUS` (e.g. the corpus's `repos/` folder).
    /// Off unless the variable is set, so CI does not depend on a machine-specific path.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["OCD_MODEL_CORPUS"] != nil))
    func everyCorpusModelLoads() throws {
        let root = URL(fileURLWithPath: ProcessInfo.processInfo.environment["OCD_MODEL_CORPUS"]!)
        let all = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
        let contents = all.filter { $0.lastPathComponent == "contents" }
        let bundles = all.filter { bundle in
            bundle.pathExtension == "xcdatamodeld" && contents.contains { $0.path.hasPrefix(bundle.path + "/") }
        }
        // Xcode-format model XML saved under other names (phimage/MomXML's test models).
        let xml = all.filter { file in
            file.pathExtension == "xml"
                && (try? String(contentsOf: file, encoding: .utf8))?.contains("com.apple.IDECoreDataModeler.DataModel") == true
        }
        let files = contents + bundles + xml
        var loaded = 0
        for file in files {
            do {
                _ = try NSManagedObjectModel.load(contentsOf: file)
                loaded += 1
            } catch {
                Issue.record("\(error)")
            }
        }
        print("everyCorpusModelLoads: \(loaded)/\(files.count) loaded (\(contents.count) contents files, \(bundles.count) bundles, \(xml.count) .xml)")
        #expect(loaded == files.count)
        #expect(!files.isEmpty)
    }

    private static func lineNumber(in message: String, after path: String) -> Int? {
        guard let range = message.range(of: path + ":") else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }
}
