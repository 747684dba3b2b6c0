import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Pre-Xcode 4 models: a `.xcdatamodel` folder with a binary `elements` archive (Xcode 3's UML
/// classes) instead of XML `contents`. The corpus has eight; the stores Apple's Core Data wrote
/// with three of them record the version hashes our decoded models must give.
@Suite("Pre-Xcode 4 elements models", .enabled(if: Corpus.isPresent))
struct LegacyElementsModelTests {
    static let recipes = "thepost+iPhoneCoreDataRecipesMigration/Recipes.xcdatamodeld/"
    static let migration = "fruitsamples+MigrationV2/Models/Migration.xcdatamodeld/"

    static func model(_ path: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel.load(contentsOf: Corpus.repo(path))
    }

    /// Every `elements` file of the corpus, as a path under `repos/`.
    static func elementsFiles() -> [String] {
        let root = Corpus.root!.appendingPathComponent("repos").standardizedFileURL.path
        let found = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return found.filter { $0.hasSuffix(".xcdatamodel/elements") }.sorted()
    }

    /// One line per property, as `entity.property: facts`.
    static func lines(_ model: NSManagedObjectModel) -> [String] {
        model.entities.flatMap { entity in
            entity.properties.sorted { $0.name < $1.name }.map { property -> String in
                var facts = [property.isOptional ? "optional" : "required"]
                if let attribute = property as? NSAttributeDescription {
                    facts.append("type \(attribute.attributeType.rawValue)")
                    if let value = attribute.defaultValue { facts.append("default \(value)") }
                    if let name = attribute.valueTransformerName { facts.append("transformer \(name)") }
                } else if let relationship = property as? NSRelationshipDescription {
                    facts.append(
                        "-> \(relationship.destinationEntity?.name ?? "?").\(relationship.inverseRelationship?.name ?? "-")")
                    facts.append("min \(relationship.minCount) max \(relationship.maxCount)")
                    facts.append("rule \(relationship.deleteRule.rawValue)")
                }
                return "\(entity.name ?? "?").\(property.name): " + facts.joined(separator: " ")
            }
        }
    }

    @Test func everyElementsModelOfTheCorpusLoadsWithEveryKeyKnown() throws {
        let files = Self.elementsFiles()
        #expect(files.count == 8)
        for path in files {
            let folder = Corpus.repo(path).deletingLastPathComponent()
            let model = try #require(NSManagedObjectModel(contentsOf: folder), "\(path)")
            #expect(!model.entities.isEmpty, "\(path)")
            #expect(model._xcodeModelFile?.unrecognizedElements == [], "\(path)")
            #expect(model._xcodeModelFile?.url.lastPathComponent == "elements")
            // The `elements` file itself loads too, to the same model.
            let direct = try NSManagedObjectModel.load(contentsOf: Corpus.repo(path))
            #expect(direct.entityVersionHashesByName == model.entityVersionHashesByName, "\(path)")
        }
    }

    @Test func bundlesOfElementsVersionsLoadTheirCurrentVersion() throws {
        // Both bundles name their first version current in .xccurrentversion.
        let recipes = try Self.model(String(Self.recipes.dropLast()))
        #expect(recipes.versionIdentifiers == ["1.1"])
        #expect(recipes.entities.compactMap(\.name) == ["Image", "Ingredient", "Recipe", "RecipeType"])
        let migration = try Self.model(String(Self.migration.dropLast()))
        #expect(migration.entities.compactMap(\.name) == ["Chef", "Ingredient", "Recipe"])
        // The versions of a bundle, as migration finds them.
        let versions = ModelVersionBundle.versions(inBundle: Corpus.repo(String(Self.recipes.dropLast())))
        #expect(Set(versions.flatMap(\.versionIdentifiers)) == ["1.1", "2.0"])
    }

    /// The entity version hashes Apple's Core Data stored in stores written with these models
    /// (stores-reports), equal to ours: Apple's Recipes seed (framework 241, and re-saved by 754)
    /// with Recipes v1 (thepost's and MagicalRecord's copies), RestKit's seed with RKTwitterCoreData.
    @Test(arguments: [
        ("alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.sqlite", recipes + "Recipes.xcdatamodel"),
        ("magicalpanda+MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite", recipes + "Recipes.xcdatamodel"),
        (
            "magicalpanda+MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite",
            "magicalpanda+MagicalRecord/Samples/iOS/Application/Models/Recipes.xcdatamodeld"
        ),
        (
            "RestKit+RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite",
            "RestKit+RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel"
        ),
    ])
    func hashesEqualThoseAppleStored(_ store: String, _ modelPath: String) throws {
        let model = try Self.model(modelPath)
        let stored = try Corpus.report(store).versionHashes
        #expect(!stored.isEmpty)
        #expect(model.entityVersionHashesByName.mapValues { $0.base64EncodedString() } == stored)
    }

    /// The stores written with these models open with them (a copy, never the corpus file) and
    /// every object reads, every attribute and relationship touched, counts equal to the reports'.
    @Test(arguments: [
        ("alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.sqlite", recipes + "Recipes.xcdatamodel"),
        (
            "magicalpanda+MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite",
            "magicalpanda+MagicalRecord/Samples/iOS/Application/Models/Recipes.xcdatamodeld"
        ),
        (
            "RestKit+RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite",
            "RestKit+RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel"
        ),
    ])
    func storesOpenWithTheirElementsModelAndReadEveryRow(_ store: String, _ modelPath: String) throws {
        #expect(RecipesImageToDataTransformer.registered)  // the Recipes sample's transformer, ported
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(store, to: directory.url)
        let report = try Corpus.report(store)
        let model = try Self.model(modelPath)
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        var total = 0
        for entity in model.entities {
            let objects = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity.name!))
            #expect(objects.count == report.rowCounts["Z" + entity.name!.uppercased()], "\(store): \(entity.name!)")
            for object in objects {
                for key in entity.propertiesByName.keys { _ = object.value(forKey: key) }
            }
            total += objects.count
        }
        #expect(total > 0)
    }

    @Test func gilpaBooksStoreHashesTheModelWithoutTheColumnAddedByHand() throws {
        // gilpa's store (framework 320) has a ZCONTENTS column added with ALTER TABLE (its schema
        // says `"ZCONTENTS" VARCHAR DEFAULT test`), and the model an optional `contents` attribute:
        // the stored hash is the model's without `contents`, i.e. Apple's CoreDataBooks.
        let model = try Self.model("gilpa+iphone_sqlite_test/CoreDataBooks.xcdatamodel")
        let stored = try #require(try Corpus.report("gilpa+iphone_sqlite_test/CoreDataBooks.sqlite").versionHashes["Book"])
        let book = try #require(model.entitiesByName["Book"])
        #expect(book.versionHash.base64EncodedString() != stored)
        book.properties.removeAll { $0.name == "contents" }
        #expect(book.versionHash.base64EncodedString() == stored)
    }

    @Test func recipesVersionOneReadsAsWritten() throws {
        let model = try Self.model(Self.recipes + "Recipes.xcdatamodel")
        #expect(
            Self.lines(model) == [
                "Image.image: optional type 1800 transformer ImageToDataTransformer",
                "Image.recipe: required -> Recipe.image min 1 max 1 rule 1",
                "Ingredient.amount: optional type 700",
                "Ingredient.displayOrder: required type 100 default 0",
                "Ingredient.name: required type 700 default Ingredient Name",
                "Ingredient.recipe: optional -> Recipe.ingredients min 1 max 1 rule 1",
                "Recipe.image: optional -> Image.recipe min 1 max 1 rule 2",
                "Recipe.ingredients: optional -> Ingredient.recipe min 0 max 0 rule 2",
                "Recipe.instructions: optional type 700",
                "Recipe.name: optional type 700",
                "Recipe.overview: optional type 700",
                "Recipe.prepTime: optional type 700",
                "Recipe.thumbnailImage: optional type 1800 transformer ImageToDataTransformer",
                "Recipe.type: optional -> RecipeType.recipes min 1 max 1 rule 1",
                "RecipeType.name: optional type 700",
                "RecipeType.recipes: optional -> Recipe.type min 0 max 0 rule 1",
            ])
        let ingredient = try #require(model.entitiesByName["Ingredient"])
        #expect(ingredient.managedObjectClassName == "Ingredient")
        #expect(model.entitiesByName["Image"]?.managedObjectClassName == "NSManagedObject")
        #expect(ingredient.attributesByName["displayOrder"]?.defaultValue as? Int16 == 0)
        // Indexed relationships (XD_PPSK_isIndexed) and user info, nested dictionaries included.
        #expect(model.entitiesByName["Recipe"]?.relationshipsByName["type"]?.isIndexed == true)
        #expect(model.entitiesByName["Recipe"]?.attributesByName["name"]?.isIndexed == false)
        #expect(ingredient.userInfo?["com.apple.syncservices.ExcludeFromDataChangeAlert"] as? String == "NO")
        let policy = ingredient.attributesByName["name"]?.userInfo?["com.apple.syncservices.AutomaticResolutionPolicy"]
        #expect((policy as? [AnyHashable: Any])?["PreferredRecord"] as? String == "Truth")
    }

    @Test func migrationModelsReadAsWritten() throws {
        // Written by an older Xcode than the Recipes models: fewer stereotype keys (no isToMany on
        // to-one relationships, no default or bound keys), which mean their defaults.
        let old = try Self.model(Self.migration + "Migration_Old.xcdatamodel")
        #expect(
            Self.lines(old) == [
                "Chef.name: required type 700",
                "Chef.recipes: optional -> Recipe.chef min 1 max 1 rule 2",
                "Chef.training: optional type 700",
                "Ingredient.amount: required type 700",
                "Ingredient.name: required type 700",
                "Ingredient.recipes: required -> Recipe.ingredients min 1 max 1 rule 1",
                "Recipe.chef: required -> Chef.recipes min 1 max 1 rule 2",
                "Recipe.cuisine: optional type 700",
                "Recipe.directions: optional type 700",
                "Recipe.ingredients: optional -> Ingredient.recipes min 0 max 0 rule 1",
                "Recipe.name: required type 700",
            ])
        let new = try Self.model(Self.migration + "Migration_New.xcdatamodel")
        #expect(new.entities.compactMap(\.name) == ["Chef", "Cuisine", "Ingredient", "Recipe"])
        #expect(new.entitiesByName["Recipe"]?.managedObjectClassName == "Order")
        #expect(new.entitiesByName["Recipe"]?.attributesByName["rating"]?.defaultValue as? Int16 == 3)
        #expect(new.entitiesByName["Recipe"]?.attributesByName["directions"]?.attributeType == .dateAttributeType)
        // Validation bounds (XD_PAttK_minValueString/maxValueString) become validation predicates.
        let rating = try #require(new.entitiesByName["Recipe"]?.attributesByName["rating"])
        #expect(rating._xcodeModelExtras?.minValueString == "0" && rating._xcodeModelExtras?.maxValueString == "5")
        #expect(rating.validationPredicates.count == 2)
        let books = try Self.model("gilpa+iphone_sqlite_test/CoreDataBooks.xcdatamodel")
        #expect(books.entitiesByName["Book"]?.attributesByName["title"]?._xcodeModelExtras?.minValueString == "1")
    }

    @Test func mappingModelsRecordTheHashesOfTheDecodedModels() throws {
        // The .xcmappingmodel files name their models by path; with the models readable, the
        // mapping's source and destination entities carry their version hashes.
        for (mappingPath, sourcePath, destinationPath) in [
            (
                "thepost+iPhoneCoreDataRecipesMigration/Classes/MappingModel.xcmappingmodel",
                Self.recipes + "Recipes.xcdatamodel", Self.recipes + "Recipes 2.xcdatamodel"
            ),
            (
                "fruitsamples+MigrationV2/Models/MappingModel.xcmappingmodel",
                Self.migration + "Migration_Old.xcdatamodel", Self.migration + "Migration_New.xcdatamodel"
            ),
        ] {
            let mapping = try #require(NSMappingModel(contentsOf: Corpus.repo(mappingPath)))
            let source = try Self.model(sourcePath)
            let destination = try Self.model(destinationPath)
            for entityMapping in mapping.entityMappings {
                if let name = entityMapping.sourceEntityName {
                    #expect(entityMapping.sourceEntityVersionHash == source.entitiesByName[name]?.versionHash, "\(name)")
                    #expect(entityMapping.sourceEntityVersionHash != nil)
                }
                if let name = entityMapping.destinationEntityName {
                    #expect(
                        entityMapping.destinationEntityVersionHash == destination.entitiesByName[name]?.versionHash,
                        "\(name)")
                    #expect(entityMapping.destinationEntityVersionHash != nil)
                }
            }
            #expect(mapping._matches(sourceModel: source, destinationModel: destination), "\(mappingPath)")
            #expect(!mapping._matches(sourceModel: destination, destinationModel: source), "\(mappingPath)")
        }
    }

    // MARK: Bad files

    /// Copies a corpus `elements` file into a `.xcdatamodel` folder of `directory`, changed by `edit`.
    private func damaged(_ directory: TemporaryDirectory, _ edit: (inout Data) -> Void) throws -> URL {
        var data = try Data(contentsOf: Corpus.repo(Self.recipes + "Recipes.xcdatamodel/elements"))
        edit(&data)
        let folder = directory.file("Damaged.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try data.write(to: folder.appendingPathComponent("elements"))
        return folder
    }

    /// Replaces every occurrence of an ASCII string by another of the same length (a binary
    /// property list stores strings with their length, so the file stays well-formed).
    private static func replace(_ old: String, _ new: String, in data: inout Data) {
        precondition(old.utf8.count == new.utf8.count)
        let target = Data(old.utf8)
        var start = data.startIndex
        while let range = data.range(of: target, in: start..<data.endIndex) {
            data.replaceSubrange(range, with: Data(new.utf8))
            start = range.upperBound
        }
    }

    @Test func badElementsFilesThrow259NamingTheFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cases: [(String, (inout Data) -> Void, String)] = [
            ("truncated", { $0 = $0.prefix($0.count / 2) }, "is not a property list"),
            ("empty", { $0 = Data() }, "is not a property list"),
            ("not an archive", { $0 = Data("<plist><dict/></plist>".utf8) }, "not a keyed archive"),
            ("another root class", { Self.replace("XDPMModel", "XDPMMode1", in: &$0) }, "not Xcode's XDPMModel"),
            ("no attribute type", { Self.replace("XD_PAttK_attributeType", "XD_PAttK_attributeTypf", in: &$0) }, "has no attribute type"),
            ("destination not an entity", { Self.replace("XD_PRK_destination", "XD_PRK_destinatioN", in: &$0) }, "has no destinationEntity"),
        ]
        for (label, edit, reason) in cases {
            let folder = try damaged(directory, edit)
            #expect(NSManagedObjectModel(contentsOf: folder) == nil, "\(label)")
            let error = try #require(throws: OpenCoreDataError.self, "\(label)") {
                _ = try NSManagedObjectModel.load(contentsOf: folder)
            }
            #expect(error.code == .fileReadCorruptFile, "\(label)")
            #expect(error.errorCode == 259, "\(label)")
            #expect(error.message.contains(folder.appendingPathComponent("elements").path), "\(label): \(error.message)")
            #expect(error.message.contains(reason), "\(label): \(error.message)")
            try FileManager.default.removeItem(at: folder)
        }
    }

    @Test func unknownKeysAreReportedNotDropped() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A stereotype value this reader does not know, and an unknown field of an entity.
        let folder = try damaged(directory) { data in
            Self.replace("XD_PPSK_isSpotlightIndexed", "XD_PPSK_isSpotlightIndexeX", in: &data)
            Self.replace("_uniqueElementID", "_uniqueElementIX", in: &data)
        }
        let model = try NSManagedObjectModel.load(contentsOf: folder)
        let notes = model._xcodeModelFile?.unrecognizedElements ?? []
        #expect(notes.contains("entity Recipe: property name: stereotype value XD_PPSK_isSpotlightIndexeX"))
        #expect(notes.contains("entity Recipe: _uniqueElementIX"))
        #expect(notes.contains("package: _uniqueElementIX"))
        // The model is still the same model.
        let original = try Self.model(Self.recipes + "Recipes.xcdatamodel")
        #expect(model.entityVersionHashesByName == original.entityVersionHashesByName)
    }
}
