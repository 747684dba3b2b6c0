import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// The seed's staged migration (WWDC23 "What's new in Core Data"): Aircraft's `flightData` moves
/// into a new `FlightData` entity. v1 → v2 is lightweight (v2 adds `FlightData` beside the old
/// attribute); v2 → v3 is a custom stage whose `willMigrateHandler` copies the data while both
/// shapes exist, and v3 drops the attribute.
@Suite("Migration: staged")
struct StagedMigrationTests {
    private func aircraft(_ extra: [NSPropertyDescription]) -> NSEntityDescription {
        M.entity("Aircraft", [M.attribute("tailNumber"), M.attribute("aircraftType")] + extra)
    }

    private func v1() -> NSManagedObjectModel {
        M.model("1", [aircraft([M.attribute("flightData", .binaryDataAttributeType)])])
    }

    private func v2(keepsAttribute: Bool = true, version: String = "2") -> NSManagedObjectModel {
        let plane = aircraft(keepsAttribute ? [M.attribute("flightData", .binaryDataAttributeType)] : [])
        let data = M.entity("FlightData", [M.attribute("data", .binaryDataAttributeType)])
        let details = NSRelationshipDescription(name: "flightDetails", destination: data, toMany: false)
        let owner = NSRelationshipDescription(name: "aircraft", destination: plane, toMany: false)
        details.inverseRelationship = owner
        owner.inverseRelationship = details
        plane.properties += [details]
        data.properties += [owner]
        return M.model(version, [plane, data])
    }

    private func v3() -> NSManagedObjectModel { v2(keepsAttribute: false, version: "3") }

    private func store(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(v1(), in: directory) { context in
            insertObject("Aircraft", ["tailNumber": "N1", "aircraftType": "C172", "flightData": Data([1, 2, 3])], into: context)
            insertObject("Aircraft", ["tailNumber": "N2", "aircraftType": "PA28", "flightData": Data([4, 5])], into: context)
            insertObject("Aircraft", ["tailNumber": "N3", "aircraftType": "SR22"], into: context)
        }
    }

    /// The stages as the seed writes them (with model references to in-memory models).
    private func stages(failing: Bool = false, observed: Locked<[String]>) -> [NSMigrationStage] {
        let v1Checksum = v1().versionChecksum
        let v2Reference = NSManagedObjectModelReference(model: v2(), versionChecksum: v2().versionChecksum)
        let v3Reference = NSManagedObjectModelReference(model: v3(), versionChecksum: v3().versionChecksum)
        let lightweightStage = NSLightweightMigrationStage([v1Checksum])
        lightweightStage.label = "V1 to V2: Add flightData attribute"
        let customStage = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
        customStage.label = "V2 to V3: Denormalize model with FlightData entity"
        customStage.willMigrateHandler = { migrationManager, currentStage in
            guard let container = migrationManager.container else { return }
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let fetchRequest = NSFetchRequest<any NSFetchRequestResult>(entityName: "Aircraft")
                fetchRequest.predicate = NSPredicate(format: "flightData != nil")
                let fetchedResults = try context.fetch(fetchRequest) as! [NSManagedObject]
                for airplane in fetchedResults {
                    let fdEntity = NSEntityDescription.insertNewObject(forEntityName: "FlightData", into: context)
                    let flightData = airplane.value(forKey: "flightData")
                    fdEntity.setValue(flightData, forKey: "data")
                    fdEntity.setValue(airplane, forKey: "aircraft")
                    airplane.setValue(nil, forKey: "flightData")
                }
                try context.save()
            }
            observed.withLock { $0.append("will: \(currentStage.label ?? "") moved \(try! container.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "FlightData")))") }
            if failing { throw OpenCoreDataError(.coreDataError, "the custom stage gives up") }
        }
        customStage.didMigrateHandler = { migrationManager, _ in
            let context = migrationManager.container!.viewContext
            let count = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "FlightData"))
            observed.withLock { $0.append("did: \(count) FlightData, Aircraft has flightData attribute: \(migrationManager.container!.managedObjectModel.entitiesByName["Aircraft"]!.attributesByName["flightData"] != nil)") }
        }
        return [lightweightStage, customStage]
    }

    @Test func seedExampleRunsWithDataInEveryStage() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let observed = Locked<[String]>([])
        let migrationManager = NSStagedMigrationManager(stages(observed: observed))
        let persistentContainer = NSPersistentContainer(name: "Aircraft", managedObjectModel: v3())
        let storeDescription = NSPersistentStoreDescription(url: url)
        storeDescription.setOption(migrationManager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        // Linux: v1 is known only by its checksum in the lightweight stage; Apple finds it in the app
        // bundle's compiled models, here it comes from the model bundle or this option.
        storeDescription.setOption(NSArray(array: [v1()]), forKey: OpenCoreDataMigrationSourceModelsOption)
        persistentContainer.persistentStoreDescriptions = [storeDescription]
        var loadError: (any Error)?
        persistentContainer.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        defer { StoreHarness.close(persistentContainer.persistentStoreCoordinator) }
        #expect(observed.withLock { $0 } == [
            "will: V2 to V3: Denormalize model with FlightData entity moved 2",
            "did: 2 FlightData, Aircraft has flightData attribute: false",
        ])
        let context = persistentContainer.newBackgroundContext()
        let planes = try M.rows("Aircraft", context, sortedBy: "tailNumber")
        #expect(planes.map { $0["aircraftType"] as? String } == ["C172", "PA28", "SR22"])
        let request = NSFetchRequest<NSManagedObject>(entityName: "FlightData")
        let moved = try context.fetch(request).map {
            "\(($0.value(forKey: "aircraft") as? NSManagedObject)?.value(forKey: "tailNumber") ?? "-") \(Array($0.value(forKey: "data") as? Data ?? Data()))"
        }
        #expect(moved.sorted() == ["N1 [1, 2, 3]", "N2 [4, 5]"])
        #expect(try M.columns("ZAIRCRAFT", at: url).contains("ZFLIGHTDATA") == false)
    }

    @Test func failingCustomStageLeavesTheStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        let observed = Locked<[String]>([])
        let manager = NSStagedMigrationManager(stages(failing: true, observed: observed))
        do {
            _ = try StoreHarness.coordinator(
                model: v3(), storeType: NSSQLiteStoreType, url: url,
                options: [NSPersistentStoreStagedMigrationManagerOptionKey: manager, OpenCoreDataMigrationSourceModelsOption: [v1()]])
            Issue.record("the failing stage should stop the migration")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .migration)
            #expect(error.message.contains("V2 to V3: Denormalize model with FlightData entity"))
        }
        #expect(observed.withLock { $0.count } == 1)  // the handler ran (on the copy), then threw
        #expect(try M.bytes(url) == before)
        let coordinator = try StoreHarness.coordinator(model: v1(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        #expect(try M.rows("Aircraft", StoreHarness.context(coordinator), sortedBy: "tailNumber").compactMap { $0["flightData"] as? Data }.count == 2)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!files.contains { $0.contains("staged") })
    }

    @Test func modelReferenceWithAWrongChecksumIsRefused() throws {
        let reference = NSManagedObjectModelReference(model: v2(), versionChecksum: v1().versionChecksum)
        #expect(reference.resolvedModel == nil)
        #expect(NSManagedObjectModelReference(model: v2(), versionChecksum: v2().versionChecksum).resolvedModel != nil)
    }
}
