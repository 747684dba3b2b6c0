import Foundation

/// A context's table of objects by identity (its inserted, changed and deleted objects):
/// `[ObjectIdentifier: NSManagedObject]` with the subset of `Dictionary`'s interface the context
/// uses, a cheaper hash, and ``values`` in the order the objects were first added.
///
/// `ObjectIdentifier` hashes with a full `Hasher` round (about 150 instructions), and every object
/// a save writes goes through these tables several times (created, inserted, changed through each
/// accessor, deleted, looked up by `willSave()` and delete propagation): about 5 lookups per object
/// in callgrind case 1. The key here folds the object's address with the table's seed by one
/// full-width multiply, as ``ObjectRegistry`` does for object IDs: the high half depends on every
/// bit, so tables of different sizes and seeds still order keys independently.
///
/// The order: a save writes rows in primary-key order and gives new objects keys in creation
/// order. Objects are usually inserted as they are created, and changed or deleted in the order a
/// fetch returned them (key order), so in this order the save's sorts find them sorted already;
/// in a dictionary's order they had to be sorted every time (about 600 instructions per object at
/// 20,000 objects, callgrind cases 1, 5 and 6).
package struct ObjectTable {
    /// Each key's place in `entries`.
    private var positions: [ObjectTableKey: Int] = [:]
    /// The entries in the order they were added; `nil` where one was removed (compacted when
    /// these holes outnumber the entries).
    private var entries: ContiguousArray<ObjectTableEntry?> = []

    package init() {}

    package subscript(key: ObjectIdentifier) -> NSManagedObject? {
        get {
            guard let position = positions[ObjectTableKey(id: key)] else { return nil }
            return entries[position]?.object
        }
        set {
            let key = ObjectTableKey(id: key)
            if let newValue {
                if let position = positions[key] {
                    entries[position] = ObjectTableEntry(key: key, object: newValue)
                } else {
                    positions[key] = entries.count
                    entries.append(ObjectTableEntry(key: key, object: newValue))
                }
            } else if let position = positions.removeValue(forKey: key) {
                entries[position] = nil
                if positions.isEmpty {
                    entries.removeAll(keepingCapacity: true)
                } else if entries.count > 16, positions.count < entries.count / 2 {
                    compact()
                }
            }
        }
    }

    private mutating func compact() {
        var kept: ContiguousArray<ObjectTableEntry?> = []
        kept.reserveCapacity(positions.count)
        for case let entry? in entries {
            positions[entry.key] = kept.count
            kept.append(entry)
        }
        entries = kept
    }

    /// The objects, in the order they were first added (a snapshot: the table may change while
    /// they are walked).
    package var values: Values { Values(entries: entries, count: positions.count) }
    package var count: Int { positions.count }
    package var isEmpty: Bool { positions.isEmpty }

    package mutating func removeAll() {
        positions.removeAll()
        entries.removeAll()
    }

    package struct Values: Sequence {
        fileprivate let entries: ContiguousArray<ObjectTableEntry?>
        fileprivate let count: Int
        package var underestimatedCount: Int { count }
        package func makeIterator() -> Iterator { Iterator(entries: entries) }

        package struct Iterator: IteratorProtocol {
            fileprivate let entries: ContiguousArray<ObjectTableEntry?>
            fileprivate var index = 0
            package mutating func next() -> NSManagedObject? {
                while index < entries.count {
                    defer { index += 1 }
                    if let entry = entries[index] { return entry.object }
                }
                return nil
            }
        }
    }
}

/// A key of ``ObjectTable``: an object's identity, hashed by one multiply (see there).
package struct ObjectTableKey: Hashable {
    let id: ObjectIdentifier
    package func hash(into hasher: inout Hasher) { hasher.combine(id) }
    package func _rawHashValue(seed: Int) -> Int {
        let product = UInt64(UInt(bitPattern: Int(bitPattern: id) ^ seed)).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
        return Int(bitPattern: UInt(product.high ^ product.low))
    }
    package static func == (lhs: ObjectTableKey, rhs: ObjectTableKey) -> Bool { lhs.id == rhs.id }
}

/// An entry of ``ObjectTable``: an object and its key.
package struct ObjectTableEntry {
    let key: ObjectTableKey
    let object: NSManagedObject
}
