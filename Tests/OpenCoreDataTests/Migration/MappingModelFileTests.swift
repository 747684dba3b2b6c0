import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Xcode mapping model files (`.xcmappingmodel`, an `xcmapping.xml` in Core Data's old XML store
/// format) from the corpus load with the entity and property mappings their XML records, and
/// with the expressions Xcode's mapping compiler generates for what it leaves empty.
@Suite("Migration: mapping model files")
struct MappingModelFileTests {
    /// Every entity mapping as `name type policy` followed by its source expression and each
    /// property mapping as `name: expression` (attributes, then relationships, by name).
    static func lines(_ mapping: NSMappingModel) -> [String] {
        mapping.entityMappings.flatMap { entity in
            [
                "\(entity.name ?? "?") \(entity.mappingType.rawValue) \(entity.entityMigrationPolicyClassName ?? "None")",
                "source: \(entity.sourceExpression.map { "\($0)" } ?? "nil")",
            ]
                + ((entity.attributeMappings ?? []) + (entity.relationshipMappings ?? [])).map {
                    "\($0.name ?? "?"): \($0.valueExpression.map { "\($0)" } ?? "nil")"
                }
        }
    }

    static func fetch(_ entity: String) -> String {
        "source: FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\(entity)\", \"TRUEPREDICATE\"), $manager.sourceContext, 0)"
    }

    static func destinations(_ mapping: String, _ key: String) -> String {
        "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mapping)\", $source.\(key))"
    }

    @Test func coreDataPlusMappingMatchesWhatXcodeCompiledFromIt() throws {
        // Expected lines: the corpus's V2toV3.cdm, which Xcode compiled from this V2toV3.xcmappingmodel
        // (decoded with Python's plistlib; FETCH's `NO` prints as 0 here).
        let url = try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel")
        let mapping = try #require(NSMappingModel(contentsOf: url))
        let owner = Self.destinations("PersonToPerson", "owner")
        let cars =
            "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"cars\", $source.cars)"
        func car(_ name: String, _ extra: [String] = []) -> [String] {
            ["\(name)To\(name) 1 REPLACE_AT_RUNTIME.V2to3MakerPolicy", Self.fetch(name)] + extra + [
                "markedForDeletionAsOf: $source.markedForDeletionAsOf", "model: $source.model",
                "numberPlate: $source.numberPlate", "createdBy: nil", "owner: \(owner)", "previousOwners: \(owner)",
            ]
        }
        let expected =
            car("Car") + car("LuxuryCar", ["isLimitedEdition: $source.isLimitedEdition"])
            + [
                "PersonToPerson 4 None", Self.fetch("Person"), "firstName: $source.firstName",
                "lastName: $source.lastName", "updatedAt: $source.updatedAt", "cars: \(cars)", "previousCars: \(cars)",
            ]
            + car("SportCar") + ["Maker 2 None", "source: nil", "name: nil", "cars: nil"]
        #expect(Self.lines(mapping) == expected)
        // Entity version hashes come from the models the file names (found above the file).
        let v2 = try NSManagedObjectModel.load(
            contentsOf: try fixture(
                "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"))
        #expect(
            mapping.entityMappingsByName["PersonToPerson"]?.sourceEntityVersionHash
                == v2.entitiesByName["Person"]?.versionHash)
        #expect(mapping.entityMappingsByName["Maker"]?.sourceEntityVersionHash == nil)
    }

    @Test(.enabled(if: Corpus.isPresent))
    func compiledMappingReadsLikeTheXcodeFileItWasCompiledFrom() throws {
        let base = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/"
        let cdm = try #require(NSMappingModel(contentsOf: Corpus.repo(base + "Fixtures/V2toV3.cdm")))
        let xml = try #require(NSMappingModel(contentsOf: try fixture(base + "MappingModels/V2toV3.xcmappingmodel")))
        // The .cdm decoder keeps only the fetch request of Xcode's FETCH(…, $manager.sourceContext, NO).
        let unwrapped = Self.lines(xml).map {
            $0.replacingOccurrences(
                of: #"^source: FETCH\((.*), \$manager\.sourceContext, 0\)$"#, with: "source: $1", options: .regularExpression)
        }
        #expect(Self.lines(cdm) == unwrapped)
        #expect(cdm.entityMappings.map(\.sourceEntityVersionHash) == xml.entityMappings.map(\.sourceEntityVersionHash))
        #expect(
            cdm.entityMappings.map(\.destinationEntityVersionHash) == xml.entityMappings.map(\.destinationEntityVersionHash))
    }

    @Test func bookMigrationMappingsLoadWithPolicyAndUserInfo() throws {
        let root = "hwaxxer+BookMigration/BookMigration/"
        let first = try #require(NSMappingModel(contentsOf: try fixture(root + "Model1_to_Model2.xcmappingmodel")))
        #expect(
            Self.lines(first) == [
                "UserToUser 4 None", Self.fetch("User"), "userId: $source.userId",
                "books: \(Self.destinations("BookToBook", "books"))",
                "Author 2 None", "source: nil", "name: nil", "books: nil",
                "BookToBook 1 MHWBookToBookPolicy", Self.fetch("Book"), "fileURL: $source.fileURL",
                "title: $source.title",
                "authors: nil", "users: nil",
            ])
        #expect(first.entityMappingsByName["BookToBook"]?.userInfo?["modelVersion"] as? String == "2")

        let second = try #require(NSMappingModel(contentsOf: try fixture(root + "Model2_to_Model3.xcmappingmodel")))
        #expect(
            Self.lines(second) == [
                "File 2 None", "source: nil", "fileURL: nil", "book: nil", "user: nil",
                "BookToBook 1 MHWBookToBookPolicy", Self.fetch("Book"), "title: $source.title",
                "authors: \(Self.destinations("AuthorToAuthor", "authors"))", "files: nil",
                "AuthorToAuthor 4 None", Self.fetch("Author"), "name: $source.name",
                "books: \(Self.destinations("BookToBook", "books"))",
            ])
        #expect(second.entityMappingsByName["BookToBook"]?.userInfo?["modelVersion"] as? String == "3")

        let users = try #require(NSMappingModel(contentsOf: try fixture(root + "Model2_to_Model3_User.xcmappingmodel")))
        #expect(Self.lines(users) == ["UserToUser 4 None", Self.fetch("User"), "userId: $source.userId", "files: nil"])
    }

    @Test func mwkMappingSplitsEmployeesThroughItsPolicy() throws {
        let url = try fixture("mwkirk+MWKCoreData/Tests/Model/MappingModels/MWKCoreDataTestsV2ToV3.xcmappingmodel")
        let mapping = try #require(NSMappingModel(contentsOf: url))
        // firstName and lastName have no source attribute: only the policy can fill them.
        #expect(
            Self.lines(mapping) == [
                "EmployeeToEmployee 1 EmployeeToEmployeePolicy", Self.fetch("Employee"), "firstName: nil",
                "lastName: nil",
                "dept: \(Self.destinations("DeptToDept", "dept"))",
                "DeptToDept 4 None", Self.fetch("Dept"), "name: $source.name",
                "employees: \(Self.destinations("EmployeeToEmployee", "employees"))",
            ])
        #expect(mapping.entityMappings[0].userInfo?["destModelVersion"] as? String == "3")
    }

    @Test func recipesMappingAddsChefs() throws {
        // Its models ("Recipes", "Recipes 2") are pre-Xcode 4 `elements` archives, which are not read:
        // the mapping loads as written, with every expression left to generate once a migration
        // manager supplies the models.
        let url = try fixture("thepost+iPhoneCoreDataRecipesMigration/Classes/MappingModel.xcmappingmodel")
        let mapping = try #require(NSMappingModel(contentsOf: url))
        #expect(
            mapping.entityMappings.map(\.name) == [
                "RecipeToRecipe", "Chef", "ImageToImage", "RecipeTypeToRecipeType", "IngredientToIngredient",
            ])
        #expect(mapping.entityMappings.map(\.sourceEntityName) == ["Recipe", nil, "Image", "RecipeType", "Ingredient"])
        #expect(
            mapping.entityMappings.allSatisfy {
                $0.mappingType == .undefinedEntityMappingType && $0.sourceEntityVersionHash == nil
            })
        let recipe = try #require(mapping.entityMappingsByName["RecipeToRecipe"])
        #expect(
            recipe.attributeMappings?.map(\.name) == ["instructions", "name", "overview", "prepTime", "thumbnailImage"])
        #expect(recipe.relationshipMappings?.map(\.name) == ["chef", "image", "ingredients", "type"])
        #expect(
            ((recipe.attributeMappings ?? []) + (recipe.relationshipMappings ?? [])).allSatisfy {
                $0.valueExpression == nil && $0._autogeneratesExpression
            })
        #expect(mapping.entityMappings[0].userInfo?.isEmpty == true)
    }

    @Test func migrationV2MappingKeepsItsOwnExpressions() throws {
        // Its models are pre-Xcode 4 (`elements` archives) and cannot be read: what the XML states
        // loads, nothing is generated, and the mapping types stay as written.
        let url = try fixture("fruitsamples+MigrationV2/Models/MappingModel.xcmappingmodel")
        let mapping = try #require(NSMappingModel(contentsOf: url))
        #expect(
            Self.lines(mapping) == [
                "RecipeToCuisine 1 CuisineMigrationPolicy", "source: nil", "name: $source.cuisine",
                "recipes: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"RecipeToRecipe\", $source)",
                "RecipeToRecipe 5 None", "source: nil", "directions: nil", "name: nil", "rating: nil", "chef: nil",
                "cuisines: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"RecipeToCuisine\", $source)",
                "ingredients: nil",
                "IngredientToIngredient 5 None", "source: nil", "amount: nil", "name: nil",
                "recipe: \(Self.destinations("RecipeToRecipe", "recipes"))",
                "ChefToChef 5 None", "source: nil",
                "firstName: FUNCTION(CAST(\"MigrationFunctions\", \"Class\"), \"getFirstName:\", $source.name)",
                "lastName: FUNCTION(CAST(\"MigrationFunctions\", \"Class\"), \"getLastName:\", $source.name)",
                "recipes: nil",
            ])
        // Generated later, once a migration manager knows the models.
        #expect(mapping.entityMappings[1].attributeMappings?.allSatisfy(\._autogeneratesExpression) == true)
    }

    @Test func badFilesGiveNil() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(NSMappingModel(contentsOf: nil) == nil)
        #expect(NSMappingModel(contentsOf: directory.file("Missing.xcmappingmodel")) == nil)
        // A compiled mapping model that is not an archive.
        let cdm = directory.file("V2toV3.cdm")
        try Data("not an archive".utf8).write(to: cdm)
        #expect(NSMappingModel(contentsOf: cdm) == nil)
        let broken = directory.file("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("<database><object".utf8).write(to: broken.appendingPathComponent("xcmapping.xml"))
        #expect(NSMappingModel(contentsOf: broken) == nil)
        #expect(throws: OpenCoreDataError.self) { try NSMappingModel._load(contentsOf: broken) }
    }

    @Test func bundlesAreSearchedForTheMappingOfTwoModels() throws {
        let folder = try fixture("mwkirk+MWKCoreData/Tests/Model")
        let bundle = try #require(Bundle(url: folder))
        let versions = ModelVersionBundle.versions(
            inBundle: folder.appendingPathComponent("MWKCoreDataTests.xcdatamodeld"))
        #expect(versions.count == 3)
        // Bundle(url:) on Linux takes any folder; its mapping models are one level down here.
        let found = NSMappingModel(from: [bundle], forSourceModel: versions[1], destinationModel: versions[2])
        #expect(found?.entityMappings.map(\.name) == ["EmployeeToEmployee", "DeptToDept"])
        // Version 1 has no Dept entity: no mapping model maps it.
        #expect(NSMappingModel(from: [bundle], forSourceModel: versions[0], destinationModel: versions[2]) == nil)
        #expect(NSMappingModel(from: [bundle], forSourceModel: versions[1], destinationModel: versions[1]) == nil)
    }
}
