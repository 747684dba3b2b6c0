import Foundation

/// The metadata key of the model's version checksum (``NSManagedObjectModel/versionChecksum``), which
/// Apple's SQLite stores record as `NSStoreModelVersionChecksumKey`: Apple's name for
/// ``NSStoreModelVersionChecksumKey``, the same key.
///
/// Related Core Data documentation: [NSPersistentStoreModelVersionChecksumKey](https://developer.apple.com/documentation/coredata/nspersistentstoremodelversionchecksumkey)
public let NSPersistentStoreModelVersionChecksumKey = NSStoreModelVersionChecksumKey

/// Connects a model's contexts to the stores that hold its objects.
///
/// ```swift
/// let psc = NSPersistentStoreCoordinator(managedObjectModel: model)
/// try psc.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: fileURL, options: nil)
/// let moc = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
/// moc.persistentStoreCoordinator = psc
/// ```
///
/// The coordinator never special-cases a store type: every store, ours or yours, is an
/// ``NSIncrementalStore`` reached through the same calls. Writes (saves, primary keys, metadata,
/// store changes, batch requests) are serialized by a lock; reads from a store that declares it
/// serves them concurrently (``NSPersistentStore/_servesConcurrentReads``: the SQLite store in WAL
/// mode) run beside each other and beside a save, and every other store gets one request at a
/// time. `docs/concurrency.md` has the picture.
///
/// Related Core Data documentation: [NSPersistentStoreCoordinator](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator)
///
/// `@unchecked Sendable` invariant: `stores` is written with both `lock` and `stateLock` held and
/// read with either; `storesByEntity` and `lastStores` are used under `stateLock`, which is never
/// held across a store call. Store calls are under `lock`, except concurrent reads.
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    /// The model the coordinator's stores hold.
    public let managedObjectModel: NSManagedObjectModel
    /// A name for debugging.
    open var name: String?
    /// What back references to this coordinator hold instead of it (see ``BackReference``).
    package let _reference = BackReference<NSPersistentStoreCoordinator>()
    /// The write lock: saves, primary keys, metadata, adding and removing stores, batch requests,
    /// every request to a serial store, and `perform`/`performAndWait` blocks. Held across SQL.
    private let lock = RecursiveLock()
    /// Guards the stores list and its caches; held for a lookup only, never across a store call.
    private let stateLock = RecursiveLock()
    private var stores: [NSPersistentStore] = [] {
        didSet {
            storesByEntity.removeAll()
            lastStores = nil
        }
    }
    /// ``stores(for:)``'s answers for the model's entities (which live as long as the coordinator,
    /// so their identities are not reused), until the stores change.
    private var storesByEntity: [ObjectIdentifier: [NSIncrementalStore]] = [:]
    /// The last of those answers, checked before hashing the entity: fetches in a loop ask for one
    /// entity (the lookup was about 140 instructions a fetch, callgrind case 4).
    private var lastStores: (entity: ObjectIdentifier, stores: [NSIncrementalStore])?

    /// Creates a coordinator for `model`.
    public init(managedObjectModel model: NSManagedObjectModel) {
        managedObjectModel = model
        super.init()
        _reference.attach(self)
        for entity in model.entities {
            // Resolve the entity's class now (found at once for a qualified `managedObjectClassName`)
            // so that `Class.entity()` answers before the first object is created or fetched.
            let layout = entity.layout
            layout.noteClass(layout.managedObjectClass)
        }
    }

    deinit { _reference.detach() }

    /// The stores added so far.
    open var persistentStores: [NSPersistentStore] { stateLock.withLock { stores } }

    // MARK: Store types

    private static let registry = Locked<[String: NSPersistentStore.Type]>([
        NSSQLiteStoreType: SQLiteStore.self,
        NSInMemoryStoreType: InMemoryStore.self,
    ])

    /// Registers a store class for a store type string.
    open class func registerStoreClass(_ storeClass: AnyClass?, forStoreType storeType: String) {
        registry.withLock { $0[storeType] = storeClass as? NSPersistentStore.Type }
    }

    /// Registers a store class for a store type.
    open class func registerStoreClass(_ storeClass: AnyClass?, type storeType: NSPersistentStore.StoreType) {
        registerStoreClass(storeClass, forStoreType: storeType.rawValue)
    }

    /// The registered store types and their classes.
    ///
    /// - Note: Linux: values are the classes themselves, not `NSValue`s.
    open class var registeredStoreTypes: [String: AnyClass] { registry.withLock { $0 } }

    package static func storeClass(for type: String) throws -> NSPersistentStore.Type {
        guard let cls = registry.withLock({ $0[type] }) else {
            throw OpenCoreDataError(.persistentStoreInvalidType, "no store class is registered for type \(type)")
        }
        return cls
    }

    // MARK: Adding and removing stores

    /// Adds a store of `storeType` at `storeURL`, creating it if needed.
    ///
    /// A store written with an earlier version of the model migrates when `options` hold
    /// `NSMigratePersistentStoresAutomaticallyOption` and `NSInferMappingModelAutomaticallyOption`
    /// (the store does it: the SQLite store in place, in one transaction).
    ///
    /// Throws ``OpenCoreDataError`` with `persistentStoreIncompatibleVersionHash` (134100) if the store
    /// was written with an incompatible model and migration is off, a migration code (134110–134190)
    /// if it cannot migrate, `persistentStoreInvalidType` for an unknown type, and
    /// `persistentStoreOpen`/`sqlite` errors for files that are not stores. The file is left untouched.
    ///
    /// Related Core Data documentation: [addPersistentStore(ofType:configurationName:at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/addpersistentstore(oftype:configurationname:at:options:))
    @discardableResult
    open func addPersistentStore(ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
                                 options: [AnyHashable: Any]? = nil) throws -> NSPersistentStore {
        let cls = try Self.storeClass(for: storeType)
        if let configuration, managedObjectModel.entities(forConfigurationName: configuration) == nil {
            throw OpenCoreDataError(.persistentStoreInvalidType, "the model has no configuration named \(configuration)")
        }
        try DerivationExpression.validate(managedObjectModel)  // before any file is created
        try NSCompositeAttributeDescription._validateComposites(in: managedObjectModel)
        try NSFetchedPropertyDescription._validateFetchedProperties(in: managedObjectModel)
        let url = storeURL ?? URL(fileURLWithPath: "/dev/null")
        try NSPersistentStore._checkStoreType(at: url, requested: storeType, storeClass: cls)  // before anything opens it
        if let staged = options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
            try staged.migrateStore(at: url, storeClass: cls, type: storeType, to: managedObjectModel, options: options)
        }
        try MappingModelMigration.migrateStoreIfNeeded(at: url, storeClass: cls, type: storeType, to: managedObjectModel, options: options)
        let added = try lock.withLock {
            if storeType != NSInMemoryStoreType, stores.contains(where: { $0.url?.standardizedFileURL == url.standardizedFileURL }) {
                throw OpenCoreDataError(.persistentStoreOpen, "a store at this URL was already added to the coordinator", url: url)
            }
            let store = cls.init(persistentStoreCoordinator: self, configurationName: configuration, at: url, options: options)
            try store.loadMetadata()
            do { try store._checkLoadedStoreType(requested: storeType) } catch { store.willRemove(from: self); throw error }
            if LightweightMigration.bool(options?[NSIgnorePersistentStoreVersioningOption]) {
                recordVersionHashes(in: store)
            }
            if store.identifier == nil { store.identifier = UUID().uuidString }
            stateLock.withLock { stores.append(store) }
            store.didAdd(to: self)
            return store
        }
        postStoresDidChange(added: [added])
        return added
    }

    /// A store added with ``NSIgnorePersistentStoreVersioningOption`` opened without its version hashes
    /// being compared; Apple "will, however, continue to update the version hash information in the
    /// metadata": the model's hashes replace the store's in its metadata, which the store writes at
    /// its next save (the file is not changed before that).
    private func recordVersionHashes(in store: NSPersistentStore) {
        guard let metadata = store.metadata,
            !managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return }
        store.metadata[NSStoreModelVersionHashesKey] = managedObjectModel.entityVersionHashesByName
    }

    /// Adds a store of `type` at `storeURL`.
    ///
    /// Related Core Data documentation: [addPersistentStore(type:configuration:at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/addpersistentstore(type:configuration:at:options:))
    @discardableResult
    open func addPersistentStore(type: NSPersistentStore.StoreType, configuration: String? = nil, at storeURL: URL,
                                 options: [AnyHashable: Any]? = nil) throws -> NSPersistentStore {
        try addPersistentStore(ofType: type.rawValue, configurationName: configuration, at: storeURL, options: options)
    }

    /// Adds the store a description describes, calling `block` when done (at once unless the
    /// description asks for asynchronous adding).
    open func addPersistentStore(with storeDescription: NSPersistentStoreDescription,
                                 completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void) {
        let work = {
            do {
                _ = try self.addPersistentStore(ofType: storeDescription.type, configurationName: storeDescription.configuration,
                                                at: storeDescription.url, options: storeDescription.coordinatorOptions)
                block(storeDescription, nil)
            } catch {
                block(storeDescription, error)
            }
        }
        if storeDescription.shouldAddStoreAsynchronously {
            let boxed = UncheckedSendable(work)
            DispatchQueue.global().async { boxed.value() }
        } else {
            work()
        }
    }

    /// Removes a store from the coordinator (its file stays).
    open func remove(_ store: NSPersistentStore) throws {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store does not belong to this coordinator", url: store.url)
        }
        postWillRemoveStore()
        try lock.withLock {
            guard let index = stores.firstIndex(where: { $0 === store }) else {
                throw OpenCoreDataError(.persistentStoreOperation, "the store does not belong to this coordinator", url: store.url)
            }
            _ = stateLock.withLock { stores.remove(at: index) }
        }
        closeRemovedStore(store)
        postStoresDidChange(removed: [store])
    }

    /// Closes a store taken out of the list: new requests no longer find it; reads in flight end
    /// first (waited for without the write lock, which one of them may need), then the store
    /// closes under the write lock, after any save in progress.
    private func closeRemovedStore(_ store: NSPersistentStore) {
        store._closeConcurrentReads()
        lock.withLock { store.willRemove(from: self) }
    }

    /// The store at `URL`.
    open func persistentStore(for URL: URL) -> NSPersistentStore? {
        stateLock.withLock { stores.first { $0.url?.standardizedFileURL == URL.standardizedFileURL } }
    }

    /// The URL of `store`.
    open func url(for store: NSPersistentStore) -> URL { store.url ?? URL(fileURLWithPath: "/dev/null") }

    // MARK: Metadata

    /// The metadata of a store this coordinator holds.
    open func metadata(for store: NSPersistentStore) -> [String: Any] { lock.withLock { store.metadata ?? [:] } }

    /// Sets a store's metadata; it is written at the next save.
    open func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        lock.withLock {
            var merged = metadata ?? [:]
            merged[NSStoreUUIDKey] = store.identifier
            merged[NSStoreTypeKey] = store.type
            store.metadata = merged
        }
    }

    /// The metadata of the store at `url`, without adding it.
    ///
    /// Related Core Data documentation: [metadataForPersistentStore(ofType:at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/metadataforpersistentstore(oftype:at:options:))
    open class func metadataForPersistentStore(ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        try storeClass(for: storeType).metadataForPersistentStore(with: url)
    }

    /// The metadata of the store at `url`, without adding it.
    ///
    /// Related Core Data documentation: [metadataForPersistentStore(type:at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/metadataforpersistentstore(type:at:options:))
    open class func metadataForPersistentStore(type: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: type.rawValue, at: url, options: options)
    }

    /// Writes metadata to the store at `url` without adding it.
    ///
    /// Related Core Data documentation: [setMetadata(_:forPersistentStoreOfType:at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/setmetadata(_:forpersistentstoreoftype:at:options:))
    open class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreOfType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws {
        try storeClass(for: storeType).setMetadata(metadata, forPersistentStoreAt: url)
    }

    /// The model Core Data cached in the SQLite store at `url` (its `Z_MODELCACHE`), read without
    /// adding the store: ``NSManagedObjectModel/cachedModel(ofStoreAt:)``, which throws
    /// `NSCoreDataError` (134060) instead of answering `nil` when the store has no cached model
    /// (stores of old framework versions, and those OpenCoreData writes). `options` are not used.
    ///
    /// Related Core Data documentation: [cachedModelForPersistentStore(at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/cachedmodelforpersistentstore(at:options:))
    open class func cachedModelForPersistentStore(at url: URL, options: [AnyHashable: Any]? = nil) throws
        -> NSManagedObjectModel
    {
        guard let model = try NSManagedObjectModel.cachedModel(ofStoreAt: url) else {
            throw OpenCoreDataError(.coreDataError, "the store has no cached model (no Z_MODELCACHE row)", url: url)
        }
        return model
    }

    /// Writes metadata to the store at `url` without adding it.
    ///
    /// Related Core Data documentation: [setMetadata(_:type:at:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/setmetadata(_:type:at:options:))
    open class func setMetadata(
        _ metadata: [String: Any]?, type storeType: NSPersistentStore.StoreType, at storeURL: URL,
        options: [AnyHashable: Any]? = nil
    ) throws {
        try setMetadata(metadata, forPersistentStoreOfType: storeType.rawValue, at: storeURL, options: options)
    }

    /// Deletes a store's files (and its `-wal`/`-shm` companions).
    ///
    /// Related Core Data documentation: [destroyPersistentStore(at:ofType:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/destroypersistentstore(at:oftype:options:))
    open func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws {
        let cls = try Self.storeClass(for: storeType)
        if persistentStore(for: url) != nil { postWillRemoveStore() }
        var removed: NSPersistentStore?
        defer { if let removed { postStoresDidChange(removed: [removed]) } }  // after the lock is released
        lock.withLock {
            if let store = stores.first(where: { $0.url?.standardizedFileURL == url.standardizedFileURL }) {
                stateLock.withLock { stores.removeAll { $0 === store } }
                removed = store
            }
        }
        if let removed { closeRemovedStore(removed) }  // every connection closed before the files go
        try lock.withLock { try cls.destroyStore(at: url, options: options) }
    }

    /// Deletes a store's files.
    ///
    /// Related Core Data documentation: [destroyPersistentStore(at:type:options:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/destroypersistentstore(at:type:options:))
    open func destroyPersistentStore(at url: URL, type: NSPersistentStore.StoreType, options: [AnyHashable: Any]? = nil) throws {
        try destroyPersistentStore(at: url, ofType: type.rawValue, options: options)
    }

    // MARK: Object IDs

    /// The object ID a `uriRepresentation()` stands for, if one of the stores holds its entity.
    ///
    /// Related Core Data documentation: [managedObjectID(forURIRepresentation:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/managedobjectid(foruirepresentation:))
    open func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        guard let uri = NSManagedObjectID._parseURIRepresentation(url),
              let entity = managedObjectModel.entitiesByName[uri.entityName] else { return nil }
        return stateLock.withLock {
            let host = uri.storeIdentifier
            guard let store = stores.first(where: { $0.identifier?.caseInsensitiveCompare(host) == .orderedSame }) as? NSIncrementalStore else { return nil }
            return store.newObjectID(for: entity, referenceObject: uri.referenceObject)
        }
    }

    // MARK: Requests

    /// Runs a request against the stores and returns its result (`[Any]` for fetches and saves).
    ///
    /// Related Core Data documentation: [execute(_:with:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/execute(_:with:))
    open func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext) throws -> Any {
        if let fetch = request as? NSFetchRequest<any NSFetchRequestResult> { return try executeFetch(fetch, context: context) }
        return try lock.withLock {
            switch request {
            case let save as NSSaveChangesRequest:
                try executeSave(save, context: context)
                return [Any]()
            default:
                let stores = request.affectedStores ?? self.stores
                guard let store = stores.first as? NSIncrementalStore else {
                    throw OpenCoreDataError(.persistentStoreUnsupportedRequestType, "no store can run \(type(of: request))")
                }
                return try store._withConnection(for: context, writing: true) { try store.execute(request, with: context) }
            }
        }
    }

    /// Runs `body`, a read of `context` from `store`: beside other requests when the store serves
    /// concurrent reads, else under the write lock (and only while the store is still added).
    @inline(__always)
    package func _read<R>(
        _ store: NSPersistentStore, for context: NSManagedObjectContext?, _ body: () throws -> R
    ) throws -> R {
        if store._servesConcurrentReads { return try store._withConnection(for: context, writing: false, body) }
        return try lock.withLock {
            guard stores.contains(where: { $0 === store }) else {
                throw OpenCoreDataError(.persistentStoreOperation, "the store was removed from the coordinator", url: store.url)
            }
            return try store._withConnection(for: context, writing: false, body)
        }
    }

    /// Runs `block` with the coordinator's lock held.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T { try lock.withLock { try block() } }

    /// Runs `block` asynchronously with the coordinator's lock held.
    open func perform(_ block: @escaping () -> Void) {
        let boxed = UncheckedSendable(block)
        DispatchQueue.global().async { self.lock.withLock { boxed.value() } }
    }

    /// Runs `block` with the coordinator's lock held, off the caller's thread, and returns its result.
    ///
    /// Related Core Data documentation: [perform(_:)](https://developer.apple.com/documentation/coredata/nspersistentstorecoordinator/perform(_:)-74udx)
    public func perform<T, E: Error>(_ block: @escaping () throws(E) -> T) async throws(E) -> T {
        let boxed = UncheckedSendable(block)
        let result: UncheckedSendable<Result<T, E>> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let outcome = self.lock.withLock { () -> Result<T, E> in
                    do throws(E) { return .success(try boxed.value()) } catch { return .failure(error) }
                }
                continuation.resume(returning: UncheckedSendable(outcome))
            }
        }
        return try result.value.get()
    }

    /// The stores that hold `entity` (by configuration), in the order they were added.
    package func stores(for entity: NSEntityDescription) -> [NSIncrementalStore] {
        stateLock.withLock { storesHoldingEntity(entity) }
    }

    /// ``stores(for:)`` with `stateLock` held.
    private func storesHoldingEntity(_ entity: NSEntityDescription) -> [NSIncrementalStore] {
        let key = ObjectIdentifier(entity)
        if let lastStores, lastStores.entity == key { return lastStores.stores }
        if let known = storesByEntity[key] {
            lastStores = (key, known)
            return known
        }
        let found = stores.compactMap { store -> NSIncrementalStore? in
            guard let store = store as? NSIncrementalStore else { return nil }
            let members = managedObjectModel.entities(forConfigurationName: store.configurationName) ?? []
            return members.contains { $0 === entity } ? store : nil
        }
        if !found.isEmpty {  // a model entity
            storesByEntity[key] = found
            lastStores = (key, found)
        }
        return found
    }

    private func executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext) throws -> Any {
        let targets = try stateLock.withLock { try fetchTargets(request) }
        if targets.count == 1 {
            let store = targets[0]
            return try _read(store, for: context) { try store.execute(request, with: context) }
        }
        return try combinedFetch(request, from: targets, context: context)
    }

    /// A context's fetch: ``execute(_:with:)`` for a fetch request, with the results as
    /// ``FetchResults``. The package's stores then hand their array back without boxing it in `Any`,
    /// which the context cast back (about 260 instructions a fetch, callgrind case 4), and managed
    /// objects as an `[NSManagedObject]`. A subclass that overrides ``execute(_:with:)`` gets the
    /// fetch there.
    package func _executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, with context: NSManagedObjectContext) throws -> FetchResults {
        guard Swift.type(of: self) == NSPersistentStoreCoordinator.self else {
            return .values(try execute(request, with: context) as? [Any] ?? [])
        }
        // A context's fetch copy is of the class itself: its entity is read where it is stored
        // (through its getter, it was a retain and a release a fetch).
        if request._affectedStores == nil, let entity = request._settings.entity.map(Unmanaged.passUnretained),
            let store = stateLock.withLock({ onlyStore(ofLast: ObjectIdentifier(entity.takeUnretainedValue())) })
        {
            return try _read(store, for: context) { try store._executeFetch(request, context: context) }
        }
        let targets = try stateLock.withLock { try fetchTargets(request) }
        if targets.count == 1 {
            // Borrowed from the array, which holds it: a store has a side table (weak references
            // to it), where a retain and its release cost about 110 instructions a fetch.
            return try withExtendedLifetime(targets) {
                try Unmanaged.passUnretained(targets[0])._withUnsafeGuaranteedRef { store in
                    try _read(store, for: context) { try store._executeFetch(request, context: context) }
                }
            }
        }
        return .values(try combinedFetch(request, from: targets, context: context))
    }

    /// A context's fetch of managed objects with `settings` (of the request itself: no affected
    /// stores) and the entity they resolve to, sent to the one store that holds the entity when
    /// that store plans it (``NSIncrementalStore/_plannedFetch(_:entity:context:)``); `nil` when a
    /// subclass of the coordinator runs fetches, the entity is in several stores or none, or the
    /// store does not plan the fetch (the context then runs it with a request).
    package func _plannedFetch(
        _ settings: UnsafePointer<FetchRequestSettings>, entity: NSEntityDescription, context: NSManagedObjectContext
    ) throws -> FetchResults? {
        guard Swift.type(of: self) == NSPersistentStoreCoordinator.self else { return nil }
        let key = ObjectIdentifier(entity)
        let found = stateLock.withLock { () -> NSIncrementalStore? in
            if lastStores?.entity != key { _ = storesHoldingEntity(entity) }  // remembered, if it has stores
            return onlyStore(ofLast: key)
        }
        guard let store = found else { return nil }
        return try _read(store, for: context) { try store._plannedFetch(settings, entity: entity, context: context) }
    }

    /// The only store of the entity with identity `key` when that is the entity
    /// ``storesHoldingEntity(_:)`` found last; `nil` when the entity found last is another, or has
    /// several stores. Called with `stateLock` held; the store is returned retained, so a read can
    /// run on it after the lock is let go.
    @inline(__always)
    private func onlyStore(ofLast key: ObjectIdentifier) -> NSIncrementalStore? {
        guard lastStores?.entity == key, lastStores?.stores.count == 1 else { return nil }
        return lastStores.unsafelyUnwrapped.stores.withUnsafeBufferPointer { $0[0] }
    }

    /// The stores a fetch goes to; called with `stateLock` held.
    private func fetchTargets(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> [NSIncrementalStore] {
        guard let entity = request.entity else {
            throw OpenCoreDataError(.coreDataError, "the fetch request has no entity", entityName: request.entityName)
        }
        return request.affectedStores?.compactMap { $0 as? NSIncrementalStore } ?? storesHoldingEntity(entity)
    }

    /// A fetch from several stores: their results in order, or the sum of their counts.
    private func combinedFetch(
        _ request: NSFetchRequest<any NSFetchRequestResult>, from targets: [NSIncrementalStore], context: NSManagedObjectContext
    ) throws -> [Any] {
        var combined: [Any] = []
        var total = 0
        for store in targets {
            let result = try _read(store, for: context) { try store._executeFetch(request, context: context).values }
            if request.resultType == .countResultType {
                total += result.first.flatMap { ValueConversion.int64($0) }.map(Int.init) ?? 0
            } else {
                combined.append(contentsOf: result)
            }
        }
        if request.resultType == .countResultType { return [total] }
        return combined
    }

    private func executeSave(_ request: NSSaveChangesRequest, context: NSManagedObjectContext) throws {
        // With one store every object is in it: the request goes through as it is.
        if stores.count == 1, let store = stores[0] as? NSIncrementalStore {
            if store.isReadOnly, !request._hasNoChanges { throw OpenCoreDataError(.persistentStoreSave, "the store is read-only", url: store.url) }
            _ = try store._withConnection(for: context, writing: true) { try store.execute(request, with: context) }
            return
        }
        if request._hasNoChanges {  // a save without changes: every store sees it, as with one store
            for case let store as NSIncrementalStore in stores {
                _ = try store._withConnection(for: context, writing: true) { try store.execute(request, with: context) }
            }
            return
        }
        var byStore: [ObjectIdentifier: (NSIncrementalStore, [[NSManagedObject]])] = [:]
        func add(_ objects: [NSManagedObject], _ kind: Int) {
            for object in objects {
                guard let store = object.objectID.persistentStore as? NSIncrementalStore else { continue }
                let key = ObjectIdentifier(store)
                if byStore[key] == nil { byStore[key] = (store, [[], [], [], []]) }
                byStore[key]!.1[kind].append(object)
            }
        }
        add(request.insertedList, 0)
        add(request.updatedList, 1)
        add(request.deletedList, 2)
        add(request.lockedList, 3)
        for (store, lists) in byStore.values {
            if store.isReadOnly {
                throw OpenCoreDataError(.persistentStoreSave, "the store is read-only", url: store.url)
            }
            let perStore = NSSaveChangesRequest(inserted: lists[0], updated: lists[1], deleted: lists[2], locked: lists[3])
            _ = try store._withConnection(for: context, writing: true) { try store.execute(perStore, with: context) }
        }
    }

    /// Loads the values of a fault from its store.
    package func newValues(for objectID: NSManagedObjectID, context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        guard let store = objectID.persistentStore as? NSIncrementalStore else {
            throw OpenCoreDataError(.persistentStoreOperation, "the object's store was removed", entityName: objectID.entity.name, objectID: objectID)
        }
        return try _read(store, for: context) { try store._newValuesResolvingOmittedToOnes(for: objectID, with: context) }
    }

    /// Loads the destination IDs of a relationship from its store.
    package func newValue(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID,
                          context: NSManagedObjectContext) throws -> Any {
        guard let store = objectID.persistentStore as? NSIncrementalStore else { return NSNull() }
        return try _read(store, for: context) {
            try store.newValue(forRelationship: relationship, forObjectWith: objectID, with: context)
        }
    }

    /// A new object's permanent identity from its store: an ID, or the store's primary key for a
    /// store whose IDs are its integer keys (``NSIncrementalStore/_obtainPermanentKeys(for:)``),
    /// which the object keeps and makes its ID from only if asked.
    package enum PermanentIdentity {
        case id(NSManagedObjectID)
        case row(Int64, ObjectIDStore)
    }

    /// The permanent identities of a list of objects: rows of one store (the common case: one
    /// SQLite store, kept as one array of keys, not an identity holding the store per object), or
    /// each object's.
    package enum PermanentIdentities {
        case rows([Int64], ObjectIDStore)
        case each([PermanentIdentity])
    }

    /// Asks each object's store for the permanent identities of `objects`, which all have
    /// temporary IDs, in the same order.
    package func _obtainPermanentIdentities(for objects: [NSManagedObject]) throws -> PermanentIdentities {
        try lock.withLock {
            // One store: check each entity once, then one call with every object.
            if stores.count == 1, let store = stores[0] as? NSIncrementalStore {
                var checked: Set<ObjectIdentifier> = []
                // Objects of one entity come together: one set probe per run, told apart by the
                // object's layout (one per entity; `entity` is an unowned reference to retain).
                var lastChecked: ObjectIdentifier?
                for object in objects where ObjectIdentifier(object._layout) != lastChecked {
                    let entity = object.entity
                    if checked.insert(ObjectIdentifier(entity)).inserted, stores(for: entity).isEmpty {
                        throw OpenCoreDataError(
                            .persistentStoreOperation, "no store holds entity \(entity.name ?? "?")",
                            entityName: entity.name)
                    }
                    lastChecked = ObjectIdentifier(object._layout)
                }
                return try store._withConnection(for: nil, writing: true) { () throws -> PermanentIdentities in
                    if let keys = try Self.permanentKeys(for: objects, from: store) {
                        return .rows(keys, store._objectIDStore)
                    }
                    return .each(try Self.permanentIdentities(for: objects, from: store))
                }
            }
            var byStore: [ObjectIdentifier: (NSIncrementalStore, [Int])] = [:]
            var storeForEntity: [ObjectIdentifier: NSIncrementalStore] = [:]
            for (i, object) in objects.enumerated() {
                let entityKey = ObjectIdentifier(object.entity)
                guard let store = storeForEntity[entityKey] ?? stores(for: object.entity).first else {
                    throw OpenCoreDataError(.persistentStoreOperation, "no store holds entity \(object.entity.name ?? "?")", entityName: object.entity.name)
                }
                storeForEntity[entityKey] = store
                byStore[ObjectIdentifier(store), default: (store, [])].1.append(i)
            }
            var result = [PermanentIdentity?](repeating: nil, count: objects.count)
            for (store, indices) in byStore.values {
                let identities = try store._withConnection(for: nil, writing: true) {
                    try Self.permanentIdentities(for: indices.map { objects[$0] }, from: store)
                }
                for (i, identity) in zip(indices, identities) { result[i] = identity }
            }
            return .each(result.map { $0! })
        }
    }

    /// The store's primary keys for `objects`, if it is a store whose IDs are its integer keys.
    private static func permanentKeys(
        for objects: [NSManagedObject], from store: NSIncrementalStore
    ) throws -> [Int64]? {
        guard let keys = try store._obtainPermanentKeys(for: objects) else { return nil }
        guard keys.count == objects.count else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store returned \(keys.count) keys for \(objects.count) objects")
        }
        return keys
    }

    private static func permanentIdentities(
        for objects: [NSManagedObject], from store: NSIncrementalStore
    ) throws -> [PermanentIdentity] {
        if let keys = try permanentKeys(for: objects, from: store) {
            let idStore = store._objectIDStore
            return keys.map { .row($0, idStore) }
        }
        let ids = try store.obtainPermanentIDs(for: objects)
        guard ids.count == objects.count else {
            throw OpenCoreDataError(
                .persistentStoreOperation, "the store returned \(ids.count) IDs for \(objects.count) objects")
        }
        return ids.map { .id($0) }
    }
}
