#ifndef CSWIFTRUNTIME_SHIM_H
#define CSWIFTRUNTIME_SHIM_H
#include <stdbool.h>

// Entry points of the Swift runtime (libswiftCore, linked into every Swift program) that the
// standard library does not expose. Declared as in the runtime's include/swift/Runtime/HeapObject.h;
// Swift code cannot declare them itself (`@_silgen_name` on a `swift_` name is reserved).

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

/// The implementation of `validateValue(_:forKey:)` that instances of the class `metadata` (an
/// `NSManagedObject` subclass's metadata, or its own) call.
static inline const void *cswiftruntime_validateValueImplementation(const void *metadata) {
    return swift_lookUpClassMethod(
        metadata, &cswiftruntime_NSManagedObject_validateValue, &cswiftruntime_NSManagedObject_descriptor);
}
#endif
