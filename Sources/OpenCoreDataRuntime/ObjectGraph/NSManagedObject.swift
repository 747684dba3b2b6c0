import Foundation
import Synchronization

/// The base class of the objects Core Data manages: one instance per object per context.
///
/// Subclass it and declare properties with `@ManagedProperty` (the Linux stand-in for `@NSManaged`):
///
/// ```swift
/// final class Country: NSManagedObject {
///     @ManagedProperty var updatedAt: Date
///     @ManagedProperty fileprivate var numericISO3166Code: Int16
/// }
/// let country = Country(context: context)
/// country.updatedAt = Date()
/// ```
///
/// - Note: Objects are valid only on their context's queue, as on Apple; with the concurrency debug
///   switch on (`OCD_CONCURRENCY_DEBUG=1`, Apple's `com.apple.CoreData.ConcurrencyDebug`), an accessor
///   used elsewhere stops the program. `objectID` may be read from any thread.
///
/// Related Core Data documentation: [NSManagedObject](https://developer.apple.com/documentation/coredata/nsmanagedobject)
open class NSManagedObject: NSObject {
    // The per-object state below is read and written on every property access. An object belongs to
    // its context's queue (Core Data's confinement rule), and no access here overlaps another, so
    // these properties opt out of Swift's run-time exclusivity checks: a check per access was about
    // a tenth of the benchmarks' instructions (callgrind, cases 1, 2 and 5).
    package let _layout: EntityLayout
    /// The object's ID once made (``_madeObjectID``); until then the ``ObjectIDStore`` of its row
    /// (``_rowStore``) for a fault a fetch made (``makeFault(class:row:context:)``) and an object
    /// saved since, whose row is `_rowKey` of that store; or `nil` for a new object, whose temporary
    /// ID's number is then `_rowKey`. A fetched object's ID was an allocation of its own, about 600
    /// instructions and 80 bytes a row, and most fetched objects are never asked for theirs; a new
    /// object's temporary ID was made at insert and replaced at save. One field for the ID and the
    /// store, told apart by the class of what it holds (an object has one or the other): with two,
    /// the object did not fit a 112-byte allocation.
    ///
    /// The reference's bits, retained, in an atomic word (0: `nil`): another thread may make the ID
    /// (``_makeObjectID()``, under `LazyObjectIDs.lock`) while the context's queue reads this
    /// without the lock, so reads are acquiring loads and writes releasing stores (a plain `mov`
    /// each on x86-64 and arm64, as the field's plain reads and writes were; ThreadSanitizer found
    /// the unsynchronized pair). Read through ``_identity``; written through ``_setIdentity(_:)``.
    private let _identityBits: Atomic<UInt>
    /// The primary key of a fetched or saved row, or a new object's temporary ID's number, while
    /// its ID is not made (see `_identity`).
    @exclusivity(unchecked) private var _rowKey: Int64 = 0
    /// The object's context and its registry (see ``ContextLink``); `nil` for an object of no context.
    @exclusivity(unchecked) package var _contextLink: ContextLink?
    /// Current values, one per slot; empty while the object is a fault. Read here; written through
    /// ``_values``, which first gives a snapshot that shares them a reference of its own.
    @exclusivity(unchecked) package var _storedValues = RowValues()
    // The fields from here on are ordered to fill each other's padding: Swift lays stored
    // properties out in order, each at its own alignment. The values (10 bytes: a reference and a
    // 16-bit row offset) leave 6 bytes that the validation slot, the change counter and the flags
    // fill; the snapshot's row offset and one table place fill the 8 bytes after its reference;
    // two table places follow the changed slots. So the object is a 112-byte allocation (104
    // usable; a test checks). Case 2 of the benchmarks follows memory: 48 bytes more an object
    // took 6% longer.
    /// The slot `validateForInsert()`/`validateForUpdate()` is validating (-1: none), so that the
    /// default `validateValue(_:forKey:)` finds it without a lookup by name.
    @exclusivity(unchecked) private var _validationSlot16: Int16 = -1
    @exclusivity(unchecked) private var _notifiedChangeCount16: UInt16 = 0
    /// The flags below, one bit each: five `Bool`s took five bytes, and with them the object did not
    /// fit its allocation. (16 bits fill the byte the fields before left.)
    @exclusivity(unchecked) private var _flags: UInt16 = 0
    /// The snapshot's storage (``_snapshot``, when flag `hasSnapshot` is set), or the fault's fetch
    /// batch (``_fetchBatch``, when flag `hasBatch` is set), or `nil`. One field for both: a fault
    /// in a batch has no snapshot, and a fault with a snapshot fires from it without its batch.
    @exclusivity(unchecked) private var _snapshotOrBatch: AnyObject?
    /// The snapshot's row offset in its storage.
    @exclusivity(unchecked) private var _snapshotRow: UInt16 = 0
    /// The object's places in its context's inserted, changed and deleted tables (``ObjectTable``),
    /// -1 before it was first added to one: hints, checked against the table. (The tables no
    /// longer keep a dictionary of 16-byte entries with room to spare for each object they hold.)
    @exclusivity(unchecked) private var _insertedTablePosition: Int32 = -1
    /// The store's version of the row (`Z_OPT`).
    @exclusivity(unchecked) package var _version: Int64 = 0
    /// Slots 0 to 63 of ``_changedSlots``; any others are kept aside (``WideChangedSlots``).
    @exclusivity(unchecked) private var _changedLow: UInt64 = 0
    @exclusivity(unchecked) private var _changedTablePosition: Int32 = -1
    @exclusivity(unchecked) private var _deletedTablePosition: Int32 = -1
    #if OCD_PORTABLE_RUNTIME
    /// The object itself, held weakly: where `swift_tryRetain` is not used, the registry takes a
    /// reference to an object only through this (`strongReference(_:)`, Support/RuntimeInternals).
    package weak var _registryReference: NSManagedObject?
    #endif

