import Dispatch
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Reads run beside each other and beside a save (issue 40, `docs/concurrency.md`): the
/// coordinator holds its write lock for writes and serial stores only, and the SQLite store (WAL)
/// leases each request a connection of its own.
@Suite("Concurrent reads")
struct ConcurrentReadsTests {
    private static func employees(_ count: Int, in store: TestStore) throws {
        let context = store.newContext()
        try context.performAndWait { () throws(any Error) in
            for i in 0..<count { insertObject("Employee", ["name": "E\(i)", "age": i], into: context) }
            try context.save()
        }
    }

    private static func count(_ context: NSManagedObjectContext) throws -> Int {
        try context.performAndWait { () throws(any Error) -> Int in
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        }
    }

    /// A save held open inside its write transaction (a store hook waits there) does not stop two
    /// other contexts, on two threads, from fetching, counting and firing faults: they finish
    /// while it waits, and see the rows as they were before it. Once the save returns, a read sees
    /// its row. On the code before (one lock around every request) the reads waited for the save:
    /// the group below timed out.
    @Test func readsCompleteWhileASaveIsHeldOpen() throws {
        let store = try TestStore(NSSQLiteStoreType)
        try Self.employees(100, in: store)
        let sqlite = try sqliteStore(store.coordinator)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        sqlite.testHooks.insideSaveTransaction = {
            inside.signal()
            _ = release.wait(timeout: .now() + 20)  // bounded: a regression fails, it does not hang
        }
        let writer = store.newContext()
        let saved = DispatchSemaphore(value: 0)
        writer.perform {
            insertObject("Employee", ["name": "New", "age": 1000], into: writer)
            try? writer.save()
            saved.signal()
        }
        #expect(inside.wait(timeout: .now() + 20) == .success)

        let readers = [store.newContext(), store.newContext()]
        let group = DispatchGroup()
        let results = Locked<[Int]>([])
        for reader in readers {
            group.enter()
            reader.perform {
                defer { group.leave() }
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
                request.returnsObjectsAsFaults = true
                request.includesPropertyValues = false
                guard let objects = try? reader.fetch(request), let count = try? reader.count(for: request) else { return }
                let names = objects.prefix(5).compactMap { $0.value(forKey: "name") as? String }  // faults fire
                results.withLock { $0.append(names.count == 5 ? count : -1) }
            }
        }
        let readsFinished = group.wait(timeout: .now() + 10) == .success
        release.signal()
        #expect(saved.wait(timeout: .now() + 20) == .success)
        sqlite.testHooks.insideSaveTransaction = nil
        #expect(readsFinished, "reads waited for the save in progress")
        #expect(results.withLock { $0 } == [100, 100])
        #expect(try Self.count(readers[0]) == 101)  // after the save returned, reads see it
        #expect(try Self.count(readers[1]) == 101)
    }

    /// Two reads run at the same time: while one context's fetch is held inside the store (its
    /// block predicate, evaluated on the fetched rows, waits), another context fetches and counts.
    /// On the code before, the second read waited for the first (one lock around every request).
    @Test func twoReadsRunAtTheSameTime() throws {
        let store = try TestStore(NSSQLiteStoreType)
        try Self.employees(50, in: store)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = store.newContext()
        let firstDone = DispatchSemaphore(value: 0)
        let firstCount = Locked(-1)
        first.perform {
            let held = Locked(false)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate { _, _ in
                if !held.withLock({ value in defer { value = true }; return value }) {
                    inside.signal()
                    _ = release.wait(timeout: .now() + 20)  // bounded: a regression fails, it does not hang
                }
                return true
            }
            let count = (try? first.fetch(request).count) ?? -2
            firstCount.withLock { $0 = count }
            firstDone.signal()
        }
        #expect(inside.wait(timeout: .now() + 20) == .success)
        let second = store.newContext()
        let secondDone = DispatchSemaphore(value: 0)
        let secondCounts = Locked<[Int]>([])
        second.perform {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            let fetched = (try? second.fetch(request).count) ?? -1
            let counted = (try? second.count(for: request)) ?? -1
            secondCounts.withLock { $0 = [fetched, counted] }
            secondDone.signal()
        }
        let secondFinished = secondDone.wait(timeout: .now() + 10) == .success
        release.signal()
        #expect(firstDone.wait(timeout: .now() + 20) == .success)
        #expect(secondFinished, "the second read waited for the first")
        #expect(secondCounts.withLock { $0 } == [50, 50])
        #expect(firstCount.withLock { $0 } == 50)
        #expect(try sqliteStore(store.coordinator).pool?.openCount == 2)  // one connection each
    }

