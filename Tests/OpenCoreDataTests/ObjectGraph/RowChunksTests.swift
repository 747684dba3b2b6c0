import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// A fetch's rows share storages of several rows (`RowChunks`): these check that the rows stay
/// each other's strangers — a write copies the row out and touches no other, values kept on the
/// side follow their row, references are released with the last row — and that a fetch through a
/// store does share them and still reads and saves what was stored.
@Suite("Rows in shared storages")
struct RowChunksTests {
    /// int64, string, a slot of no attribute type (an `Any` field).
    private static let layout = RowLayout(attributeTypes: [.integer64AttributeType, .stringAttributeType, nil])

    private final class Marker {}

    private static func rows(_ count: Int, markers: [Marker] = []) -> [RowValues] {
        var chunks = RowChunks()
        return (0..<count).map { i in
            RowValues(for: layout, in: &chunks) { row in
                row.initialize(0, to: Int64(i))
                row.initialize(1, to: "row \(i), a string longer than fifteen bytes")
                if i < markers.count { row.setValue(markers[i], at: 2) }
            }
        }
    }

    @Test func storagesHoldOneRowThenTwiceAsManyUpToTheMost() {
        let values = Self.rows(200)
        var sizes: [Int] = []
        var index = 0
        while index < values.count {
            let storage = values[index].storageForTesting
            var end = index + 1
            while end < values.count, values[end].storageForTesting === storage { end += 1 }
            sizes.append(end - index)
            index = end
        }
        #expect(sizes == [1, 2, 4, 8, 16, 32, 64, 64, 9])
        for (i, row) in values.enumerated() {
            #expect(row[0] as? Int64 == Int64(i))
            #expect(row.exactly(1, as: String.self) == "row \(i), a string longer than fifteen bytes")
        }
    }

    @Test func aWriteCopiesItsRowOutAndLeavesTheOthers() {
        let values = Self.rows(7)
        var changed = values[5]
        let shared = changed.storageForTesting
        changed[0] = Int64(-1)
        #expect(changed.storageForTesting !== shared)
        #expect(changed[0] as? Int64 == -1)
        #expect(changed[1] as? String == "row 5, a string longer than fifteen bytes", "its own row copied")
        changed[1] = "changed"
        #expect(changed[0] as? Int64 == -1 && changed[1] as? String == "changed")
        for (i, row) in values.enumerated() {  // the original row 5 too: the copy was written
            #expect(row[0] as? Int64 == Int64(i))
            #expect(row[1] as? String == "row \(i), a string longer than fifteen bytes")
        }
    }

    @Test func valuesKeptOnTheSideFollowTheirRow() {
        // An `Int` for an Int64 slot is kept as given, on the side (`RowStorage.State.aside`),
        // keyed by row and slot: rows 1 and 2 share a storage and must not see each other's.
        var chunks = RowChunks()
        let rows = (0..<3).map { i in RowValues(for: Self.layout, in: &chunks) { $0.setValue(i as Int, at: 0) } }
        #expect(rows[1].storageForTesting === rows[2].storageForTesting)
        #expect(rows.map { $0[0] as? Int } == [0, 1, 2])
        var first = rows[1]
        first[1] = "written"  // copied out, with its own value on the side
        #expect(first.storageForTesting !== rows[2].storageForTesting)
        #expect(first[0] as? Int == 1 && first[1] as? String == "written")
        #expect(rows.map { $0[0] as? Int } == [0, 1, 2] && rows[1][1] == nil)
        var second = rows[2]
        second[0] = nil
        #expect(second[0] == nil && rows[2][0] as? Int == 2 && first[0] as? Int == 1)
    }

    @Test func theLastRowReleasesTheStorageAndItsReferences() {
        var markers = (0..<10).map { _ in Marker() }
        weak let firstMarker = markers[0]
        weak let lastMarker = markers[9]
        var values = Self.rows(10, markers: markers)
        markers = []
        weak let storage = values[9].storageForTesting
        #expect(firstMarker != nil && lastMarker != nil && storage != nil)
        let kept = values[9]  // rows 7 to 9 share the storage of rows 7 ..< 15
        values = []
        #expect(storage != nil && lastMarker != nil, "kept by its one row still alive")
        #expect(firstMarker == nil, "row 0's storage is gone with it")
        #expect(kept[0] as? Int64 == 9)
        withExtendedLifetime(kept) {}
    }

    @Test func theLastRowReleasingItsStorageReleasesEveryRowsReferences() {
        var markers = (0..<10).map { _ in Marker() }
        let watched = markers.map { WeakMarker($0) }
        var values: [RowValues]? = Self.rows(10, markers: markers)
        markers = []
        #expect(watched.allSatisfy { $0.marker != nil })
        values = nil
        #expect(watched.allSatisfy { $0.marker == nil })
        _ = values
    }

    private struct WeakMarker {
        weak var marker: Marker?
        init(_ marker: Marker) { self.marker = marker }
    }

    /// Through a SQLite store: fetched objects share storages, read what was saved, and one changed
    /// and saved changes only its own row (its committed values stay the fetched ones until saved).
    @Test func fetchedObjectsShareStoragesAndChangeAlone() throws {
        let model = NSManagedObjectModel()
        model.entities = [TestModels.item()]
        let store = try TestStore(NSSQLiteStoreType, model: model)
        let seeding = store.newContext()
        for i in 0..<150 {
            insertObject("Item", ["int64": Int64(i), "string": "item number \(i) of the fetch"], into: seeding)
        }
        try seeding.save()

        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "int64", ascending: true)]
        request.returnsObjectsAsFaults = false
        var items = try context.fetch(request)
        #expect(items.count == 150)
        guard items.count == 150 else { return }
        #expect(items[100]._values.storageForTesting === items[101]._values.storageForTesting)
        items[100].setValue("changed", forKey: "string")
        #expect(items[100].value(forKey: "int64") as? Int64 == 100, "its own row copied")
        #expect(items[100].committedValues(forKeys: ["string"])["string"] as? String == "item number 100 of the fetch")
        for (i, item) in items.enumerated() where i != 100 {
            #expect(item.value(forKey: "int64") as? Int64 == Int64(i))
            #expect(item.value(forKey: "string") as? String == "item number \(i) of the fetch")
        }
        try context.save()
        let kept = items[120]
        items = []
        #expect(kept.value(forKey: "string") as? String == "item number 120 of the fetch")

        let again = try store.newContext().fetch(request)
        #expect(again.count == 150)
        for (i, item) in again.enumerated() {
            #expect(item.value(forKey: "string") as? String == (i == 100 ? "changed" : "item number \(i) of the fetch"))
        }
    }
}
