import Foundation

/// The key under which store metadata holds the store's UUID.
public let NSStoreUUIDKey = "NSStoreUUID"
/// The key under which store metadata holds the store's type.
public let NSStoreTypeKey = "NSStoreType"
/// The key under which store metadata holds the entity version hashes.
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// The key under which store metadata holds the model's version identifiers.
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"
/// The key under which store metadata holds the framework version that wrote it.
public let NSPersistenceFrameworkVersionKey = "NSPersistenceFrameworkVersion"
/// The key under which store metadata holds the model's version checksum.
public let NSStoreModelVersionChecksumKey = "NSStoreModelVersionChecksumKey"
/// The SQLite store type.
///
/// Related Core Data documentation: [NSSQLiteStoreType](https://developer.apple.com/documentation/coredata/nssqlitestoretype)
public let NSSQLiteStoreType = "SQLite"
/// The in-memory store type.
///
/// Related Core Data documentation: [NSInMemoryStoreType](https://developer.apple.com/documentation/coredata/nsinmemorystoretype)
public let NSInMemoryStoreType = "InMemory"
/// A misspelling of ``NSSQLiteStoreType`` that appears in published Core Data examples.
@available(*, deprecated, renamed: "NSSQLiteStoreType")
public let NSSqliteStoreType = NSSQLiteStoreType
/// Option: open the store read-only.
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Option: migrate the store automatically when it was written with an earlier model version.
///
/// Related Core Data documentation: [NSMigratePersistentStoresAutomaticallyOption](https://developer.apple.com/documentation/coredata/nsmigratepersistentstoresautomaticallyoption)
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Option: infer a mapping model for automatic migration.
///
/// Related Core Data documentation: [NSInferMappingModelAutomaticallyOption](https://developer.apple.com/documentation/coredata/nsinfermappingmodelautomaticallyoption)
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Option: SQLite pragmas, as a dictionary of pragma name to value.
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"
/// Option: seconds to wait for a locked SQLite store.
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"

extension NSPersistentStore {
    /// A store type, in the Swift-style spelling Apple added in 2022.
    ///
    /// Related Core Data documentation: [NSPersistentStore.StoreType](https://developer.apple.com/documentation/coredata/nspersistentstore/storetype)
    public struct StoreType: Hashable, Sendable, RawRepresentable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let sqlite = StoreType(rawValue: NSSQLiteStoreType)
        public static let inMemory = StoreType(rawValue: NSInMemoryStoreType)
    }
}

