import Foundation

/// An object's values, one per slot of its entity's layout, stored compactly: each attribute of a
/// common scalar type (integers, `Bool`, `Double`, `Float`, `Date`) and `String` in a field of its
/// own size, anything else (relationships, transformables, composites, `Decimal`, `Data`, ...) in
/// an `Any` container. Reads and writes see `Any?`, as a `ContiguousArray<Any?>` would give; a value
/// whose type is not its slot's exactly (an `Int` set as an `Int64` attribute's primitive value,
/// say) is kept as it was given, on the side, so nothing is converted.
///
/// A value type with copy-on-write storage, like the array it replaces: a snapshot shares an
/// object's storage until either changes, and a fetch's rows share storages of several rows
/// (``RowChunks``), each row copied out before it is written.
///
/// Why: an `Any?` slot is 32 bytes whatever it holds, so a row of the benchmarks' entity (eight
/// attributes, about 70 bytes of data) took a 288-byte buffer, and making, copying and freeing it
/// went through `Any`'s value witnesses per slot. A storage of one row is now 144 bytes, header
/// included (case 2's peak memory went from 76 to 62 MB at 100,000 rows; 54 MB with shared storages).
package struct RowValues: RandomAccessCollection, MutableCollection {
    package typealias Element = Any?
    package typealias Index = Int
    package typealias Indices = Range<Int>

    private var storage: RowStorage?
    /// The row's byte offset in `storage` (0 but in a storage shared by a fetch's rows,
    /// ``RowChunks``, which keeps every offset below 65,536: ``RowLayout/maximumSharedRows``).
    /// 16 bits: the values are then 10 bytes, whose last 6 an object fills with fields of its own
    /// (``NSManagedObject``'s layout).
    private var row: UInt16 = 0

    /// No values (a fault's, before it is filled).
    package init() { storage = nil }

    /// Every slot of `layout` nil.
    package init(for layout: EntityLayout) { storage = RowStorage.make(layout.rowLayout) }

    /// Every slot of `layout` nil.
    package init(for layout: RowLayout) { storage = RowStorage.make(layout) }

    /// Every slot of `layout` nil, in storage of its own, then `body` on the new row, for writes
    /// into slots known to hold nil (``RowWriter``): the storage is unique by construction.
    @inline(__always)
    package init(for layout: RowLayout, initializing body: (RowWriter) throws -> Void) rethrows {
        let storage = RowStorage.make(layout)
        try body(RowWriter(storage: Unmanaged.passUnretained(storage), row: 0))
        self.storage = storage
    }

    /// Every slot of `layout` nil, in a row of `chunks`' storage, then `body` on the new row, for
    /// writes into slots known to hold nil (``RowWriter``): nothing else has the row yet.
    @inline(__always)
    package init(for layout: RowLayout, in chunks: inout RowChunks, initializing body: (RowWriter) throws -> Void) rethrows {
        let (storage, row) = chunks.newRow(layout)
        try body(RowWriter(storage: Unmanaged.passUnretained(storage), row: row))
        self.storage = storage
        self.row = UInt16(row)  // below 65,536 by construction (`RowChunks`)
    }

    /// Values made of the parts ``parts()`` took apart.
    @inline(__always)
    package init(storage: RowStorage?, row: UInt16) {
        self.storage = storage
        self.row = row
    }

    /// The storage and row offset, for a holder that keeps them in fields of its own
    /// (``NSManagedObject``'s snapshot, whose reference field also holds a fetch batch).
    @inline(__always)
    package consuming func parts() -> (storage: RowStorage?, row: UInt16) { (storage, row) }

    package var startIndex: Int { 0 }
    package var endIndex: Int { storage?.count ?? 0 }
    package var indices: Range<Int> { 0..<endIndex }
    @inline(__always) package func index(after i: Int) -> Int { i + 1 }
    @inline(__always) package func index(before i: Int) -> Int { i - 1 }

    package subscript(slot: Int) -> Any? {
        get { storage.unsafelyUnwrapped.value(Int(row), at: checked(slot)) }
        set {
            _ = checked(slot)
            makeUnique()
            storage.unsafelyUnwrapped.setValue(newValue, Int(row), at: slot)
        }
    }

    /// Whether slot `slot` holds nil.
    @inline(__always)
    package func isNil(_ slot: Int) -> Bool { storage.unsafelyUnwrapped.isEmpty(Int(row), checked(slot)) }

    /// The value at `slot` if it is exactly a `T`, read in place; else `nil` (no answer: the caller
    /// reads the slot as `Any?` and converts).
    @inline(__always)
    package func exactly<T>(_ slot: Int, as type: T.Type) -> T? {
        // Borrowed, not retained: a typed accessor's read retained and released the storage
        // (about 45 instructions per read, callgrind case 2).
        Self.read(storage.map { Unmanaged.passUnretained($0) }, slot) { $0.exactly(Int(row), slot, as: T.self) }
    }

    /// ``exactly(_:as:)`` on the values at `address` (an object's `_values`), read without making a
    /// strong copy of the storage reference: reading `object._values.exactly(...)` copied the
    /// values out of the object, a retain and a release of the storage (atomic operations, about
    /// 40 cycles) on every typed accessor's read.
    @inline(__always)
    package static func exactly<T>(at address: UnsafePointer<RowValues>, _ slot: Int, as type: T.Type) -> T? {
        let row = row(at: address)
        return read(storage(at: address), slot) { $0.exactly(row, slot, as: T.self) }
    }

    /// `self[slot]` (or `nil` past the end) on the values at `address`, read in place as
    /// ``exactly(at:_:as:)`` reads (validation at save reads every property of every object).
    @inline(__always)
    package static func value(at address: UnsafePointer<RowValues>, _ slot: Int) -> Any? {
        let row = row(at: address)
        return read(storage(at: address), slot) { $0.value(row, at: slot) }
    }

    /// Whether slot `slot` of the values at `address` holds nil (`false` past the end), read in
    /// place as ``exactly(at:_:as:)`` reads.
    @inline(__always)
    package static func isNil(at address: UnsafePointer<RowValues>, _ slot: Int) -> Bool {
        let row = row(at: address)
        return read(storage(at: address), slot) { $0.isEmpty(row, slot) } ?? false
    }

    /// A typed accessor's fast read of slot `slot` of the values at `address`: `.some(value)` when
    /// the slot's field is `T`'s typed field and holds a value, `.some(nil)` when that field is
    /// empty, and `nil` (no answer: read the general way) for anything else — no storage, a slot
    /// out of range, a field of another kind or an `Any`, a value kept on the side. A slot with a
    /// typed field is an attribute's (relationships' slots are `Any`s), so the caller need not
    /// look the slot up among the relationships.
    @inline(__always)
    package static func typedField<T>(at address: UnsafePointer<RowValues>, _ slot: Int, as _: T.Type) -> T?? {
        guard let kind = RowLayout.kind(of: T.self), let storage = storage(at: address) else { return nil }
        let row = row(at: address)
        return storage._withUnsafeGuaranteedRef { $0.typedField(row, slot, kind, as: T.self) }
    }

    /// What a slot holds, as validation at save and in-memory comparisons sort it.
    package enum SlotContent {
        /// `nil`.
        case none
        /// A value in the slot's typed field: exactly of its attribute's canonical type.
        case typed
        /// Anything else: an `Any`, a value kept on the side, or no such slot.
        case other
    }

    /// What slot `slot` of the values at `address` holds, read in place as ``exactly(at:_:as:)``
    /// reads.
    @inline(__always)
    package static func content(at address: UnsafePointer<RowValues>, _ slot: Int) -> SlotContent {
        let row = row(at: address)
        return read(storage(at: address), slot) { storage -> SlotContent? in
            storage.isEmpty(row, slot) ? SlotContent.none : storage.holdsTypedField(row, slot) ? .typed : .other
        } ?? .other
    }

    /// Whether every slot of the values at `address` holds its value in its field, or is empty
    /// where `isOptional` says it may be; `false` when the values have no storage. For a layout
    /// whose every slot has a typed field (``EntityLayout/validatesInPlace``).
    @inline(__always)
    package static func allInFieldOrOptionalNil(at address: UnsafePointer<RowValues>, _ isOptional: [Bool]) -> Bool {
        guard let storage = storage(at: address) else { return false }
        let row = row(at: address)
        return storage._withUnsafeGuaranteedRef { $0.allInFieldOrOptionalNil(row, isOptional) }
    }

    /// Slot `slot` of the values at `address` as a number, if it holds one in a numeric typed field
    /// (``RowStorage/number(_:)``), read in place as ``exactly(at:_:as:)`` reads.
    @inline(__always)
    package static func number(at address: UnsafePointer<RowValues>, _ slot: Int) -> PredicateNumber? {
        let row = row(at: address)
        return read(storage(at: address), slot) { $0.number(row, slot) }
    }

    /// The storage of the values at `address`, unretained: the first stored property is the
    /// storage reference, and its bits are loaded as a pointer.
    @inline(__always)
    private static func storage(at address: UnsafePointer<RowValues>) -> Unmanaged<RowStorage>? {
        UnsafeRawPointer(address).load(as: UnsafeRawPointer?.self).map { Unmanaged<RowStorage>.fromOpaque($0) }
    }

    /// The row offset of the values at `address`, read in place.
    @inline(__always)
    private static func row(at address: UnsafePointer<RowValues>) -> Int {
        Int(UnsafeRawPointer(address).load(fromByteOffset: MemoryLayout<RowStorage?>.stride, as: UInt16.self))
    }

    /// `body` on `storage`, borrowed, if `slot` is one of its slots; else `nil`.
    @inline(__always)
    private static func read<R>(_ storage: Unmanaged<RowStorage>?, _ slot: Int, _ body: (RowStorage) -> R?) -> R? {
        guard let storage else { return nil }
        return storage._withUnsafeGuaranteedRef { slot >= 0 && slot < $0.count ? body($0) : nil }
    }

    /// Sets slot `slot` to `value` without boxing it: in its field when `T` is the field's type
    /// (typed accessors write a value of the attribute's own type), else as ``subscript(_:)`` would.
    @inline(__always)
    package mutating func setTyped<T>(_ slot: Int, _ value: T?) {
        _ = checked(slot)
        makeUnique()
        // Borrowed, not copied out: `let storage = self.storage!` was a retain and a release (two
        // atomic operations) on every typed property write.
        let row = Int(self.row)
        Unmanaged.passUnretained(storage.unsafelyUnwrapped)._withUnsafeGuaranteedRef { storage in
            storage.clear(row, slot)
            if let value { storage.initialize(row, slot, to: value) }
        }
    }

    /// The storage, for tests that measure its allocation.
    package var storageForTesting: AnyObject? { storage }

    @inline(__always)
    private func checked(_ slot: Int) -> Int {
        precondition(slot >= 0 && slot < endIndex, "RowValues: slot \(slot) out of range")
        return slot
    }

    @inline(__always)
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.unsafelyUnwrapped.copy(row: Int(row))
            row = 0
        }
    }
}

