import CSwiftRuntime
import Foundation

/// A context's registered objects by object ID, held weakly (unchanged objects the app drops are
/// released; the context's change sets keep the changed ones alive).
///
/// The table holds plain unretained pointers, not Swift `weak` references: a weak reference gives
/// its object a side table (an allocation), and from then on every retain and release of the
/// object takes the runtime's slow path (callgrind, case 2: about 600 instructions per fetched
/// row, plus the side table's `malloc` and `free`). Instead an object leaves the table itself, in
/// `NSManagedObject`'s `deinit` (``removeDeinitializing(_:)``), so no entry outlives its object.
///
/// Thread safety: the table is used on the context's queue, but the last release of an object can
/// happen on any thread (a confinement violation that must not corrupt memory). So every access
/// takes the table's lock, and a lookup turns a pointer into a reference only with a *try-retain*
/// (`strongReference(_:)`), which fails for an object already deinitializing: such an object is
/// about to remove its entry, and its memory stays valid until it has (its `deinit` waits for the
/// lock). Inside the lock no managed object may be released (its `deinit` would take the lock
/// again): whatever an operation lets go of is handed back and released after the lock.
///
/// Keys compare object IDs directly: `NSManagedObjectID` as a dictionary key would go through
/// `NSObject`'s `isEqual(_: Any?)`, a dynamic cast per probe, on every fetch and insert.
///
package struct ObjectRegistry {
    private struct Key: Hashable {
        /// Not retained: an entry's ID is its object's `objectID`, which the object holds for as
        /// long as the entry exists (it leaves the table before it lets go of its ID, and a new
        /// ID replaces its key first, `changeKey`); a key made for a lookup is used while the
        /// caller holds the ID. A retain and release per table operation saved.
        unowned(unsafe) let id: NSManagedObjectID
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

    /// What the lock guards.
    private struct Table {
        /// Registered objects, unretained; an object removes its own entry when it deinitializes.
        var entries: [Key: Unmanaged<NSManagedObject>] = [:]
        /// `registeredObjects` as last built during the current event (a `perform` block), kept up
        /// to date as objects come and go, so that code asking for it in a loop (seed 004's
        /// `materializedObject`) does not rebuild a set of every object each time. It holds its
        /// objects until the event ends, as the autoreleased set Apple's `registeredObjects` returns does.
        var setDuringEvent: Set<NSManagedObject>?
        /// Nesting depth of `perform`/`performAndWait` blocks; the set is kept only inside one.
        var eventDepth = 0

        /// Points `key` (whose ID is `object`'s) at `object`; returns what must be released after the lock.
        mutating func store(_ object: NSManagedObject, at key: Key) -> Released {
            let new = Unmanaged.passUnretained(object)
            let old = entries.updateValue(new, forKey: key)
            if old != nil {
                // The table kept the key it had, whose ID the replaced object holds: this object's goes in.
                entries.removeValue(forKey: key)
                entries[key] = new
            }
            guard setDuringEvent != nil else { return (nil, nil) }
            setDuringEvent!.insert(object)
            return old.map { forgetInSet($0, except: object) } ?? (nil, nil)
        }

        /// Takes the object at `pointer` (unless it is `object`, or deinitializing) out of
        /// `setDuringEvent`; returns the references to release after the lock.
        mutating func forgetInSet(_ pointer: Unmanaged<NSManagedObject>, except object: NSManagedObject?) -> Released {
            guard setDuringEvent != nil, object.map({ pointer.toOpaque() == Unmanaged.passUnretained($0).toOpaque() }) != true,
                let other = strongReference(pointer)
            else { return (nil, nil) }
            return (other, setDuringEvent!.remove(other))
        }
    }

    /// References an operation let go of inside the lock, released by the caller after it (a
    /// release there could run an object's `deinit`, which takes the lock).
    private typealias Released = (NSManagedObject?, NSManagedObject?)

    private let table = Locked(Table())

    package init() {}

    /// The registered object with `id`, if it is alive.
    package func object(for id: NSManagedObjectID) -> NSManagedObject? {
        let key = Key(id: id)
        return table.withLock { table in table.entries[key].flatMap(strongReference) }
    }

    /// Registers `object` under its object ID, replacing any other object registered under it.
    package func register(_ object: NSManagedObject) {
        let key = Key(id: object._objectID)
        let displaced = table.withLock { table in table.store(object, at: key) }
        withExtendedLifetime(displaced) {}  // released here, after the lock
    }

    /// Removes the entry for `id`.
    package func remove(_ id: NSManagedObjectID) {
        let key = Key(id: id)
        let released = table.withLock { table in
            table.entries.removeValue(forKey: key).map { table.forgetInSet($0, except: nil) } ?? (nil, nil)
        }
        withExtendedLifetime(released) {}
    }

    /// Called by an object's `deinit`: removes its entry if the entry is still this object (another
    /// object may have been registered under the ID since, when this one was found deinitializing).
    package func removeDeinitializing(_ object: NSManagedObject) {
        let address = Unmanaged.passUnretained(object).toOpaque()
        let key = Key(id: object._objectID)
        table.withLock { table in
            guard let index = table.entries.index(forKey: key), table.entries.values[index].toOpaque() == address else { return }
            table.entries.remove(at: index)
        }
    }

    /// Moves `object`'s entry from `old` to `new` (a save's permanent IDs); the caller makes `new`
    /// the object's ID right after. An object not registered here (`obtainPermanentIDs(for:)` on
    /// an object of no context) stays out: its `deinit` would not find this table to leave it.
    package func changeKey(of object: NSManagedObject, from old: NSManagedObjectID, to new: NSManagedObjectID) {
        let oldKey = Key(id: old)
        let newKey = Key(id: new)
        let released = table.withLock { table -> Released in
            guard let index = table.entries.index(forKey: oldKey),
                table.entries.values[index].toOpaque() == Unmanaged.passUnretained(object).toOpaque()
            else { return (nil, nil) }
            table.entries.remove(at: index)
            return table.store(object, at: newKey)
        }
        withExtendedLifetime(released) {}
    }

    /// How many entries the table holds (objects alive or deinitializing right now).
    package var count: Int { table.withLock { $0.entries.count } }

    /// Makes room for `capacity` entries at once (a large fetch), instead of rehashing as it grows.
    package func reserveCapacity(_ capacity: Int) { table.withLock { $0.entries.reserveCapacity(capacity) } }

    /// Every registered object that is alive, with a strong reference each.
    package func liveObjects() -> [NSManagedObject] {
        table.withLock { table in
            var result: [NSManagedObject] = []
            result.reserveCapacity(table.entries.count)
            for pointer in table.entries.values { if let object = strongReference(pointer) { result.append(object) } }
            return result
        }
    }

    /// Every registered object that is alive (`registeredObjects`).
    package func objects() -> Set<NSManagedObject> {
        table.withLock { table in
            if let built = table.setDuringEvent { return built }
            var result = Set<NSManagedObject>(minimumCapacity: table.entries.count)
            for pointer in table.entries.values { if let object = strongReference(pointer) { result.insert(object) } }
            if table.eventDepth > 0 { table.setDuringEvent = result }
            return result
        }
    }

    package func beginEvent() { table.withLock { $0.eventDepth += 1 } }

    package func endEvent() {
        let released = table.withLock { table -> Set<NSManagedObject>? in
            table.eventDepth -= 1
            guard table.eventDepth == 0, let set = table.setDuringEvent else { return nil }
            table.setDuringEvent = nil
            return set
        }
        withExtendedLifetime(released) {}
    }

    /// Removes every entry (`reset()`).
    package func removeAll() {
        let released = table.withLock { table -> Set<NSManagedObject>? in
            table.entries.removeAll()
            guard let set = table.setDuringEvent else { return nil }
            table.setDuringEvent = []
            return set
        }
        withExtendedLifetime(released) {}
    }
}

/// The object behind `pointer` with a new strong reference, or `nil` if it is deinitializing.
///
/// `swift_tryRetain` is the Swift runtime's own entry point (exported by `libswiftCore`, declared
/// in the runtime's `HeapObject.h`): it increments the strong count unless the object has started
/// to deinitialize, in one atomic step. The standard library has no public spelling of it
/// (`Unmanaged` only retains unconditionally, and `unowned` traps on a deinitializing object), and
/// Swift reserves `@_silgen_name` on runtime names, so a C header declares it (`CSwiftRuntime`).
@inline(__always)
private func strongReference(_ pointer: Unmanaged<NSManagedObject>) -> NSManagedObject? {
    cswiftruntime_tryRetain(pointer.toOpaque()) ? pointer.takeRetainedValue() : nil
}

/// A weak reference to a managed object (used by batched fetches).
package struct WeakObject {
    package weak var object: NSManagedObject?
    package init(_ object: NSManagedObject) { self.object = object }
}
