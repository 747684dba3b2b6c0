@testable import OpenCoreDataRuntime
import Testing

/// `forEachBorrowed(in:_:)` visits the elements a `for` loop would, in order (that it takes none
/// retained is measured, not tested: callgrind cases 1, 5 and 6, CHANGELOG).
@Suite("Borrowed iteration")
struct ArrayBorrowedTests {
    private final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func visitsEveryElementOrARangeInOrder() {
        let boxes = (0..<10).map(Box.init)
        var all: [Int] = []
        boxes.forEachBorrowed { all.append($0.value) }
        #expect(all == Array(0..<10))
        var some: [Int] = []
        boxes.forEachBorrowed(in: 3..<7) { some.append($0.value) }
        #expect(some == [3, 4, 5, 6])
        var none = 0
        [Box]().forEachBorrowed { _ in none += 1 }
        boxes.forEachBorrowed(in: 4..<4) { _ in none += 1 }
        #expect(none == 0)
    }

    @Test func anErrorStopsTheWalk() {
        struct Stop: Error {}
        let boxes = (0..<5).map(Box.init)
        var seen: [Int] = []
        #expect(throws: Stop.self) {
            try boxes.forEachBorrowed { box in
                seen.append(box.value)
                if box.value == 2 { throw Stop() }
            }
        }
        #expect(seen == [0, 1, 2])
    }
}