/// A store that holds objects: the base class of every store.
///
/// - Note: Linux: the designated initializer is `required`, because stores are created from their
///   registered class without an Objective-C runtime; a subclass writes `required init(...)`.
///
/// Related Core Data documentation: [NSPersistentStore](https://developer.apple.com/documentation/coredata/nspersistentstore)
///
/// `@unchecked Sendable` invariant: a store is used only under its coordinator's lock.
open class NSPersistentStore: NSObject, @unchecked Sendable {
    /// The coordinator the store belongs to (not kept alive by the store: see ``BackReference``).
    public private(set) var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { _coordinatorReference?.target }
        set { _coordinatorReference = newValue?._reference }
    }
    @exclusivity(unchecked) private var _coordinatorReference: BackReference<NSPersistentStoreCoordinator>?
    /// The model configuration the store holds.
    open private(set) var configurationName: String
    /// The options the store was added with.
    open private(set) var options: [AnyHashable: Any]?
    /// The store's location.
    open var url: URL?
    /// The store's UUID, as in its metadata.
    open var identifier: String!
    /// The store's metadata.
    open var metadata: [String: Any]! {
        didSet {
            _metadataGeneration &+= 1
            if let uuid = metadata?[NSStoreUUIDKey] as? String { identifier = uuid }
        }
    }
    /// Counts the writes of ``metadata`` (assigned, or changed in place): a store that saves its
    /// metadata with its rows compares two counts, not two dictionaries, to know whether it changed.
    package private(set) var _metadataGeneration = 0
    /// Whether the store refuses saves.
    open var isReadOnly: Bool
    /// The store's type string. Subclasses override.
    open var type: String { "" }
    /// What the IDs of this store's objects share (see ``ObjectIDStore``).
    package let _objectIDStore = ObjectIDStore()

    /// Creates a store. Call ``loadMetadata()`` before use (the coordinator does).
    public required init(persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?,
                         at url: URL, options: [AnyHashable: Any]? = nil) {
        _coordinatorReference = root?._reference
        configurationName = name ?? "PF_DEFAULT_CONFIGURATION_NAME"
        self.options = options
        self.url = url
        isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        super.init()
        _objectIDStore.attach(self)
    }

    /// Reads or creates the store's metadata. Subclasses override; this one sets a new UUID.
    open func loadMetadata() throws {
        if metadata == nil { metadata = [NSStoreUUIDKey: UUID().uuidString, NSStoreTypeKey: type] }
    }

    /// The metadata of the store at `url`, without adding it. Subclasses override.
    open class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw OpenCoreDataError(.persistentStoreInvalidType, "\(self) cannot read metadata without opening the store", url: url)
    }

    /// Writes metadata to the store at `url`. Subclasses override.
    open class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        throw OpenCoreDataError(.persistentStoreInvalidType, "\(self) cannot write metadata without opening the store", url: url)
    }

    /// Whether a context's save without changes must reach this store (Apple sends every store an
    /// empty save request then). A store of your own always gets it; the package's stores answer it
    /// with nothing, so a context skips making and sending it unless one of them has something to
    /// write (the SQLite store's changed metadata). That spared about 3 µs a save (1 → 4 µs).
    package var _wantsSavesWithoutChanges: Bool { true }

    /// Whether the coordinator may send this store reads (fetches, counts, faults, relationship
    /// faults) from several threads at once, outside its write lock. Serial (`false`) by default:
    /// in-memory and atomic stores, and every store of your own, get one request at a time, as
    /// before. The SQLite store answers `true` in WAL mode (`docs/concurrency.md`).
    package var _servesConcurrentReads: Bool { false }

    /// Runs `body`, a request of `context` to this store (`writing` for saves, primary keys,
    /// metadata and batch requests), with what the store needs around it: the SQLite store leases
    /// a connection to the thread for it. The coordinator holds its write lock for writes and for
    /// every request to a serial store; concurrent reads come without it.
    package func _withConnection<R>(
        for context: NSManagedObjectContext?, writing: Bool, _ body: () throws -> R
    ) throws -> R { try body() }

    /// A new query generation of this store: an object that keeps the store's current state
    /// readable for the contexts pinned to it until it is released. Stores without generations
    /// throw `NSPersistentStoreUnsupportedRequestTypeError` (134091), as all but the SQLite store do.
    package func _newQueryGeneration() throws -> AnyObject {
        throw OpenCoreDataError(
            .persistentStoreUnsupportedRequestType,
            "query generations need a SQLite store in WAL mode; this is a store of type \(type)", url: url)
    }

    /// Called after the store left the coordinator's list, with none of the coordinator's locks
    /// held, before ``willRemove(from:)``: ends what runs beside the coordinator's write lock (the
    /// SQLite store waits here for reads in flight and closes its other connections).
    package func _closeConcurrentReads() {}

    /// Called after the store is added to a coordinator.
    open func didAdd(to coordinator: NSPersistentStoreCoordinator) {}
    /// Called before the store is removed from its coordinator. Close files here.
    open func willRemove(from coordinator: NSPersistentStoreCoordinator?) {}

    /// Removes the store's files. Subclasses override.
    package class func destroyStore(at url: URL, options: [AnyHashable: Any]?) throws {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The base class for stores that load objects on demand: the interface every OpenCoreData store
/// implements, and the one to subclass for a store of your own.
///
/// ```swift
/// final class MyStore: NSIncrementalStore {
///     override var type: String { "MyStore" }
///     override func loadMetadata() throws { metadata = [NSStoreUUIDKey: "...", NSStoreTypeKey: type] }
///     override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any { ... }
///     override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode { ... }
/// }
/// NSPersistentStoreCoordinator.registerStoreClass(MyStore.self, type: .init(rawValue: "MyStore"))
/// ```
///
/// Related Core Data documentation: [NSIncrementalStore](https://developer.apple.com/documentation/coredata/nsincrementalstore)
open class NSIncrementalStore: NSPersistentStore, @unchecked Sendable {
    /// Runs a fetch (returns `[Any]`: objects, IDs, dictionaries, or one count) or a save (returns `[]`).
    open func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        throw OpenCoreDataError(.persistentStoreUnsupportedRequestType, "\(Swift.type(of: self)) does not implement execute(_:with:)")
    }

    /// A fetch's results, as ``execute(_:with:)`` returns them for a fetch request. The package's
    /// stores override it to return their array without boxing it in `Any`, managed objects as an
    /// `[NSManagedObject]` (see ``FetchResults`` and ``NSPersistentStoreCoordinator/_executeFetch(_:with:)``).
    package func _executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext) throws -> FetchResults {
        .values(try execute(request, with: context) as? [Any] ?? [])
    }

    /// A context's fetch of managed objects with `settings`, whose entity resolves to `entity`, when
    /// the store can run it without a request (a lookup by a format template's instance that an
    /// earlier fetch planned); `nil` when it cannot, and the context then makes a request for
    /// ``_executeFetch(_:context:)``.
    package func _plannedFetch(
        _ settings: UnsafePointer<FetchRequestSettings>, entity: NSEntityDescription, context: NSManagedObjectContext
    ) throws -> FetchResults? {
        nil
    }

    /// The values of the object with `objectID`, to fill its fault.
    open func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        throw OpenCoreDataError(.persistentStoreOperation, "\(Swift.type(of: self)) does not implement newValuesForObject(with:with:)", objectID: objectID)
    }

    /// The destination of a relationship: an `NSManagedObjectID` or `NSNull` for to-one, an array of
    /// IDs for to-many.
    open func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
                       with context: NSManagedObjectContext?) throws -> Any {
        throw OpenCoreDataError(.persistentStoreOperation, "\(Swift.type(of: self)) does not implement newValue(forRelationship:forObjectWith:with:)", objectID: objectID)
    }

    /// Permanent IDs for newly inserted objects, in the same order.
    open func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        throw OpenCoreDataError(.persistentStoreOperation, "\(Swift.type(of: self)) does not implement obtainPermanentIDs(for:)")
    }

    /// The primary keys `obtainPermanentIDs(for:)` would give `array`'s objects, for a store whose
    /// IDs are its integer keys (`newObjectID(for:referenceObject:)` with an `Int64`); `nil` for
    /// any other store (the default), which is asked for IDs. The coordinator gives new objects
    /// these keys as their identities, each ID made only if asked for: a temporary and a permanent
    /// ID per saved new object were about 2,000 instructions and two allocations (callgrind case 1).
    package func _obtainPermanentKeys(for array: [NSManagedObject]) throws -> [Int64]? { nil }

    /// Told when a context starts using objects of this store.
    open func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {}
    /// Told when a context stops using objects of this store.
    open func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// A new identifier for a store created at `storeURL`.
    open class func identifierForNewStore(at storeURL: URL) -> Any { UUID().uuidString }

    /// The object ID for a reference object of this store: an integer (`Int64`, `Int`, any other
    /// integer type or an integral `NSNumber`: equal numbers make equal IDs, as `NSNumber`s do on
    /// Apple), a `String`, `Data`, a `UUID`, or any other hashable value. Integers, strings, `Data`
    /// and `UUID`s survive `uriRepresentation()` and
    /// ``NSPersistentStoreCoordinator/managedObjectID(forURIRepresentation:)``.
    ///
    /// Related Core Data documentation: [newObjectID(for:referenceObject:)](https://developer.apple.com/documentation/coredata/nsincrementalstore/newobjectid(for:referenceobject:))
    public final func newObjectID(for entity: NSEntityDescription, referenceObject data: Any) -> NSManagedObjectID {
        let reference: NSManagedObjectID.Reference
        switch data {
        case let v as Int64: reference = .int64(v)  // also an integral NSNumber
        case let v as Int: reference = .int64(Int64(v))
        case let v as String: reference = .string(v)
        case let v as any BinaryInteger:
            reference = Int64(exactly: v).map { .int64($0) } ?? .other(UncheckedHashable(AnyHashable(v)))
        // `Data` and `UUID` before `AnyHashable`, so that their Objective-C classes' instances
        // (`NSData`, `NSUUID`) make the same IDs as the values.
        case let v as Data: reference = .other(UncheckedHashable(v))
        case let v as UUID: reference = .other(UncheckedHashable(v))
        case let v as AnyHashable: reference = .other(UncheckedHashable(v))
        default: reference = .string("\(data)")
        }
        return NSManagedObjectID(entity: entity, store: self, reference: reference)
    }

    /// The reference object this store gave `objectID`: the value it gave, an integer as an
    /// `NSNumber` (as on Apple), which casts to the integer type the store used.
    ///
    /// Related Core Data documentation: [referenceObject(for:)](https://developer.apple.com/documentation/coredata/nsincrementalstore/referenceobject(for:))
    public final func referenceObject(for objectID: NSManagedObjectID) -> Any { objectID.referenceObject }
}

