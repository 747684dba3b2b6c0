import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

// Swift port of MigrationV2's `CuisineMigrationPolicy`, which its mapping names for RecipeToCuisine
// (the Objective-C original is not in the corpus): one `Cuisine` per distinct `cuisine` string of
// the recipes, shared through the manager's `userInfo`; recipes without a cuisine make none.
final class CuisineMigrationPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let name = sInstance.value(forKey: "cuisine") as? String, !name.isEmpty else { return }
        var cuisines = manager.userInfo?["cuisines"] as? [String: NSManagedObject] ?? [:]
        let cuisine =
            cuisines[name]
            ?? NSEntityDescription.insertNewObject(
                forEntityName: mapping.destinationEntityName!, into: manager.destinationContext)
        cuisine.setValue(name, forKey: "name")
        cuisines[name] = cuisine
        manager.userInfo = (manager.userInfo ?? [:]).merging(["cuisines": cuisines]) { $1 }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: cuisine, for: mapping)
    }
}

/// The Swift-native stand-in for MigrationV2's `MigrationFunctions` class: its mapping calls
/// `FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", $source.name)`, a class method,
/// which has no Swift equivalent here (that FUNCTION evaluates to nil). The mapping is changed in
/// code to call the same selectors on `$entityPolicy`, answered by this policy.
final class ChefNamePolicy: NSEntityMigrationPolicy {
    override func migrationFunction(named selectorName: String, arguments: [Any?], manager: NSMigrationManager) throws
        -> Any?
    {
        let parts = (arguments.first as? String ?? "").split(separator: " ", maxSplits: 1).map(String.init)
        switch selectorName {
        case "getFirstName:": return parts.first ?? ""
        case "getLastName:": return parts.count > 1 ? parts[1] : ""
        default: return try super.migrationFunction(named: selectorName, arguments: arguments, manager: manager)
        }
    }
}

/// Port of the Recipes sample's `ImageToDataTransformer` (UIImage ↔ PNG data): on Linux an image
/// is kept as its PNG bytes, so both directions pass the data through.
final class RecipesImageToDataTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSData.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { value as? Data }
    override func reverseTransformedValue(_ value: Any?) -> Any? { value as? Data }

    /// Registers the transformer under the name the Recipes models give (once per process).
    static let registered: Bool = {
        ValueTransformer.setValueTransformer(
            RecipesImageToDataTransformer(), forName: NSValueTransformerName("ImageToDataTransformer"))
        return true
    }()
}

/// The corpus's two pre-Xcode 4 migration fixture sets (MANIFEST §3), migrated with data through
/// their own `.xcmappingmodel` files, with every row checked after.
@Suite("Migration: legacy elements fixture sets", .enabled(if: Corpus.isPresent), .serialized)
struct LegacyMigrationFixtureTests {
    static let recipes = "thepost+iPhoneCoreDataRecipesMigration/Recipes.xcdatamodeld/"
    static let recipesStore = "alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.sqlite"
    static let migration = "fruitsamples+MigrationV2/Models/"

    static func model(_ path: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel.load(contentsOf: Corpus.repo(path))
    }

