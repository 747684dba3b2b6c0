// A class metatype kept as its metadata pointer's bits, for an atomic word (an `Atomic` cannot hold
// a metatype); see docs/runtime-internals.md, "metatype bits". Turning bits back into a metatype has
// no public spelling: `OCD_PORTABLE_RUNTIME` (Package.swift) leaves it out, and its callers take
// their lock instead.

enum MetatypeBits {
    /// `type`'s metadata pointer, as `ObjectIdentifier` holds it: never 0.
    @inline(__always)
    static func bits(of type: any Any.Type) -> UInt { UInt(bitPattern: ObjectIdentifier(type)) }

    #if !OCD_PORTABLE_RUNTIME
    /// The class whose metadata pointer is `bits` (from ``bits(of:)`` of a managed object class).
    /// Class metadata is never freed, so the bits stay valid for the life of the process.
    @inline(__always)
    static func managedObjectClass(_ bits: UInt) -> NSManagedObject.Type {
        unsafeBitCast(bits, to: NSManagedObject.Type.self)
    }
    #endif
}
