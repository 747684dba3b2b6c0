import Synchronization

/// The package's one lock type: a value guarded by a mutex.
///
/// `@unchecked Sendable` invariant: `value` is only read or written inside `withLock`.
package final class Locked<Value>: @unchecked Sendable {
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
}

/// A recursive lock for code that may re-enter (a context's `performAndWait` inside another).
///
/// `@unchecked Sendable` invariant: NSRecursiveLock is thread-safe.
package final class RecursiveLock: @unchecked Sendable {
    private let lock = NSRecursiveLock()
    package init() {}
    @inline(__always)
    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
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
