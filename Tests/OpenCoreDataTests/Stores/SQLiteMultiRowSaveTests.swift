import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A save writes runs of rows of one entity (and, updated, with the same changed columns) in
/// multi-row statements of up to `SQLiteConnection.multiRowLimit` (64) rows, the rest a row a
/// statement; when one is refused the save is written again a row a statement, so a conflict names
/// its object as before. (How Apple's store batches its statements is not documented; what it
/// writes, the rows, is the same.)
@Suite("SQLite multi-row saves")
struct SQLiteMultiRowSaveTests {
    private func observe(_ store: TestStore) throws -> () -> [String] {
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        return { statements }
    }

    /// Another coordinator of the store sets item `uid`'s value to 7 and saves: the row's `Z_OPT` moves on.
    private func changeItemElsewhere(_ store: TestStore, uid: Int) throws {
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let second = StoreHarness.context(other)
        try second.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "uid == %d", uid)
            try #require(try second.fetch(request).first).setValue(Int32(7), forKey: "value")
            try second.save()
        }
    }

    /// How many write transactions began: a save written again (a multi-row statement refused) is two.
    private func transactions(_ statements: [String]) -> Int { statements.filter { $0 == "BEGIN IMMEDIATE" }.count }

    /// How many rows a statement's text writes (its `(?, …)` tuples; an UPDATE of one row has none).
    private func rows(_ sql: String) -> Int { max(1, sql.components(separatedBy: "(?").count - 1) }

    /// 150 rows: a statement of 64 rows run twice and one of a row run 22 times (the observer is told
    /// of each statement once a run), for the inserts and for the updates; every row's values (and its
    /// to-one's key) land in its own row.
    @Test func runsOfRowsGoInMultiRowStatementsAndLandRowByRow() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let statements = try observe(store)
        let items = try context.performAndWait { () throws -> [NSManagedObject] in
            let owners = (0..<3).map { insertObject("Owner", ["uid": Int64(1000 + $0)], into: context) }
            let items = (0..<150).map {
                insertObject("Item", ["uid": Int64($0), "value": Int32($0 * 2), "owner": owners[$0 % 3]], into: context)
            }
            try context.save()
            return items
        }
        let inserts = statements().filter { $0.hasPrefix("INSERT INTO ZITEM") }.map(rows)
        #expect(inserts.sorted() == [1, 64], "\(inserts)")
        let owners = try context.performAndWait {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
        }

        let before = statements().count
        try context.performAndWait {
            for (index, item) in items.enumerated() {
                item.setValue(Int32(-index), forKey: "value")
                item.setValue(owners[(index + 1) % 3], forKey: "owner")
            }
            try context.save()
        }
        let updates = statements()[before...].filter { $0.hasPrefix("UPDATE ZITEM") }
        #expect(updates.map(rows).sorted() == [1, 64])
        // Each save written once; the inserted objects' permanent IDs took a transaction of their own.
        #expect(transactions(statements()) == 3)
        #expect(
            updates.contains(
                "UPDATE ZITEM SET Z_OPT = ?, ZVALUE = ?, ZOWNER = ? WHERE Z_PK = ? AND Z_OPT = ?"))
        #expect(
            updates.contains {
                $0.hasPrefix(
                    "UPDATE ZITEM SET Z_OPT = v.column1, ZVALUE = v.column2, ZOWNER = v.column3 "
                        + "FROM (VALUES (?, ?, ?, ?, ?), ")
            })

        let raw = try RawDatabase(try #require(store.url))
        let ownerKeys = Dictionary(
            uniqueKeysWithValues: try raw.rows("SELECT ZUID, Z_PK FROM ZOWNER").map {
                ($0[0] as! Int64, $0[1] as! Int64)
            })
        let written = try raw.rows("SELECT ZUID, ZVALUE, ZOWNER, Z_OPT FROM ZITEM ORDER BY ZUID")
        #expect(written.count == 150)
        for (index, row) in written.enumerated() {
            #expect(row[0] as? Int64 == Int64(index))
            #expect(row[1] as? Int64 == Int64(-index))
            #expect(row[2] as? Int64 == ownerKeys[Int64(1000 + (index + 1) % 3)])
            #expect(row[3] as? Int64 == 2)
        }
    }

    /// A to-one to an entity with subentities writes two columns (the key and `Z_ENT`); a composite
    /// attribute makes an update write the whole row. Both in runs of 70.
    @Test func twoColumnToOnesAndWholeRowUpdatesInMultiRowStatements() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.media())
        let context = store.newContext()
        let (libraries, song, remix) = try context.performAndWait {
            () throws -> ([NSManagedObject], NSManagedObject, NSManagedObject) in
            let song = insertObject("Song", ["title": "S"], into: context)
            let remix = insertObject("Remix", ["title": "R", "artist": "DJ"], into: context)
            let libraries = (0..<70).map {
                insertObject("Library", ["name": "L\($0)", "favorite": $0 % 2 == 0 ? song : remix], into: context)
            }
            try context.save()
            return (libraries, song, remix)
        }
        let statements = try observe(store)
        try context.performAndWait {
            for (index, library) in libraries.enumerated() {
                library.setValue(index % 2 == 0 ? remix : song, forKey: "favorite")
            }
            try context.save()
        }
        #expect(statements().filter { $0.hasPrefix("UPDATE ZLIBRARY") }.map(rows).sorted() == [1, 64])
        #expect(transactions(statements()) == 1, "written once")
        let raw = try RawDatabase(try #require(store.url))
        let songKey = try raw.value("SELECT Z_PK FROM ZSONG WHERE ZTITLE = 'S'") as? Int64
        let remixKey = try raw.value("SELECT Z_PK FROM ZSONG WHERE ZTITLE = 'R'") as? Int64
        let remixEntity = try raw.value("SELECT Z_ENT FROM ZSONG WHERE ZTITLE = 'R'") as? Int64
        let songEntity = try raw.value("SELECT Z_ENT FROM ZSONG WHERE ZTITLE = 'S'") as? Int64
        #expect(remixEntity != songEntity)
        for row in try raw.rows("SELECT ZNAME, ZFAVORITE, Z3_FAVORITE FROM ZLIBRARY") {
            let index = Int((row[0] as! String).dropFirst())!
            #expect(row[1] as? Int64 == (index % 2 == 0 ? remixKey : songKey), "\(row)")
            #expect(row[2] as? Int64 == (index % 2 == 0 ? remixEntity : songEntity), "\(row)")
        }

        // Composite columns: whole-row updates (`updateSQL`), multi-row too.
        let aircraftStore = try TestStore(NSSQLiteStoreType, model: CompositeAttributeTests.model())
        let aircraftContext = aircraftStore.newContext()
        let aircraft = try aircraftContext.performAndWait { () throws -> [NSManagedObject] in
            let aircraft = (0..<70).map { index -> NSManagedObject in
                let plane = NSEntityDescription.insertNewObject(forEntityName: "Aircraft", into: aircraftContext)
                plane.setValue("T\(index)", forKey: "tailNumber")
                plane.setValue(["primary": "blue", "secondary": "P\(index)"], forKey: "colorScheme")
                return plane
            }
            try aircraftContext.save()
            return aircraft
        }
        let aircraftStatements = try observe(aircraftStore)
        try aircraftContext.performAndWait {
            for (index, plane) in aircraft.enumerated() { plane.setValue("N\(index)", forKey: "tailNumber") }
            try aircraftContext.save()
        }
        #expect(aircraftStatements().filter { $0.hasPrefix("UPDATE ZAIRCRAFT") }.map(rows).sorted() == [1, 64])
        #expect(transactions(aircraftStatements()) == 1, "written once")
        try aircraftStore.reopen()
        let reader = aircraftStore.newContext()
        try reader.performAndWait {
            let fetched = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Aircraft"))
            #expect(fetched.count == 70)
            for plane in fetched {
                let tail = try #require(plane.value(forKey: "tailNumber") as? String)
                let scheme = plane.value(forKey: "colorScheme") as? [String: Any]
                #expect(tail.hasPrefix("N"))
                #expect(scheme?["secondary"] as? String == "P" + tail.dropFirst())
                #expect(scheme?["primary"] as? String == "blue")
            }
        }
    }

    /// Another coordinator changed row 30 of 100: the multi-row UPDATE of rows 0–63 matches 63 rows,
    /// the save is written again a row a statement, and the error names that object (as a save a
    /// row a statement did). Nothing of the save stays on disk.
    @Test func anOptimisticLockingConflictInAMultiRowUpdateNamesItsObject() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let items = try context.performAndWait { () throws -> [NSManagedObject] in
            let items = (0..<100).map { insertObject("Item", ["uid": Int64($0), "value": Int32(0)], into: context) }
            try context.save()
            return items
        }
        try changeItemElsewhere(store, uid: 30)
        let statements = try observe(store)
        let error = try context.performAndWait { () throws -> OpenCoreDataError in
            for item in items { item.setValue(Int32(1), forKey: "value") }
            return try #require(throws: OpenCoreDataError.self) { try context.save() }
        }
        #expect(error.code == .managedObjectMerge)
        #expect(error.objectID == items[30].objectID)
        #expect(statements().contains { $0.contains("FROM (VALUES") }, "the multi-row UPDATE ran first")
        #expect(transactions(statements()) == 2, "then the save again, a row a statement")
        let raw = try RawDatabase(try #require(store.url))
        #expect(try raw.value("SELECT COUNT(*) FROM ZITEM WHERE ZVALUE = 1") as? Int64 == 0)
        #expect(try raw.value("SELECT ZVALUE FROM ZITEM WHERE ZUID = 30") as? Int64 == 7)
    }

    /// Rows of one statement at different versions: each row's key is checked against its own old
    /// `Z_OPT` and takes its own values. 150 items, the even ones saved once more; then all 150 changed
    /// (two UPDATEs of 64 rows, 22 of one) and then all deleted (likewise): each save is written
    /// once, so no multi-row statement matched fewer rows than it has.
    @Test func rowsAtDifferentVersionsShareAStatement() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let items = try context.performAndWait { () throws -> [NSManagedObject] in
            let items = (0..<150).map { insertObject("Item", ["uid": Int64($0), "value": Int32(0)], into: context) }
            try context.save()
            for item in items.enumerated() where item.offset % 2 == 0 { item.element.setValue(Int32(1), forKey: "value") }
            try context.save()
            return items
        }
        let statements = try observe(store)
        try context.performAndWait {
            for (index, item) in items.enumerated() { item.setValue(Int32(100 + index), forKey: "value") }
            try context.save()
        }
        #expect(statements().filter { $0.hasPrefix("UPDATE ZITEM") }.map(rows).sorted() == [1, 64])
        #expect(transactions(statements()) == 1, "written once")
        let raw = try RawDatabase(try #require(store.url))
        let written = try raw.rows("SELECT ZUID, ZVALUE, Z_OPT FROM ZITEM ORDER BY ZUID")
        #expect(written.count == 150)
        for (index, row) in written.enumerated() {
            #expect(row[1] as? Int64 == Int64(100 + index), "\(row)")
            #expect(row[2] as? Int64 == (index % 2 == 0 ? 3 : 2), "\(row)")
        }

        let deletes = try observe(store)
        try context.performAndWait {
            for item in items { context.delete(item) }
            try context.save()
        }
        #expect(deletes().filter { $0.hasPrefix("DELETE FROM ZITEM") }.map(rows).sorted() == [1, 64])
        #expect(transactions(deletes()) == 1, "written once")
        #expect(try raw.value("SELECT COUNT(*) FROM ZITEM") as? Int64 == 0)
    }

    /// A unique index the model does not declare (found in the file, so not checked before writing)
    /// refuses row 40 of 100 (a copy of row 10's key): the multi-row INSERT of rows 0–63 is undone, the
    /// save written again a row a statement, and the error names the object, as Core Data's constraint
    /// conflict.
    @Test func aUniqueIndexRefusingARowOfAMultiRowInsertNamesItsObject() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let url = try #require(store.url)
        try RawDatabase(url, readOnly: false).execute("CREATE UNIQUE INDEX TEST_UNIQUE_UID ON ZITEM (ZUID)")
        let raw = try RawDatabase(url)
        let context = store.newContext()
        let statements = try observe(store)
        let (duplicate, error) = try context.performAndWait { () throws -> (NSManagedObject, OpenCoreDataError) in
            let items = (0..<100).map {
                insertObject("Item", ["uid": Int64($0 == 40 ? 10 : $0), "value": Int32(0)], into: context)
            }
            return (items[40], try #require(throws: OpenCoreDataError.self) { try context.save() })
        }
        #expect(error.code == .managedObjectConstraintMerge)
        #expect(error.objectID == duplicate.objectID)
        #expect(statements().contains { $0.hasPrefix("INSERT INTO ZITEM") && rows($0) == 64 })
        // The permanent IDs' transaction, the save, the save again a row a statement.
        #expect(transactions(statements()) == 3)
        #expect(try raw.value("SELECT COUNT(*) FROM ZITEM") as? Int64 == 0)
        #expect(context.performAndWait { context.insertedObjects.count } == 100)
    }

    /// Deletes go in runs too: 150 rows, a DELETE of 64 rows run twice and one of a row run 22
    /// times, checked against each row's `Z_OPT`; another coordinator's change to row 30 makes the
    /// first statement match 63 rows, and the save, written again a row a statement, names that
    /// object and deletes nothing. Owners, whose tags are a many-to-many join table, are deleted a row
    /// at a time with their join rows.
    @Test func deletesGoInMultiRowStatementsAndAConflictNamesItsObject() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let (items, owners) = try context.performAndWait { () throws -> ([NSManagedObject], [NSManagedObject]) in
            let items = (0..<150).map { insertObject("Item", ["uid": Int64($0), "value": Int32(0)], into: context) }
            let tag = insertObject("Tag", ["uid": Int64(9)], into: context)
            let owners = (0..<70).map { insertObject("Owner", ["uid": Int64($0), "tags": Set([tag])], into: context) }
            try context.save()
            return (items, owners)
        }
        let raw = try RawDatabase(try #require(store.url))
        let joinTable = try #require(
            try raw.value("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%TAGS' ESCAPE '\\'")
                as? String)
        #expect(try raw.value("SELECT COUNT(*) FROM \(joinTable)") as? Int64 == 70)

        try changeItemElsewhere(store, uid: 30)
        let statements = try observe(store)
        let error = try context.performAndWait { () throws -> OpenCoreDataError in
            for item in items { context.delete(item) }
            return try #require(throws: OpenCoreDataError.self) { try context.save() }
        }
        #expect(error.code == .managedObjectMerge)
        #expect(error.objectID == items[30].objectID)
        #expect(statements().contains { $0.hasPrefix("DELETE FROM ZITEM") && rows($0) == 64 })
        #expect(transactions(statements()) == 2, "then the save again, a row a statement")
        #expect(try raw.value("SELECT COUNT(*) FROM ZITEM") as? Int64 == 150)

        // Refreshed, the same deletes go through: two statements of 64 rows, 22 of one.
        let fresh = store.newContext()
        let deletes = try observe(store)
        try fresh.performAndWait {
            for item in try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")) { fresh.delete(item) }
            for owner in owners { fresh.delete(try fresh.existingObject(with: owner.objectID)) }
            try fresh.save()
        }
        #expect(deletes().filter { $0.hasPrefix("DELETE FROM ZITEM") }.map(rows).sorted() == [1, 64])
        #expect(deletes().filter { $0.hasPrefix("DELETE FROM ZOWNER") }.map(rows) == [1])
        #expect(transactions(deletes()) == 1, "written once")
        #expect(try raw.value("SELECT COUNT(*) FROM ZITEM") as? Int64 == 0)
        #expect(try raw.value("SELECT COUNT(*) FROM ZOWNER") as? Int64 == 0)
        #expect(try raw.value("SELECT COUNT(*) FROM \(joinTable)") as? Int64 == 0)
    }
}
