import COpenCoreDataThreadLocal
import Foundation
import Testing

@testable import OpenCoreDataRuntime

/// The per-thread slots behind `NSManagedObjectContext._current` and fault construction.
@Suite("Thread-local references")
struct ThreadLocalReferenceTests {
    final class Box: Sendable {}

    @Test func everySlotHasStorageInC() {
        #expect(ThreadLocalSlot.allCases.count <= Int(OCD_THREAD_LOCAL_SLOT_COUNT))
        #expect(Set(ThreadLocalSlot.allCases.map(\.rawValue)).count == ThreadLocalSlot.allCases.count)
    }

    /// A value set on one thread is not seen on another, and slots do not share storage.
    @Test func valuesArePerThreadAndPerSlot() {
        let box = Box()
        let other = Box()
        let faults = ThreadLocalReference<Box>(.faultConstruction)
        let contexts = ThreadLocalReference<Box>(.currentContext)
        let previousFault = faults.unretained
        let previousContext = contexts.unretained
        defer {
            faults.set(previousFault?.takeUnretainedValue())
            contexts.set(previousContext?.takeUnretainedValue())
        }
        faults.set(box)
        contexts.set(other)
        #expect(faults.value === box)
        #expect(contexts.value === other)
        #expect(faults.unretained?.toOpaque() == Unmanaged.passUnretained(box).toOpaque())

        let seenElsewhere = Locked<(Bool, Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            seenElsewhere.withLock { $0 = (faults.value == nil, contexts.value == nil) }
            faults.set(other)  // this thread's slot only
            done.signal()
        }.start()
        done.wait()
        #expect(seenElsewhere.withLock { $0 }.map { $0.0 && $0.1 } == true, "another thread starts empty")
        #expect(faults.value === box, "another thread's write leaves this thread's slot alone")
        faults.set(nil)
        #expect(faults.value == nil)
        #expect(contexts.value === other)
    }
}
