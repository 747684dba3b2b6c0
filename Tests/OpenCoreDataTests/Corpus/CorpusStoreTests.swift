import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A store in the corpus and the model Apple's Core Data wrote it with (MANIFEST §2), if the corpus
/// has that model as an Xcode model file.
struct CorpusStore: Sendable, CustomTestStringConvertible {
    let store: String
    let model: String?
    /// Whether the model file is the one the store's version hashes were computed from.
    var matchesModel = true
    var testDescription: String { store }

    static let all: [CorpusStore] = [
        .init(store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
              model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"),
        .init(store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
              model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"),
        .init(store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
              model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld/SampleModel3.xcdatamodel"),
        // Re-saved by framework 754, but its version hashes are the ones Apple's 2008 seed stored
        // (MagicalRecord's framework-241 copy has the same four): they come from the original binary
        // model, not from this later XML version, whose Image, Ingredient and Recipe hash differently.
        .init(store: "alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.sqlite",
              model: "alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.xcdatamodeld/Recipes.xcdatamodel",
              matchesModel: false),
        .init(store: "bignerdranch+CoreDataStack/Sample Model/Deprecated/TestModel.sqlite",
              model: "bignerdranch+CoreDataStack/Sample Model/Deprecated/Sample.xcdatamodeld/TestModel.xcdatamodel"),
        .init(store: "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/BundledPreseededDatabaseTests/Test.sqlite",
              model: "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/Test.xcdatamodeld/Test.xcdatamodel"),
        .init(store: "hwaxxer+BookMigration/BookMigration/Model1.sqlite",
              model: "hwaxxer+BookMigration/BookMigration/Model.xcdatamodeld/Model1.xcdatamodel"),
        .init(store: "mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests.sqlite",
              model: "mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld/MWKCoreDataTests.xcdatamodel"),
        .init(store: "mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests2.sqlite",
              model: "mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld/MWKCoreDataTests2.xcdatamodel"),
        // Pre-Xcode 4 binary `elements` models (LegacyElementsModelReader). gilpa's store got a
        // ZCONTENTS column by hand, and its model the matching attribute: its hash is the model's
        // without it (LegacyElementsModelTests).
        .init(store: "RestKit+RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite",
              model: "RestKit+RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel"),
        .init(store: "gilpa+iphone_sqlite_test/CoreDataBooks.sqlite",
              model: "gilpa+iphone_sqlite_test/CoreDataBooks.xcdatamodel", matchesModel: false),
        // No model file in the corpus: programmatic models (SampleModel2, whose only model is the
        // compiled one in Z_MODELCACHE). MagicalRecord's Recipes is listed without its `elements`
        // model because its images need the app's ImageToDataTransformer, which `ocd store` does not
        // have; LegacyElementsModelTests opens it with the model and a port of the transformer.
        .init(store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", model: nil),
        .init(store: "alemar11+CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite", model: nil),
        .init(store: "magicalpanda+MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite", model: nil),
    ]
    /// The stores that open with their model from the corpus.
    static var withModel: [CorpusStore] { all.filter { $0.model != nil && $0.matchesModel } }
}

/// Every store of the corpus (Apple-written SQLite files, some of them from framework versions
/// 241 to 637, i.e. Mac OS X 10.5 to iOS 7 era) opened and read in full, counted against the
/// corpus's reports. Skipped when the corpus is not beside the package (see ``Corpus``).
@Suite("Corpus stores", .enabled(if: Corpus.isPresent))
struct CorpusStoreTests {
    @Test func everyCorpusStoreIsListed() throws {
        let root = Corpus.root!.appendingPathComponent("repos")
        let found = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "sqlite" }
            .map { String($0.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)) }
        #expect(Set(found) == Set(CorpusStore.all.map(\.store)))
    }

    /// Metadata and `Z_PRIMARYKEY` of every store, old framework versions included, read without
    /// a model and without changing the file.
    @Test(arguments: CorpusStore.all)
    func metadataOfEveryStoreReads(_ item: CorpusStore) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(item.store, to: directory.url)
        let report = try Corpus.report(item.store)
        let before = try Data(contentsOf: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata[NSPersistenceFrameworkVersionKey] as? Int == report.frameworkVersion)
        let hashes = (metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:])
            .compactMapValues { ($0 as? Data)?.base64EncodedString() }
        #expect(hashes == report.versionHashes)
        #expect(!hashes.isEmpty)
        #expect(try Data(contentsOf: url) == before)
    }

