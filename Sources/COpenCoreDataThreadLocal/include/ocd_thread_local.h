#ifndef OCD_THREAD_LOCAL_H
#define OCD_THREAD_LOCAL_H

// Per-thread slots for unretained object pointers, read and written by `ThreadLocalReference`
// (OpenCoreDataRuntime/Support/ThreadLocalReference.swift). C11 thread-local storage: an access is
// a load or store at a fixed offset from the thread pointer once linked into a program, where
// `pthread_getspecific`/`pthread_setspecific` are calls of about 10 and 35 instructions.
//
// The module's other header, ocd_concurrency_debug.h, holds the concurrency debug switch's level.

/// How many slots there are; `ThreadLocalSlot` in Swift numbers them.
#define OCD_THREAD_LOCAL_SLOT_COUNT 4

extern _Thread_local void *_Nullable ocd_thread_local_slots[OCD_THREAD_LOCAL_SLOT_COUNT];

/// The pointer in `slot` (0 ..< OCD_THREAD_LOCAL_SLOT_COUNT) on this thread; NULL if none was set.
static inline void *_Nullable ocd_thread_local_get(int slot) { return ocd_thread_local_slots[slot]; }

/// Puts `value` into `slot` on this thread.
static inline void ocd_thread_local_set(int slot, void *_Nullable value) { ocd_thread_local_slots[slot] = value; }

#endif
