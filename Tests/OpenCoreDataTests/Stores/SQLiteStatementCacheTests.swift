import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The SQLite connection's prepared-statement cache: bounded, and safe for statements in use.
@Suite("SQLite statement cache")
struct SQLiteStatementCacheTests {
    /// `IN` lists of every length from 1 to 400 each have their own SQL text: the cache starts
    /// over when full instead of growing with them, and every fetch still gives the right rows.
    @Test func staysBoundedWithListsOfManyLengths() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for age in 0..<400 { insertObject("Employee", ["name": "E\(age)", "age": age], into: context) }
        try context.save()
        let connection = try #require(try sqliteStore(store.coordinator).connection)
        for length in 1...400 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "age IN %@", Array(0..<length))
            #expect(try context.fetch(request).count == length)
            #expect(connection.cachedStatementCount <= SQLiteConnection.statementCacheLimit)
        }
    }

    /// A statement held by a caller while the cache starts over stays usable until released.
    @Test func aHeldStatementOutlivesEviction() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Employee", ["name": "Ann", "age": 30], into: context)
        try context.save()
        let connection = try #require(try sqliteStore(store.coordinator).connection)
        let held = try connection.prepare("SELECT COUNT(*) FROM ZEMPLOYEE")
        for n in 0...SQLiteConnection.statementCacheLimit { _ = try connection.prepare("SELECT \(n)") }
        #expect(connection.cachedStatementCount < SQLiteConnection.statementCacheLimit)
        #expect(try held.step())
        #expect(held.int64(0) == 1)
        held.reset()
    }
}
