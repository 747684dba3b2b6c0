import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Query generations (issue 40): a pinned context reads one snapshot of a SQLite WAL store in its
/// fetches, counts and faults until it moves the pin or saves. Every test here failed before the
/// API existed (it did not compile); the behaviour each checks is named in its comment.
@Suite("Query generations")
struct QueryGenerationTests {
    private static func names(_ context: NSManagedObjectContext) throws -> [String] {
        try context.performAndWait { () throws(any Error) -> [String] in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
    }

    private static func count(_ context: NSManagedObjectContext) throws -> Int {
        try context.performAndWait { () throws(any Error) -> Int in
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        }
    }

    /// Three employees, saved; their IDs by name.
    private static func seed(_ store: TestStore) throws -> [String: NSManagedObjectID] {
        let context = store.newContext()
        return try context.performAndWait { () throws(any Error) -> [String: NSManagedObjectID] in
            let objects = ["Ann", "Bob", "Cid"].map { insertObject("Employee", ["name": $0, "age": 30], into: context) }
            try context.save()
            return Dictionary(uniqueKeysWithValues: objects.map { ($0.value(forKey: "name") as! String, $0.objectID) })
        }
    }

    /// Another context's saved insert, update and delete are not seen by a pinned context's
    /// fetch, count or fault; setting `.current` again moves it to them.
    @Test func aPinnedContextDoesNotSeeLaterSaves() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let ids = try Self.seed(store)
        let pinned = store.newContext()
        try pinned.setQueryGenerationFrom(.current)
        #expect(pinned.queryGenerationToken != nil)

        let other = store.newContext()
        try other.performAndWait { () throws(any Error) in
            insertObject("Employee", ["name": "Dan", "age": 40], into: other)
            try other.existingObject(with: ids["Bob"]!).setValue("Bea", forKey: "name")
            other.delete(try other.existingObject(with: ids["Cid"]!))
            try other.save()
        }
        #expect(try Self.count(pinned) == 3)
        #expect(try Self.names(pinned) == ["Ann", "Bob", "Cid"])
        pinned.performAndWait { pinned.reset() }
        let faulted = pinned.performAndWait { pinned.object(with: ids["Bob"]!).value(forKey: "name") as? String }
        #expect(faulted == "Bob")  // the fault fires from the generation

        try pinned.setQueryGenerationFrom(.current)
        pinned.performAndWait { pinned.reset() }
        #expect(try Self.count(pinned) == 3)
        #expect(try Self.names(pinned) == ["Ann", "Bea", "Dan"])
        try pinned.setQueryGenerationFrom(nil)
        #expect(pinned.queryGenerationToken == nil)
    }

    /// Tokens of one generation compare equal (a context's token asked twice, and another context
    /// set from it, which then reads that generation too); a new pin is another generation.
    @Test func tokensOfOneGenerationAreEqual() throws {
        let store = try TestStore(NSSQLiteStoreType)
        _ = try Self.seed(store)
        let first = store.newContext()
        try first.setQueryGenerationFrom(.current)
        let token = try #require(first.queryGenerationToken)
        #expect(first.queryGenerationToken == token)
        #expect(token.copy() as? NSQueryGenerationToken == token)
        #expect(NSQueryGenerationToken.current == NSQueryGenerationToken.current)
        #expect(token != NSQueryGenerationToken.current)

        let writer = store.newContext()
        try writer.performAndWait { () throws(any Error) in
            insertObject("Employee", ["name": "Dan", "age": 40], into: writer)
            try writer.save()
        }
        let second = store.newContext()
        try second.setQueryGenerationFrom(token)
        #expect(second.queryGenerationToken == token)
        #expect(try Self.count(second) == 3)  // the shared generation, from before Dan

        let third = store.newContext()
        try third.setQueryGenerationFrom(.current)
        #expect(third.queryGenerationToken != token)
        #expect(try Self.count(third) == 4)
    }

    /// A pinned context's save moves it on: right after, it reports no token (as Apple's does, until
    /// it reads again), and its next read sees the store as it is then, its own save and others'.
    @Test func aSaveMovesThePinnedContextOn() throws {
        let store = try TestStore(NSSQLiteStoreType)
        _ = try Self.seed(store)
        let pinned = store.newContext()
        try pinned.setQueryGenerationFrom(.current)
        let other = store.newContext()
        try other.performAndWait { () throws(any Error) in
            insertObject("Employee", ["name": "Dan", "age": 40], into: other)
            try other.save()
        }
        #expect(try Self.count(pinned) == 3)
        try pinned.performAndWait { () throws(any Error) in
            insertObject("Employee", ["name": "Eve", "age": 50], into: pinned)
            try pinned.save()
        }
        #expect(pinned.queryGenerationToken == nil)
        #expect(try Self.count(pinned) == 5)
        #expect(pinned.queryGenerationToken != nil)  // pinned again by that read
        try other.performAndWait { () throws(any Error) in
            insertObject("Employee", ["name": "Fay", "age": 60], into: other)
            try other.save()
        }
        #expect(try Self.count(pinned) == 5)
    }

