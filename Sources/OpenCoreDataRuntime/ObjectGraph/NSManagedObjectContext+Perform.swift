import Foundation

extension NSManagedObjectContext {
    /// When to run an async `perform` block.
    ///
    /// Related Core Data documentation: [ScheduledTaskType](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/scheduledtasktype)
    public enum ScheduledTaskType: Sendable {
        case immediate
        case enqueued
    }

    /// The context whose block runs on this thread; unretained: `runAsCurrent` keeps it alive.
    private static let current = ThreadLocalReference<NSManagedObjectContext>(.currentContext)

    /// The context whose block runs on this thread, for `NSFetchRequest.execute()`.
    package static var _current: NSManagedObjectContext? { current.value }

    private func runAsCurrent<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        // Reentrant use (a fetch inside a block of the same context): this thread holds the lock
        // and the registry's event is open already. Compared unretained: a context has a side
        // table (objects refer to it weakly), where a retain and its release cost about 110
        // instructions, once per fetch (callgrind case 4).
        if Self.current.unretained?.toOpaque() == Unmanaged.passUnretained(self).toOpaque() { return try block() }
        let previous = Self.current.value
        Self.current.set(self)
        defer { Self.current.set(previous) }
        return try executionLock.withLock { () throws(E) -> T in
            registry.beginEvent()
            defer { registry.endEvent() }
            // Saves already scheduled to merge here come first, as the blocks queued before a
            // `performAndWait` run before it on Apple (see `_mergeChangesAutomatically`).
            if !_pendingMerges.isEmpty { _runPendingMerges() }
            return try block()
        }
    }

    /// Runs `block` on the context's queue and returns at once; then processes pending changes
    /// (``processPendingChanges()``), as Apple documents.
    ///
    /// Related Core Data documentation: [perform(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/perform(_:))
    public func perform(_ block: @escaping () -> Void) {
        let boxed = UncheckedSendable(block)
        queue.async { self.runAsCurrent { boxed.value(); self.processPendingChanges() } }
    }

    /// Runs `block` with exclusive use of the context and waits for it; reentrant.
    ///
    /// Related Core Data documentation: [performAndWait(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/performandwait(_:))
    public func performAndWait(_ block: () -> Void) {
        runAsCurrent(block)
    }

    /// Runs `block` with exclusive use of the context, waits, and returns its result.
    ///
    /// Related Core Data documentation: [performAndWait(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/performandwait(_:)-3ciar)
    public func performAndWait<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        try runAsCurrent(block)
    }

    /// Runs `block` on the context's queue and returns its result asynchronously; then processes
    /// pending changes, as `perform(_:)` does.
    ///
    /// Related Core Data documentation: [perform(schedule:_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/perform(schedule:_:))
    public func perform<T, E: Error>(schedule: ScheduledTaskType = .immediate, _ block: @escaping () throws(E) -> T) async throws(E) -> T {
        let boxed = UncheckedSendable(block)
        let result: UncheckedSendable<Result<T, E>> = await withCheckedContinuation { continuation in
            self.queue.async {
                let outcome = self.runAsCurrent { () -> Result<T, E> in
                    defer { self.processPendingChanges() }  // as `perform(_:)`: the block ends an event
                    do throws(E) { return .success(try boxed.value()) } catch { return .failure(error) }
                }
                continuation.resume(returning: UncheckedSendable(outcome))
            }
        }
        return try result.value.get()
    }
}
