import Foundation

extension Notification.Name {
    /// Posted after a coordinator's stores changed (a store was added or removed). The object is the
    /// coordinator; `userInfo` holds the added stores under ``NSAddedPersistentStoresKey`` and the
    /// removed ones under ``NSRemovedPersistentStoresKey``. It is posted on the thread that added or
    /// removed the store, after the coordinator's lock is released.
    ///
    /// Related Core Data documentation: [NSPersistentStoreCoordinatorStoresDidChange](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nspersistentstorecoordinatorstoresdidchange)
    public static let NSPersistentStoreCoordinatorStoresDidChange = Notification.Name(
        "NSPersistentStoreCoordinatorStoresDidChangeNotification")
    /// Posted before a coordinator removes a store. The object is the coordinator; there is no
    /// `userInfo`.
    ///
    /// Related Core Data documentation: [NSPersistentStoreCoordinatorWillRemoveStore](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nspersistentstorecoordinatorwillremovestore)
    public static let NSPersistentStoreCoordinatorWillRemoveStore = Notification.Name(
        "NSPersistentStoreCoordinatorWillRemoveStoreNotification")
}

/// The `userInfo` key of the stores a coordinator added, in
/// `NSPersistentStoreCoordinatorStoresDidChange` (an array of `NSPersistentStore`).
///
/// Related Core Data documentation: [NSAddedPersistentStoresKey](https://developer.apple.com/documentation/coredata/nsaddedpersistentstoreskey)
public let NSAddedPersistentStoresKey = "added"
/// The `userInfo` key of the stores a coordinator removed, in
/// `NSPersistentStoreCoordinatorStoresDidChange` (an array of `NSPersistentStore`).
///
/// Related Core Data documentation: [NSRemovedPersistentStoresKey](https://developer.apple.com/documentation/coredata/nsremovedpersistentstoreskey)
public let NSRemovedPersistentStoresKey = "removed"

extension NSPersistentStoreCoordinator {
    /// Posts `NSPersistentStoreCoordinatorStoresDidChange` for `added` and `removed`; called with the
    /// lock released, so that an observer may use the coordinator.
    func postStoresDidChange(added: [NSPersistentStore] = [], removed: [NSPersistentStore] = []) {
        var userInfo: [AnyHashable: Any] = [:]
        if !added.isEmpty { userInfo[NSAddedPersistentStoresKey] = added }
        if !removed.isEmpty { userInfo[NSRemovedPersistentStoresKey] = removed }
        NotificationCenter.default.post(
            name: .NSPersistentStoreCoordinatorStoresDidChange, object: self, userInfo: userInfo)
    }

    /// Posts `NSPersistentStoreCoordinatorWillRemoveStore`, before a store is removed.
    func postWillRemoveStore() {
        NotificationCenter.default.post(name: .NSPersistentStoreCoordinatorWillRemoveStore, object: self)
    }
}
