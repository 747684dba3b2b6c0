import COpenCoreDataThreadLocal
import Foundation

/// Core Data's multithreading assertions, Apple's `-com.apple.CoreData.ConcurrencyDebug 1`: with
/// them on, using a context or its objects off the context's queue traps, naming the call.
///
/// On by `OCD_CONCURRENCY_DEBUG=1` in the environment, or `com.apple.CoreData.ConcurrencyDebug=1`,
/// or Apple's launch arguments `-com.apple.CoreData.ConcurrencyDebug 1`; read once, as the library
/// loads (`COpenCoreDataThreadLocal/concurrency_debug.c`). See docs/linux-differences.md.
///
/// Apple's rule, checked here: a private-queue context is used only inside its `perform` or
/// `performAndWait` blocks; a main-queue context on the main thread or inside those blocks. A
/// confinement context (deprecated) is not checked.
package enum ConcurrencyDebug {
    /// Whether the assertions are on. Off, a check is a load of a plain C global and a branch
    /// the optimizer lays out of line (`_slowPath`); the check itself is out of line too.
    @inline(__always)
    package static var isEnabled: Bool { _slowPath(ocd_concurrency_debug() > 0) }

    /// Traps: `call` was made on `context` (for `object`, if one) off the context's queue. Named as
    /// Apple's exception's method is, so that a backtrace reads the same on both.
    package static func __Multithreading_Violation_AllThatIsLeftToUsIsHonor__(
        _ call: StaticString, context: NSManagedObjectContext, object: NSManagedObject?
    ) -> Never {
        let kind = switch context.concurrencyType {
        case .mainQueueConcurrencyType: "a main-queue context, used off the main thread and"
        default: "a private-queue context, used"
        }
        let subject = object.map { "\(String(describing: type(of: $0))) \($0._objectID.uriRepresentation()) of " } ?? ""
        let name = context.name.map { " \"\($0)\"" } ?? ""
        fatalError("""
            CoreData: multithreading violation (com.apple.CoreData.ConcurrencyDebug): \(call) on \(subject)\
            context\(name) \(ObjectIdentifier(context)), \(kind) outside its perform/performAndWait
            """)
    }
}

extension NSManagedObjectContext {
    /// Whether code running now may use the context, by Apple's rule (see ``ConcurrencyDebug``):
    /// inside one of its blocks; for a main-queue context, also on the main thread.
    package var _isOnItsQueue: Bool {
        if let current = Self._current, current === self { return true }
        switch concurrencyType {
        case .privateQueueConcurrencyType: return false
        case .mainQueueConcurrencyType: return Thread.isMainThread
        default: return true  // confinement: the thread that owns it is not recorded; not checked
        }
    }

    /// Traps if the assertions are on and `call` is made off the context's queue.
    @inline(__always)
    package final func _assertOnQueue(_ call: StaticString) {
        if ConcurrencyDebug.isEnabled { _checkOnQueue(call) }
    }

    @inline(never)
    private final func _checkOnQueue(_ call: StaticString) {
        guard !_isOnItsQueue else { return }
        ConcurrencyDebug.__Multithreading_Violation_AllThatIsLeftToUsIsHonor__(call, context: self, object: nil)
    }
}

extension NSManagedObject {
    /// Traps if the assertions are on and `call` (a property accessor) is made off the queue of the
    /// object's context. An object of no context is not checked.
    @inline(__always)
    package final func _assertOnQueue(_ call: StaticString) {
        if ConcurrencyDebug.isEnabled { _checkOnQueue(call) }
    }

    @inline(never)
    private final func _checkOnQueue(_ call: StaticString) {
        guard let context = _context, !context._isOnItsQueue else { return }
        ConcurrencyDebug.__Multithreading_Violation_AllThatIsLeftToUsIsHonor__(call, context: context, object: self)
    }
}