    /// A value as text: objects by their attributes, sets sorted, transformable bytes by size and sum.
    static func describe(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let undecodable as UndecodableTransformedValue:
            return "\(undecodable.data.count) bytes sum \(undecodable.data.reduce(0) { $0 &+ Int($1) })"
        case let data as Data: return "\(data.count) bytes sum \(data.reduce(0) { $0 &+ Int($1) })"
        case let object as NSManagedObject:
            return object.entity.attributesByName.keys.sorted().map { "\($0):\(describe(object.value(forKey: $0)))" }
                .joined(separator: "/")
        case let set as Set<NSManagedObject>: return "[" + set.map { describe($0) }.sorted().joined(separator: ", ") + "]"
        case let value?: return "\(value)"
        }
    }

    /// Every object of `entity` as `key=value` for `keys`, sorted.
    static func rows(_ entity: String, _ keys: [String], _ context: NSManagedObjectContext) throws -> [String] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)).map { object in
            keys.map { "\($0)=\(describe(object.value(forKey: $0)))" }.joined(separator: " ")
        }
        .sorted()
    }

    // MARK: Recipes v1 → Recipes 2 (Apple's Recipes.sqlite)

    static let recipeKeys = ["name", "overview", "prepTime", "instructions", "thumbnailImage", "image", "ingredients"]

    @Test func applesRecipesStoreMigratesToRecipes2ThroughTheProjectsMappingModel() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(RecipesImageToDataTransformer.registered)
        let original = try Data(contentsOf: Corpus.repo(Self.recipesStore))
        let url = try Corpus.copyStore(Self.recipesStore, to: directory.url)
        let report = try Corpus.report(Self.recipesStore)

        // Every row as version 1 reads it (the store was written with this very model).
        let v1 = try Self.model(Self.recipes + "Recipes.xcdatamodel")
        let reader = try StoreHarness.coordinator(model: v1, storeType: NSSQLiteStoreType, url: url)
        var context = StoreHarness.context(reader)
        let recipes = try Self.rows("Recipe", Self.recipeKeys + ["type"], context)
        let types = try Self.rows("RecipeType", ["name"], context)
        let ingredients = try Self.rows("Ingredient", ["name", "amount", "displayOrder"], context)
        let images = try Self.rows("Image", ["image"], context)
        StoreHarness.close(reader)
        #expect(recipes.count == report.rowCounts["ZRECIPE"] && types.count == report.rowCounts["ZRECIPETYPE"])
        #expect(ingredients.count == report.rowCounts["ZINGREDIENT"] && images.count == report.rowCounts["ZIMAGE"])
        #expect(!recipes.contains { $0.contains("name=nil") || $0.contains("type=nil") })

        // Recipes 2 (not the bundle's current version): addPersistentStore finds version 1 in the
        // bundle and Classes/MappingModel.xcmappingmodel beside it, and migrates.
        let v2 = try Self.model(Self.recipes + "Recipes 2.xcdatamodel")
        let coordinator = try StoreHarness.coordinator(
            model: v2, storeType: NSSQLiteStoreType, url: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        defer { StoreHarness.close(coordinator) }
        context = StoreHarness.context(coordinator)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["2.0"])

        // Every value is still there; `type` is to-many in version 2 and holds the one type.
        #expect(try Self.rows("Recipe", Self.recipeKeys, context) == recipes.map { $0.components(separatedBy: " type=")[0] })
        let typed = try Self.rows("Recipe", ["name", "type"], context)
        let before = recipes.map { row -> String in
            let parts = row.components(separatedBy: " type=")
            return "\(parts[0].components(separatedBy: " overview=")[0]) type=[\(parts[1])]"
        }
        #expect(typed == before)
        #expect(try Self.rows("RecipeType", ["name"], context) == types)
        #expect(try Self.rows("Ingredient", ["name", "amount", "displayOrder"], context) == ingredients)
        #expect(try Self.rows("Image", ["image"], context) == images)
        // The mapping's Chef mapping has no source entity: no chef is made, and no recipe has one.
        #expect(try Self.rows("Chef", ["firstName"], context) == [])
        #expect(try Self.rows("Recipe", ["chef"], context).allSatisfy { $0 == "chef=nil" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") } == [])
        #expect(try Data(contentsOf: Corpus.repo(Self.recipesStore)) == original)
    }

    // MARK: MigrationV2: Migration_Old → Migration_New

    /// A Migration_Old store written through our API: three recipes, two cuisines, three chefs.
    private func makeOldStore(in directory: TemporaryDirectory) throws -> URL {
        let old = try Self.model(Self.migration + "Migration.xcdatamodeld/Migration_Old.xcdatamodel")
        return try MigrationFixture.makeStore(old, in: directory) { context in
            for (name, cuisine, directions, chefName, training, items) in [
                ("Carbonara", "Italian", "Boil, toss.", "Marco Bianchi", "Rome", [("Spaghetti", "200 g"), ("Egg", "2")]),
                ("Risotto", "Italian", nil, "Anna Rossi", nil, [("Rice", "150 g")]),
                ("Ramen", "Japanese", "Simmer.", "Ken", "Tokyo", [("Noodles", "1 pack"), ("Broth", "500 ml")]),
                ("Toast", nil, nil, "Sam Jones Jr", nil, [("Bread", "1 slice")]),
            ] as [(String, String?, String?, String, String?, [(String, String)])] {
                let recipe = NSEntityDescription.insertNewObject(forEntityName: "Recipe", into: context)
                recipe.setValue(name, forKey: "name")
                recipe.setValue(cuisine, forKey: "cuisine")
                recipe.setValue(directions, forKey: "directions")
                let chef = NSEntityDescription.insertNewObject(forEntityName: "Chef", into: context)
                chef.setValue(chefName, forKey: "name")
                chef.setValue(training, forKey: "training")
                recipe.setValue(chef, forKey: "chef")
                for (itemName, amount) in items {
                    let ingredient = NSEntityDescription.insertNewObject(forEntityName: "Ingredient", into: context)
                    ingredient.setValue(itemName, forKey: "name")
                    ingredient.setValue(amount, forKey: "amount")
                    ingredient.setValue(recipe, forKey: "recipes")
                }
            }
        }
    }

    private func mapping() throws -> NSMappingModel {
        try #require(NSMappingModel(contentsOf: Corpus.repo(Self.migration + "MappingModel.xcmappingmodel")))
    }

    @Test func migrationV2AsWrittenStopsAtTheClassFunctionAndKeepsTheStore() throws {
        // ChefToChef fills the required firstName/lastName with FUNCTION on the MigrationFunctions
        // class; without an Objective-C runtime that is nil, so the destination fails validation
        // (Apple's would call the class method). The old store is left as it was.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try makeOldStore(in: directory)
        let before = try MigrationFixture.bytes(url)
        let old = try Self.model(Self.migration + "Migration.xcdatamodeld/Migration_Old.xcdatamodel")
        let new = try Self.model(Self.migration + "Migration.xcdatamodeld/Migration_New.xcdatamodel")
        let error = try #require(throws: OpenCoreDataError.self) {
            try NSMigrationManager(sourceModel: old, destinationModel: new).migrateStore(
                from: url, type: NSSQLiteStoreType, mapping: try mapping(), to: directory.file("New.sqlite"),
                type: NSSQLiteStoreType)
        }
        #expect(error.code == .validationMissingMandatoryProperty || error.detailedErrors.contains {
            $0.code == .validationMissingMandatoryProperty
        }, "\(error)")
        #expect(try MigrationFixture.bytes(url) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.file("New.sqlite").path))
    }

    @Test func migrationV2MigratesWithItsPolicyAndTheSwiftStandInForMigrationFunctions() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try makeOldStore(in: directory)
        let old = try Self.model(Self.migration + "Migration.xcdatamodeld/Migration_Old.xcdatamodel")
        let new = try Self.model(Self.migration + "Migration.xcdatamodeld/Migration_New.xcdatamodel")
        let mapping = try mapping()
        let chefs = try #require(mapping.entityMappingsByName["ChefToChef"])
        chefs.entityMigrationPolicyClassName = "ChefNamePolicy"
        for attribute in chefs.attributeMappings ?? [] where attribute.name == "firstName" || attribute.name == "lastName" {
            let selector = attribute.name == "firstName" ? "getFirstName:" : "getLastName:"
            attribute.valueExpression = NSExpression(format: "FUNCTION($entityPolicy, '\(selector)', $source.name)")
        }
        let destination = directory.file("New.sqlite")
        let manager = NSMigrationManager(sourceModel: old, destinationModel: new)
        try manager.migrateStore(
            from: url, type: NSSQLiteStoreType, mapping: mapping, to: destination, type: NSSQLiteStoreType)

        let coordinator = try StoreHarness.coordinator(model: new, storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(
            try Self.rows("Chef", ["firstName", "lastName"], context) == [
                "firstName=Anna lastName=Rossi", "firstName=Ken lastName=", "firstName=Marco lastName=Bianchi",
                "firstName=Sam lastName=Jones Jr",
            ])
        // One Cuisine per distinct name, each with its recipes; Toast has none.
        #expect(
            try Self.rows("Cuisine", ["name", "recipes"], context).map {
                $0.replacingOccurrences(of: #"directions:[^/]*/"#, with: "", options: .regularExpression)
            } == [
                "name=Italian recipes=[name:Carbonara/rating:3, name:Risotto/rating:3]",
                "name=Japanese recipes=[name:Ramen/rating:3]",
            ])
        // Recipes keep their names; `directions` (a String, now a Date) and `rating` (new, default 3)
        // come from the mapping's autogenerated expressions.
        #expect(
            try Self.rows("Recipe", ["name", "rating", "ingredients"], context) == [
                "name=Carbonara rating=3 ingredients=[amount:2/name:Egg, amount:200 g/name:Spaghetti]",
                "name=Ramen rating=3 ingredients=[amount:1 pack/name:Noodles, amount:500 ml/name:Broth]",
                "name=Risotto rating=3 ingredients=[amount:150 g/name:Rice]",
                "name=Toast rating=3 ingredients=[amount:1 slice/name:Bread]",
            ])
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Ingredient")) == 6)
    }
}
