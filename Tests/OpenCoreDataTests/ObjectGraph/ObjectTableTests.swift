import Foundation
import OpenCoreData
@testable import OpenCoreDataRuntime
import Testing

/// The context's table of inserted, changed and deleted objects: a dictionary by identity whose
/// values come in the order objects were first added (the save relies on it to skip its sorts).
@Suite("ObjectTable")
struct ObjectTableTests {
    static func objects(_ count: Int) -> [NSManagedObject] {
        let entity = NSEntityDescription(name: "Thing", properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
        return (0..<count).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
    }

    @Test func keepsFirstInsertionOrderThroughReplacementRemovalAndCompaction() {
        let all = Self.objects(100)
        var table = ObjectTable()
        for object in all { table[ObjectIdentifier(object)] = object }
        table[ObjectIdentifier(all[3])] = all[3]  // set again: keeps its place
        #expect(table.values.map(ObjectIdentifier.init) == all.map(ObjectIdentifier.init))

        let snapshot = table.values
        // Remove most of them: the holes outnumber the entries, so the table compacts.
        for (i, object) in all.enumerated() where i % 5 != 0 { table[ObjectIdentifier(object)] = nil }
        let kept = all.enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        #expect(table.count == kept.count && !table.isEmpty)
        #expect(table.values.map(ObjectIdentifier.init) == kept.map(ObjectIdentifier.init))
        for object in all { #expect((table[ObjectIdentifier(object)] != nil) == kept.contains { $0 === object }) }
        #expect(Array(snapshot).count == 100)  // values taken before are a snapshot

        table[ObjectIdentifier(all[1])] = all[1]  // added again: at the end
        #expect(table.values.map(ObjectIdentifier.init).last == ObjectIdentifier(all[1]))
        table[ObjectIdentifier(all[7])] = nil  // not there: no change
        #expect(table.count == kept.count + 1)

        for object in all { table[ObjectIdentifier(object)] = nil }
        #expect(table.isEmpty && table.count == 0 && Array(table.values).isEmpty)
        table[ObjectIdentifier(all[9])] = all[9]
        table.removeAll()
        #expect(table.isEmpty && table[ObjectIdentifier(all[9])] == nil)
    }

    /// Random adds, re-adds and removals against a plain model (an array in first-added order):
    /// the table must find every object and keep the order through its growth and compactions.
    @Test func agreesWithAPlainModelThroughRandomChanges() {
        let all = Self.objects(600)
        var generator = SeededGenerator(seed: 20261127)
        var table = ObjectTable()
        var model: [NSManagedObject] = []
        for step in 0..<6_000 {
            let object = all[Int.random(in: 0..<(step < 3_000 ? 600 : 200), using: &generator)]
            let key = ObjectIdentifier(object)
            if Bool.random(using: &generator) || model.isEmpty {
                table[key] = object
                if !model.contains(where: { $0 === object }) { model.append(object) }
            } else {
                table[key] = nil
                model.removeAll { $0 === object }
            }
            if step % 97 == 0 || step == 5_999 {
                #expect(table.count == model.count)
                #expect(table.values.map(ObjectIdentifier.init) == model.map(ObjectIdentifier.init))
                for candidate in all {
                    #expect((table[ObjectIdentifier(candidate)] != nil) == model.contains { $0 === candidate })
                }
            }
        }
    }
}

