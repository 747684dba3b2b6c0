import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// `NSPersistentStoreDeferredLightweightMigrationOptionKey` and `finishDeferredLightweightMigration()`.
@Suite("Migration: deferred clean-up")
struct DeferredMigrationTests {
    private func v1() -> NSManagedObjectModel {
        let age = M.attribute("age", .integer32AttributeType)
        age.isIndexed = true
        return M.model("1", [M.entity("Note", [M.attribute("text")]), M.entity("Person", [M.attribute("name"), age, M.attribute("city")])])
    }

    private func v2() -> NSManagedObjectModel {
        M.model("2", [M.entity("Person", [M.attribute("name"), M.attribute("city")])])
    }

    private func store(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(v1(), in: directory) { context in
            for i in 0..<50 { insertObject("Person", ["name": "p\(i)", "age": i, "city": "c\(i)"], into: context) }
            insertObject("Note", ["text": "hello"], into: context)
        }
    }

    private func options(_ sources: [NSManagedObjectModel]) -> [AnyHashable: Any] {
        var options = M.options(sources)
        options[NSPersistentStoreDeferredLightweightMigrationOptionKey] = true
        return options
    }

    private func tables(_ url: URL) throws -> Set<String> {
        Set(try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] as? String })
    }

    @Test func cleanUpWaitsUntilFinishAndTheStoreWorksMeanwhile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let coordinator = try M.open(url, with: v2(), sources: [v1()], options: options([v1()]))
        defer { StoreHarness.close(coordinator) }
        let statements = try sqliteStore(coordinator).migrationStatements
        #expect(!statements.contains { $0.hasPrefix("DROP") || $0.contains("Z_OCDMIGRATION") })
        let store = coordinator.persistentStores[0]
        #expect(coordinator.metadata(for: store)[NSPersistentStoreDeferredLightweightMigrationOptionKey] as? Bool == true)
        #expect(try M.columns("ZPERSON", at: url).contains("ZAGE"))
        #expect(try tables(url).contains("ZNOTE"))

        // Fully usable before the clean-up: read, insert, update.
        let context = StoreHarness.context(coordinator)
        insertObject("Person", ["name": "new", "city": "x"], into: context)
        try context.save()
        #expect(try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").count == 51)

        try coordinator.finishDeferredLightweightMigration()
        #expect(coordinator.metadata(for: store)[NSPersistentStoreDeferredLightweightMigrationOptionKey] == nil)
        #expect(try M.columns("ZPERSON", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZCITY", "ZNAME"])
        #expect(!(try tables(url)).contains("ZNOTE"))
        let indexes = try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").compactMap { $0[0] as? String }
        #expect(!indexes.contains { $0.contains("ZAGE") })
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.count == 51)
        #expect(rows.first { $0["name"] as? String == "p7" }?["city"] as? String == "c7")
        let onDisk = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(onDisk[NSPersistentStoreDeferredLightweightMigrationOptionKey] == nil)
        #expect(v2().isConfiguration(withName: nil, compatibleWithStoreMetadata: onDisk))
        // Finishing twice is harmless.
        try coordinator.finishDeferredLightweightMigration()
    }

    @Test func reAddedAttributeDoesNotResurrectDeferredData() throws {
        // v2 drops `age` with the clean-up deferred, v3 adds a new `age`: it starts empty, not with
        // the values the left-over column still holds.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        StoreHarness.close(try M.open(url, with: v2(), sources: [v1()], options: options([v1()])))
        let v3 = M.model("3", [M.entity("Person", [M.attribute("name"), M.attribute("city"), M.attribute("age", .integer32AttributeType)])])
        let coordinator = try M.open(url, with: v3, sources: [v2()], options: options([v1(), v2()]))
        defer { StoreHarness.close(coordinator) }
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.count == 50)
        #expect(rows.allSatisfy { $0["age"] == nil })
        try coordinator.finishDeferredLightweightMigration()
        #expect(!(try tables(url)).contains("ZNOTE"))
    }
}
