import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// `NSIgnorePersistentStoreVersioningOption`: Apple's documentation says Core Data "will not compare
/// the version hashes between the managed object model in the coordinator and the metadata for the
/// loaded store. (It will, however, continue to update the version hash information in the
/// metadata.)"
@Suite("Coordination: NSIgnorePersistentStoreVersioningOption")
struct IgnoreVersioningOptionTests {
    /// Person(name); `modifier` changes the entity's version hash but not its table.
    private func model(modifier: String? = nil) -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("name")])
        person.versionHashModifier = modifier
        return M.model("1", [person])
    }

    private func names(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").compactMap { $0["name"] as? String }
    }

    @Test func opensAStoreWhoseHashesDifferAndLeavesTheFileAlone() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try M.makeStore(model(), in: directory) { insertObject("Person", ["name": "Ann"], into: $0) }
        let changed = model(modifier: "2")
        #expect(changed.entitiesByName["Person"]?.versionHash != model().entitiesByName["Person"]?.versionHash)
        let before = try M.bytes(url)

        // Without the option: 134100, even when asked to migrate (no source model is known).
        let refused = #expect(throws: OpenCoreDataError.self) {
            _ = try StoreHarness.coordinator(model: changed, storeType: NSSQLiteStoreType, url: url)
        }
        #expect(refused?.code == .persistentStoreIncompatibleVersionHash)

        // With it the store opens, reads, and no byte of the file changes until a save.
        for value: Any in [true, NSNumber(value: true)] {
            let coordinator = try StoreHarness.coordinator(
                model: changed, storeType: NSSQLiteStoreType, url: url,
                options: [
                    NSIgnorePersistentStoreVersioningOption: value, NSMigratePersistentStoresAutomaticallyOption: true,
                ])
            #expect(try names(coordinator) == ["Ann"])
            StoreHarness.close(coordinator)
            #expect(try M.bytes(url) == before)
        }
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(model().isConfiguration(withName: nil, compatibleWithStoreMetadata: stored))
    }

    /// "It will, however, continue to update the version hash information in the metadata": after a
    /// save the store carries the hashes of the model it was opened with.
    @Test func aSaveRecordsTheModelsHashes() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try M.makeStore(model(), in: directory) { insertObject("Person", ["name": "Ann"], into: $0) }
        let changed = model(modifier: "2")
        let coordinator = try StoreHarness.coordinator(
            model: changed, storeType: NSSQLiteStoreType, url: url,
            options: [NSIgnorePersistentStoreVersioningOption: true])
        let store = try #require(coordinator.persistentStores.first)
        #expect(changed.isConfiguration(withName: nil, compatibleWithStoreMetadata: coordinator.metadata(for: store)))
        let context = StoreHarness.context(coordinator)
        try context.performAndWait {
            insertObject("Person", ["name": "Bob"], into: context)
            try context.save()
        }
        StoreHarness.close(coordinator)
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(changed.isConfiguration(withName: nil, compatibleWithStoreMetadata: stored))
        #expect(!model().isConfiguration(withName: nil, compatibleWithStoreMetadata: stored))
        // Now it opens with the changed model without the option, and the rows are all there.
        let reopened = try StoreHarness.coordinator(model: changed, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(reopened) }
        #expect(try names(reopened) == ["Ann", "Bob"])
    }

    /// `false` is the same as leaving the option out.
    @Test func falseComparesAsUsual() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try M.makeStore(model(), in: directory) { insertObject("Person", ["name": "Ann"], into: $0) }
        let error = #expect(throws: OpenCoreDataError.self) {
            _ = try StoreHarness.coordinator(
                model: model(modifier: "2"), storeType: NSSQLiteStoreType, url: url,
                options: [NSIgnorePersistentStoreVersioningOption: false])
        }
        #expect(error?.code == .persistentStoreIncompatibleVersionHash)
    }
}
