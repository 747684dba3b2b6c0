import Foundation
import OpenCoreData
import OpenCoreDataRuntime  // package `Locked`
import OpenCoreDataTestSupport
import Testing

@Suite("NSPersistentContainer")
struct PersistentContainerTests {
    @Test func defaultDescriptionIsASQLiteStoreNamedAfterTheContainer() throws {
        let container = NSPersistentContainer(name: "Moods", managedObjectModel: MoodsModel.make())
        let description = try #require(container.persistentStoreDescriptions.first)
        #expect(container.persistentStoreDescriptions.count == 1)
        #expect(description.type == NSSQLiteStoreType)
        #expect(description.url?.lastPathComponent == "Moods.sqlite")
        #expect(description.url?.deletingLastPathComponent() == NSPersistentContainer.defaultDirectoryURL())
        // Apple's defaults for a description.
        #expect(description.shouldMigrateStoreAutomatically)
        #expect(description.shouldInferMappingModelAutomatically)
        #expect(!description.shouldAddStoreAsynchronously)
    }

    @Test func loadSaveAndReadFromABackgroundContext() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let container = NSPersistentContainer(name: "Moods", managedObjectModel: MoodsModel.make())
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.file("sub/dir/Moods.sqlite"))]
        var loaded: [(String, (any Error)?)] = []
        container.loadPersistentStores { description, error in loaded.append((description.type, error)) }
        #expect(loaded.count == 1)
        #expect(loaded.first?.0 == NSSQLiteStoreType)
        #expect(loaded.first?.1 == nil, "missing directories are created")
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)

        let view = container.viewContext
        #expect(view === container.viewContext)
        #expect(view.concurrencyType == .mainQueueConcurrencyType)
        try view.performAndWait {
            let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: view)
            continent.setValue(Date(), forKey: "updatedAt")
            try view.save()
        }
        let background = container.newBackgroundContext()
        #expect(background.concurrencyType == .privateQueueConcurrencyType)
        #expect(try background.performAndWait { try background.count(for: NSFetchRequest<NSManagedObject>(entityName: "Continent")) } == 1)

        let count = try await container.performBackgroundTask { context in
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Continent"))
        }
        #expect(count == 1)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            container.performBackgroundTask { context in
                #expect(context !== view)
                done.resume()
            }
        }
    }

    @Test func asynchronousAddAndLoadErrors() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let garbage = directory.file("NotAStore.sqlite")
        try Data("this is not a database".utf8).write(to: garbage)
        let container = NSPersistentContainer(name: "Moods", managedObjectModel: MoodsModel.make())
        let memory = NSPersistentStoreDescription()
        memory.type = NSInMemoryStoreType
        memory.shouldAddStoreAsynchronously = true
        let broken = NSPersistentStoreDescription(url: garbage)
        container.persistentStoreDescriptions = [memory, broken]
        let results = await withCheckedContinuation { (done: CheckedContinuation<[String: Bool], Never>) in
            let collected = Locked<[String: Bool]>([:])
            container.loadPersistentStores { description, error in
                let count = collected.withLock { $0[description.type] = error == nil; return $0.count }
                if count == 2 { done.resume(returning: collected.withLock { $0 }) }
            }
        }
        #expect(results == [NSInMemoryStoreType: true, NSSQLiteStoreType: false], "the broken file reports an error, not a crash")
        #expect(try Data(contentsOf: garbage) == Data("this is not a database".utf8), "the file is untouched")
    }
}
