import Foundation

/// A container that sets up the whole Core Data stack: model, coordinator, stores and contexts.
///
/// ```swift
/// let container = NSPersistentContainer(name: "DataModel", managedObjectModel: model)
/// container.loadPersistentStores { description, error in
///     if let error { fatalError("Unable to load persistent stores: \(error)") }
/// }
/// let context = container.viewContext
/// ```
///
/// - Note: Linux: the default store directory is `$XDG_DATA_HOME/<name>` or
///   `~/.local/share/<name>` (Apple uses Application Support); see ``defaultDirectoryURL()``.
///
/// Related Core Data documentation: [NSPersistentContainer](https://developer.apple.com/documentation/coredata/nspersistentcontainer)
///
/// `@unchecked Sendable` invariant: the descriptions are set before `loadPersistentStores`; the
/// lazily created view context is guarded by a lock.
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    /// The container's name: the model's name and the default store file's name.
    public let name: String
    /// The coordinator.
    public let persistentStoreCoordinator: NSPersistentStoreCoordinator
    /// The descriptions of the stores to load (one SQLite store in the default directory at first).
    open var persistentStoreDescriptions: [NSPersistentStoreDescription]
    private let viewContextStorage = Locked<NSManagedObjectContext?>(nil)

    /// The model.
    open var managedObjectModel: NSManagedObjectModel { persistentStoreCoordinator.managedObjectModel }

    /// Creates a container whose model is the `<name>.momd` or `<name>.xcdatamodeld` found in the
    /// program's bundles. Without one, the model is empty and the problem is logged (as on Apple).
    public convenience init(name: String) {
        let model = Self.findModel(named: name) ?? {
            reportMisuse("NSPersistentContainer(name:): no model named \(name) was found in the program's bundles")
            return NSManagedObjectModel()
        }()
        self.init(name: name, managedObjectModel: model)
    }

    /// Creates a container with an explicit model.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.name = name
        persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite"))
        persistentStoreDescriptions = [description]
        super.init()
    }

    /// The directory where stores live by default.
    ///
    /// On Linux: `$XDG_DATA_HOME/<process name>` if set, else `~/.local/share/<process name>`.
    open class func defaultDirectoryURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        }
        return base.appendingPathComponent(ProcessInfo.processInfo.processName, isDirectory: true)
    }

    /// Adds every described store, calling `block` once per store (with an error if it failed).
    ///
    /// Related Core Data documentation: [loadPersistentStores(completionHandler:)](https://developer.apple.com/documentation/coredata/nspersistentcontainer/loadpersistentstores(completionhandler:))
    open func loadPersistentStores(completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void) {
        for description in persistentStoreDescriptions {
            if let directory = description.url?.deletingLastPathComponent(), description.type != NSInMemoryStoreType {
                try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
        }
    }

    /// The main-queue context that reads from the coordinator.
    open var viewContext: NSManagedObjectContext {
        viewContextStorage.withLock { storage in
            if let storage { return storage }
            let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
            context.persistentStoreCoordinator = persistentStoreCoordinator
            context.name = "viewContext"
            storage = context
            return context
        }
    }

    /// A new private-queue context.
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` with a new private-queue context, on that context's queue.
    open func performBackgroundTask(_ block: @escaping (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` with a new private-queue context and returns its result.
    public func performBackgroundTask<T, E: Error>(_ block: @escaping (NSManagedObjectContext) throws(E) -> T) async throws(E) -> T {
        let context = newBackgroundContext()
        return try await context.perform { () throws(E) -> T in try block(context) }
    }

    /// Finds `<name>.momd`, `<name>.mom`, `<name>.xcdatamodeld` or `<name>.xcdatamodel` in the
    /// program's bundles, including SwiftPM resource bundles (`<Package>_<Target>.resources` beside
    /// the executable on Linux), so `NSPersistentContainer(name:)` finds a model a target ships.
    package class func findModel(named name: String) -> NSManagedObjectModel? {
        for directory in modelSearchDirectories() {
            for ext in ["momd", "mom", "xcdatamodeld", "xcdatamodel"] {
                let url = directory.appendingPathComponent("\(name).\(ext)")
                if FileManager.default.fileExists(atPath: url.path), let model = NSManagedObjectModel(contentsOf: url) {
                    return model
                }
            }
        }
        return nil
    }

    package class func modelSearchDirectories() -> [URL] {
        var directories: [URL] = []
        for bundle in [Bundle.main] + Bundle.allBundles {
            if let resources = bundle.resourceURL { directories.append(resources) }
            directories.append(bundle.bundleURL)
        }
        let executableDirectory = Bundle.main.executableURL?.deletingLastPathComponent() ?? Bundle.main.bundleURL
        let children = (try? FileManager.default.contentsOfDirectory(at: executableDirectory, includingPropertiesForKeys: nil)) ?? []
        for child in children.sorted(by: { $0.path < $1.path })
        where child.pathExtension == "resources" || child.pathExtension == "bundle" {
            directories.append(child)
            directories.append(child.appendingPathComponent("Contents/Resources"))
        }
        return directories
    }
}
