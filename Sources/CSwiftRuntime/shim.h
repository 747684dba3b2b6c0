#ifndef CSWIFTRUNTIME_SHIM_H
#define CSWIFTRUNTIME_SHIM_H
#include <stdbool.h>

// Entry points of the Swift runtime (libswiftCore, linked into every Swift program) that the
// standard library does not expose. Declared as in the runtime's include/swift/Runtime/HeapObject.h;
// Swift code cannot declare them itself (`@_silgen_name` on a `swift_` name is reserved).
//
// Used only where they are known to hold: Linux and Apple's platforms (docs/runtime-internals.md).
// Elsewhere, or with `OCD_PORTABLE_RUNTIME` defined (`-Xcc -DOCD_PORTABLE_RUNTIME`, beside Swift's
// `-Xswiftc -DOCD_PORTABLE_RUNTIME`), the header declares nothing and the runtime does not import it.
#if !defined(OCD_PORTABLE_RUNTIME) && !defined(__linux__) && !defined(__APPLE__)
#define OCD_PORTABLE_RUNTIME 1
#endif
#if defined(__ANDROID__) && !defined(OCD_PORTABLE_RUNTIME)
#define OCD_PORTABLE_RUNTIME 1
#endif
#if !defined(OCD_PORTABLE_RUNTIME)

/// Increments the object's strong reference count unless it has begun to deinitialize, in one
/// atomic step; returns the object if it did, else NULL. (Older runtimes declared it returning
/// `bool`; the Swift 6 runtime returns the object: its low byte is usually 0.)
extern void *swift_tryRetain(void *object);

/// Whether `swift_tryRetain` retained `object`.
static inline bool cswiftruntime_tryRetain(void *object) { return swift_tryRetain(object) != 0; }

/// The implementation `metadata`'s class (a class's metadata: its metatype's bits) has in the
/// vtable entry of `method` (a method descriptor of the class `description` describes, one of its
/// ancestors): the class's own override, an inherited one, or the declaring class's.
extern void *swift_lookUpClassMethod(const void *metadata, const void *method, const void *description);

// Symbols of OpenCoreDataRuntime itself, named as Swift mangles them (a rename or a signature change
// is a link error, not a silent mismatch). Swift has no way to take a method descriptor's address.
#if defined(__APPLE__)
#define CSWIFTRUNTIME_SYMBOL(name) "_" name
#else
#define CSWIFTRUNTIME_SYMBOL(name) name
#endif

/// `NSManagedObject`'s class descriptor.
extern const char cswiftruntime_NSManagedObject_descriptor
    __asm__(CSWIFTRUNTIME_SYMBOL("$s19OpenCoreDataRuntime15NSManagedObjectCMn"));
/// The method descriptor of `NSManagedObject.validateValue(_:forKey:)`.
extern const char cswiftruntime_NSManagedObject_validateValue
    __asm__(CSWIFTRUNTIME_SYMBOL("$s19OpenCoreDataRuntime15NSManagedObjectC13validateValue_6forKeyyypSgz_SStKFTq"));

/// The method descriptors of `NSManagedObject`'s accessor notification methods.
extern const char cswiftruntime_NSManagedObject_willAccessValue
    __asm__(CSWIFTRUNTIME_SYMBOL("$s19OpenCoreDataRuntime15NSManagedObjectC15willAccessValue6forKeyySSSg_tFTq"));
extern const char cswiftruntime_NSManagedObject_didAccessValue
    __asm__(CSWIFTRUNTIME_SYMBOL("$s19OpenCoreDataRuntime15NSManagedObjectC14didAccessValue6forKeyySSSg_tFTq"));
extern const char cswiftruntime_NSManagedObject_willChangeValue
    __asm__(CSWIFTRUNTIME_SYMBOL("$s19OpenCoreDataRuntime15NSManagedObjectC15willChangeValue6forKeyySS_tFTq"));
extern const char cswiftruntime_NSManagedObject_didChangeValue
    __asm__(CSWIFTRUNTIME_SYMBOL("$s19OpenCoreDataRuntime15NSManagedObjectC14didChangeValue6forKeyySS_tFTq"));

/// The implementation of the `NSManagedObject` method `method` (one of the descriptors above) that
/// instances of the class `metadata` (an `NSManagedObject` subclass's metadata, or its own) call.
static inline const void *cswiftruntime_NSManagedObject_implementation(const void *metadata, const void *method) {
    return swift_lookUpClassMethod(metadata, method, &cswiftruntime_NSManagedObject_descriptor);
}

/// The implementation of `validateValue(_:forKey:)` that instances of the class `metadata` call.
static inline const void *cswiftruntime_validateValueImplementation(const void *metadata) {
    return cswiftruntime_NSManagedObject_implementation(metadata, &cswiftruntime_NSManagedObject_validateValue);
}

/// Whether instances of the class `metadata` call the implementations of both `methods` (method
/// descriptors) that instances of the class `base` call.
static inline bool cswiftruntime_NSManagedObject_keeps(
    const void *metadata, const void *base, const void *first, const void *second) {
    return cswiftruntime_NSManagedObject_implementation(metadata, first)
            == cswiftruntime_NSManagedObject_implementation(base, first)
        && cswiftruntime_NSManagedObject_implementation(metadata, second)
            == cswiftruntime_NSManagedObject_implementation(base, second);
}

/// Whether instances of the class `metadata` call `base`'s `willAccessValue(forKey:)` and
/// `didAccessValue(forKey:)` (`base`: `NSManagedObject`'s metadata).
static inline bool cswiftruntime_keepsAccessNotifications(const void *metadata, const void *base) {
    return cswiftruntime_NSManagedObject_keeps(
        metadata, base, &cswiftruntime_NSManagedObject_willAccessValue, &cswiftruntime_NSManagedObject_didAccessValue);
}

/// Whether instances of the class `metadata` call `base`'s `willChangeValue(forKey:)` and
/// `didChangeValue(forKey:)`.
static inline bool cswiftruntime_keepsChangeNotifications(const void *metadata, const void *base) {
    return cswiftruntime_NSManagedObject_keeps(
        metadata, base, &cswiftruntime_NSManagedObject_willChangeValue, &cswiftruntime_NSManagedObject_didChangeValue);
}
#endif // !OCD_PORTABLE_RUNTIME
#endif