    @inline(__always)
    private final func _flag(_ bit: UInt16) -> Bool { _flags & bit != 0 }

    @inline(__always)
    private final func _setFlag(_ bit: UInt16, _ value: Bool) {
        _flags = value ? _flags | bit : _flags & ~bit
    }

    package final var _isFault: Bool {
        @inline(__always) get { _flag(1) }
        @inline(__always) set { _setFlag(1, newValue) }
    }
    package final var _isInserted: Bool {
        @inline(__always) get { _flag(2) }
        @inline(__always) set { _setFlag(2, newValue) }
    }
    package final var _isDeleted: Bool {
        @inline(__always) get { _flag(4) }
        @inline(__always) set { _setFlag(4, newValue) }
    }
    /// Whether `awakeFromInsert()` ran (Apple: once in the object's lifetime).
    package final var _didAwakeFromInsert: Bool {
        @inline(__always) get { _flag(8) }
        @inline(__always) set { _setFlag(8, newValue) }
    }
    /// Whether `awakeFromFetch()` is running: changes are not tracked (see `_awakeFromFetch()`).
    package final var _isAwakingFromFetch: Bool {
        @inline(__always) get { _flag(16) }
        @inline(__always) set { _setFlag(16, newValue) }
    }
    /// Flags: `_snapshotOrBatch` holds the snapshot's storage, or a fetch batch; changed slots past
    /// 63 are kept aside (``WideChangedSlots``); the snapshot is the values (``_storedValues``), not
    /// held apart (at most one of `hasSnapshot`, `hasBatch` and `snapshotIsValues` is set).
    private static let hasSnapshot: UInt16 = 32
    private static let hasBatch: UInt16 = 64
    private static let hasWideChanges: UInt16 = 128
    private static let snapshotIsValues: UInt16 = 256

    /// Current values, one per slot; empty while the object is a fault.
    ///
    /// A fetched object's snapshot is its values until they change: it is not held apart from them
    /// (flag `snapshotIsValues`), which was a second reference to the row's storage, a retain when
    /// fetched and a release when freed (about 2% of case 2's time, `perf`). Every write goes
    /// through here and first gives the snapshot its own reference, so the snapshot never sees a
    /// change; reads that need no copy take `_storedValues`'s address.
    package final var _values: RowValues {
        @inline(__always) _read { yield _storedValues }
        @inline(__always) set {
            _unshareSnapshot()
            _storedValues = newValue
        }
        @inline(__always) _modify {
            _unshareSnapshot()
            yield &_storedValues
        }
    }

    /// Gives the snapshot a reference of its own if it is the values (before they change).
    @inline(__always)
    private final func _unshareSnapshot() {
        guard _flag(Self.snapshotIsValues) else { return }
        _holdSnapshotApart()
    }

    @inline(never)
    private final func _holdSnapshotApart() {
        let values = _storedValues
        let (storage, row) = values.parts()
        _snapshotOrBatch = storage
        _snapshotRow = row
        _flags = (_flags | Self.hasSnapshot) & ~Self.snapshotIsValues
    }

    /// Makes a fault's snapshot its values, the storage's reference moved from the snapshot's field
    /// to the values' (no retain and no release: copied and then dropped, they were a retain and a
    /// release for every fault fired from its snapshot); whether the fault had a snapshot.
    package final func _takeSnapshotAsValues() -> Bool {
        if _flag(Self.snapshotIsValues) { return true }
        guard _flag(Self.hasSnapshot) else { return false }
        var storage: AnyObject?
        swap(&storage, &_snapshotOrBatch)
        _storedValues = RowValues(storage: storage.map { unsafeDowncast($0, to: RowStorage.self) }, row: _snapshotRow)
        _snapshotRow = 0
        _flags = (_flags & ~Self.hasSnapshot) | Self.snapshotIsValues
        return true
    }

    /// Makes the snapshot the current values (``_storedValues``, just fetched or loaded), dropping a
    /// snapshot or fetch batch held apart.
    @inline(__always)
    package final func _shareSnapshotWithValues() {
        _snapshotOrBatch = nil
        _snapshotRow = 0
        _flags = (_flags & ~(Self.hasSnapshot | Self.hasBatch)) | Self.snapshotIsValues
    }

