import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Changes saved into stores Apple's Core Data wrote keep the file what Apple's Core Data expects:
/// a sound SQLite file, `Z_MAX` covering every primary key, `Z_OPT` counting versions, join-table
/// rows for many-to-many, metadata and the cached model left readable. Checked with plain SQL.
@Suite("SQLite store: writing Apple-written files")
struct AppleStoreWriteTests {
    private let sampleStore = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"
    private let sampleModel = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"

    @Test func insertChangeDeleteKeepsAppleStoreValid() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("SampleModel_V1.sqlite")
        try FileManager.default.copyItem(at: try fixture(sampleStore), to: url)
        let metadataBefore = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let model = try NSManagedObjectModel.load(contentsOf: try fixture(sampleModel))
        let victoriaID = UUID(uuidString: "FEFE4176-912D-429F-9C83-662FFF641115")!
        let (victoriaPK, victoriaOpt, indexCount): (Int64, Int64, Int64) = try {
            let raw = try RawDatabase(url)
            let row = try raw.rows("SELECT Z_PK, Z_OPT FROM ZPERSON WHERE ZFIRSTNAME = 'Victoria'")[0]
            return (row[0] as! Int64, row[1] as! Int64, try raw.value("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'") as! Int64)
        }()

        var deletedPK: Int64 = 0
        do {
            let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
            defer { StoreHarness.close(coordinator) }
            let context = StoreHarness.context(coordinator)
            let grace = insertObject(
                "Person",
                ["firstName": "Grace", "lastName": "Hopper", "id": UUID(), "updatedAt": Date(timeIntervalSinceReferenceDate: 1000)],
                into: context)
            insertObject("SportCar", ["maker": "OCD", "model": "Linux", "numberPlate": "OCD-0001", "owner": grace], into: context)
            let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            let victoria = try #require(people.first { $0.value(forKey: "id") as? UUID == victoriaID })
            victoria.setValue("Coster-Waldau", forKey: "lastName")
            let ownedCars = NSFetchRequest<NSManagedObject>(entityName: "Car")
            ownedCars.predicate = NSPredicate(format: "owner != nil")
            let owned = try #require(try context.fetch(ownedCars).first)
            let previousOwner = try #require(owned.value(forKey: "owner") as? NSManagedObject)
            deletedPK = Int64(owned.objectID.uriRepresentation().lastPathComponent.dropFirst())!
            context.delete(owned)
            try context.save()
            #expect((previousOwner.value(forKey: "cars") as? Set<NSManagedObject>)?.contains(owned) == false)
        }

