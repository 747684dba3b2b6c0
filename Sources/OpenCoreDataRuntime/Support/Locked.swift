import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's one lock type: a value guarded by a mutex.
///
/// A `Synchronization.Mutex`, except when built with `OCD_TSAN` (see docs/runtime-internals.md):
/// ThreadSanitizer sees the Mutex's uncontended path (an atomic compare-and-swap inlined here) but
/// not its contended one, which waits and hands the lock over in the kernel (`FUTEX_LOCK_PI`, in
/// the uninstrumented standard library), so two threads that met at the lock looked unordered to
/// it: false data races inside `withLock`. Under `OCD_TSAN` the lock is a `pthread_mutex_t`, which
/// ThreadSanitizer intercepts. Not always: a `pthread_mutex_t` lock and unlock took about 72
/// instructions to the Mutex's 20 (callgrind, a loop of `withLock`), and the context's registry
/// takes this lock three times a fetched row (case 2).
///
/// `@unchecked Sendable` invariant: the value (`value`, or `storage`'s) is only read or written
/// inside `withLock`.
package final class Locked<Value>: @unchecked Sendable {
    #if OCD_TSAN
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Behind a pointer, not a stored property: ThreadSanitizer checks each access to a class's
    // stored property as a "Swift access", and one to an empty `Value` (`Locked<Void>`, as the
    // lock of object IDs is) was reported at the object's first word, which every thread reads
    // before taking the lock: two false reports of a race.
    private let storage: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
        mutex = .allocate(capacity: 1)
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
    #else
    private let mutex = Mutex<Void>(())
    // Only touched inside the mutex, so two accesses never overlap: no run-time exclusivity check
    // (`swift_beginAccess`/`swift_endAccess` cost about 115 instructions per `withLock`, more than
    // the mutex itself; callgrind case 2, where the context's registry takes it three times a row).
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) { self.value = value }

    @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try mutex.withLock { _ throws(E) -> R in try body(&value) }
    }
    #endif
}

/// A recursive lock for code that may re-enter (a context's `performAndWait` inside another).
///
/// A POSIX recursive mutex, called directly: `NSRecursiveLock` on Linux goes through more calls
/// (about 25 instructions a lock and unlock more; the coordinator takes it once a fetch,
/// callgrind case 4).
///
/// `@unchecked Sendable` invariant: the mutex is thread-safe, and its memory lives as long as the lock.
package final class RecursiveLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

import Foundation

/// Carries a value that is not `Sendable` across a queue hop whose ordering makes the hand-off safe.
///
/// `@unchecked Sendable` invariant: the value is used by one side at a time (the sender stops using it
/// once it is boxed), as for a block handed to a context's queue.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}