/// Writes a new row's values (``RowValues/init(for:in:initializing:)``): into slots that hold nil,
/// in place, the row being no one else's yet.
package struct RowWriter {
    let storage: Unmanaged<RowStorage>
    let row: Int

    /// Writes `value` into slot `slot`, which holds nil: in its typed field when `T` is its type.
    @inline(__always)
    package func initialize<T>(_ slot: Int, to value: T) {
        storage._withUnsafeGuaranteedRef { $0.initialize(row, slot, to: value) }
    }

    /// Sets slot `slot` to `value`, in its typed field when it is of the field's type.
    package func setValue(_ value: Any?, at slot: Int) {
        storage._withUnsafeGuaranteedRef { $0.setValue(value, row, at: slot) }
    }
}

/// Where a fetch puts its rows' values: storages of several rows, made as the rows come, so that
/// a row is not an allocation of its own (``RowStorage``). The first storage has room for one
/// row, each next one for twice as many as the last, up to ``maximumRows``: a fetch of one row
/// takes no more memory than before, and a fetch of many leaves at most one storage partly used.
/// Every row of a storage keeps all of it: an object kept from a large fetch keeps up to
/// `maximumRows` rows' bytes (its values are copied into a storage of their own when it changes).
package struct RowChunks {
    /// The most rows a storage holds: 64 rows of the benchmarks' entity are about 6 KB.
    package static let maximumRows = 64
    private var current: RowStorage?
    private var left = 0
    private var nextCapacity = 1

    package init() {}

    /// A new row of `layout`, every slot nil: its storage and offset.
    @inline(__always)
    mutating func newRow(_ layout: RowLayout) -> (RowStorage, Int) {
        if left > 0, let current, current.hasLayout(layout) {
            left &-= 1
            return (current, current.appendRow(layout))
        }
        return newStorage(layout)
    }

    @inline(never)
    private mutating func newStorage(_ layout: RowLayout) -> (RowStorage, Int) {
        if let current, !current.hasLayout(layout) { nextCapacity = 1 }  // another entity's rows
        let capacity = min(nextCapacity, layout.maximumSharedRows)
        let storage = RowStorage.make(layout, capacity: capacity)
        current = storage
        left = capacity &- 1
        nextCapacity = min(nextCapacity &* 2, Self.maximumRows)
        return (storage, storage.appendRow(layout))
    }
}

