import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Stores written by Apple's Core Data (fixtures from the corpus): our schema against theirs, their
/// metadata and rows read back.
@Suite("SQLite store: Apple-written files")
struct SQLiteAppleStoreTests {
    @Test func generatedSchemaMatchesAppleForSampleModel3() throws {
        try expectSameSchema(
            TestModels.sampleModel3V1(),
            "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite")
    }

    /// Our CREATE statements for `model` equal the ones Apple wrote in `fixture` (tables and indexes).
    private func expectSameSchema(_ model: NSManagedObjectModel, _ fixturePath: String) throws {
        let raw = try RawDatabase(try fixture(fixturePath), immutable: true)
        let apple = Set(
            try raw.rows("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").compactMap { $0[0] as? String })
        let ours = Set(SQLiteSchema(model: model).createStatements)
        #expect(apple.count >= 4 && apple.count == ours.count)
        #expect(ours.subtracting(apple).sorted() == [])
        #expect(apple.subtracting(ours).sorted() == [])
        let schema = SQLiteSchema(model: model)
        let appleKeys = try raw.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
            "\($0[0]!) \($0[1]!) \($0[2]!)"
        }
        #expect(schema.primaryKeyRows.map { "\($0.0) \($0.1) \($0.2)" } == appleKeys)
    }

    @Test func generatedSchemaMatchesAppleForInheritanceAndConstraints() throws {
        try expectSameSchema(
            TestModels.coreDataPlusSampleModelV1(),
            "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
    }

    @Test func generatedSchemaMatchesAppleForOrderedManyToMany() throws {
        try expectSameSchema(
            TestModels.contentfulTest(),
            "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/BundledPreseededDatabaseTests/Test.sqlite"
        )
    }

    @Test func readsMetadataOfAppleWrittenStoreWithoutTouchingIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel3_V1.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"),
            to: url)
        let before = try Data(contentsOf: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata[NSStoreUUIDKey] as? String == "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09")
        #expect(metadata[NSStoreTypeKey] as? String == "SQLite")
        #expect(metadata[NSPersistenceFrameworkVersionKey] as? Int == 1344)
        #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["1"])
        #expect(
            (metadata[NSStoreModelVersionHashesKey] as? [String: Data])?["User"]?.base64EncodedString()
                == "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["SampleModel3_V1.sqlite"])
    }

    @Test func newStoreCarriesTheModelMetadataAppleWrote() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Ours.sqlite")
        let coordinator = try StoreHarness.coordinator(
            model: TestModels.sampleModel3V1(), storeType: NSSQLiteStoreType, url: url)
        StoreHarness.close(coordinator)
        let ours = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let apple = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType,
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"))
        for key in [
            NSStoreModelVersionHashesKey, "NSStoreModelVersionHashesDigest", NSStoreModelVersionChecksumKey,
            "NSStoreModelVersionHashesVersion", NSStoreModelVersionIdentifiersKey, NSStoreTypeKey,
            NSPersistenceFrameworkVersionKey,
            "_NSAutoVacuumLevel",
        ] {
            #expect(ours[key].map { "\($0)" } == apple[key].map { "\($0)" }, "\(key)")
        }
        #expect(Set(ours.keys) == Set(apple.keys))
    }

    /// Decodes Apple-written rows (UUID blobs, 2001-epoch dates, three entities in one table, to-one
    /// and to-many through the foreign key), opened through a coordinator with the model file Apple's
    /// Core Data used, read by our model loader.
    @Test func decodesAppleWrittenRows() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel_V1.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"), to: url
        )
        let model = try #require(
            NSManagedObjectModel(
                contentsOf: try fixture(
                    "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"
                )))
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let store = try sqliteStore(coordinator)
        let context = StoreHarness.context(coordinator)
        func fetch(_ name: String, subentities: Bool = true) throws -> [NSManagedObject] {
            let request = NSFetchRequest<NSManagedObject>(entityName: name)
            request.includesSubentities = subentities
            return try context.fetch(request)
        }
        let cars = try fetch("Car")
        #expect(cars.count == 125)
        #expect(try fetch("Car", subentities: false).count == 115)
        #expect(try fetch("SportCar").count == 10)
        let limited = try fetch("ExpensiveSportCar")
        #expect(limited.count == 5)
        #expect(limited.allSatisfy { $0.value(forKey: "isLimitedEdition") is Bool })
        #expect(cars.filter { $0.value(forKey: "owner") != nil }.count == 118)
        let people = try fetch("Person")
        #expect(people.count == 20)
        let victoria = try #require(people.first { $0.value(forKey: "firstName") as? String == "Victoria" })
        #expect(victoria.value(forKey: "lastName") as? String == "Coster")
        #expect(victoria.value(forKey: "id") as? UUID == UUID(uuidString: "FEFE4176-912D-429F-9C83-662FFF641115"))
        #expect((victoria.value(forKey: "updatedAt") as? Date)?.timeIntervalSinceReferenceDate == 639503569.638733)
        let owned = people.reduce(0) { $0 + ((($1.value(forKey: "cars") as? Set<NSManagedObject>)?.count) ?? 0) }
        #expect(owned == 118)
        #expect(store.identifier == "753753D3-A961-4901-AB05-8CC48B1D3853")
    }

    @Test func readsAppleWrittenSampleModel3() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel3_V1.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"),
            to: url)
        let coordinator = try StoreHarness.coordinator(
            model: TestModels.sampleModel3V1(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let users = try StoreHarness.context(coordinator).fetch(NSFetchRequest<NSManagedObject>(entityName: "User"))
        #expect(users.count == 12)
        #expect(Set(users.compactMap { $0.value(forKey: "name") as? String }) == ["User_0", "User_1", "User_2"])
        #expect(coordinator.persistentStores.first?.identifier == "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09")
    }
}
