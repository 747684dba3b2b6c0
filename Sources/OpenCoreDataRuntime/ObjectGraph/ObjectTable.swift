import Foundation

/// A context's table of objects (its inserted, changed and deleted objects): a set of objects by
/// identity with ``values`` in the order the objects were first added.
///
/// Each object keeps its place in each kind of table (``NSManagedObject/_tablePositions``), so a
/// lookup, an insertion and a removal read one field and one array slot, without hashing. A place is
/// only a hint: the object is in the table when the table's slot there holds that very object, so a
/// place left behind by a removal, a table emptied, or a table dropped and replaced never makes a
/// wrong answer. Two live tables of one kind holding the same object would (the place is the last
/// one's): a context has one table of each kind, and an object is only ever in its own context's.
/// (A dictionary of positions by identity hashed every object a save writes several times, grew by
/// rehashing, and was a random access into a table of 4 MB at 100,000 objects: its insertions were
/// about 500 instructions an object, callgrind cases 1 and 5.)
///
/// The order: a save writes rows in primary-key order and gives new objects keys in creation
/// order. Objects are usually inserted as they are created, and changed or deleted in the order a
/// fetch returned them (key order), so in this order the save's sorts find them sorted already;
/// in a dictionary's order they had to be sorted every time (about 600 instructions per object at
/// 20,000 objects, callgrind cases 1, 5 and 6).
package struct ObjectTable {
    /// Which of an object's places (``NSManagedObject/_tablePositions``) the table uses.
    package enum Kind { case inserted, changed, deleted }

    private let kind: Kind
    /// The objects in the order they were added; `nil` where one was removed (compacted when these
    /// holes outnumber the objects).
    private var entries: ContiguousArray<NSManagedObject?> = []
    package private(set) var count = 0
    /// Counts insertions and removals, so that a save can tell its tables did not change since
    /// ObjectsDidChange reported them (and post the same sets in its did-save).
    package private(set) var mutations: UInt = 0

    package init(_ kind: Kind) { self.kind = kind }

    /// Whether `object` is in the table.
    @inline(__always)
    package func contains(_ object: NSManagedObject) -> Bool {
        let position = Int(object._tablePosition(kind))
        guard position >= 0, position < entries.count else { return false }
        // The slot's reference compared as bits: loading it as a reference retained and released it.
        return entries.withUnsafeBufferPointer { buffer in
            UnsafeRawPointer(buffer.baseAddress.unsafelyUnwrapped + position).load(as: UInt.self)
                == UInt(bitPattern: Int(bitPattern: ObjectIdentifier(object)))
        }
    }

    /// Adds `object` at the end, unless it is in the table (then it keeps its place).
    package mutating func insert(_ object: NSManagedObject) {
        if contains(object) { return }
        precondition(entries.count < Int(Int32.max), "ObjectTable: too many objects")
        object._setTablePosition(kind, Int32(entries.count))
        entries.append(object)
        count += 1
        mutations &+= 1
    }

    /// Removes `object`, if it is in the table.
    package mutating func remove(_ object: NSManagedObject) {
        guard contains(object) else { return }
        entries[Int(object._tablePosition(kind))] = nil
        count -= 1
        mutations &+= 1
        if count == 0 {
            entries.removeAll(keepingCapacity: true)
        } else if entries.count > 16, count < entries.count / 2 {
            compact()
        }
    }

    private mutating func compact() {
        var kept: ContiguousArray<NSManagedObject?> = []
        kept.reserveCapacity(count)
        for case let object? in entries {
            object._setTablePosition(kind, Int32(kept.count))
            kept.append(object)
        }
        entries = kept
    }

    /// The objects, in the order they were first added (a snapshot: the table may change while
    /// they are walked).
    package var values: Values { Values(entries: entries, count: count) }
    package var isEmpty: Bool { count == 0 }

    package mutating func removeAll() {
        entries.removeAll()
        count = 0
        mutations &+= 1
    }

    package struct Values: Sequence {
        fileprivate let entries: ContiguousArray<NSManagedObject?>
        fileprivate let count: Int
        package var underestimatedCount: Int { count }
        package func makeIterator() -> Iterator { Iterator(entries: entries) }

        package struct Iterator: IteratorProtocol {
            fileprivate let entries: ContiguousArray<NSManagedObject?>
            fileprivate var index = 0
            package mutating func next() -> NSManagedObject? {
                while index < entries.count {
                    defer { index += 1 }
                    if let object = entries[index] { return object }
                }
                return nil
            }
        }
    }
}

/// An object's identity as a set or dictionary key, hashed by one multiply: `ObjectIdentifier`
/// hashes with a full `Hasher` round (about 150 instructions). The multiply folds the address with
/// the table's seed: the high half depends on every bit, so tables of different sizes and seeds
/// still order keys independently.
package struct ObjectTableKey: Hashable {
    let id: ObjectIdentifier
    package func hash(into hasher: inout Hasher) { hasher.combine(id) }
    package func _rawHashValue(seed: Int) -> Int {
        let product = UInt64(UInt(bitPattern: Int(bitPattern: id) ^ seed)).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
        return Int(bitPattern: UInt(product.high ^ product.low))
    }
    package static func == (lhs: ObjectTableKey, rhs: ObjectTableKey) -> Bool { lhs.id == rhs.id }
}
