import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime

/// Records the notifications of one name posted by one object (or any), from any thread.
final class NotificationRecorder: Sendable {
    private let observer = Locked<(any NSObjectProtocol)?>(nil)
    private let received = Locked<[Notification]>([])
    /// Signalled once per notification, for tests that wait on another queue.
    let arrived = DispatchSemaphore(value: 0)

    init(_ name: Notification.Name, object: AnyObject? = nil) {
        let token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [received, arrived] note in
            received.withLock { $0.append(note) }
            arrived.signal()
        }
        observer.withLock { $0 = token }
    }

    deinit {
        if let token = observer.withLock({ $0 }) { NotificationCenter.default.removeObserver(token) }
    }

    var notifications: [Notification] { received.withLock { $0 } }
    var count: Int { notifications.count }
    var last: Notification? { notifications.last }

    /// Waits up to `seconds` for the next notification; whether it came.
    func wait(seconds: Double = 5) -> Bool { arrived.wait(timeout: .now() + seconds) == .success }

    func removeAll() { received.withLock { $0.removeAll() } }
}

extension Notification {
    /// The objects under `key`, as a set of `NSManagedObject` (empty when the key is absent).
    func objects(_ key: String) -> Set<NSManagedObject> { userInfo?[key] as? Set<NSManagedObject> ?? [] }

    /// The user-info keys present, sorted.
    var keys: [String] { (userInfo ?? [:]).keys.compactMap { $0.base as? String }.sorted() }
}
