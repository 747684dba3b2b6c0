import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// Small pieces of Apple's API found missing by the walk through Apple's Core Data symbol list
/// (issue 39), each checked against its documented behaviour.
@Suite("Coordination: API found missing by the coverage walk")
struct APICoverageAdditionsTests {
    /// `NSManagedObjectContext(_:)` with `.privateQueue`/`.mainQueue` is the newer spelling of
    /// `init(concurrencyType:)`; `NSManagedObjectContextConcurrencyType` is the older type name.
    @Test func contextConcurrencyTypeSpellings() throws {
        let privateContext = NSManagedObjectContext(.privateQueue)
        let mainContext = NSManagedObjectContext(.mainQueue)
        let older: NSManagedObjectContextConcurrencyType = .privateQueueConcurrencyType
        #expect(privateContext.concurrencyType == older)
        #expect(mainContext.concurrencyType == .mainQueueConcurrencyType)
        #expect(NSManagedObjectContext(concurrencyType: .mainQueue).concurrencyType == mainContext.concurrencyType)
    }

    /// `userInfo` is a mutable dictionary the context keeps for the developer.
    @Test func contextUserInfo() {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        #expect(context.userInfo.count == 0)
        context.userInfo["owner"] = "importer"
        #expect(context.userInfo["owner"] as? String == "importer")
        #expect(context.userInfo === context.userInfo)
    }

    /// `NSExpressionDescription.resultType` is the newer spelling of `expressionResultType`, and a
    /// dictionary fetch converts the column to it.
    @Test func expressionDescriptionResultType() throws {
        let description = NSExpressionDescription()
        description.resultType = .integer64
        #expect(description.expressionResultType == .integer64AttributeType)
        description.expressionResultType = .doubleAttributeType
        #expect(description.resultType == .double)

        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let model = M.model("1", [M.entity("Item", [M.attribute("score", .integer64AttributeType)])])
        let url = try M.makeStore(model, in: directory) { context in
            for score in [1, 2, 4] { insertObject("Item", ["score": Int64(score)], into: context) }
        }
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "score")])
        total.resultType = .double
        let request = NSFetchRequest<NSDictionary>(entityName: "Item")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = [total]
        let rows = try StoreHarness.context(coordinator).fetch(request)
        #expect(rows.first?["total"] as? Double == 7)
    }

    /// `cachedModelForPersistentStore(at:options:)` reads the model Apple cached in a SQLite store,
    /// and throws for a store without one.
    @Test func coordinatorCachedModel() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let item = try #require(CompiledModelTests.storesWithCache.first)
        let url = try Corpus.copyStore(item.store, to: directory.url)
        let model = try NSPersistentStoreCoordinator.cachedModelForPersistentStore(at: url)
        let same = try #require(try NSManagedObjectModel.cachedModel(ofStoreAt: url))
        #expect(model.entityVersionHashesByName == same.entityVersionHashesByName && !model.entities.isEmpty)

        let ours = try M.makeStore(M.model("1", [M.entity("Item", [M.attribute("name")])]), in: directory) { _ in }
        let error = #expect(throws: OpenCoreDataError.self) {
            _ = try NSPersistentStoreCoordinator.cachedModelForPersistentStore(at: ours, options: nil)
        }
        #expect(error?.code == .coreDataError)
        #expect(throws: OpenCoreDataError.self) {
            _ = try NSPersistentStoreCoordinator.cachedModelForPersistentStore(at: directory.file("Missing.sqlite"))
        }
    }

    /// The coordinator's async `perform` runs the block with the coordinator's lock held and hands
    /// back its value or its error.
    @Test func coordinatorAsyncPerform() async throws {
        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: M.model("1", [M.entity("Item", [M.attribute("name")])]))
        let value = await coordinator.perform { () -> Int in
            // The lock is held: another thread cannot take it meanwhile (it is recursive for this one).
            coordinator.performAndWait { 41 } + 1
        }
        #expect(value == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await coordinator.perform { () throws(Failure) -> Int in throw Failure() }
        }
    }

    /// `NSPersistentStoreModelVersionChecksumKey` (Apple's name) reads the checksum an Apple-written
    /// store recorded: the cached model's `versionChecksum`.
    @Test func versionChecksumKeyReadsAppleStores() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"
        let url = try Corpus.copyStore(path, to: directory.url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        let checksum = try #require(metadata[NSPersistentStoreModelVersionChecksumKey] as? String)
        let model = try NSPersistentStoreCoordinator.cachedModelForPersistentStore(at: url)
        #expect(checksum == model.versionChecksum)
        #expect(NSPersistentStoreModelVersionChecksumKey == NSStoreModelVersionChecksumKey)
    }

    /// Adding a store posts `NSPersistentStoreCoordinatorStoresDidChange` with the store under
    /// `NSAddedPersistentStoresKey`; removing one posts `NSPersistentStoreCoordinatorWillRemoveStore`
    /// first and then the change with `NSRemovedPersistentStoresKey`; the object is the coordinator.
    @Test func coordinatorStoreChangeNotifications() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        final class Log: @unchecked Sendable {
            // @unchecked Sendable: written by observers on this test's thread only (posted synchronously).
            var entries: [String] = []
        }
        let log = Log()
        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: M.model("1", [M.entity("Item", [M.attribute("name")])]))
        let center = NotificationCenter.default
        let tokens = [
            center.addObserver(forName: .NSPersistentStoreCoordinatorStoresDidChange, object: coordinator, queue: nil) {
                note in
                let added = (note.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.map { $0.type } ?? []
                let removed =
                    (note.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.map { $0.type } ?? []
                log.entries.append("did added=\(added) removed=\(removed)")
            },
            center.addObserver(forName: .NSPersistentStoreCoordinatorWillRemoveStore, object: coordinator, queue: nil) {
                note in
                log.entries.append("will remove \(note.userInfo == nil)")
            },
        ]
        defer { for token in tokens { center.removeObserver(token) } }
        let store = try coordinator.addPersistentStore(type: .sqlite, at: directory.file("Store.sqlite"))
        try coordinator.remove(store)
        let memory = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        try coordinator.remove(memory)
        #expect(
            log.entries == [
                "did added=[\"SQLite\"] removed=[]", "will remove true", "did added=[] removed=[\"SQLite\"]",
                "did added=[\"InMemory\"] removed=[]", "will remove true", "did added=[] removed=[\"InMemory\"]",
            ])
    }
}