        let raw = try RawDatabase(url)
        #expect(try raw.value("PRAGMA integrity_check") as? String == "ok")
        // Z_MAX: the root entity's row covers every key of its table (Apple keeps subentity rows at 0).
        let maxCar = try raw.value("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'") as? Int64 ?? 0
        let maxPerson = try raw.value("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person'") as? Int64 ?? 0
        let lastCar = try raw.value("SELECT MAX(Z_PK) FROM ZCAR") as? Int64 ?? .max
        let lastPerson = try raw.value("SELECT MAX(Z_PK) FROM ZPERSON") as? Int64 ?? .max
        #expect(maxCar >= 126 && maxCar >= lastCar)
        #expect(maxPerson >= 21 && maxPerson >= lastPerson)
        // The new sport car: Z_ENT of SportCar (2), first version, pointing at the new person.
        let car = try raw.rows("SELECT Z_ENT, Z_OPT, ZOWNER FROM ZCAR WHERE ZNUMBERPLATE = 'OCD-0001'")
        let gracePK = try raw.value("SELECT Z_PK FROM ZPERSON WHERE ZFIRSTNAME = 'Grace'") as? Int64
        #expect(car.count == 1)
        #expect(car.first?[0] as? Int64 == 2 && car.first?[1] as? Int64 == 1 && car.first?[2] as? Int64 == gracePK)
        // The changed person: one more version, new value; the deleted car is gone.
        let victoria = try raw.rows("SELECT Z_OPT, ZLASTNAME FROM ZPERSON WHERE Z_PK = \(victoriaPK)")[0]
        #expect(victoria[0] as? Int64 == victoriaOpt + 1)
        #expect(victoria[1] as? String == "Coster-Waldau")
        #expect(try raw.value("SELECT COUNT(*) FROM ZCAR WHERE Z_PK = \(deletedPK)") as? Int64 == 0)
        #expect(try raw.value("SELECT COUNT(*) FROM ZCAR") as? Int64 == 125)
        #expect(try raw.value("SELECT COUNT(*) FROM ZPERSON") as? Int64 == 21)
        // Indexes (the uniqueness constraints' among them) and Apple's cached model are still there.
        #expect(try raw.value("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'") as? Int64 == indexCount)
        #expect(try raw.value("SELECT COUNT(*) FROM Z_MODELCACHE") as? Int64 == 1)
        // Metadata: readable, same store UUID and version hashes.
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata[NSStoreUUIDKey] as? String == metadataBefore[NSStoreUUIDKey] as? String)
        #expect(
            (metadata[NSStoreModelVersionHashesKey] as? [String: Data])
                == (metadataBefore[NSStoreModelVersionHashesKey] as? [String: Data]))

        // And the file reopens with the changes.
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "firstName == %@", "Grace")
        let grace = try #require(try context.fetch(request).first)
        #expect((grace.value(forKey: "cars") as? Set<NSManagedObject>)?.first?.entity.name == "SportCar")
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 125)
    }

    /// Ordered many-to-many in Apple's contentful store: join-table rows with their `Z_FOK_` order.
    @Test func manyToManyGoesIntoApplesJoinTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Test.sqlite")
        try FileManager.default.copyItem(
            at: try fixture("contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/BundledPreseededDatabaseTests/Test.sqlite"),
            to: url)
        let model = try NSManagedObjectModel.load(
            contentsOf: ModelFixtures.url(ModelFixtures.contentful))
        do {
            let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
            defer { StoreHarness.close(coordinator) }
            let context = StoreHarness.context(coordinator)
            let author = insertObject("Author", ["id": "a1", "name": "Ada"], into: context)
            let posts = (1...3).map { insertObject("Post", ["id": "p\($0)", "title": "Post \($0)"], into: context) }
            author.setValue(NSOrderedSet(array: posts.reversed()), forKey: "createdEntries")
            try context.save()
        }
        let raw = try RawDatabase(url)
        #expect(try raw.value("PRAGMA integrity_check") as? String == "ok")
        let rows = try raw.rows("SELECT Z_2AUTHORS, Z_4CREATEDENTRIES, Z_FOK_4CREATEDENTRIES FROM Z_2CREATEDENTRIES")
        #expect(rows.count == 3)
        let authorPK = try raw.value("SELECT Z_PK FROM ZAUTHOR") as? Int64
        #expect(rows.allSatisfy { $0[0] as? Int64 == authorPK })
        // The order of createdEntries is kept in the Z_FOK_ column: p3, p2, p1.
        let ordered = try raw.rows(
            "SELECT p.ZID FROM Z_2CREATEDENTRIES j JOIN ZPOST p ON p.Z_PK = j.Z_4CREATEDENTRIES ORDER BY j.Z_FOK_4CREATEDENTRIES")
        #expect(ordered.map { $0[0] as? String } == ["p3", "p2", "p1"])
        for (entity, table) in [("Author", "ZAUTHOR"), ("Post", "ZPOST")] {
            let max = try raw.value("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)'") as? Int64 ?? 0
            let last = try raw.value("SELECT MAX(Z_PK) FROM \(table)") as? Int64 ?? .max
            #expect(max >= last, "\(entity)")
        }
    }
}
