import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// An update writes `Z_OPT` and the columns of the properties that changed, not the whole row
/// (rewriting unchanged columns also rewrites their index entries).
@Suite("SQLite partial updates")
struct SQLitePartialUpdateTests {
    @Test func anUpdateWritesOnlyTheChangedColumns() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let (item, owner) = try context.performAndWait { () throws -> (NSManagedObject, NSManagedObject) in
            let item = insertObject("Item", ["uid": Int64(1), "value": Int32(3)], into: context)
            let owner = insertObject("Owner", ["uid": Int64(2)], into: context)
            try context.save()
            return (item, owner)
        }
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }

        try context.performAndWait {
            item.setValue(Int32(4), forKey: "value")
            try context.save()
        }
        let attributeUpdate = try #require(statements.first { $0.hasPrefix("UPDATE ZITEM") })
        #expect(attributeUpdate == "UPDATE ZITEM SET Z_OPT = ?, ZVALUE = ? WHERE Z_PK = ? AND Z_OPT = ?")

        statements.removeAll()
        try context.performAndWait {
            item.setValue(owner, forKey: "owner")  // a foreign key on the item; the owner's row has no column for it
            try context.save()
        }
        let relationshipUpdate = try #require(statements.first { $0.hasPrefix("UPDATE ZITEM") })
        #expect(relationshipUpdate == "UPDATE ZITEM SET Z_OPT = ?, ZOWNER = ? WHERE Z_PK = ? AND Z_OPT = ?")

        // What a fresh coordinator reads: every column, the unchanged ones untouched.
        try store.reopen()
        let reader = store.newContext()
        try reader.performAndWait {
            let rows = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            #expect(rows.count == 1)
            #expect(rows.first?.value(forKey: "uid") as? Int64 == 1)
            #expect(rows.first?.value(forKey: "value") as? Int32 == 4)
            #expect((rows.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "uid") as? Int64 == 2)
        }
    }

    /// Rows changed in different columns in one save, alternating: each gets the statement for its
    /// own columns (the last one, a cached one, or a new one), and its values land where they belong.
    @Test func rowsChangedInDifferentColumnsInOneSaveEachWriteTheirOwn() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        let items = try context.performAndWait { () throws -> [NSManagedObject] in
            let items = (0..<6).map { insertObject("Item", ["uid": Int64($0), "value": Int32($0)], into: context) }
            try context.save()
            return items
        }
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        try context.performAndWait {
            for (index, item) in items.enumerated() {
                switch index % 3 {
                case 0: item.setValue(Int32(100 + index), forKey: "value")
                case 1: item.setValue(Int64(100 + index), forKey: "uid")
                default:
                    item.setValue(Int32(200 + index), forKey: "value")
                    item.setValue(Int64(200 + index), forKey: "uid")
                }
            }
            try context.save()
        }
        let updates = Set(statements.filter { $0.hasPrefix("UPDATE ZITEM") })
        #expect(updates.count == 3, "one statement per set of changed columns: \(updates)")

        try store.reopen()
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            let rows = try reader.fetch(request).map {
                ($0.value(forKey: "uid") as? Int64 ?? -1, $0.value(forKey: "value") as? Int32 ?? -1)
            }
            let expected: [(Int64, Int32)] = [(0, 100), (101, 1), (202, 202), (3, 103), (104, 4), (205, 205)]
            #expect(rows.sorted { $0.1 < $1.1 }.map { "\($0.0)/\($0.1)" } == expected.sorted { $0.1 < $1.1 }.map { "\($0.0)/\($0.1)" })
        }
    }
}
