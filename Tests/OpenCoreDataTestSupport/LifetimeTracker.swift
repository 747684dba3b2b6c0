import Foundation
import OpenCoreData

/// Counts the live instances of ``TrackedObject`` per entity, to show which objects a context keeps
/// alive (swift-collections' `LifetimeTracker`, for managed objects). Counting per entity keeps
/// tests that run in parallel, each with its own model, apart.
public enum LifetimeTracker {
    private static let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var counts: [ObjectIdentifier: Int] = [:]

    /// The number of live ``TrackedObject`` instances of `entity`.
    public static func live(_ entity: NSEntityDescription) -> Int {
        lock.withLock { counts[ObjectIdentifier(entity)] ?? 0 }
    }

    fileprivate static func change(_ key: ObjectIdentifier, by delta: Int) {
        lock.withLock { counts[key, default: 0] += delta }
    }
}

/// A managed object class whose instances ``LifetimeTracker`` counts: set an entity's
/// `managedObjectClassName` to `NSStringFromClass(TrackedObject.self)`.
public final class TrackedObject: NSManagedObject {
    private let trackingKey: ObjectIdentifier

    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        trackingKey = ObjectIdentifier(entity)
        super.init(entity: entity, insertInto: context)
        LifetimeTracker.change(trackingKey, by: 1)
    }

    deinit { LifetimeTracker.change(trackingKey, by: -1) }
}
