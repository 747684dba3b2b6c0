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

    /// `prepare(_:)` tries the statement it gave last before its cache: texts asked for in turns,
    /// equal texts made separately, texts of one length, and a cache that started over each give
    /// the statement of their own SQL, which runs as that SQL.
    @Test func theLastStatementIsGivenOnlyForItsOwnText() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let connection = try #require(try sqliteStore(store.coordinator).connection)
        let texts = ["SELECT 1", "SELECT 2", "SELECT 1", "SELECT 1", "SELECT 22", "SELECT " + String(2)]
        for text in texts {
            let statement = try connection.prepare(text)
            #expect(statement.sql == text)
            #expect(try statement.step() && statement.int64(0) == Int64(text.dropFirst(7))!)
            statement.reset()
        }
        let first = try connection.prepare("SELECT 3")
        first.reset()
        #expect(try connection.prepare("SELECT 3") === first)  // the same statement, not another
        for n in 0...SQLiteConnection.statementCacheLimit { try connection.prepare("SELECT \(n + 100)").reset() }
        let again = try connection.prepare("SELECT 3")
        #expect(again.sql == "SELECT 3")
        #expect(try again.step() && again.int64(0) == 3)
        again.reset()
    }

    /// Text parameters are copied into buffers the statement keeps and binds without SQLite
    /// copying them again: one statement reused with strings that grow, shrink, are empty or not
    /// ASCII, in two text parameters at once, writes and matches each exactly.
    @Test func reusedTextParametersKeepEachValue() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let connection = try #require(try sqliteStore(store.coordinator).connection)
        try connection.execute("CREATE TABLE T (A TEXT, B TEXT)")
        let values = ["", "a", String(repeating: "x", count: 31), String(repeating: "y", count: 33), "é日本🙂",
                      String(repeating: "long ", count: 200), "b"]
        let insert = try connection.prepare("INSERT INTO T (A, B) VALUES (?, ?)")
        for (a, b) in zip(values, values.reversed()) {
            insert.bind(a, 1)
            insert.bind(b, 2)
            _ = try insert.step()
            insert.reset()
        }
        #expect(try connection.column("SELECT A FROM T ORDER BY rowid") == values.map { .text($0) })
        #expect(try connection.column("SELECT B FROM T ORDER BY rowid") == values.reversed().map { .text($0) })
        let match = try connection.prepare("SELECT COUNT(*) FROM T WHERE A = ? AND B = ?")
        for (a, b) in zip(values, values.reversed()) {
            match.bind(a, 1)
            match.bind(b, 2)
            #expect(try match.step() && match.int64(0) == 1, "\(a.prefix(8)) / \(b.prefix(8))")
            match.reset()
        }
    }

    /// `reset()` undoes only what was done since the last one (it skips SQLite's reset and clear
    /// when there is nothing to undo), yet always leaves the statement ready: a statement stopped
    /// after its first row, one stepped to its end, one whose step failed, and one reset twice all
    /// bind and step again, and a parameter not bound again after a reset reads as NULL.
    @Test func resetLeavesEveryStatementReady() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let connection = try #require(try sqliteStore(store.coordinator).connection)
        try connection.execute("CREATE TABLE T (A INTEGER UNIQUE); INSERT INTO T VALUES (1), (2), (3)")
        let select = try connection.prepare("SELECT A FROM T WHERE A >= ? ORDER BY A")
        select.bind(Int64(1), 1)
        #expect(try select.step() && select.int64(0) == 1)
        select.reset()  // stopped after its first row
        select.bind(Int64(3), 1)
        #expect(try select.step() && select.int64(0) == 3)
        #expect(try !select.step())
        select.reset()  // stepped to its end
        select.reset()  // nothing to undo
        select.bind(Int64(2), 1)
        #expect(try select.step() && select.int64(0) == 2)
        select.reset()
        #expect(try !select.step(), "the cleared parameter is NULL, and A >= NULL holds for no row")
        select.reset()

        let insert = try connection.prepare("INSERT INTO T (A) VALUES (?)")
        insert.bind(Int64(1), 1)
        #expect(throws: OpenCoreDataError.self) { try insert.run() }  // a UNIQUE violation
        insert.reset()
        insert.bind(Int64(4), 1)
        try insert.run()
        insert.reset()
        #expect(try connection.column("SELECT A FROM T ORDER BY A") == [1, 2, 3, 4].map { .integer($0) })
    }

    /// A fetch statement cached by its shape keeps its values bound across a reset (every fetch
    /// binds all of its parameters again, so clearing them was wasted work); a statement prepared
    /// otherwise clears them, so a parameter it leaves unbound reads as NULL. Fetches by the same
    /// shape with values of every length still each match their own rows.
    @Test func fetchStatementsKeepTheirBindings() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for name in ["", "a", "bb", String(repeating: "c", count: 40)] {
            insertObject("Employee", ["name": name], into: context)
        }
        try context.save()
        for name in ["bb", "", String(repeating: "c", count: 40), "a", "zz", "bb"] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "name == %@", name)
            let found = try context.fetch(request)
            #expect(found.map { $0.value(forKey: "name") as? String } == (name == "zz" ? [] : [name]))
        }

        let sqlite = try sqliteStore(store.coordinator)
        let connection = try #require(sqlite.connection)
        let entity = try #require(store.model.entitiesByName["Employee"])
        let mapping = try #require(sqlite.schema.mapping(for: entity))
        let shape = SQLiteStore.FetchShape(
            mapping: mapping, columns: .rows, conditions: ["a test's own shape"], joins: [], order: [], paging: .none)
        let fetch = try connection.prepare(shape: shape) { "SELECT ? + 1" }
        #expect(fetch.keepsBindings)
        fetch.bind(Int64(41), 1)
        #expect(try fetch.step() && fetch.int64(0) == 42)
        fetch.reset()
        #expect(try fetch.step() && fetch.int64(0) == 42, "the value stays bound")
        fetch.reset()

        let other = try connection.prepare("SELECT ? + 2 - 1")
        #expect(!other.keepsBindings)
        other.bind(Int64(41), 1)
        #expect(try other.step() && other.int64(0) == 42)
        other.reset()
        #expect(try other.step() && other.isNull(0), "the cleared parameter is NULL")
        other.reset()
    }

    /// The connection remembers the entity mapping its last fetch used, for that entity of that
    /// schema only: another entity, or the same entity in another schema (a store opened again
    /// after a migration), gets its own.
    @Test func aFetchsMappingIsRememberedPerEntityAndSchema() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let sqlite = try sqliteStore(store.coordinator)
        let connection = try #require(sqlite.connection)
        let employee = try #require(store.model.entitiesByName["Employee"])
        let department = try #require(store.model.entitiesByName["Department"])
        let schema = try #require(sqlite.schema)
        let first = try #require(connection.fetchMapping(of: employee, in: schema))
        #expect(first === schema.mapping(for: employee))
        #expect(connection.fetchMapping(of: employee, in: schema) === first)
        #expect(connection.fetchMapping(of: department, in: schema) === schema.mapping(for: department))
        #expect(connection.fetchMapping(of: employee, in: schema) === first)
        let other = SQLiteSchema(model: store.model)
        let again = try #require(connection.fetchMapping(of: employee, in: other))
        #expect(again === other.mapping(for: employee))
        #expect(again !== first)
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
