import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSComparisonPredicate
import class OpenCoreDataRuntime.NSCompoundPredicate
import class OpenCoreDataRuntime.NSExpression
import class OpenCoreDataRuntime.NSPredicate
import class OpenCoreDataRuntime.NSSortDescriptor

@Suite struct NSSortDescriptorTests {
    private func sorted(_ items: [[String: Any]], _ descriptors: [NSSortDescriptor]) -> [[String: Any]] {
        items.sorted { a, b in
            for d in descriptors {
                let order = d.compare(a, to: b)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }
    }

    @Test func ordersLikePredicateComparisons() {
        let items: [[String: Any]] = [["n": 3], ["n": Int16(1)], ["n": 2.5], [:], ["n": NSNumber(value: 0)]]
        let ascending = sorted(items, [NSSortDescriptor(key: "n", ascending: true)]).map { $0["n"].map { "\($0)" } ?? "nil" }
        #expect(ascending == ["nil", "0", "1", "2.5", "3"], "nil sorts first ascending")
        let descending = sorted(items, [NSSortDescriptor(key: "n", ascending: false)]).map { $0["n"].map { "\($0)" } ?? "nil" }
        #expect(descending == ["3", "2.5", "1", "0", "nil"])
    }

    @Test func keyPathsTieBreaksAndReversal() {
        let items: [[String: Any]] = [
            ["name": "b", "d": ["x": 1]], ["name": "a", "d": ["x": 2]], ["name": "c", "d": ["x": 1]],
        ]
        let byX = NSSortDescriptor(key: "d.x", ascending: true)
        let byName = NSSortDescriptor(key: "name", ascending: false)
        #expect(sorted(items, [byX, byName]).map { $0["name"] as! String } == ["c", "b", "a"])
        let reversed = byX.reversedSortDescriptor as! NSSortDescriptor
        #expect(!reversed.ascending && reversed.key == "d.x")
        #expect(byX.isEqual(NSSortDescriptor(key: "d.x", ascending: true)))
        #expect(byX.description == "(d.x, ascending, compare:)")
    }

    @Test func comparatorAndSelf() {
        let byLength = NSSortDescriptor(key: nil, ascending: true) { a, b in
            let x = (a as? String)?.count ?? 0, y = (b as? String)?.count ?? 0
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        #expect(byLength.compare("ccc", to: "a") == .orderedDescending)
        #expect(NSSortDescriptor(key: nil, ascending: true).compare("a", to: "b") == .orderedAscending)
        let dates = NSSortDescriptor(key: nil, ascending: true)
        #expect(dates.compare(Date(timeIntervalSinceReferenceDate: 1), to: Date(timeIntervalSinceReferenceDate: 0)) == .orderedDescending)
    }
}
