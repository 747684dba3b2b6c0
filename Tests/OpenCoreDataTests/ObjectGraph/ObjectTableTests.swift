import Foundation
import OpenCoreData
@testable import OpenCoreDataRuntime
import Testing

/// The context's table of inserted, changed and deleted objects: a set by identity whose values
/// come in the order objects were first added (the save relies on it to skip its sorts), found
/// through the place each object keeps for each kind of table.
@Suite("ObjectTable")
struct ObjectTableTests {
    static func objects(_ count: Int) -> [NSManagedObject] {
        let entity = NSEntityDescription(name: "Thing", properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
        return (0..<count).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
    }

    @Test func keepsFirstInsertionOrderThroughReplacementRemovalAndCompaction() {
        let all = Self.objects(100)
        var table = ObjectTable(.inserted)
        for object in all { table.insert(object) }
        table.insert(all[3])  // added again: keeps its place
        #expect(table.values.map(ObjectIdentifier.init) == all.map(ObjectIdentifier.init))

        let snapshot = table.values
        // Remove most of them: the holes outnumber the entries, so the table compacts.
        for (i, object) in all.enumerated() where i % 5 != 0 { table.remove(object) }
        let kept = all.enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        #expect(table.count == kept.count && !table.isEmpty)
        #expect(table.values.map(ObjectIdentifier.init) == kept.map(ObjectIdentifier.init))
        for object in all { #expect(table.contains(object) == kept.contains { $0 === object }) }
        #expect(Array(snapshot).count == 100)  // values taken before are a snapshot

        table.insert(all[1])  // added again: at the end
        #expect(table.values.map(ObjectIdentifier.init).last == ObjectIdentifier(all[1]))
        table.remove(all[7])  // not there: no change
        #expect(table.count == kept.count + 1)

        for object in all { table.remove(object) }
        #expect(table.isEmpty && table.count == 0 && Array(table.values).isEmpty)
        table.insert(all[9])
        table.removeAll()
        #expect(table.isEmpty && !table.contains(all[9]))
    }

    /// Random adds, re-adds and removals against a plain model (an array in first-added order):
    /// the table must find every object and keep the order through its growth and compactions.
    @Test func agreesWithAPlainModelThroughRandomChanges() {
        let all = Self.objects(600)
        var generator = SeededGenerator(seed: 20261127)
        var table = ObjectTable(.changed)
        var model: [NSManagedObject] = []
        for step in 0..<6_000 {
            let object = all[Int.random(in: 0..<(step < 3_000 ? 600 : 200), using: &generator)]
            if Bool.random(using: &generator) || model.isEmpty {
                table.insert(object)
                if !model.contains(where: { $0 === object }) { model.append(object) }
            } else {
                table.remove(object)
                model.removeAll { $0 === object }
            }
            if step % 97 == 0 || step == 5_999 {
                #expect(table.count == model.count)
                #expect(table.values.map(ObjectIdentifier.init) == model.map(ObjectIdentifier.init))
                for candidate in all {
                    #expect(table.contains(candidate) == model.contains { $0 === candidate })
                }
            }
        }
    }

    /// An object's place is a hint kept per kind of table: a table of another kind, an emptied table,
    /// a table that replaced a dropped one, and a copy that only removes never make a wrong answer.
    /// (Two live tables of one kind holding the same object would: each context has one of each
    /// kind, and an object is in its own context's only.)
    @Test func placesLeftBehindNeverGiveAWrongAnswer() {
        let all = Self.objects(40)
        var changed = ObjectTable(.changed)
        var deleted = ObjectTable(.deleted)
        for object in all { changed.insert(object) }
        for object in all.reversed() { deleted.insert(object) }  // in both, at other places
        #expect(all.allSatisfy { changed.contains($0) && deleted.contains($0) })
        for object in all.prefix(30) { deleted.remove(object) }  // compacts: new places in `deleted` only
        #expect(all.allSatisfy(changed.contains))
        #expect(all.filter(deleted.contains).map(ObjectIdentifier.init) == all.suffix(10).map(ObjectIdentifier.init))

        // Emptied, then given one object: the places the others kept point past its end or at it.
        changed.removeAll()
        #expect(!all.contains(where: changed.contains))
        changed.insert(all[5])
        #expect(changed.contains(all[5]) && changed.count == 1)
        #expect(!all.contains { $0 !== all[5] && changed.contains($0) })

        // A table that replaces a dropped one (`ContextLink.detach()`): the old places are hints only.
        var replaced = ObjectTable(.changed)
        #expect(!all.contains(where: replaced.contains))
        for object in all.suffix(3) { replaced.insert(object) }
        #expect(all.filter(replaced.contains).count == 3)
        #expect(replaced.values.map(ObjectIdentifier.init) == all.suffix(3).map(ObjectIdentifier.init))

        // A copy that removes: each answers for itself.
        var copy = replaced
        copy.remove(all[38])
        #expect(replaced.contains(all[38]) && !copy.contains(all[38]) && copy.count == 2 && replaced.count == 3)
    }
}
