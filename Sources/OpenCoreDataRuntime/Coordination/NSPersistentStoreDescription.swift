import Foundation

/// A description of a store to add: where, of what type, with which options.
///
/// ```swift
/// let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/var/lib/app/Model.sqlite"))
/// description.type = NSSQLiteStoreType
/// container.persistentStoreDescriptions = [description]
/// ```
///
/// Related Core Data documentation: [NSPersistentStoreDescription](https://developer.apple.com/documentation/coredata/nspersistentstoredescription)
open class NSPersistentStoreDescription: NSObject, @unchecked Sendable {
    /// The store's location.
    open var url: URL?
    /// The store type (default `NSSQLiteStoreType`).
    open var type: String = NSSQLiteStoreType
    /// The model configuration to use.
    open var configuration: String?
    /// Options passed to the store.
    open private(set) var options: [String: NSObject] = [:]
    /// SQLite pragmas to set.
    open private(set) var sqlitePragmas: [String: NSObject] = [:]
    /// Whether the store is opened read-only.
    open var isReadOnly: Bool {
        get { (options[NSReadOnlyPersistentStoreOption] as? NSNumber)?.boolValue ?? false }
        set { options[NSReadOnlyPersistentStoreOption] = NSNumber(value: newValue) }
    }
    /// Seconds to wait for a locked store.
    open var timeout: TimeInterval {
        get { (options[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue ?? 240 }
        set { options[NSPersistentStoreTimeoutOption] = NSNumber(value: newValue) }
    }
    /// Whether `loadPersistentStores` adds the store on a background queue.
    open var shouldAddStoreAsynchronously: Bool = false
    /// Whether the store migrates automatically when it was written with an earlier model version
    /// (default `true`, as on Apple): `NSMigratePersistentStoresAutomaticallyOption`.
    ///
    /// - Note: Linux: the earlier version is looked up among the versions of the model's
    ///   `.xcdatamodeld` or `.momd` bundle, `OpenCoreDataMigrationSourceModelsOption`, and last the
    ///   model cached in a SQLite store.
    ///
    /// Related Core Data documentation: [shouldMigrateStoreAutomatically](https://developer.apple.com/documentation/coredata/nspersistentstoredescription/shouldmigratestoreautomatically)
    open var shouldMigrateStoreAutomatically: Bool {
        get { (options[NSMigratePersistentStoresAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[NSMigratePersistentStoresAutomaticallyOption] = NSNumber(value: newValue) }
    }
    /// Whether a mapping model is inferred for migration (default `true`, as on Apple):
    /// `NSInferMappingModelAutomaticallyOption`.
    ///
    /// Related Core Data documentation: [shouldInferMappingModelAutomatically](https://developer.apple.com/documentation/coredata/nspersistentstoredescription/shouldinfermappingmodelautomatically)
    open var shouldInferMappingModelAutomatically: Bool {
        get { (options[NSInferMappingModelAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[NSInferMappingModelAutomaticallyOption] = NSNumber(value: newValue) }
    }

    public override init() { super.init() }

    /// A description of a SQLite store at `url`.
    public convenience init(url: URL) {
        self.init()
        self.url = url
    }

    /// Sets a store option.
    open func setOption(_ option: NSObject?, forKey key: String) { options[key] = option }

    /// Sets a SQLite pragma.
    open func setValue(_ value: NSObject?, forPragmaNamed name: String) { sqlitePragmas[name] = value }

    /// The options the coordinator receives (migration defaults and pragmas included).
    package var coordinatorOptions: [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in options { result[key] = (value as? NSNumber).map { $0.boolValue as Any } ?? value }
        result[NSMigratePersistentStoresAutomaticallyOption] = shouldMigrateStoreAutomatically
        result[NSInferMappingModelAutomaticallyOption] = shouldInferMappingModelAutomatically
        result[NSReadOnlyPersistentStoreOption] = isReadOnly
        if !sqlitePragmas.isEmpty { result[NSSQLitePragmasOption] = sqlitePragmas }
        return result
    }

    open override var description: String {
        "<NSPersistentStoreDescription> (type: \(type), url: \(url?.path ?? "nil"))"
    }
}