    /// Slots changed since the last save.
    package final var _changedSlots: SlotSet {
        get {
            SlotSet(low: _changedLow, high: _flag(Self.hasWideChanges) ? WideChangedSlots.words(of: self) : [])
        }
        set {
            _changedLow = newValue.lowWord
            let high = newValue.highWords
            if high.contains(where: { $0 != 0 }) {
                WideChangedSlots.set(high, of: self)
                _setFlag(Self.hasWideChanges, true)
            } else {
                _dropWideChangedSlots()
            }
        }
    }

    /// Adds `slot` to ``_changedSlots``: slots below 64 (every slot of most entities) in place.
    @inline(__always)
    package final func _insertChangedSlot(_ slot: Int) {
        if slot >= 0, slot < 64 {
            _changedLow |= 1 << UInt64(slot)
        } else {
            _changedSlots.insert(slot)
        }
    }

    /// Whether any slot changed since the last save (``_changedSlots`` is not empty).
    package final var _hasChangedSlots: Bool { _changedLow != 0 || _flag(Self.hasWideChanges) }

    /// Whether `slot` changed since the last save: a slot below 64 without making the set (the
    /// save asks this of every column of every changed object).
    @inline(__always)
    package final func _changedSlotsContain(_ slot: Int) -> Bool {
        if slot >= 0, slot < 64 { return _changedLow & (1 << UInt64(slot)) != 0 }
        return _flag(Self.hasWideChanges) && _changedSlots.contains(slot)
    }

    /// The changed slots below 64 among `slots` (a mask of those slots' bits): bit `s` set when slot
    /// `s` is one of them and changed since the last save.
    @inline(__always)
    package final func _changedSlotBits(within slots: UInt64) -> UInt64 { _changedLow & slots }

    /// Empties ``_changedSlots``.
    @inline(__always)
    package final func _clearChangedSlots() {
        _changedLow = 0
        _dropWideChangedSlots()
    }

    /// Removes the object's changed slots past 63 kept aside, if it has any.
    @inline(__always)
    private final func _dropWideChangedSlots() {
        guard _flag(Self.hasWideChanges) else { return }
        WideChangedSlots.remove(self)
        _setFlag(Self.hasWideChanges, false)
    }

    /// Values as last saved or fetched (to-one slots hold `NSManagedObjectID?`); `nil` for new
    /// objects. Setting `nil` leaves a fault's fetch batch (``_fetchBatch``) in place; setting
    /// values drops it (the fault fires from them).
    package final var _snapshot: RowValues? {
        @inline(__always) get {
            if _flag(Self.snapshotIsValues) { return _storedValues }
            guard _flag(Self.hasSnapshot) else { return nil }
            let storage = _snapshotOrBatch.map { unsafeDowncast($0, to: RowStorage.self) }
            return RowValues(storage: storage, row: _snapshotRow)
        }
        @inline(__always) set {
            if let newValue {
                let (storage, row) = newValue.parts()
                _snapshotOrBatch = storage
                _snapshotRow = row
                _flags = (_flags | Self.hasSnapshot) & ~(Self.hasBatch | Self.snapshotIsValues)
            } else if _flag(Self.hasSnapshot) {
                _snapshotOrBatch = nil
                _snapshotRow = 0
                _flags &= ~Self.hasSnapshot
            } else {
                _flags &= ~Self.snapshotIsValues
            }
        }
    }

    /// Whether the object holds a snapshot (``_snapshot`` is not `nil`), asked without copying it.
    package final var _hasSnapshot: Bool { _flags & (Self.hasSnapshot | Self.snapshotIsValues) != 0 }

    /// The batch of the batched fetch that returned this fault, if any (see `fetchBatchSize`). Kept
    /// only while the object has no snapshot (set while it has one, it is not kept).
    package final var _fetchBatch: FetchBatch? {
        get { _flag(Self.hasBatch) ? unsafeDowncast(_snapshotOrBatch.unsafelyUnwrapped, to: FetchBatch.self) : nil }
        set {
            if _hasSnapshot { return }
            _snapshotOrBatch = newValue
            _setFlag(Self.hasBatch, newValue != nil)
        }
    }

    @inline(__always)
    package final func _tablePosition(_ kind: ObjectTable.Kind) -> Int32 {
        switch kind {
        case .inserted: _insertedTablePosition
        case .changed: _changedTablePosition
        case .deleted: _deletedTablePosition
        }
    }