    /// Opens the store with its model, reads every attribute and relationship of every object, and
    /// checks the counts against the report: objects per table, and each relationship seen from both
    /// sides (to-one references equal to-many memberships; many-to-many sides agree).
    @Test(arguments: CorpusStore.withModel)
    func everyObjectReads(_ item: CorpusStore) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(item.store, to: directory.url)
        let report = try Corpus.report(item.store)
        let model = try NSManagedObjectModel.load(contentsOf: Corpus.repo(item.model!))
        #expect(model.entityVersionHashesByName.mapValues { $0.base64EncodedString() } == report.versionHashes)

        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        var rowsPerTable: [String: Int] = [:]
        var toOneReferences: [String: Int] = [:]  // "Entity.relationship" of the to-many side
        var memberships: [String: Int] = [:]
        let entNumbers = Dictionary(report.primaryKeys.map { ($0.value.name, $0.key) }, uniquingKeysWith: { a, _ in a })
        for entity in model.entities {
            let name = entity.name!
            let request = NSFetchRequest<NSManagedObject>(entityName: name)
            request.includesSubentities = false
            let objects = try context.fetch(request)
            // SampleModel_V2's Z_PRIMARYKEY still names LuxuryCar by its old name (its renaming identifier).
            let number = try #require(entNumbers[name] ?? entNumbers[entity.renamingIdentifier ?? ""])
            let table = try #require(report.table(ofEntity: number))
            rowsPerTable[table, default: 0] += objects.count
            for object in objects {
                for property in entity.properties {
                    let value = object.value(forKey: property.name)
                    guard let relationship = property as? NSRelationshipDescription,
                        let inverse = relationship.inverseRelationship
                    else {
                        if let attribute = property as? NSAttributeDescription, !attribute.isOptional, !attribute.isTransient,
                            attribute.defaultValue == nil
                        {
                            // Apple wrote it, so a required attribute has a value (unless the model has a default).
                            #expect(value != nil, "\(name).\(property.name) of \(object.objectID)")
                        }
                        continue
                    }
                    if relationship.isToMany {
                        let members = (value as? Set<NSManagedObject>)?.count ?? (value as? NSOrderedSet)?.count ?? 0
                        memberships["\(relationship.entity.name!).\(relationship.name)", default: 0] += members
                    } else if let destination = value as? NSManagedObject {
                        #expect(destination.entity.isKindOf(entity: relationship.destinationEntity!))
                        toOneReferences["\(destination.entity.name!)@\(inverse.entity.name!).\(inverse.name)", default: 0] += 1
                    }
                }
            }
        }
        for (table, count) in report.rowCounts where report.primaryKeys.values.contains(where: { "Z" + $0.name.uppercased() == table }) {
            #expect(rowsPerTable[table] == count, "table \(table)")
        }
        // Every to-one reference appears in the inverse to-many set (summed over the owners).
        var referencesByInverse: [String: Int] = [:]
        for (key, count) in toOneReferences {
            referencesByInverse[String(key.split(separator: "@").last!), default: 0] += count
        }
        for (inverse, count) in referencesByInverse where memberships[inverse] != nil {
            #expect(memberships[inverse] == count, "\(inverse)")
        }
        // Many-to-many: both sides count the join table's rows.
        for entity in model.entities {
            for relationship in entity.relationshipsByName.values
            where relationship.entity === entity && relationship.isToMany && relationship.inverseRelationship?.isToMany == true {
                let inverse = relationship.inverseRelationship!
                #expect(
                    memberships["\(entity.name!).\(relationship.name)"]
                        == memberships["\(inverse.entity.name!).\(inverse.name)"],
                    "\(entity.name!).\(relationship.name)")
            }
        }
    }

    /// Stores from old framework versions, and what they do here:
    /// - open and read in full with their Xcode model (`everyObjectReads`): hwaxxer Model1 (419),
    ///   mwkirk MWKCoreDataTests and MWKCoreDataTests2 (519), bignerdranch TestModel (637);
    /// - fail with 134100 because the corpus's Xcode model is a later version than the one that wrote
    ///   them (`recipesSeedsRefuseTheLaterXcodeModel`): MagicalRecord's Recipes (241), alhoqbani's
    ///   Recipes (754, hashes from 241);
    /// - open and read in full with their pre-Xcode 4 `elements` model: RestKit RKSeedDatabase (419)
    ///   here (`everyObjectReads`), MagicalRecord's Recipes (241) in LegacyElementsModelTests; gilpa
    ///   CoreDataBooks (320) does not match its model (a column added by hand). Opened with an empty
    ///   model, all three fail with 134100, leaving the file unchanged.
    @Test func oldStoresWithoutModelFileFailClearly() throws {
        let old = [
            "RestKit+RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite",  // framework 419
            "gilpa+iphone_sqlite_test/CoreDataBooks.sqlite",  // framework 320
            "magicalpanda+MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite",  // framework 241
        ]
        for path in old {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let url = try Corpus.copyStore(path, to: directory.url)
            let before = try Data(contentsOf: url)
            // Its entities are in the store, but an empty model matches none of their version hashes.
            let error = try #require(throws: OpenCoreDataError.self) {
                _ = try StoreHarness.coordinator(model: NSManagedObjectModel(), storeType: NSSQLiteStoreType, url: url)
            }
            #expect(error.code == .persistentStoreIncompatibleVersionHash, "\(path)")
            #expect(try Data(contentsOf: url) == before, "\(path)")
        }
    }

    /// Apple's iPhoneCoreDataRecipes seed (framework 241, and the copy re-saved by framework 754)
    /// against the later Xcode version of its model: the entity hashes Apple stored differ from the
    /// model's for Image, Ingredient and Recipe (RecipeType agrees), so opening fails with Cocoa's
    /// 134100 instead of reading columns under the wrong model, and the file stays as it was.
    @Test func recipesSeedsRefuseTheLaterXcodeModel() throws {
        let model = try NSManagedObjectModel.load(
            contentsOf: Corpus.repo("alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.xcdatamodeld"))
        let ours = model.entityVersionHashesByName.mapValues { $0.base64EncodedString() }
        for path in [
            "magicalpanda+MagicalRecord/Samples/iOS/Resources/RecipeData/Recipes.sqlite",
            "alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.sqlite",
        ] {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let url = try Corpus.copyStore(path, to: directory.url)
            let stored = try Corpus.report(path).versionHashes
            #expect(ours["RecipeType"] == stored["RecipeType"])
            #expect(Set(ours.keys.filter { ours[$0] != stored[$0] }) == ["Image", "Ingredient", "Recipe"])
            let before = try Data(contentsOf: url)
            let error = try #require(throws: OpenCoreDataError.self) {
                _ = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
            }
            #expect(error.code == .persistentStoreIncompatibleVersionHash)
            #expect(try Data(contentsOf: url) == before)
        }
    }
}