    /// `current` archives and unarchives as itself, and pins a context as `current` does; an
    /// archived generation comes back as a token that cannot pin (the snapshot is gone).
    @Test func tokensArchive() throws {
        let store = try TestStore(NSSQLiteStoreType)
        _ = try Self.seed(store)
        let data = try NSKeyedArchiver.archivedData(withRootObject: NSQueryGenerationToken.current, requiringSecureCoding: true)
        let current = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClass: NSQueryGenerationToken.self, from: data))
        #expect(current == NSQueryGenerationToken.current)
        let context = store.newContext()
        try context.setQueryGenerationFrom(current)
        let token = try #require(context.queryGenerationToken)

        let archived = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        let stale = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSQueryGenerationToken.self, from: archived))
        #expect(stale != token)
        #expect(throws: OpenCoreDataError.self) { try store.newContext().setQueryGenerationFrom(stale) }
    }

    /// Removing the store closes a generation's connection too (its read transaction ends), and
    /// the pinned context's next fault of one of its rows throws 134070 instead of reading a closed
    /// file (a fetch finds no store for the entity any more: no rows).
    @Test func removingTheStoreClosesItsGenerations() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let ids = try Self.seed(store)
        let context = store.newContext()
        try context.setQueryGenerationFrom(.current)
        let sqlite = try sqliteStore(store.coordinator)
        let token = try #require(context.queryGenerationToken)
        let generation = try #require(try token._generation(of: sqlite) as? SQLiteQueryGeneration)
        #expect(generation.connection.handle != nil)
        try store.coordinator.remove(sqlite)
        #expect(generation.connection.handle == nil)
        #expect(try Self.count(context) == 0)
        #expect {
            try context.performAndWait { () throws(any Error) in _ = try context.existingObject(with: ids["Ann"]!) }
        } throws: { ($0 as? OpenCoreDataError)?.code == .persistentStoreOperation }
    }

    /// Stores without generations throw when a context is pinned, and the context stays unpinned.
    @Test func otherStoreTypesThrow() throws {
        let store = try TestStore(NSInMemoryStoreType)
        let context = store.newContext()
        #expect {
            try context.setQueryGenerationFrom(.current)
        } throws: { error in
            (error as NSError).code == NSPersistentStoreUnsupportedRequestTypeError
        }
        #expect(context.queryGenerationToken == nil)
        try context.setQueryGenerationFrom(nil)
    }

    /// While a generation is held, commits pile up in the `-wal` file: a truncating checkpoint
    /// cannot finish (SQLite reports it busy) and the log keeps growing. Once the pin moves, the
    /// next checkpoint copies everything back and truncates the log.
    @Test func aPinHoldsTheLogUntilItMoves() throws {
        let store = try TestStore(NSSQLiteStoreType)
        _ = try Self.seed(store)
        let url = try #require(store.url)
        let pinned = store.newContext()
        try pinned.setQueryGenerationFrom(.current)
        let writer = store.newContext()
        for i in 0..<50 {
            try writer.performAndWait { () throws(any Error) in
                insertObject("Employee", ["name": "W\(i)", "age": i], into: writer)
                try writer.save()
            }
        }
        let raw = try SQLiteConnection(url: url, mode: .readWrite(create: false))
        defer { raw.close() }
        func checkpoint() throws -> Int64 {
            let statement = try raw.prepareUncached("PRAGMA wal_checkpoint(TRUNCATE)")
            defer { statement.finalize() }
            _ = try statement.step()
            return statement.int64(0)  // 1: busy, it could not finish
        }
        func logSize() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? Int) ?? 0
        }
        #expect(try checkpoint() == 1)
        #expect(logSize() > 0)
        #expect(try Self.count(pinned) == 3)

        try pinned.setQueryGenerationFrom(nil)
        #expect(try checkpoint() == 0)
        #expect(logSize() == 0)
        #expect(try Self.count(pinned) == 53)
    }
}
