import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// A migration that cannot run, or fails halfway, leaves the store exactly as it was.
@Suite("Migration: errors and rollback")
struct MigrationSafetyTests {
    private func v1() -> NSManagedObjectModel {
        M.model("1", [M.entity("Person", [M.attribute("name"), M.attribute("city")])])
    }

    private func v2() -> NSManagedObjectModel {
        M.model("2", [M.entity("Person", [M.attribute("name"), M.attribute("city"), M.attribute("email")])])
    }

    private func store(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(v1(), in: directory) { context in
            insertObject("Person", ["name": "Ann", "city": "Oslo"], into: context)
            insertObject("Person", ["name": "Ann", "city": "Rome"], into: context)
        }
    }

    /// `url` is byte-for-byte `before` and still opens with v1, with both rows.
    private func expectUnchanged(_ url: URL, _ before: [Data]) throws {
        #expect(try M.bytes(url) == before)
        let coordinator = try StoreHarness.coordinator(model: v1(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "city")
        #expect(rows.map { $0["city"] as? String } == ["Oslo", "Rome"])
    }

    private func code(_ body: () throws -> Void) -> Int? {
        do {
            try body()
            return nil
        } catch let error as OpenCoreDataError {
            return error.errorCode
        } catch {
            return -1
        }
    }

    @Test func failingMigrationRollsBackEveryStep() throws {
        // v2 renames a column, adds one and a table, then adds a uniqueness constraint the data
        // violates: the last step fails, and the earlier ones must not survive.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        let person = M.entity(
            "Person", [M.attribute("name"), M.attribute("town", renamedFrom: "city"), M.attribute("email")])
        person.uniquenessConstraints = [["name"]]
        let bad = M.model("2", [person, M.entity("Pet", [M.attribute("name")])])
        do {
            _ = try M.open(url, with: bad, sources: [v1()])
            Issue.record("the migration should fail on the duplicate names")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .migration)
            #expect(error.message.contains("updating indexes"))
            #expect(error.sql?.contains("CREATE UNIQUE INDEX") == true)
        }
        try expectUnchanged(url, before)
    }

    @Test func migrationOffGivesIncompatibleVersionHash() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        #expect(code { _ = try StoreHarness.coordinator(model: v2(), storeType: NSSQLiteStoreType, url: url) } == NSPersistentStoreIncompatibleVersionHashError)
        #expect(code { _ = try M.open(url, with: v2(), sources: [v1()], options: M.options([v1()], migrate: false)) } == NSPersistentStoreIncompatibleVersionHashError)
        try expectUnchanged(url, before)
    }

    @Test func migrationWithoutInferenceNeedsAMappingModel() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        #expect(code { _ = try M.open(url, with: v2(), sources: [v1()], options: M.options([v1()], infer: false)) } == NSMigrationMissingMappingModelError)
        try expectUnchanged(url, before)
    }

    @Test func unknownSourceModelIsAClearErrorAndNothingIsDeleted() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        do {
            _ = try M.open(url, with: v2(), sources: [])
            Issue.record("no source model should be found")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .migrationMissingSourceModel)
            #expect(error.message.contains("none of the 0 known model versions"))
        }
        try expectUnchanged(url, before)
    }

    @Test func storeOfANewerModelVersionSaysSo() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try M.makeStore(v2(), in: directory) { insertObject("Person", ["name": "Ann"], into: $0) }
        let before = try M.bytes(url)
        do {
            _ = try M.open(url, with: v1(), sources: [])
            Issue.record("a newer store should not open")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .migrationMissingSourceModel)
            #expect(error.message.contains("newer version of the model"))
        }
        #expect(try M.bytes(url) == before)
    }

    @Test func unversionedStoreIsAClearError() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        metadata[NSStoreModelVersionHashesKey] = nil
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let before = try M.bytes(url)
        do {
            _ = try M.open(url, with: v2(), sources: [v1()])
            Issue.record("an unversioned store should not migrate")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .migrationMissingSourceModel)
            #expect(error.message.contains("unversioned"))
        }
        #expect(try M.bytes(url) == before)
    }

    @Test func changeThatIsNotLightweightIsRefusedBeforeAnythingIsWritten() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        let retyped = M.model("2", [M.entity("Person", [M.attribute("name"), M.attribute("city", .integer64AttributeType)])])
        #expect(code { _ = try M.open(url, with: retyped, sources: [v1()]) } == NSInferredMappingModelError)
        try expectUnchanged(url, before)
    }

    @Test func readOnlyStoreDoesNotMigrate() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try M.bytes(url)
        var options = M.options([v1()])
        options[NSReadOnlyPersistentStoreOption] = true
        #expect(code { _ = try M.open(url, with: v2(), sources: [v1()], options: options) } == NSPersistentStoreIncompatibleVersionHashError)
        try expectUnchanged(url, before)
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func newStoreOpensWithMigrationOptions(storeType: String) throws {
        // Nothing to migrate: a new SQLite file and the in-memory store start empty with the current model.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coordinator = try StoreHarness.coordinator(
            model: v2(), storeType: storeType, url: storeType == NSSQLiteStoreType ? directory.file("New.sqlite") : nil,
            options: M.options([v1()]))
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        insertObject("Person", ["name": "Ann", "email": "a@example.com"], into: context)
        try context.save()
        #expect(try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").count == 1)
    }

    @Test func descriptionMigratesByDefaultAsOnApple() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let description = NSPersistentStoreDescription(url: url)
        #expect(description.shouldMigrateStoreAutomatically && description.shouldInferMappingModelAutomatically)
        description.setOption(NSArray(array: [v1()]), forKey: OpenCoreDataMigrationSourceModelsOption)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v2())
        defer { StoreHarness.close(coordinator) }
        var failure: (any Error)?
        coordinator.addPersistentStore(with: description) { _, error in failure = error }
        #expect(failure == nil)
        #expect(try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "city").map { $0["city"] as? String } == ["Oslo", "Rome"])

        // Turned off, the description gives Apple's 134100 and leaves the file alone.
        let other = TemporaryDirectory()
        defer { other.remove() }
        let second = try store(other)
        let before = try M.bytes(second)
        let off = NSPersistentStoreDescription(url: second)
        off.shouldMigrateStoreAutomatically = false
        off.setOption(NSArray(array: [v1()]), forKey: OpenCoreDataMigrationSourceModelsOption)
        let refused = NSPersistentStoreCoordinator(managedObjectModel: v2())
        refused.addPersistentStore(with: off) { _, error in failure = error }
        #expect((failure as? OpenCoreDataError)?.code == .persistentStoreIncompatibleVersionHash)
        #expect(try M.bytes(second) == before)
    }
}

