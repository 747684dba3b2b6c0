import CSwiftRuntime

/// Owned references to one object, retained several at a time and handed out one by one.
///
/// A fetch gives every object it makes a reference to the same entity (its initializer's
/// argument), layout, store, context link and row storage; retained one at a time, that was an
/// atomic operation apiece for every row, and each took about 1% of case 2's time (`perf`: the
/// samples of `swift_retain` fall on its `lock cmpxchg`). A supply retains the first reference
/// alone (a fetch of one row costs what it did), then 4, 16 and 64 at a time (`swift_retain_n`,
/// one atomic operation), and releases what it did not hand out in one (`swift_release_n`) when it
/// moves to another object or is done.
///
/// Not thread-safe: a supply belongs to one fetch. The object must stay alive while the supply
/// is handing it out (the caller holds it); the references not yet handed out keep it alive after.
package struct ReferenceSupply<Object: AnyObject>: ~Copyable {
    private var object: UnsafeMutableRawPointer?
    private var left: UInt32 = 0
    private var batch: UInt32 = 1

    package init() {}

    deinit {
        if let object, left > 0 { swift_release_n(object, left) }
    }

    /// A new owned reference to `object`.
    @inline(__always)
    package mutating func take(_ object: Unmanaged<Object>) -> Object {
        let pointer = object.toOpaque()
        if left == 0 || self.object != pointer { refill(pointer) }
        left &-= 1
        return object.takeRetainedValue()
    }

    @inline(never)
    private mutating func refill(_ pointer: UnsafeMutableRawPointer) {
        if object != pointer {
            releaseUnused()
            object = pointer
        }
        _ = swift_retain_n(pointer, batch)
        left = batch
        batch = min(batch &* 4, 64)
    }

    /// Releases the references not handed out; the next `take` starts again with one.
    package mutating func releaseUnused() {
        if let object, left > 0 { swift_release_n(object, left) }
        object = nil
        left = 0
        batch = 1
    }
}

/// `object`'s strong reference count, for tests that check that references balance.
package func _strongRetainCount(_ object: AnyObject) -> Int {
    Int(swift_retainCount(Unmanaged.passUnretained(object).toOpaque()))
}