/// Where each slot's field lies in a ``RowStorage`` of an entity, worked out once per entity.
///
/// The tables are kept in buffers of the layout's own, read through pointers that a storage keeps
/// in its header (with a strong reference to the layout): reading them through arrays of a class
/// retained and released the layout and the array on every value read or written.
///
/// `@unchecked Sendable` invariant: immutable after init.
package final class RowLayout: @unchecked Sendable {
    package enum Kind: UInt8, Sendable {
        case any, int64, int32, int16, bool, double, float, date, string
    }

    /// Slots.
    package let count: Int
    /// The kind of each slot's field.
    let kinds: UnsafeMutablePointer<Kind>
    /// Byte offset of each slot's field from the storage's start (after the slots' state bytes).
    let offsets: UnsafeMutablePointer<Int>
    /// Slots whose fields own references (strings and `Any`s): copied and destroyed one by one.
    let referenceSlots: UnsafeMutablePointer<Int>
    let referenceCount: Int
    /// Bytes of the state bytes and fields, a multiple of 8.
    let byteCount: Int
    /// The most rows a storage shared by a fetch's rows holds (``RowChunks/maximumRows``, fewer
    /// for rows so wide that a row's offset would not fit the 16 bits ``RowValues`` keeps it in).
    let maximumSharedRows: Int

    package init(attributeTypes: [NSAttributeType?]) {
        let kinds: [Kind] = attributeTypes.map { type in
            switch type {
            case .integer64AttributeType?: .int64
            case .integer32AttributeType?: .int32
            case .integer16AttributeType?: .int16
            case .booleanAttributeType?: .bool
            case .doubleAttributeType?: .double
            case .floatAttributeType?: .float
            case .dateAttributeType?: .date
            case .stringAttributeType?: .string
            default: .any
            }
        }
        // Fields are laid out widest alignment first (slots in order within each alignment), so
        // that no field waits for padding after a narrower one: in the model's order the
        // benchmarks' entity (an Int16 and a Bool between 8-byte fields) took 88 bytes a row, 80
        // this way, and a large fetch's rows are about a third of its memory.
        var offset = (kinds.count + 7) & ~7
        var offsets = [Int](repeating: 0, count: kinds.count)
        let byAlignment = kinds.indices.sorted { a, b in
            let (alignmentA, alignmentB) = (Self.sizeAndAlignment(kinds[a]).1, Self.sizeAndAlignment(kinds[b]).1)
            return alignmentA != alignmentB ? alignmentA > alignmentB : a < b
        }
        for slot in byAlignment {
            let (size, alignment) = Self.sizeAndAlignment(kinds[slot])
            offset = (offset + alignment - 1) / alignment * alignment
            offsets[slot] = offset
            offset += size
        }
        let references = kinds.indices.filter { kinds[$0] == .string || kinds[$0] == .any }
        count = kinds.count
        byteCount = (offset + 7) & ~7
        maximumSharedRows =
            byteCount == 0 ? RowChunks.maximumRows : max(1, min(RowChunks.maximumRows, 65_536 / byteCount))
        referenceCount = references.count
        self.kinds = Self.buffer(kinds)
        self.offsets = Self.buffer(offsets)
        referenceSlots = Self.buffer(references)
    }

    deinit {
        kinds.deallocate()
        offsets.deallocate()
        referenceSlots.deallocate()
    }

    private static func buffer<T>(_ elements: [T]) -> UnsafeMutablePointer<T> {
        let buffer = UnsafeMutablePointer<T>.allocate(capacity: max(elements.count, 1))
        buffer.initialize(from: elements, count: elements.count)
        return buffer
    }

    private static func sizeAndAlignment(_ kind: Kind) -> (Int, Int) {
        switch kind {
        case .any: (MemoryLayout<Any>.size, MemoryLayout<Any>.alignment)
        case .int64: (MemoryLayout<Int64>.size, MemoryLayout<Int64>.alignment)
        case .int32: (MemoryLayout<Int32>.size, MemoryLayout<Int32>.alignment)
        case .int16: (MemoryLayout<Int16>.size, MemoryLayout<Int16>.alignment)
        case .bool: (MemoryLayout<Bool>.size, MemoryLayout<Bool>.alignment)
        case .double: (MemoryLayout<Double>.size, MemoryLayout<Double>.alignment)
        case .float: (MemoryLayout<Float>.size, MemoryLayout<Float>.alignment)
        case .date: (MemoryLayout<Date>.size, MemoryLayout<Date>.alignment)
        case .string: (MemoryLayout<String>.size, MemoryLayout<String>.alignment)
        }
    }

    /// The kind whose field holds a `T`, if any (folded to a constant where `T` is known).
    @inline(__always)
    static func kind<T>(of _: T.Type) -> Kind? {
        if T.self == Int64.self { return .int64 }
        if T.self == String.self { return .string }
        if T.self == Double.self { return .double }
        if T.self == Date.self { return .date }
        if T.self == Int16.self { return .int16 }
        if T.self == Int32.self { return .int32 }
        if T.self == Bool.self { return .bool }
        if T.self == Float.self { return .float }
        return nil
    }
}

