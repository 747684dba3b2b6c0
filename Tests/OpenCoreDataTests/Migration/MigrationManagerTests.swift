import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// `NSMigrationManager.migrateStore(from:type:options:mapping:to:type:options:)`: a new migrated
/// file, the source left alone.
@Suite("Migration: NSMigrationManager")
struct MigrationManagerTests {
    private func v1() -> NSManagedObjectModel {
        M.model("1", [M.entity("Person", [M.attribute("name"), M.attribute("city")])])
    }

    /// v2 renames `city` to `town` without a renaming identifier: only a hand-made mapping knows.
    private func v2() -> NSManagedObjectModel {
        M.model("2", [M.entity("Person", [M.attribute("name"), M.attribute("town"), M.attribute("email")])])
    }

    private func handMadeMapping(town: NSExpression) -> NSMappingModel {
        let name = NSPropertyMapping()
        name.name = "name"
        name.valueExpression = NSExpression(format: "$source.name")
        let townMapping = NSPropertyMapping()
        townMapping.name = "town"
        townMapping.valueExpression = town
        let email = NSPropertyMapping()
        email.name = "email"
        let person = NSEntityMapping()
        person.name = "PersonToPerson"
        person.mappingType = .transformEntityMappingType
        person.sourceEntityName = "Person"
        person.destinationEntityName = "Person"
        person.attributeMappings = [name, townMapping, email]
        let mapping = NSMappingModel()
        mapping.entityMappings = [person]
        return mapping
    }

    private func source(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(v1(), in: directory, name: "Source.sqlite") { context in
            insertObject("Person", ["name": "Ann", "city": "Oslo"], into: context)
            insertObject("Person", ["name": "Bob", "city": "Rome"], into: context)
        }
    }

    @Test(arguments: [
        NSExpression(format: "$source.city"),
        NSExpression(forFunction: NSExpression(forVariable: "source"), selectorName: "valueForKey:", arguments: [NSExpression(forConstantValue: "city")]),
    ])
    func handMadeMappingMigratesIntoANewFile(town: NSExpression) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let before = try M.bytes(sourceURL)
        let destination = directory.file("Destination.sqlite")
        let manager = NSMigrationManager(sourceModel: v1(), destinationModel: v2())
        try manager.migrateStore(
            from: sourceURL, type: NSSQLiteStoreType, mapping: handMadeMapping(town: town), to: destination,
            type: NSSQLiteStoreType)
        #expect(manager.migrationProgress == 1 && manager.mappingModel != nil)
        // The destination opens with v2 without migrating; the source is unchanged.
        let coordinator = try StoreHarness.coordinator(model: v2(), storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["town"] as? String } == ["Oslo", "Rome"])
        #expect(try M.bytes(sourceURL) == before)
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: sourceURL)[NSStoreModelVersionIdentifiersKey] as? [String] == ["1"])
    }

    @Test func inferredMappingWorksToo() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let destination = directory.file("Destination.sqlite")
        let target = M.model("2", [M.entity("Person", [M.attribute("name"), M.attribute("town", renamedFrom: "city")])])
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: target)
        try NSMigrationManager(sourceModel: v1(), destinationModel: target).migrateStore(
            from: sourceURL, type: NSSQLiteStoreType, mapping: mapping, to: destination, type: NSSQLiteStoreType)
        let coordinator = try StoreHarness.coordinator(model: target, storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        #expect(try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").map { $0["town"] as? String } == ["Oslo", "Rome"])
    }

    @Test func customExpressionsRunObjectByObject() throws {
        // A value expression that is not a plain copy runs through the three stages (not in SQL).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let destination = directory.file("Destination.sqlite")
        let manager = NSMigrationManager(sourceModel: v1(), destinationModel: v2())
        try manager.migrateStore(
            from: sourceURL, type: NSSQLiteStoreType,
            mapping: handMadeMapping(town: NSExpression(format: "$source.city.uppercaseString")), to: destination,
            type: NSSQLiteStoreType)
        #expect(manager.sourceContext != nil && manager.destinationContext != nil)
        let coordinator = try StoreHarness.coordinator(model: v2(), storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["town"] as? String } == ["OSLO", "ROME"])
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob"])
    }

    @Test func storeSpecificMigrationCanBeTurnedOff() throws {
        // Same mapping, same result, with the object-by-object path forced.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let destination = directory.file("Destination.sqlite")
        let manager = NSMigrationManager(sourceModel: v1(), destinationModel: v2())
        #expect(manager.usesStoreSpecificMigrationManager)
        manager.usesStoreSpecificMigrationManager = false
        try manager.migrateStore(
            from: sourceURL, type: NSSQLiteStoreType, mapping: handMadeMapping(town: NSExpression(format: "$source.city")),
            to: destination, type: NSSQLiteStoreType)
        #expect(manager.destinationInstances(forEntityMappingName: "PersonToPerson", sourceInstances: nil).count == 2)
        let coordinator = try StoreHarness.coordinator(model: v2(), storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        #expect(try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").map { $0["town"] as? String } == ["Oslo", "Rome"])
    }

    @Test func refusalsLeaveTheSourceAloneAndCreateNoDestination() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let before = try M.bytes(sourceURL)
        let destination = directory.file("Destination.sqlite")
        func code(
            _ manager: NSMigrationManager, _ mapping: NSMappingModel?, to: URL? = nil, type: String = NSSQLiteStoreType
        ) -> Int? {
            do {
                try manager.migrateStore(
                    from: sourceURL, type: NSSQLiteStoreType, mapping: mapping, to: to ?? destination, type: type)
                return nil
            } catch {
                return (error as? OpenCoreDataError)?.errorCode
            }
        }
        let manager = NSMigrationManager(sourceModel: v1(), destinationModel: v2())
        #expect(code(manager, nil) == NSMigrationMissingMappingModelError)
        #expect(code(NSMigrationManager(sourceModel: v2(), destinationModel: v1()), handMadeMapping(town: NSExpression(format: "$source.city"))) == NSMigrationManagerSourceStoreError)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        try Data("keep me".utf8).write(to: destination)
        #expect(code(manager, handMadeMapping(town: NSExpression(format: "$source.city"))) == NSMigrationManagerDestinationStoreError)
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
        #expect(try M.bytes(sourceURL) == before)
    }
}