    @inline(__always)
    package final func _setTablePosition(_ kind: ObjectTable.Kind, _ position: Int32) {
        switch kind {
        case .inserted: _insertedTablePosition = position
        case .changed: _changedTablePosition = position
        case .deleted: _deletedTablePosition = position
        }
    }
    /// Counts changes made with change notifications (accessors, KVC, inverse maintenance), not
    /// `setPrimitiveValue`; the save re-runs `willSave()` on objects whose count moved (see
    /// `NSManagedObjectContext+Lifecycle.swift`).
    package final var _notifiedChangeCount: Int {
        get { Int(_notifiedChangeCount16) }
        // Compared for equality only, before and after an object's `willSave()`: 16 bits miss a
        // change only if exactly a multiple of 65,536 changes are made in between.
        set { _notifiedChangeCount16 = UInt16(truncatingIfNeeded: newValue) }
    }
    /// The slot `validateForInsert()`/`validateForUpdate()` is validating (-1: none), so that the
    /// default `validateValue(_:forKey:)` finds it without a lookup by name.
    package final var _validationSlot: Int {
        get { Int(_validationSlot16) }
        // A slot past 32,767 (no model has so many properties) is not noted: validation then finds
        // it by name.
        set { _validationSlot16 = Int16(exactly: newValue) ?? -1 }
    }

    // MARK: Creating

