import Foundation
import Synchronization

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
/// (`strongReference(_:)`, Support/RuntimeInternals), which fails for an object already
/// deinitializing: such an object is about to remove its entry, and its memory stays valid until
/// it has (its `deinit` waits for the lock). Inside the lock no managed object may be released (its
/// `deinit` would take the lock again): whatever an operation lets go of is handed back and
/// released after the lock.
///
/// Layout: an object's entry is filed by its ID's store, root entity and key. Our stores' keys are
/// integers (`Z_PK`, and a temporary ID's number), handed out in sequence, and fetches, saves and
/// releases mostly go through them in order. So consecutive keys share a page of
/// ``ObjectRegistry/pageSize`` slots, found through a small dictionary of pages (the page made last
/// is kept apart, and the last page used is remembered): going through 100,000 objects in key order
/// touches each page's memory once.
/// A dictionary of all IDs put each object at a random place in a table of several megabytes, a
/// cache miss on every lookup, registration and `deinit` (`perf`, case 2 at N = 100,000: a fifth
/// of the wall time went to the dictionary's `find`). Other references (strings, the
/// `NSIncrementalStore` reference objects) keep one dictionary.
///
package struct ObjectRegistry {
    /// Slots per page: a page costs 256 bytes, and at worst (keys more than a page apart) that is
    /// its one object's overhead.
    static let pageSize = 32
    private static let pageShift = 5

    /// A page: one store's, one root entity's, keys `number * pageSize ..< (number + 1) * pageSize`.
    private struct PageKey: Hashable {
        let store: ObjectIdentifier
        let root: ObjectIdentifier
        let number: Int64
        /// Temporary IDs' numbers are a separate key space.
        let temporary: Bool

        func hash(into hasher: inout Hasher) {
            hasher.combine(store)
            hasher.combine(root)
            hasher.combine(number)
            hasher.combine(temporary)
        }
        /// What `Dictionary` asks for: the fields folded with the table's seed by one full-width
        /// multiply (the high half depends on every bit), instead of a `Hasher` round per probe.
        func _rawHashValue(seed: Int) -> Int {
            var fields: UInt64 = UInt64(bitPattern: number) &* 0x9E37_79B9_7F4A_7C15
            fields ^= UInt64(UInt(bitPattern: root))
            fields ^= UInt64(UInt(bitPattern: store)) &* 0xC2B2_AE3D_27D4_EB4F
            fields ^= UInt64(UInt(bitPattern: seed))
            if temporary { fields ^= 0xA076_1D64_78BD_642F }
            let product = fields.multipliedFullWidth(by: 0xE703_7ED1_A0B4_28DB)
            return Int(bitPattern: UInt(product.high ^ product.low))
        }
    }

    /// An ID whose reference is not an integer.
    private struct OtherKey: Hashable {
        let store: ObjectIdentifier
        let root: ObjectIdentifier
        let reference: NSManagedObjectID.Reference
    }

    /// Where an ID's entry is.
    private enum Location: Equatable {
        case page(PageKey, slot: Int)
        case other(OtherKey)

        init(_ id: NSManagedObjectID) {
            switch id.reference {
            case .int64(let key):
                self.init(store: id._storeKey, root: id._root, key: key)
            case .temporary(let n):
                self.init(store: id._storeKey, root: id._root, temporary: n)
            case .string, .other:
                self = .other(OtherKey(store: id._storeKey, root: id._root, reference: id.reference))
            }
        }

        /// Where `object`'s entry is, without making its ID if it has none yet.
        @inline(__always)
        init(_ object: NSManagedObject) {
            if let (key, slot) = ObjectRegistry.lazyPagePlace(of: object) {
                self = .page(key, slot: slot)
            } else {
                self.init(object._objectID)
            }
        }

        /// Where the entry of the row with primary key `key` of `store` and root entity `root` is.
        init(store: ObjectIDStore, root: ObjectIdentifier, key: Int64) {
            self.init(store: store.key, root: root, key: key)
        }

        @inline(__always)
        private init(store: ObjectIdentifier, root: ObjectIdentifier, key: Int64) {
            let (page, slot) = ObjectRegistry.pagePlace(store: store, root: root, key: key)
            self = .page(page, slot: slot)
        }

        @inline(__always)
        private init(store: ObjectIdentifier, root: ObjectIdentifier, temporary n: UInt64) {
            let (page, slot) = ObjectRegistry.pagePlace(store: store, root: root, temporary: n)
            self = .page(page, slot: slot)
        }
    }

    /// A primary key's page and slot.
    @inline(__always)
    private static func pagePlace(store: ObjectIdentifier, root: ObjectIdentifier, key: Int64) -> (PageKey, Int) {
        (PageKey(store: store, root: root, number: key >> pageShift, temporary: false), Int(key & Int64(pageSize - 1)))
    }

    /// A temporary ID number's page and slot (a key space of its own).
    @inline(__always)
    private static func pagePlace(
        store: ObjectIdentifier, root: ObjectIdentifier, temporary n: UInt64
    ) -> (PageKey, Int) {
        (PageKey(store: store, root: root, number: Int64(n >> UInt64(pageShift)), temporary: true),
         Int(n & UInt64(pageSize - 1)))
    }

    /// The page and slot of `object`'s entry while its ID is not made (a fetched or saved row's
    /// object, or a new one: the common case), read from its fields; `nil` once it has an ID. For
    /// registration and `deinit`, which built a ``Location`` for it: an enum whose other case holds
    /// a reference, so each one was stored, matched and destroyed through outlined functions.
    @inline(__always)
    private static func lazyPagePlace(of object: NSManagedObject) -> (PageKey, Int)? {
        if let key = object._lazyRowKey {
            return pagePlace(store: object._lazyRowStoreKey, root: object._layout.rootID, key: key)
        }
        if let n = object._lazyTemporaryNumber {
            // Where its temporary ID's entry is (`Location.init(_ id:)`), the ID not made.
            return pagePlace(store: NSManagedObjectID.temporaryStoreKey, root: object._layout.rootID, temporary: n)
        }
        return nil
    }

    /// `pageSize` unretained object pointers, and how many are set.
    private final class Page {
        let slots = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: pageSize)
        var live = 0
        init() { slots.initialize(repeating: nil, count: pageSize) }
        deinit { slots.deallocate() }
    }

    /// How many times an object has been filed in the table: counted under the lock, read
    /// without it (``filingCount``).
    private final class FilingCount: Sendable {
        let value = Atomic<UInt>(0)
    }

    /// What the lock guards.
    private struct Table {
        let filings: FilingCount
        /// Registered objects, unretained; an object removes its own entry when it deinitializes.
        var pages: [PageKey: Page] = [:]
        var others: [OtherKey: UnsafeMutableRawPointer] = [:]
        /// How many entries there are.
        var count = 0
        /// The page made last, kept out of `pages` (found without a dictionary probe) until another
        /// page is made: then it moves into `pages` if it holds entries, and if it is empty it
        /// becomes the new page under the new key. One object registered and released at a time
        /// (a loop of lookups, each of another page) so needs no dictionary insert and removal per
        /// object (about 700 instructions a lookup, callgrind case 4).
        var frontKey: PageKey?
        var front: Page?
        /// The page of `pages` used last, found without a dictionary probe.
        var lastKey: PageKey?
        /// Unretained (`pages` holds it; it is cleared when its page leaves `pages`): a retained
        /// page was a retain and a release per registration and per `deinit`.
        var lastPage: Unmanaged<Page>?
        /// An emptied page of `pages`, reused by the next new one instead of an allocation.
        var spare: Page?
        /// `registeredObjects` as last built during the current event (a `perform` block), kept up
        /// to date as objects come and go, so that code asking for it in a loop (seed 004's
        /// `materializedObject`) does not rebuild a set of every object each time. It holds its
        /// objects until the event ends, as the autoreleased set Apple's `registeredObjects` returns does.
        var setDuringEvent: Set<NSManagedObject>?
        /// Nesting depth of `perform`/`performAndWait` blocks; the set is kept only inside one.
        var eventDepth = 0

        /// The page of `key`, made if `create`; unretained, valid until the page leaves the table
        /// (``front`` or `pages`).
        @inline(__always)
        private mutating func page(_ key: PageKey, create: Bool) -> Unmanaged<Page>? {
            if frontKey == key, let front { return Unmanaged.passUnretained(front) }
            if lastKey == key, let lastPage { return lastPage }
            return otherPage(key, create: create)
        }

        /// ``page(_:create:)`` for a page other than the two it remembers (out of line: inlined whole
        /// into its callers, the common case paid for the rest's registers, about 60 instructions).
        @inline(never)
        private mutating func otherPage(_ key: PageKey, create: Bool) -> Unmanaged<Page>? {
            if let found = pages[key] {
                lastKey = key
                lastPage = Unmanaged.passUnretained(found)
                return lastPage
            }
            guard create else { return nil }
            let page: Page
            if let old = front, old.live == 0 {
                page = old  // empty: it takes the new key
            } else {
                if let old = front, let oldKey = frontKey { pages[oldKey] = old }
                page = spare ?? Page()
                spare = nil
            }
            front = page
            frontKey = key
            return Unmanaged.passUnretained(page)
        }

        /// The pointer filed at `location`.
        mutating func entry(at location: Location) -> UnsafeMutableRawPointer? {
            switch location {
            case .page(let key, let slot):
                guard let page = page(key, create: false) else { return nil }
                return page._withUnsafeGuaranteedRef { $0.slots }[slot]
            case .other(let key): return others[key]
            }
        }

        /// Files `new` (or nothing) at `location`, unless `expected` is given and is not what is
        /// filed there; returns the pointer that was there.
        mutating func replace(
            at location: Location, with new: UnsafeMutableRawPointer?, ifFiled expected: UnsafeMutableRawPointer? = nil
        ) -> UnsafeMutableRawPointer? {
            switch location {
            case .page(let key, let slot):
                return replace(page: key, slot: slot, with: new, ifFiled: expected)
            case .other(let key):
                if let expected, others[key] != expected { return others[key] }
                let old = new.map { others.updateValue($0, forKey: key) } ?? others.removeValue(forKey: key)
                count += (new == nil ? 0 : 1) - (old == nil ? 0 : 1)
                return old
            }
        }

        /// ``replace(at:with:ifFiled:)`` for a page's slot: inlined into the paths every fetched
        /// object takes (its registration and its `deinit`), which know their place is a page's. As
        /// one function for both kinds of place, taking the place as a `Location`, it cost about 75
        /// instructions a call besides its work, twice for every object (callgrind case 2).
        @inline(__always)
        mutating func replace(
            page key: PageKey, slot: Int, with new: UnsafeMutableRawPointer?, ifFiled expected: UnsafeMutableRawPointer?
        ) -> UnsafeMutableRawPointer? {
            guard let page = page(key, create: new != nil) else { return nil }
            let slots = page._withUnsafeGuaranteedRef { $0.slots }
            let old = slots[slot]
            if let expected, old != expected { return old }
            slots[slot] = new
            let change = (new == nil ? 0 : 1) - (old == nil ? 0 : 1)
            count += change
            let live = page._withUnsafeGuaranteedRef { page in
                page.live += change
                return page.live
            }
            if live == 0, frontKey != key {  // an empty front page stays, for the next new key
                spare = pages.removeValue(forKey: key)
                lastKey = nil
                lastPage = nil
            }
            return old
        }

        /// Counts a filing (``filingCount``).
        @inline(__always)
        mutating func noteFiling() {
            // A load and a store, not an atomic add: the lock orders the writers, and a locked add
            // takes about 5 ns on this machine (a C loop), twice for each object a save inserts.
            filings.value.store(filings.value.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        }

        /// Empties `location` if the object at `address` is filed there; whether it was. One look
        /// for the page: looked up to compare and then again to empty, the page was found twice
        /// for every object freed (about 55 instructions, callgrind case 2; 83 a saved object in case 1).
        mutating func remove(_ address: UnsafeMutableRawPointer, at location: Location) -> Bool {
            replace(at: location, with: nil, ifFiled: address) == address
        }

        /// Files `object` at `location`; returns what must be released after the lock.
        mutating func store(_ object: NSManagedObject, at location: Location) -> Released {
            noteFiling()
            let old = replace(at: location, with: Unmanaged.passUnretained(object).toOpaque())
            guard setDuringEvent != nil else { return (nil, nil) }
            setDuringEvent!.insert(object)
            return old.map { forgetInSet($0, except: object) } ?? (nil, nil)
        }

        /// Takes the object at `pointer` (unless it is `object`, or deinitializing) out of
        /// `setDuringEvent`; returns the references to release after the lock.
        mutating func forgetInSet(_ pointer: UnsafeMutableRawPointer, except object: NSManagedObject?) -> Released {
            guard setDuringEvent != nil, object.map({ pointer == Unmanaged.passUnretained($0).toOpaque() }) != true,
                let other = strongReference(pointer)
            else { return (nil, nil) }
            return (other, setDuringEvent!.remove(other))
        }

        /// Every entry's pointer.
        func forEachPointer(_ body: (UnsafeMutableRawPointer) -> Void) {
            func visit(_ page: Page) {
                for slot in 0..<pageSize { if let pointer = page.slots[slot] { body(pointer) } }
            }
            if let front { visit(front) }
            for page in pages.values { visit(page) }
            for pointer in others.values { body(pointer) }
        }

        mutating func removeAllEntries() {
            pages.removeAll()
            front = nil
            frontKey = nil
            others.removeAll()
            count = 0
            lastKey = nil
            lastPage = nil
        }
    }

    /// References an operation let go of inside the lock, released by the caller after it (a
    /// release there could run an object's `deinit`, which takes the lock).
    private typealias Released = (NSManagedObject?, NSManagedObject?)

    private let filings: FilingCount
    private let table: Locked<Table>

    package init() {
        let filings = FilingCount()
        self.filings = filings
        table = Locked(Table(filings: filings))
    }

    /// How many times objects have been filed so far (registered, or moved to another ID). A fetch
    /// that began with the table empty and counts its own filings knows, while the two agree, that
    /// no object but its own was filed since (``NSManagedObjectContext/FetchRegistration``).
    package var filingCount: UInt { filings.value.load(ordering: .relaxed) }

    /// Whether the table holds no entry.
    package var isEmpty: Bool { table.withLock { $0.count == 0 } }

    /// The registered object with `id`, if it is alive.
    package func object(for id: NSManagedObjectID) -> NSManagedObject? {
        let location = Location(id)
        return table.withLock { table in table.entry(at: location).flatMap(strongReference) }
    }

    /// The registered object for the row with primary key `key` of `store` and root entity `root`.
    ///
    /// Never inlined: inlined into a fetch's row loop, it left the lock's closure out of line, a
    /// closure call more per row (about 30 instructions a row, callgrind case 2).
    @inline(never)
    package func object(store: ObjectIDStore, root: ObjectIdentifier, key: Int64) -> NSManagedObject? {
        let location = Location(store: store, root: root, key: key)
        return table.withLock { table in table.entry(at: location).flatMap(strongReference) }
    }

    /// Whether `object` is the row with primary key `key` of `store` and root entity `root`,
    /// decided without making the object's ID if it has none yet.
    package static func isObject(_ object: NSManagedObject, rowOf store: ObjectIDStore, root: ObjectIdentifier, key: Int64) -> Bool {
        Location(object) == Location(store: store, root: root, key: key)
    }

    /// Registers `object` under its object ID, replacing any other object registered under it.
    package func register(_ object: NSManagedObject) {
        // A page's place (found without a `Location` for an object with no ID yet), while no
        // `registeredObjects` set is kept: the slot written in place, and nothing to release after
        // the lock (an object displaced from the table is not retained by it). The general path
        // below handles the rest.
        let location: Location
        if let (key, slot) = Self.lazyPagePlace(of: object) {
            if file(object, onPage: key, slot: slot) { return }
            location = .page(key, slot: slot)
        } else {
            location = Location(object._objectID)  // it has an ID (no lazy place): not looked for again
            if case .page(let key, let slot) = location, file(object, onPage: key, slot: slot) { return }
        }
        let displaced = table.withLock { table in table.store(object, at: location) }
        withExtendedLifetime(displaced) {}  // released here, after the lock
    }

    /// ``register(_:)``'s page path: files `object` in the slot, unless a `registeredObjects` set is
    /// kept (then `false`, and the general path files it).
    @inline(__always)
    private func file(_ object: NSManagedObject, onPage key: PageKey, slot: Int) -> Bool {
        let pointer = Unmanaged.passUnretained(object).toOpaque()
        return table.withLock { table -> Bool in
            guard table.setDuringEvent == nil else { return false }
            table.noteFiling()
            _ = table.replace(page: key, slot: slot, with: pointer, ifFiled: nil)
            return true
        }
    }

    /// Removes the entry for `id`.
    package func remove(_ id: NSManagedObjectID) { remove(at: Location(id)) }

    /// Removes `object`'s entry, found without making its ID if it has none yet (a deleted fetched
    /// object at save: making its ID cost about 650 instructions, callgrind case 6).
    package func remove(_ object: NSManagedObject) { remove(at: Location(object)) }

    private func remove(at location: Location) {
        let released = table.withLock { table in
            table.replace(at: location, with: nil).map { table.forgetInSet($0, except: nil) } ?? (nil, nil)
        }
        withExtendedLifetime(released) {}
    }

    /// Called by an object's `deinit`: removes its entry if the entry is still this object (another
    /// object may have been registered under the ID since, when this one was found deinitializing).
    package func removeDeinitializing(_ object: NSManagedObject) {
        let address = Unmanaged.passUnretained(object).toOpaque()
        if let (key, slot) = Self.lazyPagePlace(of: object) { return remove(address, fromPage: key, slot: slot) }
        let location = Location(object._objectID)  // it has an ID (no lazy place): not looked for again
        if case .page(let key, let slot) = location { return remove(address, fromPage: key, slot: slot) }
        table.withLock { table in _ = table.remove(address, at: location) }
    }

    /// ``removeDeinitializing(_:)``'s page path: empties the slot if it still holds `address`.
    @inline(__always)
    private func remove(_ address: UnsafeMutableRawPointer, fromPage key: PageKey, slot: Int) {
        table.withLock { table in _ = table.replace(page: key, slot: slot, with: nil, ifFiled: address) }
    }

    /// Moves each object's entry from where it is now to the row with the given primary key of
    /// `store` (a save's new primary keys: `keys[i]` for `objects[i]`), then gives the objects those
    /// identities (``NSManagedObject/_setRowIdentities(_:keys:store:)``). As
    /// ``changeKey(of:from:to:)``, an object not registered here stays out.
    ///
    /// Under one lock: first every object out of its old place, then every one into its new place.
    /// One at a time, a save's objects went back and forth between a temporary page and a
    /// permanent one, so neither stayed the table's last page and every move probed the page
    /// dictionary two or three times, besides taking the lock (callgrind case 1). Old and new places
    /// are in different key spaces (temporary numbers, primary keys), so the order changes nothing.
    package func changeKeys(of objects: [NSManagedObject], toRows keys: [Int64], of store: ObjectIDStore) {
        let released = table.withLock { table -> [Released] in
            var moved: [Bool] = []
            moved.reserveCapacity(objects.count)
            objects.forEachBorrowed { object in
                moved.append(table.remove(Unmanaged.passUnretained(object).toOpaque(), at: Location(object)))
            }
            var released: [Released] = []
            var index = 0
            objects.forEachBorrowed { object in
                defer { index += 1 }
                guard moved[index] else { return }
                let location = Location(store: store, root: object._layout.rootID, key: keys[index])
                let displaced = table.store(object, at: location)
                if displaced.0 != nil || displaced.1 != nil { released.append(displaced) }
            }
            return released
        }
        withExtendedLifetime(released) {}
        NSManagedObject._setRowIdentities(objects, keys: keys, store: store)
    }

    /// Moves `object`'s entry from `old` to `new` (a save's permanent IDs); the caller makes `new`
    /// the object's ID right after. An object not registered here (`obtainPermanentIDs(for:)` on
    /// an object of no context) stays out: its `deinit` would not find this table to leave it.
    package func changeKey(of object: NSManagedObject, from old: NSManagedObjectID, to new: NSManagedObjectID) {
        let address = Unmanaged.passUnretained(object).toOpaque()
        let oldLocation = Location(old), newLocation = Location(new)
        let released = table.withLock { table -> Released in
            table.remove(address, at: oldLocation) ? table.store(object, at: newLocation) : (nil, nil)
        }
        withExtendedLifetime(released) {}
    }

    /// How many entries the table holds (objects alive or deinitializing right now).
    package var count: Int { table.withLock { $0.count } }

    /// Makes room for `capacity` entries at once (a large fetch), instead of rehashing as it grows.
    package func reserveCapacity(_ capacity: Int) {
        table.withLock { $0.pages.reserveCapacity(capacity / Self.pageSize + 1) }
    }

    /// Every registered object that is alive, with a strong reference each.
    package func liveObjects() -> [NSManagedObject] {
        table.withLock { table in
            var result: [NSManagedObject] = []
            result.reserveCapacity(table.count)
            table.forEachPointer { if let object = strongReference($0) { result.append(object) } }
            return result
        }
    }

    /// Every registered object that is alive (`registeredObjects`).
    package func objects() -> Set<NSManagedObject> {
        table.withLock { table in
            if let built = table.setDuringEvent { return built }
            var result = Set<NSManagedObject>(minimumCapacity: table.count)
            table.forEachPointer { if let object = strongReference($0) { result.insert(object) } }
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
            table.removeAllEntries()
            guard let set = table.setDuringEvent else { return nil }
            table.setDuringEvent = []
            return set
        }
        withExtendedLifetime(released) {}
    }
}
