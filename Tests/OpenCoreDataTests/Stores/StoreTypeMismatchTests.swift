import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A file-based store of an app's own: its metadata in a property list file, readable without
/// adding the store (`metadataForPersistentStore(with:)`), as Apple asks of file-based stores.
/// Subclasses differ only in their type.
///
/// `@unchecked Sendable` invariant: used only under its coordinator's lock.
class PlistTestStore: NSIncrementalStore, @unchecked Sendable {
    override var type: String { "PlistTestStore" }

    override func loadMetadata() throws {
        guard let url else { return }
        if let data = FileManager.default.contents(atPath: url.path), !data.isEmpty {
            metadata = try Self.metadataForPersistentStore(with: url)
        } else {
            metadata = [NSStoreUUIDKey: UUID().uuidString, NSStoreTypeKey: type]
            let data = try PropertyListSerialization.data(fromPropertyList: metadata!, format: .xml, options: 0)
            try data.write(to: url)
        }
    }

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: url.path),
              let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else { throw CocoaError(.fileReadCorruptFile) }
        return plist
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any { [Any]() }
}

/// `PlistTestStore` as type `PlistA`.
final class PlistTestStoreA: PlistTestStore, @unchecked Sendable {
    override var type: String { "PlistA" }
}

/// `PlistTestStore` as type `PlistB`.
final class PlistTestStoreB: PlistTestStore, @unchecked Sendable {
    override var type: String { "PlistB" }
}

/// Apple: `NSPersistentStoreTypeMismatchError` (134010), "returned by a persistent store coordinator
/// if a store is accessed that does not match the specified type". The type a file's metadata
/// records (`NSStoreType`) decides, as Apple reads a file's type from its metadata when asked for
/// none; the file is left as it was.
@Suite("Store type mismatch")
struct StoreTypeMismatchTests {
    static func registerPlistStores() {
        NSPersistentStoreCoordinator.registerStoreClass(PlistTestStoreA.self, forStoreType: "PlistA")
        NSPersistentStoreCoordinator.registerStoreClass(PlistTestStoreB.self, forStoreType: "PlistB")
    }

    /// A SQLite store with one saved object, closed; its file.
    static func sqliteFile(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Store.sqlite")
        let coordinator = try StoreHarness.coordinator(model: TestModels.graph(), storeType: NSSQLiteStoreType, url: url)
        let context = StoreHarness.context(coordinator)
        try context.performAndWait {
            insertObject("Owner", ["uid": Int64(1)], into: context)
            try context.save()
        }
        StoreHarness.close(coordinator)
        return url
    }

    /// The bytes of a store's files (its `-wal` and `-shm` too), to see that nothing changed.
    static func contents(_ url: URL) -> [Data?] {
        ["", "-wal", "-shm"].map { FileManager.default.contents(atPath: url.path + $0) }
    }

    static func expectMismatch(_ type: String, at url: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = contents(url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModels.graph())
        do {
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            Issue.record("the file was added as \(type)", sourceLocation: sourceLocation)
        } catch {
            #expect((error as NSError).code == NSPersistentStoreTypeMismatchError, "\(error)", sourceLocation: sourceLocation)
            #expect((error as NSError).domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
        }
        #expect(coordinator.persistentStores.isEmpty, sourceLocation: sourceLocation)
        #expect(contents(url) == before, "the file is untouched", sourceLocation: sourceLocation)
    }

    @Test func aSQLiteFileIsNotAnInMemoryStore() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        Self.expectMismatch(NSInMemoryStoreType, at: try Self.sqliteFile(in: directory))
    }

    @Test func aSQLiteFileIsNotAnIncrementalStoreOfAnotherType() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Self.sqliteFile(in: directory)
        DictionaryTestStore.register()
        Self.registerPlistStores()
        Self.expectMismatch(DictionaryTestStore.storeType, at: url)
        Self.expectMismatch("PlistA", at: url)
    }

    @Test func aFileOfOneCustomTypeIsNotAnother() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        Self.registerPlistStores()
        let url = directory.file("Store.plist")
        let first = NSPersistentStoreCoordinator(managedObjectModel: TestModels.graph())
        try first.addPersistentStore(ofType: "PlistA", configurationName: nil, at: url, options: nil)
        try first.remove(first.persistentStores[0])
        Self.expectMismatch("PlistB", at: url)
        Self.expectMismatch(NSSQLiteStoreType, at: url)
        // Its own type opens it, with the metadata it wrote.
        let again = NSPersistentStoreCoordinator(managedObjectModel: TestModels.graph())
        let store = try again.addPersistentStore(ofType: "PlistA", configurationName: nil, at: url, options: nil)
        #expect(store.metadata[NSStoreTypeKey] as? String == "PlistA")
    }

    /// What must still open: a store of its own type, a new file, an in-memory store at `/dev/null`
    /// or at a URL where no file is.
    @Test func matchingAndNewStoresOpen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Self.sqliteFile(in: directory)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModels.graph())
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("New.sqlite"), options: nil)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: directory.file("none"), options: nil)
        #expect(coordinator.persistentStores.count == 4)
        StoreHarness.close(coordinator)
    }
}
