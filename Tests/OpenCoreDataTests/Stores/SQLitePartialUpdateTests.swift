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

    /// The same for an entity of more than 64 attributes, whose changed slots past 63 are kept
    /// apart from the others (`WideChangedSlots`): rows changed only past 63, alternating between
    /// two columns, each write their own (a save that told runs apart by the slots below 64 alone
    /// would write them all with the first row's statement).
    @Test func rowsOfAnEntityOfMoreThan64AttributesChangedPastSlot63EachWriteTheirOwn() throws {
        let names = (0..<70).map { "a\($0)" }
        let (model, entity) = TestModels.wide(attributes: names.count)
        let store = try TestStore(NSSQLiteStoreType, model: model)
        let context = store.newContext()
        try context.performAndWait {
            let objects = (0..<4).map { row in
                let object = NSManagedObject(entity: entity, insertInto: context)
                for (i, name) in names.enumerated() { object.setValue(Int64(row * 100 + i), forKey: name) }
                return object
            }
            try context.save()
            for (row, object) in objects.enumerated() {
                object.setValue(Int64(-1 - row), forKey: row % 2 == 0 ? "a68" : "a69")
            }
            try context.save()
        }
        try store.reopen()
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Wide")
            request.sortDescriptors = [NSSortDescriptor(key: "a0", ascending: true)]
            let rows = try reader.fetch(request).map {
                [$0.value(forKey: "a68") as? Int64 ?? 0, $0.value(forKey: "a69") as? Int64 ?? 0]
            }
            #expect(rows == [[-1, 69], [168, -2], [-3, 269], [368, -4]])
        }
    }
}
