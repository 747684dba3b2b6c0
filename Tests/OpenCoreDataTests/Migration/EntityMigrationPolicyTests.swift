import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Splits `fullName` into `firstName` and `lastName`, answers `FUNCTION($entityPolicy,
/// "initialsOf:", …)`, and logs every callback into the manager's `userInfo`.
final class SplitFullNamePolicy: NSEntityMigrationPolicy {
    static func log(_ manager: NSMigrationManager, _ entry: String) {
        manager.userInfo = ["log": (manager.userInfo?["log"] as? [String] ?? []) + [entry]]
    }

    override func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {
        Self.log(manager, "begin \(mapping.name!)")
    }

    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        // The default sets the attributes with value expressions (here `initials`) and associates.
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        let person = try #require(
            manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first)
        let parts = (sInstance.value(forKey: "fullName") as? String ?? "").split(separator: " ", maxSplits: 1).map(
            String.init)
        person.setValue(parts.first, forKey: "firstName")
        person.setValue(parts.count > 1 ? parts[1] : nil, forKey: "lastName")
        Self.log(manager, "create \(parts.first ?? "?") \(manager.currentEntityMapping.name!)")
    }

    override func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.log(manager, "endInstanceCreation \(mapping.name!)")
    }

    override func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
        Self.log(manager, "relationships \(dInstance.value(forKey: "firstName") ?? "?")")
    }

    override func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.log(manager, "endRelationshipCreation \(mapping.name!)")
    }

    override func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.log(manager, "validate \(mapping.name!)")
    }

    override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.log(manager, "end \(mapping.name!)")
    }

    override func migrationFunction(named selectorName: String, arguments: [Any?], manager: NSMigrationManager) throws
        -> Any?
    {
        guard selectorName == "initialsOf:" else {
            return try super.migrationFunction(named: selectorName, arguments: arguments, manager: manager)
        }
        let words = (arguments.first as? String ?? "").split(separator: " ")
        return String(words.compactMap(\.first))
    }
}

/// Fails in the stage `userInfo["fail"]` names, or cancels the migration at the second person.
final class FailingPolicy: NSEntityMigrationPolicy {
    struct Refusal: Error, CustomStringConvertible {
        var description: String { "the policy refuses" }
    }

    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        let created = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: nil).count
        if mapping.userInfo?["fail"] as? String == "cancel", created == 2 {
            manager.cancelMigrationWithError(Refusal())
        }
    }

    override func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        if mapping.userInfo?["fail"] as? String == "relationships" { throw Refusal() }
        try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
    }
}

/// Seed 001's change in one custom migration: an Aircraft's `flightData` bytes move into a new
/// `FlightData` instance linked as `flightDetails` (the seed does it with a staged migration).
final class FlightDataPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let data = sInstance.value(forKey: "flightData") as? Data else { return }
        let aircraft = try #require(
            manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first)
        let details = NSEntityDescription.insertNewObject(forEntityName: "FlightData", into: manager.destinationContext)
        details.setValue(data, forKey: "data")
        aircraft.setValue(details, forKey: "flightDetails")
    }
}

/// Custom migrations with entity migration policies, on models built in code, with real rows.
@Suite("Migration: NSEntityMigrationPolicy")
struct EntityMigrationPolicyTests {
    private typealias M = MigrationFixture

