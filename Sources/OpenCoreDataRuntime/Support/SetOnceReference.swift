import Synchronization

/// A reference that is set at most once and then read without a lock: readers cannot see the
/// object go, since it is held until the reference itself goes. For a fast path in front of a
/// locked cache (a template slot's first key path, a template's first validation).
///
/// `Synchronization.AtomicLazyReference` does this too, but its `load()` is an unspecialized
/// generic call from another module: about 645 instructions, against a few here (callgrind case 4).
///
/// `@unchecked Sendable` invariant: the object is `Sendable`, published once with release-acquire
/// ordering, and released only in `deinit`.
package struct SetOnceReference<Instance: AnyObject & Sendable>: ~Copyable, @unchecked Sendable {
    private let bits = Atomic<UInt>(0)

    package init() {}

    deinit {
        let bits = bits.load(ordering: .acquiring)
        if bits != 0 { Unmanaged<Instance>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    /// Whether an object has been set.
    @inline(__always)
    private var isSet: Bool { bits.load(ordering: .acquiring) != 0 }

    /// `body` of the object, read without a retain; `nil` while none is set.
    @inline(__always)
    package func withObject<R>(_ body: (Instance) -> R?) -> R? {
        let bits = bits.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        return Unmanaged<Instance>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)._withUnsafeGuaranteedRef(body)
    }

    /// Sets `object` unless one is set already; `object` is only made when none is.
    package func setIfUnset(_ object: @autoclosure () -> Instance) {
        guard !isSet else { return }
        let retained = Unmanaged.passRetained(object())
        let stored = bits.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), ordering: .acquiringAndReleasing
        ).exchanged
        if !stored { retained.release() }
    }
}
