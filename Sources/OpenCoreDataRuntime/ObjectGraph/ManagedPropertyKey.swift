import Synchronization

/// A property name with a cached slot, used by `@ManagedProperty` accessors so that reading or
/// writing a property costs one atomic load and an array index, not a dictionary lookup.
///
/// The cache holds the slot for the last entity layout seen; a class whose objects belong to
/// several entities (rare) falls back to a name lookup when the entity changes.
///
/// `ManagedPropertyKey` is public only for macro expansion; do not use it directly.
public final class ManagedPropertyKey: Sendable {
    /// The property's name in the entity.
    public let name: String
    /// `layout id << 32 | slot`, or 0 when nothing is cached.
    private let cache = Atomic<UInt64>(0)

    public init(_ name: String) { self.name = name }

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
