import COpenCoreDataThreadLocal
import Foundation

/// The per-thread slots there are, one per use (`OCD_THREAD_LOCAL_SLOT_COUNT` in C).
package enum ThreadLocalSlot: Int32, CaseIterable, Sendable {
    /// The context whose block runs on the thread (`NSManagedObjectContext._current`).
    case currentContext = 0
    /// The identity offered to a fault being made (`FaultConstruction`).
    case faultConstruction = 1
    /// The innermost SQLite connection the thread leased (`SQLiteConnectionPool`).
    case connectionLease = 2
}

/// A per-thread slot holding an unretained reference to an object.
///
/// The holder must keep the object alive for as long as it is in the slot and put the previous
/// value back (or `nil`) before it goes: the slot does not retain. The slots are C11 thread-local
/// storage (`COpenCoreDataThreadLocal`): reading or writing one is a load or a store. A `pthread`
/// key cost a call of about 10 instructions to read and 35 to write, three per fetched row
/// (callgrind case 2); `Thread.current.threadDictionary` (a Foundation dictionary keyed by a
/// bridged string) cost about 10,000 per `perform` block (case 4).
package struct ThreadLocalReference<Object: AnyObject>: Sendable {
    private let slot: Int32

    package init(_ slot: ThreadLocalSlot) {
        self.slot = slot.rawValue
    }

    /// The object in this thread's slot.
    @inline(__always)
    package var value: Object? {
        guard let raw = ocd_thread_local_get(slot) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeUnretainedValue()
    }

    /// The bits of the object in this thread's slot, for a reader that must not retain it.
    @inline(__always)
    package var unretained: Unmanaged<Object>? {
        ocd_thread_local_get(slot).map { Unmanaged<Object>.fromOpaque($0) }
    }

    /// Puts `object` (unretained) into this thread's slot.
    @inline(__always)
    package func set(_ object: Object?) {
        ocd_thread_local_set(slot, object.map { Unmanaged.passUnretained($0).toOpaque() })
    }
}
