import Foundation

extension NSManagedObjectContext {
    /// Runs a fetch request and returns its results, reflecting unsaved changes in this context
    /// (unless `includesPendingChanges` is off): deleted objects are left out, inserted and changed
    /// objects that match the predicate are included.
    ///
    /// Throws for an unknown entity, a predicate that did not parse, or a store error.
    ///
    /// Related Core Data documentation: [fetch(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/fetch(_:))
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        _assertOnQueue("fetch(_:)")
        // The block returns a type of its own, made `[T]` afterwards: a block returning `[T]` made
        // `performAndWait` look `[T]`'s metadata up on every call (about 330 instructions a fetch,
        // callgrind case 4).
        let outcome = try performAndWait { () throws(any Error) -> FetchOutcome in
            if case .objects(let objects, let ofClass)? = try _plannedFetch(request) {
                return .objects(objects, ofClass: ofClass)
            }
            var erased = try prepared(request)
            defer { _recycle(&erased) }
            let results = try _fetch(erased)  // a batched fetch's lazily loading objects included
            if T.self == NSNumber.self, erased.resultType == .countResultType { return .counts(results.values) }
            switch results {
            case .objects(let objects, let ofClass): return .objects(objects, ofClass: ofClass)
            case .values(let values): return .results(values)
            }
        }
        switch outcome {
        case .objects(let objects, let ofClass):
            return Self.typedResults(objects, ofClass: ofClass, as: T.self)
        case .counts(let counts):
            return counts.compactMap { ValueConversion.int64($0).map { NSNumber(value: $0) } as? T }
        case .results(var results):
            return Self.typedResults(&results, as: T.self)
        }
    }

    /// What `fetch(_:)`'s block found: managed objects (a store's or a batched fetch's), counts, or
    /// other results.
    private enum FetchOutcome {
        case objects([NSManagedObject], ofClass: ObjectIdentifier? = nil)
        case counts([Any])
        case results([Any])
    }

    /// `results` as `[T]`. Managed objects of exactly class `T` (a typed request's usual results)
    /// are taken without the runtime's general cast, which costs hundreds of instructions a row
    /// (docs/runtime-internals.md; `OCD_PORTABLE_RUNTIME` casts each).
    private static func typedResults<T>(_ results: inout [Any], as _: T.Type) -> [T] {
        #if !OCD_PORTABLE_RUNTIME
        if let cls = T.self as? AnyClass, let objects = takeObjects(from: &results, ofExactClass: cls) {
            // Every element is an instance of exactly `T`, a class: `[NSManagedObject]` and `[T]` then
            // hold the same references in the same layout. `fetch<T>` is compiled once for every `T`,
            // so building `[T]` element by element went through the generic `append` and `Any`'s value
            // witnesses (about 680 instructions per row, callgrind case 2).
            return unsafeBitCast(objects, to: [T].self)
        }
        #endif
        var typed: [T] = []
        typed.reserveCapacity(results.count)
        for result in results {
            if let value = result as? T { typed.append(value) }
        }
        return typed
    }

    /// `objects` as `[T]`: reinterpreted when every one is exactly of class `T` (see above), else
    /// through the general path. `ofClass`, the class the store found all of them to be, spares
    /// reading every object's class word.
    private static func typedResults<T>(_ objects: [NSManagedObject], ofClass: ObjectIdentifier?, as _: T.Type) -> [T] {
        #if !OCD_PORTABLE_RUNTIME
        if let exactClass = (T.self as? AnyClass).map(ObjectIdentifier.init),
            ofClass == exactClass || objects.allSatisfy({ ObjectIdentifier(type(of: $0)) == exactClass })
        {
            return unsafeBitCast(objects, to: [T].self)
        }
        #endif
        var boxed = objects.map { $0 as Any }
        return typedResults(&boxed, as: T.self)
    }

    /// `results`' managed objects moved into an `[NSManagedObject]`, if every element is a managed
    /// object boxed as `NSManagedObject` whose class is exactly `exactClass` (`results` is left
    /// holding `()`s); else `nil`, with `results` untouched.
    ///
    /// The references change hands without a retain and a release: each is a write to the object's
    /// header, a cache miss per row in a large fetch (`perf`, case 2 at N = 100,000; when the
    /// registry held objects weakly, a miss in each object's side table).
    #if !OCD_PORTABLE_RUNTIME
    private static func takeObjects(from results: inout [Any], ofExactClass exactClass: AnyClass) -> [NSManagedObject]? {
        let classMetadata = ValueConversion.metadata(of: exactClass)
        // First a check that reads the containers and the objects' class words only.
        let all = results.withUnsafeBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            for index in buffer.indices {
                let container = UnsafeRawPointer(base + index)
                guard ValueConversion.container(at: container, holds: NSManagedObject.self),
                    container.load(as: UnsafeRawPointer.self).load(as: UnsafeRawPointer.self) == classMetadata
                else { return false }
            }
            return true
        }
        guard all else { return nil }
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(results.count)
        results.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for index in buffer.indices {
                // The container's reference (+1) goes to `objects`; the container, no longer owning
                // it, is overwritten with a value that owns nothing.
                let reference = UnsafeRawPointer(base + index).load(as: Unmanaged<NSManagedObject>.self)
                objects.append(reference.takeRetainedValue())
                (base + index).initialize(to: ())
            }
        }
        return objects
    }
    #endif

    /// Runs a fetch request and returns all results as `NSFetchRequestResult`s.
    public func fetch(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> [Any] {
        _assertOnQueue("fetch(_:)")
        return try _untypedFetch(request)
    }

    /// The results of `request`, whatever their type (objects, IDs, dictionaries or a count), as
    /// ``fetch(_:)-(NSFetchRequest<any NSFetchRequestResult>)`` returns them.
    package func _untypedFetch<T>(_ request: NSFetchRequest<T>) throws -> [Any] {
        try performAndWait { () throws(any Error) -> [Any] in try _fetch(prepared(request)).values }
    }

    /// The number of objects a fetch request would return.
    ///
    /// Related Core Data documentation: [count(for:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/count(for:))
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        _assertOnQueue("count(for:)")
        return try performAndWait { () throws(any Error) -> Int in
            let erased = try prepared(request)
            if erased.includesPendingChanges, hasPendingChanges(for: erased.entity!) {
                erased.resultType = .managedObjectIDResultType
                return try _fetch(erased).count
            }
            erased.resultType = .countResultType
            let result: [Any]
            if _parentContext != nil {
                result = try _executeSourceFetch(erased).values  // the parent counts, its unsaved changes included
            } else {
                guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
                result = try coordinator.execute(erased, with: self) as? [Any] ?? []
            }
            return result.first.flatMap { ValueConversion.int64($0) }.map(Int.init) ?? 0
        }
    }

    /// Runs a request and returns its result, as Apple's stores answer each kind:
    /// - an ``NSAsynchronousFetchRequest`` returns its ``NSAsynchronousFetchResult`` at once and
    ///   fetches on the context's queue (see there);
    /// - a plain `NSFetchRequest<T>` fetches now (as ``fetch(_:)-(NSFetchRequest<T>)`` does) and returns an
    ///   `NSAsynchronousFetchResult<T>` whose `finalResult` holds the results (Apple's observed answer;
    ///   its documentation does not say), or an `NSAsynchronousFetchResult<any NSFetchRequestResult>`
    ///   when the request's `resultType` gives something other than `T` (IDs, dictionaries or a count
    ///   from a request typed for objects);
    /// - an `NSSaveChangesRequest` is sent to the stores and answers an empty `NSPersistentStoreResult`;
    /// - any other request goes to the coordinator, and its store's answer must be an
    ///   `NSPersistentStoreResult` (`NSPersistentStoreUnsupportedRequestTypeError`, 134091, if not).
    ///
    /// - Note: Linux: `NSAsynchronousFetchResult` is a Swift generic class, so a cast must name the
    ///   result type the request was made with (`as? NSAsynchronousFetchResult<Item>` for an
    ///   `NSFetchRequest<Item>`); Objective-C generics let any such cast succeed on Apple.
    ///
    /// Related Core Data documentation: [execute(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/execute(_:))
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        _assertOnQueue("execute(_:)")
        if let fetching = request as? any _OCDContextRequest { return try fetching._ocdExecute(in: self) }
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        let answer = try coordinator.execute(request, with: self)
        if let result = answer as? NSPersistentStoreResult { return result }
        if request is NSSaveChangesRequest { return NSPersistentStoreResult() }
        throw OpenCoreDataError(
            .persistentStoreUnsupportedRequestType,
            "the store answered \(type(of: request)) with \(type(of: answer)), not an NSPersistentStoreResult")
    }

    /// A type-erased copy of `request` with its entity resolved and its predicate checked.
    package func prepared<T>(_ request: NSFetchRequest<T>) throws -> NSFetchRequest<any NSFetchRequestResult> {
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        // Always a fresh copy, made directly: the stores see the resolved entity without it being set
        // on the caller's request, and no cast to the erased type is needed (`erased()`'s cast, and
        // the entity setter's second look at the name, were about 500 instructions a fetch,
        // callgrind case 4). Made first, and read through its stored settings: what a subclass's
        // getters return is what the stores see, and each getter call retained and released.
        // The last fetch's copy when it was handed back (``_recycle(_:)``): making and freeing one
        // was about 300 instructions a fetch (callgrind case 4).
        let copy = _spareFetchRequest.take() ?? NSFetchRequest<any NSFetchRequestResult>()
        copy.copySettings(from: request)
        let entity = try _checkedEntity(of: copy, model: coordinator.managedObjectModel, resultType: T.self)
        copy._setResolvedEntity(entity, byEntityName: copy._settings.entity == nil)
        // Only `propertiesToFetch` and `propertiesToGroupBy` are checked: rarely set, and then not nil.
        if copy._settings.hasRareSettings { try FetchDictionaryResults.validate(copy, entity: entity) }
        return copy
    }

    /// The entity `request` fetches, resolved against `model` (found by its name, or by
    /// ``NSFetchRequest/entityName``), noted as the entity of `resultType` when that is a managed
    /// object class, with the predicate and sort descriptors checked against it. `request` is of
    /// the class itself: its stored settings are read (in place: the settings passed as a value
    /// were copied, every reference in them retained and released).
    private func _checkedEntity<R, T>(
        of request: NSFetchRequest<R>, model: NSManagedObjectModel, resultType: T.Type
    ) throws -> NSEntityDescription {
        let entityName = request._settings.entityName
        guard
            let entity = request._settings.entity.flatMap({ e in e.name.flatMap(model._entity(named:)) })
                ?? entityName.flatMap(model._entity(named:))
        else {
            throw OpenCoreDataError(
                .coreDataError, "the model has no entity named \(entityName ?? "nil")", entityName: entityName)
        }
        entity.withLayout { layout in
            if !layout.hasNotedClass(T.self), let cls = T.self as? NSManagedObject.Type { layout.noteClass(cls) }
        }
        // Borrowed from the request, which holds it: read out as a value, it was retained and released.
        if let predicate = request._settings.predicate.map(Unmanaged.passUnretained) {
            try predicate._withUnsafeGuaranteedRef { try $0._ocdValidate(for: entity) }
        }
        if let sorts = request._settings.sortDescriptors { for sort in sorts { try sort._ocdValidate(for: entity) } }
        return entity
    }

    /// `request`'s fetch by a plan its store keeps (a format template's instance looked up in a
    /// loop: ``NSIncrementalStore/_plannedFetch(_:entity:context:)``), run on the request's own
    /// settings without the type-erasing copy ``prepared(_:)`` makes (copying, resolving onto the
    /// copy and clearing it for reuse were about 700 instructions a lookup, callgrind case 4). For a
    /// request of the class itself for managed objects, unbatched, with no affected stores or
    /// rarely set settings, whose predicate is a template's instance and whose entity has no unsaved
    /// changes to merge; `nil` otherwise, or when the store has no plan for it.
    private func _plannedFetch<T>(_ request: NSFetchRequest<T>) throws -> FetchResults? {
        guard NSFetchRequest<T>._isPlain(request), request._affectedStores == nil, !request._settings.hasRareSettings,
            request._settings.fetchBatchSize == 0, request._settings.resultType == .managedObjectResultType,
            request._settings.predicate.map(Unmanaged.passUnretained)?._withUnsafeGuaranteedRef({
                $0._templateOrigin != nil
            }) == true,
            _parentContext == nil, let coordinator = persistentStoreCoordinator
        else { return nil }
        let entity = try _checkedEntity(of: request, model: coordinator.managedObjectModel, resultType: T.self)
        if hasUnsavedObjects, request._settings.includesPendingChanges, hasPendingChanges(for: entity) { return nil }
        // The settings lent where they are stored: passed as a value, they were copied.
        return try withUnsafeMutablePointer(to: &request._settings) { settings in
            try coordinator._plannedFetch(UnsafePointer(settings), entity: entity, context: self)
        }
    }

    /// Keeps `request`, a copy from ``prepared(_:)`` that the fetch is done with, for the next one,
    /// unless something else holds it (a lazily loading result keeps its request). Its settings
    /// are emptied, so that it keeps no predicate, entity or store alive.
    private func _recycle(_ request: inout NSFetchRequest<any NSFetchRequestResult>) {
        guard isKnownUniquelyReferenced(&request) else { return }
        request._clearForReuse()
        _spareFetchRequest = request
    }

    /// Runs `request`, a copy from ``prepared(_:)`` (of the class itself: its stored settings are read).
    ///
    /// A child context fetches neither in batches (``_batchingEntity(_:)``) nor with prefetching:
    /// both read the stores directly, past the parent's unsaved changes (its objects' relationships
    /// fault in through the parent instead).
    package func _fetch(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> FetchResults {
        if let batched = try _batchedFetch(request) { return .objects(batched) }
        // Freshness (NSManagedObjectContext+Refreshing.swift): objects in memory take the rows read.
        let refreshes = request.shouldRefreshRefetchedObjects
        if refreshes { _changeLog.refreshesRefetchedObjects = true }
        defer { if refreshes { _changeLog.refreshesRefetchedObjects = false } }
        let results = try _fetchWithoutPrefetching(request)
        if _link.stalenessInterval >= 0, request.resultType == .managedObjectResultType { _noteRowTimes(of: results.managedObjects) }
        if request._settings.hasRareSettings, _parentContext == nil, request._settings.resultType == .managedObjectResultType,
            let keyPaths = request._settings.relationshipKeyPathsForPrefetching, !keyPaths.isEmpty
        {
            try _prefetch(keyPaths, for: results.managedObjects)
        }
        return results
    }

    package func _fetchWithoutPrefetching(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> FetchResults {
        // With nothing unsaved (most fetches) the entity is not read: a call and a retain.
        let merging =
            hasUnsavedObjects && request.includesPendingChanges && request.resultType != .dictionaryResultType
            && hasPendingChanges(for: request.entity!)
        guard merging else { return try _executeSourceFetch(request) }
        let entity = request.entity!

        // Fetch without limits, merge unsaved changes in memory, then sort and limit.
        let wantsIDs = request.resultType == .managedObjectIDResultType || request.resultType == .countResultType
        let storeRequest = NSFetchRequest<any NSFetchRequestResult>()
        storeRequest.copySettings(from: request)
        storeRequest.fetchLimit = 0
        storeRequest.fetchOffset = 0
        storeRequest.resultType = .managedObjectResultType
        let fetched = try _executeSourceFetch(storeRequest).managedObjects
        let matches = { (object: NSManagedObject) -> Bool in
            guard object.entity === entity || (request.includesSubentities && object.entity.isKindOf(entity: entity)) else { return false }
            return request.predicate?.evaluate(with: object) ?? true
        }
        var seen = Set<ObjectIdentifier>()
        var objects: [NSManagedObject] = []
        for object in fetched where !object._isDeleted {
            if changed.contains(object), !matches(object) { continue }
            if seen.insert(ObjectIdentifier(object)).inserted { objects.append(object) }
        }
        for object in Array(inserted.values) + Array(changed.values) where !object._isDeleted && matches(object) {
            if seen.insert(ObjectIdentifier(object)).inserted { objects.append(object) }
        }
        if request.sortDescriptors?.isEmpty == false { request.sortInMemory(&objects) }
        let slice = request.page(objects)
        if request.resultType == .countResultType { return .values([slice.count]) }
        if wantsIDs { return .values(slice.map { $0._objectID }) }
        if !request.returnsObjectsAsFaults { for object in slice { object._fireFault() } }
        return .objects(Array(slice))
    }

    /// Runs `request` where the context gets its rows: its parent context (which merges its own
    /// unsaved changes and its ancestors') or its coordinator's stores. With `includesPendingChanges`
    /// off a child goes to the stores too: no ancestor's unsaved changes are matched, and the rows
    /// are the stores' (objects the child has registered keep their values, as in any fetch). One
    /// branch, so that a context on a coordinator goes straight there.
    @inline(__always)
    package func _executeSourceFetch(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> FetchResults {
        if let parent = _parentContext, request.includesPendingChanges { return try parent._executeFetch(request, with: self) }
        guard let coordinator = persistentStoreCoordinator else { throw noCoordinator() }
        return try coordinator._executeFetch(request, with: self)
    }

    /// Whether any object is inserted, deleted or changed and not saved.
    private var hasUnsavedObjects: Bool { !(inserted.isEmpty && deleted.isEmpty && changed.isEmpty) }

    /// Whether unsaved changes could change the results of a fetch for `entity`.
    package func hasPendingChanges(for entity: NSEntityDescription) -> Bool {
        if !hasUnsavedObjects { return false }  // most fetches: no closures, no scans
        let root = entity.rootEntity
        let touches = { (object: NSManagedObject) in object.entity.rootEntity === root }
        return inserted.values.contains(where: touches) || deleted.values.contains(where: touches)
            || changed.values.contains { touches($0) && $0.isUpdated }
    }
}