/// The storage of one or more ``RowValues``: rows of ``RowLayout/byteCount`` bytes each, a state
/// byte per slot (``State``), then the fields at the offsets of the entity's ``RowLayout``. A row
/// is named by its byte offset (`row`: 0 for a storage of one row).
///
/// A fetch's rows share storages of up to ``RowChunks/maximumRows`` rows (``RowChunks``): a
/// storage of its own for every row was an allocation and a free a row, about 460 instructions
/// of the benchmarks' case 2 (callgrind). A row of a shared storage is never written in place
/// (its values are not uniquely referenced: ``RowValues`` copies it out first), and the storage
/// lives while any of its rows does.
package final class RowStorage: ManagedBuffer<RowStorage.Header, UInt64> {
    package struct Header {
        /// The slots' kinds and offsets; read unretained on the hot paths (``layoutRef``). Copies
        /// of its count and table pointers here made every row's storage 24 bytes larger, a 160-
        /// instead of a 128-byte allocation for the benchmarks' entity.
        let layout: RowLayout
        /// Values whose type is not their slot's field's (state ``State/aside``), by row + slot
        /// (unique: a row's bytes begin with its state bytes, one per slot).
        var aside: [Int: Any]?
        /// Rows in use (their state bytes initialized), from the start.
        var rows: Int
    }

    /// Where a slot's value is.
    enum State: UInt8 {
        case empty = 0, inField, aside
    }

    /// A storage of one row, every slot nil.
    static func make(_ layout: RowLayout) -> RowStorage {
        let storage = make(layout, capacity: 1)
        _ = storage.appendRow(layout)
        return storage
    }

    /// A storage with room for `capacity` rows, none in use.
    static func make(_ layout: RowLayout, capacity: Int) -> RowStorage {
        let buffer = RowStorage.create(minimumCapacity: layout.byteCount / 8 * capacity) { _ in
            Header(layout: layout, aside: nil, rows: 0)
        }
        return unsafeDowncast(buffer, to: RowStorage.self)
    }

    /// Puts the next row in use, every slot nil; its offset. The caller knows there is room.
    @inline(__always)
    func appendRow(_ layout: RowLayout) -> Int {
        let row = head.pointee.rows &* layout.byteCount
        head.pointee.rows &+= 1
        (bytes + row).initializeMemory(as: UInt8.self, repeating: State.empty.rawValue, count: layout.count)
        return row
    }

    deinit {
        // The layout borrowed from the header, which releases it after this body: read as
        // `head.pointee.layout` it was retained and released again for every row freed.
        let start = self.bytes
        let rows = head.pointee.rows
        layoutRef._withUnsafeGuaranteedRef { layout in
            guard layout.referenceCount > 0 else { return }
            for row in 0..<rows {
                let bytes = start + row &* layout.byteCount
                for index in 0..<layout.referenceCount {
                    let slot = layout.referenceSlots[index]
                    guard bytes.load(fromByteOffset: slot, as: UInt8.self) == State.inField.rawValue else { continue }
                    let field = bytes + layout.offsets[slot]
                    if layout.kinds[slot] == .string {
                        field.assumingMemoryBound(to: String.self).deinitialize(count: 1)
                    } else {
                        field.assumingMemoryBound(to: Any.self).deinitialize(count: 1)
                    }
                }
            }
        }
    }

    /// The header, reached through its address: `ManagedBuffer.header` is a stored class property,
    /// and each access to it was checked for exclusivity at run time (about 60 instructions).
    @inline(__always)
    private var head: UnsafeMutablePointer<Header> { withUnsafeMutablePointerToHeader { $0 } }

    /// The layout, read from the header without a retain (the header holds it). It is the
    /// header's first stored property, at offset 0 (a test checks).
    @inline(__always)
    private var layoutRef: Unmanaged<RowLayout> {
        UnsafeRawPointer(head).load(as: Unmanaged<RowLayout>.self)
    }

    @inline(__always)
    var count: Int { layoutRef._withUnsafeGuaranteedRef { $0.count } }

    /// Whether this storage's rows are of `layout`.
    @inline(__always)
    func hasLayout(_ layout: RowLayout) -> Bool { layoutRef.toOpaque() == Unmanaged.passUnretained(layout).toOpaque() }

    @inline(__always)
    private var bytes: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
    }

    @inline(__always)
    private func state(_ row: Int, _ slot: Int) -> UInt8 { bytes.load(fromByteOffset: row &+ slot, as: UInt8.self) }

    @inline(__always)
    func isEmpty(_ row: Int, _ slot: Int) -> Bool { state(row, slot) == State.empty.rawValue }

    /// Slot `slot`'s value as a number, if it is in a numeric typed field: what
    /// ``PredicateValues/number(_:)`` gives for it boxed.
    @inline(__always)
    func number(_ row: Int, _ slot: Int) -> PredicateNumber? {
        guard state(row, slot) == State.inField.rawValue else { return nil }
        let field = self.field(row, slot)
        switch kind(slot) {
        case .int64: return .integer(Int(field.load(as: Int64.self)))
        case .int32: return .integer(Int(field.load(as: Int32.self)))
        case .int16: return .integer(Int(field.load(as: Int16.self)))
        case .bool: return .integer(field.load(as: Bool.self) ? 1 : 0)
        case .double: return .double(field.load(as: Double.self))
        case .float: return .double(Double(field.load(as: Float.self)))
        case .any, .date, .string: return nil
        }
    }

    /// Whether slot `slot`'s value is in its typed field (not an `Any`, not on the side).
    @inline(__always)
    func holdsTypedField(_ row: Int, _ slot: Int) -> Bool {
        state(row, slot) == State.inField.rawValue && kind(slot) != .any
    }

    /// ``RowValues/allInFieldOrOptionalNil(at:_:)`` on this storage: one pass over the state bytes.
    func allInFieldOrOptionalNil(_ row: Int, _ isOptional: [Bool]) -> Bool {
        let count = self.count
        guard isOptional.count == count else { return false }
        let bytes = self.bytes + row
        return isOptional.withUnsafeBufferPointer { isOptional in
            for slot in 0..<count {
                switch bytes.load(fromByteOffset: slot, as: UInt8.self) {
                case State.inField.rawValue: continue
                case State.empty.rawValue where isOptional[slot]: continue
                default: return false
                }
            }
            return true
        }
    }

    @inline(__always)
    private func setState(_ row: Int, _ slot: Int, _ state: State) {
        bytes.storeBytes(of: state.rawValue, toByteOffset: row &+ slot, as: UInt8.self)
    }

    @inline(__always)
    private func kind(_ slot: Int) -> RowLayout.Kind { layoutRef._withUnsafeGuaranteedRef { $0.kinds[slot] } }

    @inline(__always)
    private func field(_ row: Int, _ slot: Int) -> UnsafeMutableRawPointer {
        bytes + row + layoutRef._withUnsafeGuaranteedRef { $0.offsets[slot] }
    }

    /// A storage of one row, a copy of row `row`, with its own references to the values.
    func copy(row: Int) -> RowStorage {
        let layout = head.pointee.layout
        let copy = RowStorage.make(layout)
        let source = bytes + row
        let target = copy.bytes
        target.copyMemory(from: source, byteCount: layout.byteCount)
        for index in 0..<layout.referenceCount {
            let slot = layout.referenceSlots[index]
            guard source.load(fromByteOffset: slot, as: UInt8.self) == State.inField.rawValue else { continue }
            let offset = layout.offsets[slot]
            // The copied bits are overwritten by a proper copy (the field is not destroyed first).
            if layout.kinds[slot] == .string {
                (target + offset).initializeMemory(as: String.self, to: (source + offset).assumingMemoryBound(to: String.self).pointee)
            } else {
                (target + offset).initializeMemory(as: Any.self, to: (source + offset).assumingMemoryBound(to: Any.self).pointee)
            }
        }
        if let aside = head.pointee.aside {
            if row == 0, head.pointee.rows == 1 {
                copy.head.pointee.aside = aside
            } else {
                var own: [Int: Any] = [:]
                for slot in 0..<layout.count where source.load(fromByteOffset: slot, as: UInt8.self) == State.aside.rawValue {
                    own[slot] = aside[row + slot]
                }
                copy.head.pointee.aside = own
            }
        }
        return copy
    }

    func value(_ row: Int, at slot: Int) -> Any? {
        switch state(row, slot) {
        case State.empty.rawValue: return nil
        case State.aside.rawValue: return head.pointee.aside?[row + slot]
        default: break
        }
        let field = self.field(row, slot)
        switch kind(slot) {
        case .any: return field.assumingMemoryBound(to: Any.self).pointee
        case .int64: return field.load(as: Int64.self)
        case .int32: return field.load(as: Int32.self)
        case .int16: return field.load(as: Int16.self)
        case .bool: return field.load(as: Bool.self)
        case .double: return field.load(as: Double.self)
        case .float: return field.load(as: Float.self)
        case .date: return field.load(as: Date.self)
        case .string: return field.assumingMemoryBound(to: String.self).pointee
        }
    }

    @inline(__always)
    func exactly<T>(_ row: Int, _ slot: Int, as _: T.Type) -> T? {
        let state = self.state(row, slot)
        guard state == State.inField.rawValue else {
            guard state == State.aside.rawValue else { return nil }
            return head.pointee.aside?[row + slot].flatMap { ValueConversion.exactly($0, as: T.self) }
        }
        let kind = self.kind(slot)
        if kind != .any {
            guard RowLayout.kind(of: T.self) == kind else { return nil }
            return field(row, slot).assumingMemoryBound(to: T.self).pointee
        }
        return ValueConversion.exactly(at: UnsafePointer(field(row, slot).assumingMemoryBound(to: Any.self)), as: T.self)
    }

    /// ``RowValues/typedField(at:_:as:)`` on this storage; `kind` is `T`'s field kind.
    @inline(__always)
    func typedField<T>(_ row: Int, _ slot: Int, _ kind: RowLayout.Kind, as _: T.Type) -> T?? {
        let bytes = self.bytes + row
        return layoutRef._withUnsafeGuaranteedRef { layout -> T?? in
            guard slot >= 0, slot < layout.count, layout.kinds[slot] == kind else { return nil }
            switch bytes.load(fromByteOffset: slot, as: UInt8.self) {
            case State.inField.rawValue:
                return .some((bytes + layout.offsets[slot]).assumingMemoryBound(to: T.self).pointee)
            case State.empty.rawValue: return .some(nil)
            default: return nil
            }
        }
    }

    /// Sets slot `slot` to `value`, looked at in place: copying an `Any?` out to unwrap it went
    /// through its value witness (about 110 instructions per write, callgrind case 1).
    func setValue(_ value: Any?, _ row: Int, at slot: Int) {
        clear(row, slot)
        withUnsafePointer(to: value) { pointer in
            guard !ValueConversion.isNil(at: pointer) else { return }
            let field = self.field(row, slot)
            func store<T>(_: T.Type) -> Bool {
                guard let typed = ValueConversion.exactly(at: pointer, as: T.self) else { return false }
                field.initializeMemory(as: T.self, to: typed)
                return true
            }
            let stored: Bool
            switch kind(slot) {
            case .any:
                field.initializeMemory(as: Any.self, to: pointer.pointee.unsafelyUnwrapped)
                stored = true
            case .int64: stored = store(Int64.self)
            case .int32: stored = store(Int32.self)
            case .int16: stored = store(Int16.self)
            case .bool: stored = store(Bool.self)
            case .double: stored = store(Double.self)
            case .float: stored = store(Float.self)
            case .date: stored = store(Date.self)
            case .string: stored = store(String.self)
            }
            if stored {
                setState(row, slot, .inField)
            } else {
                if head.pointee.aside == nil { head.pointee.aside = [:] }
                head.pointee.aside![row + slot] = pointer.pointee.unsafelyUnwrapped
                setState(row, slot, .aside)
            }
        }
    }

    /// Writes `value` into slot `slot`, which holds nil, in its field when `T` is the field's type.
    /// `T` is never optional: the callers pass decoded values.
    @inline(__always)
    package func initialize<T>(_ row: Int, _ slot: Int, to value: T) {
        if RowLayout.kind(of: T.self) == kind(slot) {
            field(row, slot).initializeMemory(as: T.self, to: value)
            setState(row, slot, .inField)
        } else {
            setValue(value, row, at: slot)
        }
    }

    /// Empties slot `slot`.
    func clear(_ row: Int, _ slot: Int) {
        switch state(row, slot) {
        case State.empty.rawValue: return
        case State.aside.rawValue: head.pointee.aside?[row + slot] = nil
        default:
            switch kind(slot) {
            case .string: field(row, slot).assumingMemoryBound(to: String.self).deinitialize(count: 1)
            case .any: field(row, slot).assumingMemoryBound(to: Any.self).deinitialize(count: 1)
            default: break
            }
        }
        setState(row, slot, .empty)
    }
}
