import Foundation

/// A per-thread slot holding an unretained reference to an object.
///
/// The holder must keep the object alive for as long as it is in the slot and put the previous
/// value back (or `nil`) before it goes: the slot does not retain. One `pthread` key per slot,
/// made once; reading and writing cost a few instructions, where `Thread.current.threadDictionary`
/// (a Foundation dictionary keyed by a bridged string) cost about 10,000 per `perform` block
/// (callgrind, benchmark case 4).
package struct ThreadLocalReference<Object: AnyObject>: @unchecked Sendable {
    // `@unchecked Sendable` invariant: the key is an immutable integer; the values are per thread.
    private let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        self.key = key
    }

    /// The object in this thread's slot.
    package var value: Object? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeUnretainedValue()
    }

    /// The bits of the object in this thread's slot, for a reader that must not retain it.
    package var unretained: Unmanaged<Object>? {
        pthread_getspecific(key).map { Unmanaged<Object>.fromOpaque($0) }
    }

    /// Puts `object` (unretained) into this thread's slot.
    package func set(_ object: Object?) {
        pthread_setspecific(key, object.map { Unmanaged.passUnretained($0).toOpaque() })
    }
}
