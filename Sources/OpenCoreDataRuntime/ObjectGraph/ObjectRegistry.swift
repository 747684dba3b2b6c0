import Foundation

/// A context's registered objects by object ID, held weakly (unchanged objects the app drops are
/// released; the context's change sets keep the changed ones alive).
///
/// Keys compare object IDs directly: `NSManagedObjectID` as a dictionary key would go through
/// `NSObject`'s `isEqual(_: Any?)`, a dynamic cast per probe, on every fetch and insert.
package struct ObjectRegistry {
    private struct Key: Hashable {
        let id: NSManagedObjectID
        /// The ID's cached hash, kept beside it in the table: probing compares it first, and
        /// rehashing on growth reads it, without following the reference into each ID object
        /// (a cache miss per probed entry: `perf` on case 2 at N = 100,000 put a tenth of the
        /// wall time in the registry's `find` and resize).
        let hash: Int
        init(id: NSManagedObjectID) {
            self.id = id
            hash = id._cachedHash
        }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
        /// What `Dictionary` asks for: the ID's hash (already a well-mixed `Hasher` result, made once
        /// per ID) folded with the table's seed by one full-width multiply, instead of a `Hasher`
        /// round per probe and per rehash (about 900 instructions per registered row, callgrind
        /// case 2). The multiply's high half depends on every bit, so tables of different sizes
        /// and seeds still order keys independently.
        func _rawHashValue(seed: Int) -> Int {
            let product = UInt64(bitPattern: Int64(hash ^ seed)).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
            return Int(bitPattern: UInt(product.high ^ product.low))
        }
        static func == (lhs: Key, rhs: Key) -> Bool { lhs.hash == rhs.hash && lhs.id._isSameID(as: rhs.id) }
    }

    private var entries: [Key: WeakObject] = [:]
    /// `registeredObjects` as last built during the current event (a `perform` block), kept up to
    /// date as objects come and go, so that code asking for it in a loop (seed 004's
    /// `materializedObject`) does not rebuild a set of every object each time. It holds its objects
    /// until the event ends, as the autoreleased set Apple's `registeredObjects` returns does.
    private var setDuringEvent: Set<NSManagedObject>?
    /// Nesting depth of `perform`/`performAndWait` blocks; the set is kept only inside one.
    private var eventDepth = 0

    package init() {}

    package subscript(id: NSManagedObjectID) -> WeakObject? {
        get { entries[Key(id: id)] }
        set {
            let key = Key(id: id)
            if setDuringEvent != nil {
                if let old = entries[key]?.object { setDuringEvent!.remove(old) }
                if let new = newValue?.object { setDuringEvent!.insert(new) }
            }
            entries[key] = newValue
        }
    }

    /// `self[id] = WeakObject(object)` with the new reference moved into the table: the setter
    /// receives its value borrowed and copied it (a weak-reference copy and destroy, about 200
    /// instructions per fetched row, callgrind case 2).
    package mutating func register(_ object: NSManagedObject, for id: NSManagedObjectID) {
        if setDuringEvent != nil {
            self[id] = WeakObject(object)
            return
        }
        entries[Key(id: id)] = WeakObject(object)
    }

    /// `self[old] = nil` then `self[new] = WeakObject(object)`, for an object whose ID changes (a
    /// save's permanent IDs): the entry moves to the new key as it is, without a new weak reference
    /// or the `registeredObjects` bookkeeping, which it leaves as it was (same object).
    package mutating func changeKey(of object: NSManagedObject, from old: NSManagedObjectID, to new: NSManagedObjectID) {
        if setDuringEvent == nil {
            let entry = entries.removeValue(forKey: Key(id: old))
            entries[Key(id: new)] = entry.flatMap { $0.object === object ? $0 : nil } ?? WeakObject(object)
            return
        }
        self[old] = nil
        self[new] = WeakObject(object)
    }

    package var count: Int { entries.count }

    /// Makes room for `capacity` entries at once (a large fetch), instead of rehashing as it grows.
    package mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }
    package var values: some Collection<WeakObject> { entries.values }

    /// Every registered object that is still alive.
    package mutating func objects() -> Set<NSManagedObject> {
        if let built = setDuringEvent { return built }
        var result = Set<NSManagedObject>(minimumCapacity: entries.count)
        for entry in entries.values { if let object = entry.object { result.insert(object) } }
        if eventDepth > 0 { setDuringEvent = result }
        return result
    }

    package mutating func beginEvent() { eventDepth += 1 }

    package mutating func endEvent() {
        eventDepth -= 1
        if eventDepth == 0 { setDuringEvent = nil }
    }

    package mutating func removeAll() {
        entries.removeAll()
        if setDuringEvent != nil { setDuringEvent = [] }
    }

    /// Drops the entries whose objects are gone, in place (the table is not rebuilt when all are alive,
    /// as when a context inserts or fetches many objects at once).
    package mutating func sweep() {
        var gone: [Key] = []
        for (key, entry) in entries where entry.object == nil { gone.append(key) }
        for key in gone { entries.removeValue(forKey: key) }
    }
}

/// A weak reference kept in a context's registry.
package struct WeakObject {
    package weak var object: NSManagedObject?
    package init(_ object: NSManagedObject) { self.object = object }
}
