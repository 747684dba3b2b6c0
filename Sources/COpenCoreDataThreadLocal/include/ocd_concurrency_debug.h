#ifndef OCD_CONCURRENCY_DEBUG_H
#define OCD_CONCURRENCY_DEBUG_H

// Core Data's multithreading assertions (Apple's `-com.apple.CoreData.ConcurrencyDebug 1`), read by
// `ConcurrencyDebug` (OpenCoreDataRuntime/Support/ConcurrencyDebug.swift). The level is read once,
// as the library loads (a constructor, before `main` and before any other thread), from:
//   - the environment variable OCD_CONCURRENCY_DEBUG, if set;
//   - else the environment variable com.apple.CoreData.ConcurrencyDebug (a name a shell cannot
//     export, but `env` and `Process` can set);
//   - else the launch arguments `-com.apple.CoreData.ConcurrencyDebug <level>`, as on Apple (glibc
//     and Apple's loaders pass a constructor the arguments; elsewhere this form is not read).
// 0 (the default) is off. Read here, a check is one load of a plain global: a Swift global or
// static `let` first checks its one-time initialization on every read.

/// The level read at load time: 0 off, 1 or more on.
extern int ocd_concurrency_debug_level;

/// The level read at load time (`ocd_concurrency_debug_level`).
static inline int ocd_concurrency_debug(void) { return ocd_concurrency_debug_level; }

#endif
