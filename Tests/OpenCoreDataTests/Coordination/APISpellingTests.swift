import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// Apple's API has an older (string store types) and a newer (`NSPersistentStore.StoreType`) Swift
/// spelling of the coordinator's and the migration manager's store calls, and code uses both. Each
/// test calls both spellings of one call against real SQLite stores and checks they do the same.
@Suite("Coordination: both Swift spellings of the store calls")
struct APISpellingTests {
    private func model() -> NSManagedObjectModel {
        M.model("1", [M.entity("Person", [M.attribute("name"), M.attribute("city")])])
    }

    /// A store of ``model()`` holding Ann (Oslo) and Bob (Rome), closed again.
    private func store(
        _ directory: TemporaryDirectory, _ name: String,
        people: [(String, String)] = [("Ann", "Oslo"), ("Bob", "Rome")]
    )
        throws -> URL
    {
        try M.makeStore(model(), in: directory, name: name) { context in
            for (name, city) in people { insertObject("Person", ["name": name, "city": city], into: context) }
        }
    }

    /// The people of the store at `url`, opened with `model`, as "name city" sorted by name.
    private func people(at url: URL, model: NSManagedObjectModel? = nil, key: String = "city") throws -> [String] {
        let coordinator = try StoreHarness.coordinator(
            model: model ?? self.model(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        return try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").map {
            "\($0["name"] as? String ?? "?") \($0[key] as? String ?? "?")"
        }
    }

    @Test func migrateStoreBothSpellings() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = try store(directory, "Source.sqlite")
        let before = try M.bytes(source)
        let target = M.model(
            "2", [M.entity("Person", [M.attribute("name"), M.attribute("town", renamedFrom: "city")])])
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: model(), destinationModel: target)
        let older = directory.file("Older.sqlite")
        let newer = directory.file("Newer.sqlite")
        try NSMigrationManager(sourceModel: model(), destinationModel: target).migrateStore(
            from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping, toDestinationURL: older,
            destinationType: NSSQLiteStoreType, destinationOptions: nil)
        try NSMigrationManager(sourceModel: model(), destinationModel: target).migrateStore(
            from: source, type: .sqlite, options: nil, mapping: mapping, to: newer, type: .sqlite, options: nil)
        let expected = ["Ann Oslo", "Bob Rome"]
        #expect(try people(at: older, model: target, key: "town") == expected)
        #expect(try people(at: newer, model: target, key: "town") == expected)
        #expect(try M.bytes(source) == before)
        // Both spellings report a missing mapping the same way (the older one takes an optional).
        let missing = directory.file("Missing.sqlite")
        let error = #expect(throws: OpenCoreDataError.self) {
            try NSMigrationManager(sourceModel: model(), destinationModel: target).migrateStore(
                from: source, sourceType: NSSQLiteStoreType, with: nil, toDestinationURL: missing,
                destinationType: NSSQLiteStoreType)
        }
        #expect(error?.code == .migrationMissingMappingModel)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func addPersistentStoreBothSpellings() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory, "Store.sqlite")
        let older = NSPersistentStoreCoordinator(managedObjectModel: model())
        let newer = NSPersistentStoreCoordinator(managedObjectModel: model())
        defer {
            StoreHarness.close(older)
            StoreHarness.close(newer)
        }
        let a = try older.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let b = try newer.addPersistentStore(type: .sqlite, configuration: nil, at: url, options: nil)
        #expect(a.type == b.type && a.identifier == b.identifier && a.url == b.url)
        let namesA = try M.rows("Person", StoreHarness.context(older), sortedBy: "name").map { $0["name"] as? String }
        let namesB = try M.rows("Person", StoreHarness.context(newer), sortedBy: "name").map { $0["name"] as? String }
        #expect(namesA == ["Ann", "Bob"] && namesA == namesB)
    }

    @Test func migratePersistentStoreBothSpellings() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        for spelling in ["withType", "type"] {
            let source = try store(directory, "\(spelling)-Source.sqlite")
            let before = try M.bytes(source)
            let destination = directory.file("\(spelling)-Moved.sqlite")
            let coordinator = try StoreHarness.coordinator(model: model(), storeType: NSSQLiteStoreType, url: source)
            defer { StoreHarness.close(coordinator) }
            let old = try #require(coordinator.persistentStores.first)
            let moved =
                spelling == "withType"
                ? try coordinator.migratePersistentStore(
                    old, to: destination, options: nil, withType: NSSQLiteStoreType)
                : try coordinator.migratePersistentStore(old, to: destination, options: nil, type: .sqlite)
            // The new store replaces the old one in the coordinator and holds its objects.
            #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores.first === moved)
            #expect(
                moved.url?.standardizedFileURL == destination.standardizedFileURL && moved.type == NSSQLiteStoreType)
            let names = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").map {
                $0["name"] as? String
            }
            #expect(names == ["Ann", "Bob"], "\(spelling)")
            StoreHarness.close(coordinator)
            #expect(try people(at: destination) == ["Ann Oslo", "Bob Rome"], "\(spelling)")
            #expect(try M.bytes(source) == before, "\(spelling): the old file is left as it was")
        }
    }

    /// A file already at the destination is not overwritten, and the store stays added (Apple does
    /// not document this case; OpenCoreData refuses it).
    @Test func migratePersistentStoreLeavesAnExistingFileAlone() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = try store(directory, "Source.sqlite")
        let other = try store(directory, "Other.sqlite", people: [("Cy", "Lima")])
        let otherBytes = try M.bytes(other)
        let coordinator = try StoreHarness.coordinator(model: model(), storeType: NSSQLiteStoreType, url: source)
        defer { StoreHarness.close(coordinator) }
        let old = try #require(coordinator.persistentStores.first)
        let error = #expect(throws: OpenCoreDataError.self) {
            try coordinator.migratePersistentStore(old, to: other, type: .sqlite)
        }
        #expect(error?.code == .persistentStoreOperation)
        #expect(coordinator.persistentStores.first === old)
        #expect(try M.bytes(other) == otherBytes)
    }

    @Test func replacePersistentStoreBothSpellings() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = try store(directory, "Source.sqlite")
        let before = try M.bytes(source)
        let older = try store(directory, "Older.sqlite", people: [("Cy", "Lima")])
        let newer = try store(directory, "Newer.sqlite", people: [("Di", "Kyiv")])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.replacePersistentStore(
            at: older, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil,
            ofType: NSSQLiteStoreType)
        try coordinator.replacePersistentStore(
            at: newer, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil, type: .sqlite)
        #expect(try people(at: older) == ["Ann Oslo", "Bob Rome"])
        #expect(try people(at: newer) == ["Ann Oslo", "Bob Rome"])
        // "Replacing emptiness" makes a copy.
        let copy = directory.file("Copy.sqlite")
        try coordinator.replacePersistentStore(at: copy, withPersistentStoreFrom: source, type: .sqlite)
        #expect(try people(at: copy) == ["Ann Oslo", "Bob Rome"])
        #expect(try M.bytes(source) == before)
    }

    /// A store the coordinator holds is not replaced under it, and a source that is not a store
    /// leaves the destination as it was.
    @Test func replacePersistentStoreRefusesWithoutTouchingTheDestination() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = try store(directory, "Source.sqlite")
        let destination = try store(directory, "Destination.sqlite", people: [("Cy", "Lima")])
        let bytes = try M.bytes(destination)
        let coordinator = try StoreHarness.coordinator(model: model(), storeType: NSSQLiteStoreType, url: destination)
        let loaded = #expect(throws: OpenCoreDataError.self) {
            try coordinator.replacePersistentStore(
                at: destination, withPersistentStoreFrom: source, ofType: NSSQLiteStoreType)
        }
        #expect(loaded?.code == .persistentStoreOperation)
        StoreHarness.close(coordinator)
        let junk = directory.file("Junk.sqlite")
        try Data("not a store".utf8).write(to: junk)
        #expect(throws: OpenCoreDataError.self) {
            try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: junk, type: .sqlite)
        }
        #expect(try M.bytes(destination) == bytes)
    }

    @Test func destroyPersistentStoreBothSpellings() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let older = try store(directory, "Older.sqlite")
        let newer = try store(directory, "Newer.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.destroyPersistentStore(at: older, ofType: NSSQLiteStoreType, options: nil)
        try coordinator.destroyPersistentStore(at: newer, type: .sqlite, options: nil)
        for url in [older, newer] {
            for suffix in ["", "-wal", "-shm"] { #expect(!FileManager.default.fileExists(atPath: url.path + suffix)) }
        }
    }

    @Test func metadataBothSpellings() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let older = try store(directory, "Older.sqlite")
        let newer = try store(directory, "Newer.sqlite")
        let before = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: older, options: nil)
        let same = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: older, options: nil)
        #expect(NSDictionary(dictionary: before).isEqual(to: same))
        #expect(before[NSStoreModelVersionHashesKey] != nil && before[NSStoreUUIDKey] as? String != nil)

        var olderMetadata = before
        olderMetadata["Note"] = "older"
        try NSPersistentStoreCoordinator.setMetadata(
            olderMetadata, forPersistentStoreOfType: NSSQLiteStoreType, at: older, options: nil)
        var newerMetadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: newer)
        newerMetadata["Note"] = "newer"
        try NSPersistentStoreCoordinator.setMetadata(newerMetadata, type: .sqlite, at: newer, options: nil)
        let readOlder = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: older)
        let readNewer = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: newer)
        #expect(readOlder["Note"] as? String == "older" && readNewer["Note"] as? String == "newer")
        // Written metadata is the metadata given: the stores still open with their model.
        #expect(try people(at: older) == ["Ann Oslo", "Bob Rome"])
        #expect(try people(at: newer) == ["Ann Oslo", "Bob Rome"])
    }
}
