/// A small set of slot numbers: the first 64 slots in a word of its own, any others in an array.
///
/// The word is inline so that an object's first change allocates nothing: the set was an array,
/// allocated on every inserted or changed object's first change (about 300 instructions with its
/// release, callgrind cases 1 and 5).
package struct SlotSet: Sequence, Sendable {
    private var low: UInt64 = 0
    /// Slots 64 and up, 64 to a word.
    private var high: [UInt64] = []
    package init() {}
    /// The set of the slots set in `low` (0 to 63) and `high` (64 and up, 64 to a word).
    package init(low: UInt64, high: [UInt64]) {
        self.low = low
        self.high = high
    }
    /// Slots 0 to 63, one bit each.
    package var lowWord: UInt64 { low }
    /// Slots 64 and up, 64 to a word.
    package var highWords: [UInt64] { high }
    package var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }
    /// Adds `slot`; a negative one (no slot: a key's lookup that found none) is not added, as
    /// `contains` never finds one: converted to a shift, it trapped.
    package mutating func insert(_ slot: Int) {
        guard slot >= 0 else { return }
        if slot < 64 {
            low |= 1 << UInt64(slot)
            return
        }
        let w = (slot >> 6) - 1
        if w >= high.count { high.append(contentsOf: repeatElement(0, count: w - high.count + 1)) }
        high[w] |= 1 << UInt64(slot & 63)
    }
    package func contains(_ slot: Int) -> Bool {
        if slot < 64 { return slot >= 0 && low & (1 << UInt64(slot)) != 0 }
        let w = (slot >> 6) - 1
        return w < high.count && high[w] & (1 << UInt64(slot & 63)) != 0
    }
    package mutating func removeAll() {
        low = 0
        if !high.isEmpty { high.removeAll(keepingCapacity: true) }
    }
    /// The slots in increasing order. A concrete iterator (not `AnyIterator`): the save asks every
    /// updated object whether a changed slot is persistent, and a boxed closure per call showed.
    package func makeIterator() -> Iterator { Iterator(low: low, high: high) }

    package struct Iterator: IteratorProtocol {
        private let high: [UInt64]
        /// The word being read: 0 is `low`, `w` is `high[w - 1]`.
        private var w = 0
        private var bits: UInt64
        fileprivate init(low: UInt64, high: [UInt64]) {
            self.high = high
            bits = low
        }
        package mutating func next() -> Int? {
            while true {
                if bits != 0 {
                    let b = bits.trailingZeroBitCount
                    bits &= bits - 1
                    return w << 6 | b
                }
                guard w < high.count else { return nil }
                bits = high[w]
                w += 1
            }
        }
    }
}

/// Changed slots 64 and up of objects whose entity has more than 64 properties, by object: the
/// object keeps slots 0 to 63 in a word of its own and has no room for more (its flag
/// `hasWideChanges` says it has an entry; its `deinit` removes it). Locked: an object may be freed
/// on any thread.
enum WideChangedSlots {
    private static let table = Locked<[ObjectIdentifier: [UInt64]]>([:])

    static func words(of object: NSManagedObject) -> [UInt64] { words(of: ObjectIdentifier(object)) ?? [] }

    static func set(_ words: [UInt64], of object: NSManagedObject) {
        table.withLock { $0[ObjectIdentifier(object)] = words }
    }

    static func remove(_ object: NSManagedObject) {
        _ = table.withLock { $0.removeValue(forKey: ObjectIdentifier(object)) }
    }

    /// What is kept for the object `object` identifies (`nil`: nothing).
    static func words(of object: ObjectIdentifier) -> [UInt64]? { table.withLock { $0[object] } }
}

extension NSManagedObject {
    /// The changed slots past 63 kept aside for the object `object` identifies, for tests.
    package static func _wideChangedSlotsForTesting(_ object: ObjectIdentifier) -> [UInt64]? {
        WideChangedSlots.words(of: object)
    }
}
