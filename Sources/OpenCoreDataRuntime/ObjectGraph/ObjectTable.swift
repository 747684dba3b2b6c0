import Foundation

/// A context's table of objects by identity (its inserted, changed and deleted objects):
/// `[ObjectIdentifier: NSManagedObject]` with the subset of `Dictionary`'s interface the context
/// uses, and a cheaper hash.
///
/// `ObjectIdentifier` hashes with a full `Hasher` round (about 150 instructions), and every object
/// a save writes goes through these tables several times (created, inserted, changed through each
/// accessor, deleted, looked up by `willSave()` and delete propagation): about 5 lookups per object
/// in callgrind case 1. The key here folds the object's address with the table's seed by one
/// full-width multiply, as ``ObjectRegistry`` does for object IDs: the high half depends on every
/// bit, so tables of different sizes and seeds still order keys independently.
package struct ObjectTable {
    package struct Key: Hashable {
        let id: ObjectIdentifier
        package func hash(into hasher: inout Hasher) { hasher.combine(id) }
        package func _rawHashValue(seed: Int) -> Int {
            let product = UInt64(UInt(bitPattern: Int(bitPattern: id) ^ seed)).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
            return Int(bitPattern: UInt(product.high ^ product.low))
        }
        package static func == (lhs: Key, rhs: Key) -> Bool { lhs.id == rhs.id }
    }

    private var entries: [Key: NSManagedObject] = [:]

    package init() {}

    package subscript(key: ObjectIdentifier) -> NSManagedObject? {
        get { entries[Key(id: key)] }
        set { entries[Key(id: key)] = newValue }
    }

    package var values: Dictionary<Key, NSManagedObject>.Values { entries.values }
    package var count: Int { entries.count }
    package var isEmpty: Bool { entries.isEmpty }
    package mutating func removeAll() { entries.removeAll() }
    package mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }
}