/// A migration killed midway (SIGKILL to the migrating process) leaves the store as it was.
@Suite("Migration: killed midway")
struct MigrationKillTests {
    @Test func killedMigrationLeavesTheOldStoreIntact() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let rows = 400_000
        let url = try MigrationFixture.makeStore(TestModels.migrationPersonV1(), in: directory) {
            insertObject("Person", ["name": "name1", "age": 1, "city": "city1"], into: $0)
        }
        do {
            let raw = try RawDatabase(url, readOnly: false)
            _ = try raw.rows(
                "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows)) INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE, ZCITY) SELECT i, 1, 1, 'name' || i, i % 90, 'city' || i FROM n"
            )
            _ = try raw.rows("UPDATE Z_PRIMARYKEY SET Z_MAX = \(rows)")
        }
        let tool = try #require(Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("AttributeRoundTrip"))
        let process = Process()
        process.executableURL = tool
        process.arguments = ["migrate", url.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Wait until the child is inside the migration transaction (the table rebuild has spilled
        // uncommitted pages to the WAL), then kill it.
        let first = output.fileHandleForReading.availableData
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("migrating"))
        let deadline = Date().addingTimeInterval(20)
        func walSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int) ?? 0 }
        while process.isRunning, walSize() < 1_000_000, Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Killed, not finished: if this fails the machine finished first (raise `rows`).
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(walSize() >= 1_000_000)

        // The old model opens the store without migrating, and every row is there.
        let coordinator = try StoreHarness.coordinator(model: TestModels.migrationPersonV1(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        let count = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(count == rows)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "name == %@", "name\(rows)")
        let last = try #require(try context.fetch(request).first)
        #expect(last.value(forKey: "age") as? Int32 == Int32(rows % 90))
        #expect(last.value(forKey: "city") as? String == "city\(rows)")
    }
}

extension MigrationSafetyTests {
    @Test func storeMigratedByAnotherProcessMeanwhileIsNotMigratedTwice() throws {
        // Plan against the v1 metadata, let "another process" migrate the file, then run the stale
        // plan: inside its transaction the store sees v2 metadata and does nothing.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let stale = try SQLiteStore.readStoredMetadata(at: url)
        let plan = try #require(
            try LightweightMigration.plan(storeMetadata: stale.metadata, model: v2(), options: M.options([v1()]), url: url))
        StoreHarness.close(try M.open(url, with: v2(), sources: [v1()]))
        let store = SQLiteStore(persistentStoreCoordinator: nil, configurationName: nil, at: url, options: nil)
        let connection = try SQLiteConnection(url: url, mode: .readWrite(create: false))
        defer { connection.close() }
        let result = try store.migrateInPlace(connection, stored: stale, plan: plan, url: url)
        #expect(store.migrationStatements.isEmpty)
        #expect(v2().isConfiguration(withName: nil, compatibleWithStoreMetadata: result.metadata))
        #expect(result.entityNumbers == ["Person": 1])
        #expect(try M.columns("ZPERSON", at: url).filter { $0 == "ZEMAIL" }.count == 1)
    }
}
