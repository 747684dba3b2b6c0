import Synchronization

/// A property name with a cached slot, used by `@ManagedProperty` accessors so that reading or
/// writing a property costs one atomic load and an array index, not a dictionary lookup.
///
/// The cache holds the slot for the last entity layout seen; a class whose objects belong to
/// several entities (rare) falls back to a name lookup when the entity changes.
///
/// A noncopyable struct with an inlinable initializer, so that the macro's
/// `private static let __ocd_key_… = ManagedPropertyKey("…")` is laid out in the app's static
/// data: as a class instance made by an initializer of this module, every accessor call first
/// went through `swift_once` for it (about 10 instructions a read; 80 a row in the benchmarks'
/// case 2, which reads eight properties). Accessors borrow it.
///
/// `ManagedPropertyKey` is public only for macro expansion; do not use it directly.
public struct ManagedPropertyKey: ~Copyable, Sendable {
    /// The property's name in the entity.
    public let name: String
    /// `layout id << 32 | slot`, or 0 when nothing is cached.
    @usableFromInline let cache: Atomic<UInt64>

    @inlinable
    public init(_ name: String) {
        self.name = name
        cache = Atomic<UInt64>(0)
    }

    /// The property's slot in `layout` if the key has it cached for `layout`; else `nil` (not
    /// known: ask ``slot(in:)``).
    @inline(__always)
    package func cachedSlot(in layout: EntityLayout) -> Int? {
        let cached = cache.load(ordering: .relaxed)
        return cached >> 32 == UInt64(layout.id) ? Int(truncatingIfNeeded: cached & 0xFFFF_FFFF) : nil
    }

    /// The property's slot in `layout`, or `nil` if the entity has no such property.
    @inline(__always)
    package func slot(in layout: EntityLayout) -> Int? {
        let cached = cache.load(ordering: .relaxed)
        if cached >> 32 == UInt64(layout.id) { return Int(truncatingIfNeeded: cached & 0xFFFF_FFFF) }
        guard let slot = layout.indexByName[name] else { return nil }
        cache.store(UInt64(layout.id) << 32 | UInt64(slot), ordering: .relaxed)
        return slot
    }
}