    /// Four contexts on four threads count and fetch while a fifth saves ten rows at a time: each
    /// read sees whole saves only (a multiple of ten, never fewer than it saw before), every row it
    /// fetches is complete, and once the writer is done every reader sees all its rows.
    @Test func manyReadersAndOneWriterSeeWholeSaves() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let writer = store.newContext()
        let readers = (0..<4).map { _ in store.newContext() }
        let done = Locked(false)
        let problems = Locked<[String]>([])
        let group = DispatchGroup()
        for reader in readers {
            group.enter()
            reader.perform {
                defer { group.leave() }
                var last = 0
                while !done.withLock({ $0 }) {
                    do {
                        let count = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
                        let objects = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
                        if count % 10 != 0 || count < last { problems.withLock { $0.append("count \(count) after \(last)") } }
                        if objects.count < count || objects.contains(where: { $0.value(forKey: "name") == nil }) {
                            problems.withLock { $0.append("fetched \(objects.count) after counting \(count)") }
                        }
                        last = count
                        reader.reset()
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        try writer.performAndWait { () throws(any Error) in
            for batch in 0..<30 {
                for i in 0..<10 { insertObject("Employee", ["name": "B\(batch)-\(i)", "age": i], into: writer) }
                try writer.save()
            }
        }
        done.withLock { $0 = true }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(problems.withLock { $0 } == [])
        for reader in readers { #expect(try Self.count(reader) == 300) }
        #expect(try sqliteStore(store.coordinator).pool?.openCount ?? 0 <= SQLiteConnectionPool.readerLimit)
    }

    /// A program with one context opens one connection: its requests lease the primary one.
    @Test func oneContextOpensOneConnection() throws {
        let store = try TestStore(NSSQLiteStoreType)
        try Self.employees(20, in: store)
        let context = store.newContext()
        for _ in 0..<5 { _ = try Self.count(context) }
        #expect(try sqliteStore(store.coordinator).pool?.openCount == 1)
    }

    /// Removing the store while two threads read: each read either finishes or throws 134070,
    /// the removal waits for reads in flight, and afterwards every connection of the store is closed.
    @Test func removingTheStoreWhileReadsRun() throws {
        let store = try TestStore(NSSQLiteStoreType)
        try Self.employees(200, in: store)
        let sqlite = try sqliteStore(store.coordinator)
        let readers = [store.newContext(), store.newContext()]
        let started = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let unexpected = Locked<[String]>([])
        for reader in readers {
            group.enter()
            reader.perform {
                defer { group.leave() }
                started.signal()
                for _ in 0..<200 {
                    do {
                        _ = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
                        reader.reset()
                    } catch let error as OpenCoreDataError where error.code == .persistentStoreOperation {
                        return
                    } catch {
                        unexpected.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }
        }
        started.wait()
        started.wait()
        let url = try #require(store.url)
        try store.coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType)
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(unexpected.withLock { $0 } == [])
        #expect(sqlite.pool?.isClosed == true)
        #expect(sqlite.pool?.openCount == 0)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(store.coordinator.persistentStores.isEmpty)
    }

    /// Stores that do not declare concurrent reads are called one request at a time, whatever
    /// the number of threads: the in-memory store, and a store of one's own.
    @Test func serialStoresGetOneRequestAtATime() throws {
        let memory = try TestStore(NSInMemoryStoreType)
        #expect(try #require(memory.coordinator.persistentStores.first)._servesConcurrentReads == false)
        let sqlite = try TestStore(NSSQLiteStoreType)
        #expect(try sqliteStore(sqlite.coordinator)._servesConcurrentReads)

        NSPersistentStoreCoordinator.registerStoreClass(
            OverlapCountingStore.self, forStoreType: OverlapCountingStore.storeType)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModels.company())
        try coordinator.addPersistentStore(
            ofType: OverlapCountingStore.storeType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        let contexts = (0..<3).map { _ in StoreHarness.context(coordinator) }
        let group = DispatchGroup()
        for context in contexts {
            group.enter()
            context.perform {
                defer { group.leave() }
                for _ in 0..<20 { _ = try? context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(OverlapCountingStore.most.withLock { $0 } == 1)
    }
}

/// A store of one's own that notes how many fetches it runs at once (each takes a moment).
final class OverlapCountingStore: NSIncrementalStore, @unchecked Sendable {
    static let storeType = "OverlapCountingStore"
    static let running = Locked(0)
    static let most = Locked(0)

    override func loadMetadata() throws {
        metadata = [NSStoreTypeKey: Self.storeType, NSStoreUUIDKey: UUID().uuidString]
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        let now = Self.running.withLock { value -> Int in
            value += 1
            return value
        }
        Self.most.withLock { $0 = max($0, now) }
        usleep(500)
        Self.running.withLock { $0 -= 1 }
        return [Any]()
    }
}