    /// v1: Person(fullName) n—1 Team(name).
    private func v1() -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("fullName")])
        let team = M.entity("Team", [M.attribute("name")])
        let members = NSRelationshipDescription(name: "members", destination: person, toMany: true)
        let of = NSRelationshipDescription(name: "team", destination: team, toMany: false)
        members.inverseRelationship = of
        of.inverseRelationship = members
        person.properties += [of]
        team.properties += [members]
        return M.model("1", [person, team])
    }

    /// v2: Person(firstName required, lastName, initials) n—1 Team(name).
    private func v2() -> NSManagedObjectModel {
        let person = M.entity(
            "Person", [M.attribute("firstName", optional: false), M.attribute("lastName"), M.attribute("initials")])
        let team = M.entity("Team", [M.attribute("name")])
        let members = NSRelationshipDescription(name: "members", destination: person, toMany: true)
        let of = NSRelationshipDescription(name: "team", destination: team, toMany: false)
        members.inverseRelationship = of
        of.inverseRelationship = members
        person.properties += [of]
        team.properties += [members]
        return M.model("2", [person, team])
    }

    private func property(_ name: String, _ format: String?) -> NSPropertyMapping {
        let mapping = NSPropertyMapping()
        mapping.name = name
        mapping.valueExpression = format.map { NSExpression(format: $0) }
        return mapping
    }

    /// TeamToTeam (copy) first, then PersonToPerson (custom, `policy`), in Xcode's expression forms.
    private func mapping(
        policy: String = "OpenCoreDataTests.SplitFullNamePolicy", fail: String? = nil,
        initials: String? = #"FUNCTION($entityPolicy, "initialsOf:", $source.fullName)"#
    ) -> NSMappingModel {
        let team = NSEntityMapping()
        team.name = "TeamToTeam"
        team.mappingType = .copyEntityMappingType
        team.sourceEntityName = "Team"
        team.destinationEntityName = "Team"
        team.attributeMappings = [property("name", "$source.name")]
        team.relationshipMappings = [
            property(
                "members",
                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.members)"#
            )
        ]
        let person = NSEntityMapping()
        person.name = "PersonToPerson"
        person.mappingType = .customEntityMappingType
        person.sourceEntityName = "Person"
        person.destinationEntityName = "Person"
        person.entityMigrationPolicyClassName = policy
        person.userInfo = fail.map { ["fail": $0] }
        // What Xcode writes, with a predicate that leaves out people without a name.
        person.sourceExpression = NSExpression(
            format:
                #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:" , "Person", "fullName != nil"), $manager.sourceContext, NO)"#
        )
        person.attributeMappings = [
            property("firstName", nil), property("lastName", nil),
            property("initials", initials),
        ]
        person.relationshipMappings = [
            property(
                "team",
                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TeamToTeam", $source.team)"#
            )
        ]
        let model = NSMappingModel()
        model.entityMappings = [team, person]
        return model
    }

    private func source(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(v1(), in: directory, name: "Source.sqlite") { context in
            let red = insertObject("Team", ["name": "Red"], into: context)
            let blue = insertObject("Team", ["name": "Blue"], into: context)
            insertObject("Person", ["fullName": "Ada Lovelace", "team": red], into: context)
            insertObject("Person", ["fullName": "Grace Brewster Hopper", "team": red], into: context)
            insertObject("Person", ["fullName": "Linus", "team": blue], into: context)
            insertObject("Person", [:], into: context)  // no name: the source expression leaves it out
        }
    }

    private func people(_ context: NSManagedObjectContext) throws -> [String] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).map { person in
            let team = (person.value(forKey: "team") as? NSManagedObject)?.value(forKey: "name") ?? "nil"
            return
                "\(person.value(forKey: "firstName") ?? "nil")|\(person.value(forKey: "lastName") ?? "nil")|\(person.value(forKey: "initials") ?? "nil")|\(team)"
        }.sorted()
    }

    private static let expectedPeople = ["Ada|Lovelace|AL|Red", "Grace|Brewster Hopper|GBH|Red", "Linus|nil|L|Blue"]

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func policySplitsNamesInThreeStages(destinationType: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let before = try M.bytes(sourceURL)
        let destination = directory.file("Destination.sqlite")
        let manager = NSMigrationManager(sourceModel: v1(), destinationModel: v2())
        try manager.migrateStore(
            from: sourceURL, type: NSSQLiteStoreType, mapping: mapping(), to: destination, type: destinationType)
        #expect(manager.migrationProgress == 1)
        // Apple's order: every mapping's instances, then every mapping's relationships, then validation.
        #expect(
            manager.userInfo?["log"] as? [String] == [
                "begin PersonToPerson", "create Ada PersonToPerson", "create Grace PersonToPerson",
                "create Linus PersonToPerson",
                "endInstanceCreation PersonToPerson", "relationships Ada", "relationships Grace", "relationships Linus",
                "endRelationshipCreation PersonToPerson", "validate PersonToPerson", "end PersonToPerson",
            ])
        #expect(manager.destinationInstances(forEntityMappingName: "TeamToTeam", sourceInstances: nil).count == 2)
        #expect(manager.sourceInstances(forEntityMappingName: "PersonToPerson", destinationInstances: nil).count == 3)
        if destinationType == NSSQLiteStoreType {
            let coordinator = try StoreHarness.coordinator(model: v2(), storeType: NSSQLiteStoreType, url: destination)
            defer { StoreHarness.close(coordinator) }
            let context = StoreHarness.context(coordinator)
            #expect(try people(context) == Self.expectedPeople)
            let teams = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team"))
            #expect(
                teams.map { ($0.value(forKey: "members") as? Set<NSManagedObject>)?.count ?? 0 }.sorted() == [1, 2])
        } else {
            // An in-memory destination keeps its objects in the manager's destination context.
            #expect(try people(manager.destinationContext) == Self.expectedPeople)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
        #expect(try M.bytes(sourceURL) == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }.isEmpty
        )
    }

    @Test func inMemorySourceMigratesThroughTheSamePath() throws {
        // An in-memory store has no file: the source at that URL is empty, and so is the result.
        // (Apple's behaviour for an in-memory source is not documented.)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.file("Destination.sqlite")
        let manager = NSMigrationManager(sourceModel: v1(), destinationModel: v2())
        try manager.migrateStore(
            from: directory.file("Memory"), type: NSInMemoryStoreType, mapping: mapping(), to: destination,
            type: NSSQLiteStoreType)
        let coordinator = try StoreHarness.coordinator(model: v2(), storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        #expect(try people(StoreHarness.context(coordinator)).isEmpty)
    }

    /// Migrates with `mapping` and returns the error; checks the source is byte for byte as it was
    /// and nothing (no destination, no temporary file) was left behind.
    private func failure(_ mapping: NSMappingModel, destinationModel: NSManagedObjectModel? = nil) throws
        -> OpenCoreDataError?
    {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sourceURL = try source(directory)
        let before = try M.bytes(sourceURL)
        let destination = directory.file("Destination.sqlite")
        let error = #expect(throws: OpenCoreDataError.self) {
            try NSMigrationManager(sourceModel: v1(), destinationModel: destinationModel ?? v2()).migrateStore(
                from: sourceURL, type: NSSQLiteStoreType, mapping: mapping, to: destination, type: NSSQLiteStoreType)
        }
        #expect(try M.bytes(sourceURL) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["Source.sqlite"])
        return error
    }

    @Test func throwingPolicyLeavesTheSourceAndNamesTheMapping() throws {
        let error = try failure(
            mapping(policy: "OpenCoreDataTests.FailingPolicy", fail: "relationships", initials: nil))
        #expect(error?.code == .migration)
        #expect(error?.message.contains(#"entity mapping "PersonToPerson" (creating relationships)"#) == true)
        #expect(error?.message.contains("the policy refuses") == true)
        #expect(error?.entityName == "Person")
    }

    @Test func cancellingStopsAtTheNextInstance() throws {
        let error = try failure(mapping(policy: "OpenCoreDataTests.FailingPolicy", fail: "cancel", initials: nil))
        #expect(error?.code == .migrationCancelled)
        #expect(error?.message.contains(#"entity mapping "PersonToPerson" (creating destination instances)"#) == true)
        #expect(error?.message.contains("the policy refuses") == true && error?.underlyingError != nil)
    }

    @Test func invalidDestinationFailsInValidation() throws {
        // Without the policy nothing fills the required firstName: validation stops the migration.
        let error = try failure(mapping(policy: "", initials: nil))
        #expect(error?.message.contains(#"entity mapping "PersonToPerson" (validating)"#) == true)
        #expect(error?.code == .validationMissingMandatoryProperty)
    }

    @Test func unknownPolicyClassAndUnknownFunctionsAreErrors() throws {
        let missing = try failure(mapping(policy: "SplitFullNamePolicyThatDoesNotExist"))
        #expect(
            missing?.code == .migration
                && missing?.message.contains("no NSEntityMigrationPolicy subclass named") == true)
        // The default policy does not answer FUNCTION($entityPolicy, "initialsOf:", …).
        let model = mapping(policy: "")
        model.entityMappings[1].attributeMappings?[0].valueExpression = NSExpression(format: "$source.fullName")
        let unanswered = try failure(model)
        #expect(unanswered?.message.contains(#"FUNCTION($entityPolicy, "initialsOf:")"#) == true)
        #expect(unanswered?.message.contains(#""PersonToPerson" (creating destination instances)"#) == true)
    }

    @Test func bareClassNamesResolveInResourceShippingModules() {
        // The test module ships resources, so its classes are found without the module name.
        #expect(EntityMigrationPolicyClassRegistry.resolve("SplitFullNamePolicy") == SplitFullNamePolicy.self)
        #expect(EntityMigrationPolicyClassRegistry.resolve("OpenCoreDataTests.FailingPolicy") == FailingPolicy.self)
        #expect(EntityMigrationPolicyClassRegistry.resolve("NSManagedObject") == nil)
        // Names of classes this program lacks, and names that are no Swift type name (release builds
        // once crashed on the first kind).
        for name in ["Shop.NoSuchPolicy", "NoSuchPolicy", "Item<Int>", "$s4main6PolicyC", "", "Shop."] {
            #expect(EntityMigrationPolicyClassRegistry.resolve(name) == nil, "\(name)")
        }
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func seedFlightDataMovesIntoItsOwnEntity(destinationType: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let aircraft = { (extra: [NSPropertyDescription]) in
            M.entity("Aircraft", [M.attribute("tailNumber"), M.attribute("aircraftType")] + extra)
        }
        let v1 = M.model("1", [aircraft([M.attribute("flightData", .binaryDataAttributeType)])])
        let plane = aircraft([])
        let data = M.entity("FlightData", [M.attribute("data", .binaryDataAttributeType)])
        let details = NSRelationshipDescription(name: "flightDetails", destination: data, toMany: false)
        let owner = NSRelationshipDescription(name: "aircraft", destination: plane, toMany: false)
        details.inverseRelationship = owner
        owner.inverseRelationship = details
        plane.properties += [details]
        data.properties += [owner]
        let v3 = M.model("3", [plane, data])
        let sourceURL = try M.makeStore(v1, in: directory, name: "Aircraft.sqlite") { context in
            insertObject(
                "Aircraft", ["tailNumber": "N1", "aircraftType": "C172", "flightData": Data([1, 2, 3])], into: context)
            insertObject(
                "Aircraft", ["tailNumber": "N2", "aircraftType": "PA28", "flightData": Data([4, 5])], into: context)
            insertObject("Aircraft", ["tailNumber": "N3", "aircraftType": "SR22"], into: context)
        }
        let entityMapping = NSEntityMapping()
        entityMapping.name = "AircraftToAircraft"
        entityMapping.mappingType = .customEntityMappingType
        entityMapping.sourceEntityName = "Aircraft"
        entityMapping.destinationEntityName = "Aircraft"
        entityMapping.entityMigrationPolicyClassName = "OpenCoreDataTests.FlightDataPolicy"
        entityMapping.attributeMappings = [
            property("tailNumber", "$source.tailNumber"), property("aircraftType", "$source.aircraftType"),
        ]
        let mapping = NSMappingModel()
        mapping.entityMappings = [entityMapping]
        let destination = directory.file("Migrated.sqlite")
        let manager = NSMigrationManager(sourceModel: v1, destinationModel: v3)
        try manager.migrateStore(
            from: sourceURL, type: NSSQLiteStoreType, mapping: mapping, to: destination, type: destinationType)
        var coordinator: NSPersistentStoreCoordinator?
        let context: NSManagedObjectContext
        if destinationType == NSSQLiteStoreType {
            coordinator = try StoreHarness.coordinator(model: v3, storeType: NSSQLiteStoreType, url: destination)
            context = StoreHarness.context(coordinator!)
        } else {
            context = manager.destinationContext
        }
        defer { coordinator.map(StoreHarness.close) }
        let planes = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Aircraft")).map { plane in
            let bytes = (plane.value(forKey: "flightDetails") as? NSManagedObject)?.value(forKey: "data") as? Data
            return
                "\(plane.value(forKey: "tailNumber") ?? "nil") \(plane.value(forKey: "aircraftType") ?? "nil") \(bytes.map { Array($0) } ?? [])"
        }.sorted()
        #expect(planes == ["N1 C172 [1, 2, 3]", "N2 PA28 [4, 5]", "N3 SR22 []"])
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "FlightData")) == 2)
    }
}
