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
#endif
