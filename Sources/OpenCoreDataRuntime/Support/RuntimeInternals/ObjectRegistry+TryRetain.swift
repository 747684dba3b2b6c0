// The one place that turns a registry entry (an unretained pointer) into a reference; see
// docs/runtime-internals.md, "swift_tryRetain". `OCD_PORTABLE_RUNTIME` (Package.swift) selects the
// plain-Swift version.
#if !OCD_PORTABLE_RUNTIME
import CSwiftRuntime

/// The object behind `pointer` with a new strong reference, or `nil` if it is deinitializing.
///
/// `swift_tryRetain` is the Swift runtime's own entry point (exported by `libswiftCore`, declared
/// in the runtime's `HeapObject.h`): it increments the strong count unless the object has started
/// to deinitialize, in one atomic step. The standard library has no public spelling of it
/// (`Unmanaged` only retains unconditionally, and `unowned` traps on a deinitializing object), and
/// Swift reserves `@_silgen_name` on runtime names, so a C header declares it (`CSwiftRuntime`).
/// What it spares, against the portable version's weak reference per object: every registered
/// object's side table, and with it the runtime's slow path on each retain and release of it.
@inline(__always)
func strongReference(_ pointer: UnsafeMutableRawPointer) -> NSManagedObject? {
    cswiftruntime_tryRetain(pointer) ? Unmanaged<NSManagedObject>.fromOpaque(pointer).takeRetainedValue() : nil
}
#else
/// The object behind `pointer` with a new strong reference, or `nil` if it is deinitializing: a
/// load of the weak reference the object holds to itself (``NSManagedObject/_registryReference``),
/// which is `nil` once its `deinit` has begun. The object's memory stays valid while its entry is
/// in the registry (its `deinit` waits for the registry's lock to remove it), so reading the field
/// through the unretained pointer, without retaining the object, is sound.
func strongReference(_ pointer: UnsafeMutableRawPointer) -> NSManagedObject? {
    Unmanaged<NSManagedObject>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0._registryReference }
}
#endif
