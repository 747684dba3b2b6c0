import Foundation
import OpenCoreDataRuntime

/// Breaks, as the test process exits, the relationship reference cycles that tests leave behind,
/// so that LeakSanitizer reports only real leaks.
///
/// Related managed objects hold each other strongly until they are turned into faults or their
/// context is reset (Apple's "Breaking Relationship Strong Reference Cycles"). Most tests end
/// without a `reset()`, so their graphs outlive them, as an app's would. Once installed (test
/// support's entry points install it), every context made from then on, by a test or by the
/// library (migration, containers), is remembered weakly; at exit, before LeakSanitizer's own
/// exit-time check (registered earlier, so run later), every object still registered in one of
/// them is turned into a fault, as `reset()` does. Everything else a test leaves unreachable is
/// still reported.
public enum ReferenceCycles {
    private final class WeakLink: @unchecked Sendable {
        weak var link: ContextLink?
        init(_ link: ContextLink) { self.link = link }
    }

    private static let links = Locked<[WeakLink]>([])
    private static let installation: Void = {
        ContextLink.creationObserver.withLock { $0 = { ReferenceCycles.remember($0) } }
        atexit { ReferenceCycles.breakAll() }
    }()

    /// Starts remembering new contexts (once per process; later calls do nothing).
    public static func install() { _ = installation }

    private static func remember(_ link: ContextLink) {
        links.withLock { links in
            // Forget contexts whose objects have all gone, so the list stays as long as what lives.
            if links.count >= 1024, links.count.isMultiple(of: 1024) { links.removeAll { $0.link == nil } }
            links.append(WeakLink(link))
        }
    }

    /// Turns every object still registered in a remembered context into a fault.
    public static func breakAll() {
        for link in links.withLock({ $0.compactMap(\.link) }) {
            for object in link.registry.liveObjects() { object._turnIntoFaultForReset() }
        }
    }
}