    /// Creates an object of `entity` and inserts it in `context` (if not `nil`).
    ///
    /// Related Core Data documentation: [init(entity:insertInto:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/init(entity:insertinto:))
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        // `entity` stays owned. Borrowed, it would save a retain and a release for every fetched
        // row, but Swift 6.3.1 over-releases the argument when a subclass overrides this required
        // initializer with an owned parameter (as apps write it) and it is called through the
        // class's metatype, as faults are made: a use after free (reproduced in a small program).
        _layout = entity.layout
        // A fault being made for a fetched row gets its row's identity here (see `makeFault`) instead
        // of a temporary ID that would be replaced at once.
        let isFault: Bool
        switch FaultConstruction.take(for: entity) {
        case .objectID(let id):
            _identityBits = Atomic(Self._identityBits(id.takeUnretainedValue()))
            isFault = true
        case .row(let offer):
            let (key, store) = offer._withUnsafeGuaranteedRef { ($0.key, $0.store) }
            _rowKey = key
            _identityBits = Atomic(Self._identityBits(store))
            isFault = true
        case nil:
            _identityBits = Atomic(0)
            _rowKey = Int64(bitPattern: NSManagedObjectID.nextTemporaryNumber())
            isFault = false
        }
        super.init()
        #if OCD_PORTABLE_RUNTIME
        _registryReference = self  // before the object can be registered
        #endif
        // A fault is made from its layout's `managedObjectClass`, which has noted that class: noting
        // it here again retained and released the object and its layout around the check, and any
        // use of `self` below retained and released the object (six atomic operations for every
        // fetched row, callgrind case 2).
        if isFault, context == nil { return }
        if !isFault {
            // The layout borrowed (a `let` of this object): read as `_layout` twice, it was retained
            // and released around each use.
            let cls = type(of: self)
            _values = Unmanaged.passUnretained(_layout)._withUnsafeGuaranteedRef { layout in
                layout.noteClass(cls)
                return layout.initialValues  // a fault's stay empty
            }
        }
        if let context { context.insert(self) }
    }

    // A context's registry holds its objects without retaining them: each leaves it here (see
    // `ObjectRegistry`), through its link, which keeps the registry valid after the context is gone.
    // An object never registered, or forgotten by `reset()`, has no link.
    deinit {
        // `_identityBits` holds its reference retained (see `_setIdentity(_:)`): released last, as
        // the registry files the object by its identity (`removeDeinitializing` reads it).
        defer {
            let identityBits = _identityBits.load(ordering: .relaxed)
            if identityBits != 0 {
                Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: identityBits).unsafelyUnwrapped).release()
            }
        }
        if _flag(Self.hasWideChanges) { WideChangedSlots.remove(self) }  // no flag write: the object is going
        // The link borrowed, not retained: the object holds it until its fields are released. (Bound
        // with `guard let`, it was retained and released again for every object freed.)
        guard let link = _contextLink.map({ Unmanaged.passUnretained($0) }) else { return }
        link._withUnsafeGuaranteedRef { $0.registry.removeDeinitializing(self) }
    }

    /// The object's context, while it exists.
    package final var _context: NSManagedObjectContext? {
        get { _contextLink?.context }
        set { _contextLink = newValue?._link }
    }

    /// The object's ID, made now if the object was fetched without one.
    package final var _objectID: NSManagedObjectID {
        // Yielded, not returned: a getter returns its result retained, and code reading the ID of an
        // object it holds (the save reads each object's several times) then paid a retain and a
        // release per read, about 800 instructions per object in callgrind case 1.
        _read {
            if !_hasMadeObjectID { _makeObjectID() }
            yield unsafeDowncast(_identity.unsafelyUnwrapped, to: NSManagedObjectID.self)
        }
        // Under the lock: a reader off the context's queue (``objectID``) may hold the ID replaced.
        // (A fault's fallback when an overriding initializer got in first, and a nested context's
        // or another store's new permanent ID: not the paths of fetch, fault or a SQLite save.)
        set { LazyObjectIDs.lock.withLock { _ in _setIdentity(newValue) } }
    }

    /// What `_identityBits` holds, borrowed: the object holds the reference.
    @inline(__always)
    private final var _identity: AnyObject? {
        _read {
            let bits = _identityBits.load(ordering: .acquiring)
            if bits == 0 {
                yield nil
            } else {
                yield Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
                    .takeUnretainedValue()
            }
        }
    }

    /// Replaces what `_identityBits` holds, releasing the reference it held. On the context's
    /// queue, or under `LazyObjectIDs.lock` once another thread may read the object's ID: a reader
    /// off the queue (``objectID``) takes the lock, so it never holds a reference this releases.
    @inline(__always)
    private final func _setIdentity(_ identity: AnyObject?) {
        let bits = identity.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
        let old = _identityBits.load(ordering: .relaxed)
        _identityBits.store(bits, ordering: .releasing)
        if old != 0 { Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: old).unsafelyUnwrapped).release() }
    }

    /// The bits for `_identityBits` of a reference it will hold (retained).
    @inline(__always)
    private static func _identityBits(_ identity: AnyObject) -> UInt {
        UInt(bitPattern: Unmanaged.passRetained(identity).toOpaque())
    }

    /// Whether `identity` (what `_identity` holds) is a row's store, not an ID: told by its class,
    /// a load and a compare (``ObjectIDStore`` is final).
    @inline(__always)
    private static func _isRowStore(_ identity: AnyObject) -> Bool {
        ObjectIdentifier(type(of: identity)) == ObjectIdentifier(ObjectIDStore.self)
    }

    /// Whether what `_identityBits` holds is a row's store (`false` for an ID or nothing), asked
    /// without a reference to it: read through ``_identity``, each check retained and released
    /// it, three times for every fetched fault (made, registered, freed).
    @inline(__always)
    private final var _identityIsRowStore: Bool {
        let bits = _identityBits.load(ordering: .acquiring)
        guard bits != 0 else { return false }
        return Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
            ._withUnsafeGuaranteedRef { Self._isRowStore($0) }
    }

    /// Whether the object's ID is made.
    @inline(__always)
    private final var _hasMadeObjectID: Bool {
        _identityBits.load(ordering: .acquiring) != 0 && !_identityIsRowStore
    }

    /// The object's ID, if it is made.
    private final var _madeObjectID: NSManagedObjectID? {
        guard _hasMadeObjectID else { return nil }  // (no reference taken when there is none)
        return unsafeDowncast(_identity.unsafelyUnwrapped, to: NSManagedObjectID.self)
    }

    /// The store of the object's row while its ID is not made (a fetched or saved object's).
    package final var _rowStore: ObjectIDStore? {
        guard _identityIsRowStore else { return nil }
        return unsafeDowncast(_identity.unsafelyUnwrapped, to: ObjectIDStore.self)
    }

    /// Whether the object's ID is not made and its row is one of `store`'s, asked without a
    /// reference to the store.
    @inline(__always)
    package final func _hasRow(of store: ObjectIDStore) -> Bool {
        _identityBits.load(ordering: .acquiring) == UInt(bitPattern: Unmanaged.passUnretained(store).toOpaque())
    }

    /// The primary key of a fetched (or saved) object whose ID is not made yet; `nil` once it has
    /// an ID, and for a new object.
    package final var _lazyRowKey: Int64? {
        _identityIsRowStore ? _rowKey : nil
    }

    /// The number of a new object's temporary ID not made yet; `nil` once it has an ID, and for a
    /// fetched or saved object.
    package final var _lazyTemporaryNumber: UInt64? {
        _identityBits.load(ordering: .acquiring) == 0 ? UInt64(bitPattern: _rowKey) : nil
    }

    /// The integer primary key of the object's permanent ID (`objectID.primaryKey`), answered
    /// without making the ID; `nil` while the ID is temporary.
    package final var _primaryKey: Int64? {
        if let id = _madeObjectID { return id.primaryKey }
        return _identityIsRowStore ? _rowKey : nil
    }

    /// Whether the object's ID is temporary (`objectID.isTemporaryID`), answered without making it.
    package final var _hasTemporaryID: Bool {
        if let id = _madeObjectID { return id.isTemporaryID }
        return !_identityIsRowStore
    }

    /// Gives each of `objects` the permanent identity of row `keys[i]` of `store` (a save's new
    /// primary keys), its ID made from it only when asked for; the context moves the registry's
    /// entries first (`ObjectRegistry.changeKeys(of:toRows:of:)`, in `obtainPermanentIDs(for:)`).
    ///
    /// Under the lock that makes IDs, as another thread may be asking for an ID: one already made
    /// (the temporary ID was asked for) is replaced by the permanent ID at once, never cleared, so a
    /// reader that found an ID set never sees it gone. Taken once for the list (a lock and an unlock
    /// an object were two atomic operations each, callgrind case 1).
    package static func _setRowIdentities(_ objects: [NSManagedObject], keys: [Int64], store: ObjectIDStore) {
        LazyObjectIDs.lock.withLock { _ in
            var index = 0
            objects.forEachBorrowed { object in
                object._setRowIdentityLocked(key: keys[index], store: store)
                index += 1
            }
        }
    }

    private final func _setRowIdentityLocked(key: Int64, store: ObjectIDStore) {
        if _hasMadeObjectID {
            _setIdentity(NSManagedObjectID(
                entity: _layout.entity, store: store, reference: .int64(key), root: _layout.rootID))
        } else {
            _rowKey = key
            _setIdentity(store)
        }
    }

    /// The identity of the store of an object whose `_lazyRowKey` is not `nil`, read without
    /// retaining the store's ``ObjectIDStore`` (the registry files the object by it at each
    /// registration and `deinit`).
    @inline(__always)
    package final var _lazyRowStoreKey: ObjectIdentifier {
        Unmanaged<ObjectIDStore>.fromOpaque(
            UnsafeRawPointer(bitPattern: _identityBits.load(ordering: .acquiring)).unsafelyUnwrapped
        )._withUnsafeGuaranteedRef { $0.key }
    }

    /// Makes the ID of an object that has none yet (a temporary one for a new object), under a
    /// lock: an object's ID is read off its context's queue (passing IDs between contexts is Core
    /// Data's threading model), and two threads must not both make one. Once made it is never
    /// replaced but by a save's permanent ID (on the context's queue, under the lock), and never
    /// cleared, so the queue's own reads need no lock (an acquiring load: the ID may have been made
    /// on another thread); a reader elsewhere takes it (``objectID``), as a replacement releases.
    private final func _makeObjectID() {
        LazyObjectIDs.lock.withLock { _ in _makeObjectIDLocked() }
    }

    /// ``_makeObjectID()``'s work, under `LazyObjectIDs.lock`.
    private final func _makeObjectIDLocked() {
        guard !_hasMadeObjectID else { return }
        if let store = _rowStore {
            _setIdentity(NSManagedObjectID(
                entity: _layout.entity, store: store, reference: .int64(_rowKey), root: _layout.rootID))
        } else {
            _setIdentity(NSManagedObjectID(
                entity: _layout.entity, store: nil, reference: .temporary(UInt64(bitPattern: _rowKey)),
                root: _layout.rootID))
        }
    }

    /// Creates an object of the entity whose class is this class and inserts it in `context`.
    ///
    /// If the context's model has no entity for the class, the object is not inserted and the
    /// problem is logged (Apple raises); use ``NSManagedObject/init(entity:insertInto:)`` to be explicit.
    ///
    /// Related Core Data documentation: [init(context:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/init(context:))
    public convenience init(context moc: NSManagedObjectContext) {
        if let entity = Self.entity(in: moc) {
            self.init(entity: entity, insertInto: moc)
        } else {
            reportMisuse("init(context:): the context's model has no entity for class \(String(reflecting: Self.self))")
            self.init(entity: NSEntityDescription(name: ManagedObjectClassRegistry.bareName(of: Self.self)), insertInto: nil)
        }
    }

    /// Creates a fault for an object a store holds.
    package static func makeFault(
        class cls: NSManagedObject.Type, objectID: NSManagedObjectID, context: NSManagedObjectContext
    ) -> NSManagedObject {
        FaultConstruction.offer(objectID)
        let object = cls.init(entity: objectID.entity, insertInto: nil)
        if object._objectID !== objectID {  // an overriding initializer made another object first
            FaultConstruction.withdraw()
            object._objectID = objectID
        }
        object._context = context
        if !object._values.isEmpty { object._values = RowValues() }
        object._isFault = true
        return object
    }

    /// Creates a fault for a fetched row whose ID is made only when asked for (see `_madeObjectID`).
    package static func makeFault(
        class cls: NSManagedObject.Type, row offer: FaultConstruction.RowOffer, context: NSManagedObjectContext
    ) -> NSManagedObject {
        FaultConstruction.offer(offer)
        // The entity read borrowed from `offer`, which holds it: the initializer takes it owned, so
        // it is retained once for the call and released by it (a copy read out of `offer` first was
        // a second pair).
        let object = Unmanaged.passUnretained(offer.entity)._withUnsafeGuaranteedRef { entity in
            cls.init(entity: entity, insertInto: nil)
        }
        if object._lazyRowKey != offer.key || !object._hasRow(of: offer.store) {
            // An overriding initializer made another object first, or asked for the ID.
            FaultConstruction.withdraw()
            object._objectID = NSManagedObjectID(
                entity: offer.entity, store: offer.store, reference: .int64(offer.key), root: object._layout.rootID)
        }
        object._context = context
        if !object._values.isEmpty { object._values = RowValues() }
        object._isFault = true
        return object
    }

    /// The entity description of the object's class in `context`'s model.
    package static func entity(in context: NSManagedObjectContext) -> NSEntityDescription? {
        context.persistentStoreCoordinator?.managedObjectModel.entity(forClass: self)
    }

    /// The entity of this class in the model of the first coordinator that used it.
    ///
    /// - Note: Linux: Apple looks the class up in every loaded model; here `entity()` answers once a
    ///   coordinator was created for a model whose entity names the class by its qualified name
    ///   (`NSStringFromClass`), or once the class was used with a model (an object created or
    ///   fetched); before that it returns an empty entity named after the class and logs.
    ///
    /// Related Core Data documentation: [entity()](https://developer.apple.com/documentation/coredata/nsmanagedobject/entity())
    open class func entity() -> NSEntityDescription {
        if let found = ManagedObjectClassRegistry.entity(for: self) { return found }
        reportMisuse("entity(): \(String(reflecting: self)) has not been used with a model yet")
        return NSEntityDescription(name: ManagedObjectClassRegistry.bareName(of: self))
    }

    /// A fetch request for this class's entity.
    ///
    /// Disfavoured, so that `Aircraft.fetchRequest()` picks the typed
    /// `class func fetchRequest() -> NSFetchRequest<Aircraft>` Xcode generates in a subclass.
    ///
    /// Related Core Data documentation: [fetchRequest()](https://developer.apple.com/documentation/coredata/nsmanagedobject/fetchrequest())
    @_disfavoredOverload
    open class func fetchRequest() -> NSFetchRequest<any NSFetchRequestResult> {
        NSFetchRequest(entityName: ManagedObjectClassRegistry.entity(for: self)?.name ?? ManagedObjectClassRegistry.bareName(of: self))
    }

    // MARK: Identity and state

    /// Identity hashing, as Apple's (managed objects are equal only to themselves; Apple's
    /// documentation says not to override `hash` or `isEqual(_:)`). The address itself: Foundation's
    /// default on Linux hashes it a second time, and sets of managed objects are everywhere
    /// (relationships, `registeredObjects`, save notifications).
    open override var hash: Int { Int(bitPattern: ObjectIdentifier(self)) }

    /// Identity, as on Apple (`NSManagedObject` reserves `isEqual(_:)` and `hash`). Sets of managed
    /// objects (to-many relationships, the save notification's sets) compare on every probe, and
    /// `NSObject`'s default casts the argument first; the argument `==` passes (an `NSObject`) is
    /// read in place instead.
    ///
    /// Related Core Data documentation: [NSManagedObject](https://developer.apple.com/documentation/coredata/nsmanagedobject)
    open override func isEqual(_ object: Any?) -> Bool {
        // Read in place: unwrapping the optional first copies the existential (about 200 instructions).
        if let other = ValueConversion.boxedReference(in: object, as: NSObject.self) { return other === self }
        return (object as? NSManagedObject) === self
    }

    /// The object's entity.
    public var entity: NSEntityDescription { _layout.entity }
    /// The object's ID; temporary until saved.
    ///
    /// Safe to read from any thread, as on Apple: off the context's queue a save may be replacing
    /// a temporary ID with its permanent one, so the read takes the lock the save replaces it under
    /// (the ID is returned retained before a replacement could release it). Code of the context's
    /// own reads ``_objectID``, without it.
    public var objectID: NSManagedObjectID {
        LazyObjectIDs.lock.withLock { _ in
            if !_hasMadeObjectID { _makeObjectIDLocked() }
            return unsafeDowncast(_identity.unsafelyUnwrapped, to: NSManagedObjectID.self)
        }
    }
    /// The context the object is registered in, or `nil` once deleted and saved, or removed.
    public var managedObjectContext: NSManagedObjectContext? { _context }
    /// 0 when the object is fully realized (not a fault), 1 while it is a fault.
    open var faultingState: Int { _isFault ? 1 : 0 }

    open override var description: String {
        let state = _isFault ? "<fault>" : "{" + _layout.properties.indices.map { slot in
            "\(_layout.properties[slot].name) = \(_describe(slot))"
        }.joined(separator: "; ") + "}"
        return "<\(type(of: self)): \(objectID.uriRepresentation().absoluteString)> (entity: \(entity.name ?? "?"); data: \(state))"
    }

    private func _describe(_ slot: Int) -> String {
        switch _values[slot] {
        case nil: return "nil"
        case let object as NSManagedObject: return object.objectID.description
        case let id as NSManagedObjectID: return id.description
        case let list as ManagedObjectList: return "<\(list.count) objects>"
        case let value?: return "\(value)"
        }
    }

    // MARK: Lifecycle hooks (Apple's names; override points)
    // When each hook runs is documented in `NSManagedObjectContext+Lifecycle.swift`.

    /// Called once, when the object is first inserted in a context. Set default values here with
    /// `setPrimitiveValue(_:forKey:)`. Call `super`.
    ///
    /// Related Core Data documentation: [awakeFromInsert()](https://developer.apple.com/documentation/coredata/nsmanagedobject/awakefrominsert())
    open func awakeFromInsert() {}
    /// Called when a fault fires and the object's values are loaded from the store. Change
    /// tracking is off while it runs: values set here do not make the object updated.
    ///
    /// Related Core Data documentation: [awakeFromFetch()](https://developer.apple.com/documentation/coredata/nsmanagedobject/awakefromfetch())
    open func awakeFromFetch() {}
    /// Called when the object's values were reset from a snapshot: `.rollback` after
    /// `rollback()`, `.refresh` after `refresh(_:mergeChanges: true)`.
    ///
    /// Related Core Data documentation: [awake(fromSnapshotEvents:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/awake(fromsnapshotevents:))
    open func awake(fromSnapshotEvents flags: NSSnapshotEventType) {}
    /// Called at save for every inserted, updated and deleted object, before validation. Changes
    /// made here through accessors make the save call `willSave()` again on the changed objects
    /// (use `setPrimitiveValue(_:forKey:)` or compare before setting); after 100 rounds the save
    /// throws instead of looping.
    ///
    /// Related Core Data documentation: [willSave()](https://developer.apple.com/documentation/coredata/nsmanagedobject/willsave())
    open func willSave() {}
    /// Called after a save wrote the object (inserted, updated or deleted; check `isDeleted`).
    ///
    /// Related Core Data documentation: [didSave()](https://developer.apple.com/documentation/coredata/nsmanagedobject/didsave())
    open func didSave() {}
    /// Called before the object turns into a fault (refresh, reset, a saved deletion).
    ///
    /// Related Core Data documentation: [willTurnIntoFault()](https://developer.apple.com/documentation/coredata/nsmanagedobject/willturnintofault())
    open func willTurnIntoFault() {}
    /// Called after the object turned into a fault; its values are gone.
    ///
    /// Related Core Data documentation: [didTurnIntoFault()](https://developer.apple.com/documentation/coredata/nsmanagedobject/didturnintofault())
    open func didTurnIntoFault() {}
    /// Called by `delete(_:)` before the delete rules run; also when the deletion is later rolled
    /// back, so undo-sensitive work (removing files) belongs in `willSave()` when `isDeleted`.
    ///
    /// Related Core Data documentation: [prepareForDeletion()](https://developer.apple.com/documentation/coredata/nsmanagedobject/preparefordeletion())
    open func prepareForDeletion() {}

    // MARK: Validation (override points; the model-level checks are in NSManagedObject+Validation.swift)

    /// Validates the object before its insertion is saved. The default checks every property
    /// against the model (``validateValue(_:forKey:)``). Override to add rules; call `super` first.
    ///
    /// Related Core Data documentation: [validateForInsert()](https://developer.apple.com/documentation/coredata/nsmanagedobject/validateforinsert())
    open func validateForInsert() throws { try _validateForSave() }
    /// Validates the object before its changes are saved; the default is as for inserts.
    ///
    /// Related Core Data documentation: [validateForUpdate()](https://developer.apple.com/documentation/coredata/nsmanagedobject/validateforupdate())
    open func validateForUpdate() throws { try _validateForSave() }
    /// Validates the object before its deletion is saved. The default fails when a relationship
    /// with the deny delete rule still holds objects.
    ///
    /// Related Core Data documentation: [validateForDelete()](https://developer.apple.com/documentation/coredata/nsmanagedobject/validatefordelete())
    open func validateForDelete() throws { try _validateForDelete() }
    /// Validates `value` for the property `key`: the model's rules (required, bounds, regular
    /// expression, validation predicates, value type), and coerces a valid value to the
    /// property's type. Override it, switch on `key` and call `super`, to write what Apple calls
    /// `validate<Key>(_:)`.
    ///
    /// - Note: Linux: Apple passes an `AutoreleasingUnsafeMutablePointer<AnyObject?>` and finds
    ///   `validate<Key>:error:` methods by Objective-C selector; here the value is `inout Any?`
    ///   (call it the same way: `try object.validateValue(&value, forKey: "name")`) and per-key
    ///   rules go in an override of this method.
    ///
    /// Related Core Data documentation: [validateValue(_:forKey:)](https://developer.apple.com/documentation/coredata/nsmanagedobject/validatevalue(_:forkey:))
    open func validateValue(_ value: inout Any?, forKey key: String) throws { try _validateValue(&value, forKey: key) }

    // MARK: Access and change hooks

    /// Called before a property's value is read. Fires the fault.
    open func willAccessValue(forKey key: String?) { if _isFault { _fireFault() } }
    /// Called after a property's value is read.
    open func didAccessValue(forKey key: String?) {}
    /// Called before a property's value changes.
    open func willChangeValue(forKey key: String) {}
    /// Called after a property's value changed.
    open func didChangeValue(forKey key: String) {}
    /// Called before a to-many relationship changes.
    open func willChangeValue(forKey inKey: String, withSetMutation inMutationKind: NSKeyValueSetMutationKind, using inObjects: Set<AnyHashable>) {}
    /// Called after a to-many relationship changed.
    open func didChangeValue(forKey inKey: String, withSetMutation inMutationKind: NSKeyValueSetMutationKind, using inObjects: Set<AnyHashable>) {}
}

/// The lock under which fetched objects make their IDs (see `NSManagedObject._makeObjectID()`).
private enum LazyObjectIDs {
    static let lock = Locked(())
}