extension NSSaveChangesRequest {
    /// Whether the request saves nothing: the one a context without changes sends its stores (as
    /// Apple's contexts do), which a store may answer without writing.
    package var _hasNoChanges: Bool {
        insertedList.isEmpty && updatedList.isEmpty && deletedList.isEmpty && lockedList.isEmpty
    }
}

extension NSPersistentStore {
    /// Refuses, with `persistentStoreTypeMismatch` (134010), to add the file at `url` as a store
    /// of `type` when a store of another type wrote it, before anything opens or migrates it (the
    /// file is left as it is). Every store type gets the same check: each other registered store
    /// class is asked for the file's metadata (`metadataForPersistentStore(with:)`, as Apple finds a
    /// file's type when none is given), and the `NSStoreType` recorded there decides. A missing or
    /// empty file (a new store, or `/dev/null` for an in-memory store) has no type yet.
    ///
    /// The class registered for `type` is not asked here: a class can read its own files, so what
    /// it recorded is checked once it has loaded them (``_checkLoadedStoreType(requested:)``).
    package static func _checkStoreType(at url: URL, requested type: String, storeClass: NSPersistentStore.Type) throws {
        guard url.isFileURL, let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
              attributes[.type] as? FileAttributeType == .typeRegular, (attributes[.size] as? NSNumber)?.intValue ?? 0 > 0
        else { return }
        var asked: Set<ObjectIdentifier> = [ObjectIdentifier(storeClass)]
        let registered = NSPersistentStoreCoordinator.registeredStoreTypes.sorted { $0.key < $1.key }
        for case let (_, other as NSPersistentStore.Type) in registered where asked.insert(ObjectIdentifier(other)).inserted {
            guard let metadata = try? other.metadataForPersistentStore(with: url),
                  let recorded = metadata[NSStoreTypeKey] as? String else { continue }
            if recorded != type { throw typeMismatch(recorded: recorded, requested: type, url: url) }
            return
        }
    }

    /// Refuses a store whose loaded metadata records another type than the one it was added as
    /// (or the type the store itself reports): the class registered for `requested` read a file
    /// that a store of another type of the same class wrote.
    package func _checkLoadedStoreType(requested: String) throws {
        guard let recorded = metadata?[NSStoreTypeKey] as? String, recorded != requested, recorded != type else { return }
        throw Self.typeMismatch(recorded: recorded, requested: requested, url: url)
    }

    private static func typeMismatch(recorded: String, requested: String, url: URL?) -> OpenCoreDataError {
        OpenCoreDataError(
            .persistentStoreTypeMismatch, "the store at this URL is of type \(recorded), not \(requested)", url: url)
    }
}
