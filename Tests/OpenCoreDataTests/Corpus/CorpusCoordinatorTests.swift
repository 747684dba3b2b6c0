import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A model file of the corpus: an `.xcdatamodeld`, an `.xcdatamodel` outside one, a `.momd`, or a
/// `.mom` outside one.
struct CorpusModel: Sendable, CustomTestStringConvertible {
    let path: String
    var testDescription: String { path }

    static let all: [CorpusModel] = {
        guard let root = Corpus.root?.appendingPathComponent("repos") else { return [] }
        let rootPath = root.standardizedFileURL.path
        let packages: Set<String> = ["xcdatamodeld", "momd"]
        var found: [CorpusModel] = []
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) ?? .init() {
            let ext = url.pathExtension
            guard ["xcdatamodeld", "xcdatamodel", "momd", "mom"].contains(ext) else { continue }
            // A version inside a bundle is loaded with its bundle.
            if packages.contains(url.deletingLastPathComponent().pathExtension) { continue }
            found.append(CorpusModel(path: String(url.standardizedFileURL.path.dropFirst(rootPath.count + 1))))
        }
        return found.sorted { $0.path < $1.path }
    }()
}

/// Models and stores that no one here wrote, opened with a coordinator by a program that links none of
/// their classes: every `representedClassName` (`Shop.Item`, a bare `Item`, an Objective-C name) names
/// a class that does not exist here. Release builds once crashed there (looking the class up by name),
/// so CI runs this suite in release too.
@Suite("Corpus models and stores with a coordinator", .enabled(if: Corpus.isPresent))
struct CorpusCoordinatorTests {
    @Test func theCorpusHasModelsOfEveryKind() {
        let kinds = Set(CorpusModel.all.map { URL(fileURLWithPath: $0.path).pathExtension })
        #expect(kinds == ["xcdatamodeld", "xcdatamodel", "momd", "mom"])
        #expect(CorpusModel.all.count > 50)
    }

    /// Loads the model, makes a coordinator and an in-memory store for it, and inserts, saves and
    /// fetches one object of every concrete entity: each is a plain `NSManagedObject`, since the class
    /// its model names is not in this program. A model the reader refuses throws (it never crashes).
    @Test(arguments: CorpusModel.all)
    func everyModelOpensACoordinator(_ item: CorpusModel) throws {
        let model: NSManagedObjectModel
        do {
            model = try NSManagedObjectModel.load(contentsOf: Corpus.repo(item.path))
        } catch {
            #expect(Self.refusedModels.contains(item.path), "\(item.path): \(error)")
            return
        }
        #expect(!Self.refusedModels.contains(item.path), "loads now: update the list")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        } catch let error as NSError {
            // A model whose features the stores refuse (134020, as `addPersistentStore` documents).
            #expect(error.domain == NSCocoaErrorDomain, "\(item.path): \(error)")
            return
        }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait { () throws -> Void in
            for entity in model.entities where !entity.isAbstract {
                let object = NSManagedObject(entity: entity, insertInto: context)
                #expect(type(of: object) == NSManagedObject.self, "\(entity.name ?? "")")
                #expect(object.entity === entity)
            }
            for entity in model.entities where !entity.isAbstract {
                let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
                request.includesSubentities = false
                #expect(try context.fetch(request).count == 1, "\(entity.name ?? "")")
            }
        }
    }

    /// Every corpus store, copied and opened with a coordinator: with the model it was written with
    /// (the corpus's file, or the one Apple cached in the store's `Z_MODELCACHE`), every object is
    /// fetched and every property read; with no model that matches, `addPersistentStore` fails with
    /// 134100 and the file is unchanged.
    @Test(arguments: CorpusStore.all)
    func everyStoreOpensACoordinator(_ item: CorpusStore) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(item.store, to: directory.url)
        let before = try Data(contentsOf: url)
        var model: NSManagedObjectModel?
        if let path = item.model, item.matchesModel {
            model = try NSManagedObjectModel.load(contentsOf: Corpus.repo(path))
        } else {
            model = try NSManagedObjectModel.cachedModel(ofStoreAt: url)
        }
        guard let model else {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: NSManagedObjectModel())
            let error = #expect(throws: (any Error).self) {
                try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
            }
            #expect((error.map { $0 as NSError })?.code == NSPersistentStoreIncompatibleVersionHashError)
            #expect(try Data(contentsOf: url) == before)
            return
        }
        let registered = Corpus.registerPassThroughTransformers(for: model)
        defer { Corpus.unregister(registered) }
        if CompiledModelTests.knownHashMismatches[item.store] != nil {
            // The cached model of a store whose derived attributes hash differently (see there).
            let error = #expect(throws: (any Error).self) {
                try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
            }
            #expect((error.map { $0 as NSError })?.code == NSPersistentStoreIncompatibleVersionHashError)
            #expect(try Data(contentsOf: url) == before)
            return
        }
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        var objects = 0
        try context.performAndWait { () throws -> Void in
            for entity in model.entities where !entity.isAbstract {
                let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
                request.includesSubentities = false
                for object in try context.fetch(request) {
                    #expect(type(of: object) == NSManagedObject.self)
                    for property in entity.properties { _ = object.value(forKey: property.name) }
                    objects += 1
                }
            }
        }
        #expect(objects == Self.objectCounts[item.store], "\(objects) objects")
    }

    /// Objects in each store that opens, as the corpus's reports count their rows (two stores are empty).
    static let objectCounts: [String: Int] = [
        "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite": 145,
        "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite": 145,
        "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite": 12,
        "alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.sqlite": 29,
        "bignerdranch+CoreDataStack/Sample Model/Deprecated/TestModel.sqlite": 0,
        "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/BundledPreseededDatabaseTests/Test.sqlite": 0,
        "hwaxxer+BookMigration/BookMigration/Model1.sqlite": 7,
        "mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests.sqlite": 3,
        "mwkirk+MWKCoreData/Tests/Stores/MWKCoreDataTests2.sqlite": 6,
        "RestKit+RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite": 22,
    ]

    /// Model files the readers refuse, each with a clear error (see their tests).
    static let refusedModels: Set<String> = []
}
