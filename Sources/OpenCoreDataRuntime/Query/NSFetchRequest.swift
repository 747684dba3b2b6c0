import Foundation

/// A type a fetch can return: managed objects, object IDs, dictionaries or counts.
///
/// Related Core Data documentation: [NSFetchRequestResult](https://developer.apple.com/documentation/coredata/nsfetchrequestresult)
public protocol NSFetchRequestResult {}
extension NSManagedObject: NSFetchRequestResult {}
extension NSManagedObjectID: NSFetchRequestResult {}
extension NSDictionary: NSFetchRequestResult {}
extension NSNumber: NSFetchRequestResult {}

/// The kind of request a store executes.
///
/// Related Core Data documentation: [NSPersistentStoreRequestType](https://developer.apple.com/documentation/coredata/nspersistentstorerequesttype)
public enum NSPersistentStoreRequestType: UInt, Sendable {
    case fetchRequestType = 1
    case saveRequestType = 2
    case batchInsertRequestType = 5
    case batchUpdateRequestType = 6
    case batchDeleteRequestType = 7
}

/// A request a coordinator routes to its stores.
///
/// Related Core Data documentation: [NSPersistentStoreRequest](https://developer.apple.com/documentation/coredata/nspersistentstorerequest)
open class NSPersistentStoreRequest: NSObject {
    /// The stores the request goes to; `nil` means all that hold the entity.
    open var affectedStores: [NSPersistentStore]? {
        get { _affectedStores }
        set { _affectedStores = newValue }
    }
    /// ``affectedStores`` as stored: read and written directly where the request is known to be of
    /// the class itself (a context's copy), without the overridable accessors' dynamic calls.
    @exclusivity(unchecked) package final var _affectedStores: [NSPersistentStore]?
    /// The kind of request.
    open var requestType: NSPersistentStoreRequestType { .fetchRequestType }
    public override init() { super.init() }
}

/// What a fetch returns.
///
/// Related Core Data documentation: [NSFetchRequestResultType](https://developer.apple.com/documentation/coredata/nsfetchrequestresulttype)
public struct NSFetchRequestResultType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let managedObjectResultType = NSFetchRequestResultType([])
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1)
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 2)
    public static let countResultType = NSFetchRequestResultType(rawValue: 4)
}

/// A description of what to fetch: an entity, a predicate, a sort order and limits.
///
/// ```swift
/// let request = NSFetchRequest<Country>(entityName: "Country")
/// request.predicate = NSPredicate(format: "%K == %d", "numericISO3166Code", 616)
/// request.sortDescriptors = [NSSortDescriptor(key: "updatedAt", ascending: false)]
/// request.fetchLimit = 1
/// let countries = try context.fetch(request)
/// ```
///
/// Related Core Data documentation: [NSFetchRequest](https://developer.apple.com/documentation/coredata/nsfetchrequest)
open class NSFetchRequest<ResultType>: NSPersistentStoreRequest {
    // A request is configured and executed on one thread at a time (Apple's requests are not
    // thread-safe either), so its settings opt out of Swift's run-time exclusivity checks: a fetch
    // reads or copies every setting, and the checks were about 7% of a lookup's instructions.

    /// Every setting, stored together: a context copies a request for every fetch (see
    /// ``copySettings(from:)``), and one assignment replaced eighteen calls of overridable getters
    /// and setters. The public properties below read and write it.
    @exclusivity(unchecked) package final var _settings = FetchRequestSettings()

    /// The name of the entity to fetch.
    open var entityName: String? {
        get { _settings.entityName }
        set { _settings.entityName = newValue }
    }
    /// The entity to fetch; resolved from ``entityName`` against the context's model when not set.
    open var entity: NSEntityDescription? {
        get { _settings.entity }
        set { _settings.entity = newValue; if let name = newValue?.name { entityName = name } }
    }
    /// Which objects to return; `nil` returns all.
    open var predicate: NSPredicate? {
        get { _settings.predicate }
        set { _settings.predicate = newValue }
    }
    /// The order of the results.
    open var sortDescriptors: [NSSortDescriptor]? {
        get { _settings.sortDescriptors }
        set { _settings.sortDescriptors = newValue }
    }
    /// The most objects to return; 0 means no limit.
    open var fetchLimit: Int {
        get { _settings.fetchLimit }
        set { _settings.fetchLimit = newValue }
    }
    /// How many objects to skip.
    open var fetchOffset: Int {
        get { _settings.fetchOffset }
        set { _settings.fetchOffset = newValue }
    }
    /// Loads objects in batches of this size as they are accessed; 0 loads all at once.
    open var fetchBatchSize: Int {
        get { _settings.fetchBatchSize }
        set { _settings.fetchBatchSize = newValue }
    }
    /// Whether to return objects as faults (the default, as on Apple).
    open var returnsObjectsAsFaults: Bool {
        get { _settings.returnsObjectsAsFaults }
        set { _settings.returnsObjectsAsFaults = newValue }
    }
    /// Whether subentities' objects are included (default `true`).
    open var includesSubentities: Bool {
        get { _settings.includesSubentities }
        set { _settings.includesSubentities = newValue }
    }
    /// Whether property values are fetched with the objects.
    open var includesPropertyValues: Bool {
        get { _settings.includesPropertyValues }
        set { _settings.includesPropertyValues = newValue }
    }
    /// Whether unsaved changes in the context are taken into account (default `true`).
    open var includesPendingChanges: Bool {
        get { _settings.includesPendingChanges }
        set { _settings.includesPendingChanges = newValue }
    }
    /// What kind of result to return.
    open var resultType: NSFetchRequestResultType {
        get { _settings.resultType }
        set { _settings.resultType = newValue }
    }
    /// The properties to return in dictionary results: names, property descriptions, or
    /// ``NSExpressionDescription``s for computed and aggregate columns.
    ///
    /// Related Core Data documentation: [propertiesToFetch](https://developer.apple.com/documentation/coredata/nsfetchrequest/propertiestofetch)
    open var propertiesToFetch: [Any]? {
        get { _settings.propertiesToFetch }
        set { _settings.propertiesToFetch = newValue }
    }
    /// Whether dictionary results leave out rows equal to an earlier one.
    ///
    /// Related Core Data documentation: [returnsDistinctResults](https://developer.apple.com/documentation/coredata/nsfetchrequest/returnsdistinctresults)
    open var returnsDistinctResults: Bool {
        get { _settings.returnsDistinctResults }
        set { _settings.returnsDistinctResults = newValue }
    }
    /// The properties (names, descriptions or expression descriptions) whose values group dictionary
    /// results: one row per distinct combination, aggregates computed per group.
    ///
    /// Related Core Data documentation: [propertiesToGroupBy](https://developer.apple.com/documentation/coredata/nsfetchrequest/propertiestogroupby)
    ///
    /// - Note: Linux: both stores group in memory, over the objects the predicate selects (Apple's
    ///   SQLite store runs `GROUP BY` in SQL); the results are the same.
    open var propertiesToGroupBy: [Any]? {
        get { _settings.propertiesToGroupBy }
        set { _settings.propertiesToGroupBy = newValue }
    }
    /// A predicate over the grouped rows (their result names), as SQL's `HAVING`.
    ///
    /// Related Core Data documentation: [havingPredicate](https://developer.apple.com/documentation/coredata/nsfetchrequest/havingpredicate)
    open var havingPredicate: NSPredicate? {
        get { _settings.havingPredicate }
        set { _settings.havingPredicate = newValue }
    }
    /// Relationship key paths whose destinations are loaded with the results.
    open var relationshipKeyPathsForPrefetching: [String]? {
        get { _settings.relationshipKeyPathsForPrefetching }
        set { _settings.relationshipKeyPathsForPrefetching = newValue }
    }
    /// Whether objects the context already holds take the values just fetched (their unsaved changes
    /// kept on top) instead of keeping their values in memory (default `false`).
    ///
    /// Related Core Data documentation: [shouldRefreshRefetchedObjects](https://developer.apple.com/documentation/coredata/nsfetchrequest/shouldrefreshrefetchedobjects)
    open var shouldRefreshRefetchedObjects: Bool {
        get { _settings.shouldRefreshRefetchedObjects }
        set { _settings.shouldRefreshRefetchedObjects = newValue }
    }
    /// For an ID fetch (`managedObjectIDResultType`): a store may answer with one
    /// ``ObjectReferences`` instead of an ID per row (a lazily batched fetch's identities). Not a
    /// setting: `copySettings(from:)` leaves it.
    @exclusivity(unchecked) package var _wantsObjectReferences = false
    open override var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    public override init() { super.init() }

    /// Creates a request for the named entity.
    public convenience init(entityName: String) {
        self.init()
        self.entityName = entityName
    }

    open override var description: String {
        "<NSFetchRequest: entity \(entityName ?? "nil"), predicate \(predicate.map { "(\($0.predicateFormat))" } ?? "nil"), sortDescriptors \(sortDescriptors.map { "\($0.count)" } ?? "nil"), limit \(fetchLimit)>"
    }

    /// Runs the request in `context`'s queue-bound state.
    ///
    /// Related Core Data documentation: [execute()](https://developer.apple.com/documentation/coredata/nsfetchrequest/execute())
    open func execute() throws -> [ResultType] {
        guard let context = NSManagedObjectContext._current else {
            throw OpenCoreDataError(.coreDataError, "NSFetchRequest.execute() must run inside a context's perform block")
        }
        return try context.fetch(self)
    }

    /// Sets the entity a context resolved for this request (a fresh copy no one else sees): as the
    /// ``entity`` setter, but the name is only written when it differs. `byEntityName`: the entity
    /// was found by this request's ``entityName``, so the names are known to be equal (comparing
    /// them called the entity's overridable `name` getter, about 110 instructions a fetch).
    package final func _setResolvedEntity(_ entity: NSEntityDescription, byEntityName: Bool = false) {
        _settings.entity = entity
        if byEntityName { return }
        if let name = entity.name, name != entityName { entityName = name }
    }

    /// Empties a context's copy for its next fetch: every setting back to its default, the
    /// affected stores and the store's hint cleared.
    package final func _clearForReuse() {
        _settings = FetchRequestSettings()
        _affectedStores = nil
        _wantsObjectReferences = false
    }

    /// Whether `request` is an instance of `NSFetchRequest` itself, not of a subclass: its class's
    /// superclass is ``NSPersistentStoreRequest``. (`type(of: request) == NSFetchRequest<Other>.self`
    /// looked the generic class's metadata up at run time, about 350 instructions a fetch.)
    @inline(__always)
    package static func _isPlain(_ request: AnyObject) -> Bool {
        _getSuperclass(type(of: request)).map(ObjectIdentifier.init) == ObjectIdentifier(NSPersistentStoreRequest.self)
    }

    /// This request if it is of the class itself, else a copy of it that is (made through the
    /// subclass's accessors): what code reading ``_settings`` directly takes.
    package final func _ofTheClassItself() -> NSFetchRequest<ResultType> {
        if Self._isPlain(self) { return self }
        let copy = NSFetchRequest<ResultType>()
        copy.copySettings(from: self)
        return copy
    }

    /// Copies every setting of `other` into this request, a new one of the class itself (every
    /// caller makes one to copy into: its class is not looked at, about 30 instructions a fetch,
    /// callgrind case 4).
    ///
    /// A request of the class itself (not a subclass, which may override a setting's accessors) is
    /// copied from its stored settings in one assignment.
    package final func copySettings<Other>(from other: NSFetchRequest<Other>) {
        assert(Self._isPlain(self), "settings are copied into a request of the class itself")
        if Self._isPlain(other) {
            _settings = other._settings
            _affectedStores = other._affectedStores
            return
        }
        entityName = other.entityName
        _settings.entity = other.entity  // not the setter, which would set the name again
        predicate = other.predicate
        sortDescriptors = other.sortDescriptors
        fetchLimit = other.fetchLimit
        fetchOffset = other.fetchOffset
        fetchBatchSize = other.fetchBatchSize
        returnsObjectsAsFaults = other.returnsObjectsAsFaults
        includesSubentities = other.includesSubentities
        includesPropertyValues = other.includesPropertyValues
        includesPendingChanges = other.includesPendingChanges
        resultType = other.resultType
        propertiesToFetch = other.propertiesToFetch
        returnsDistinctResults = other.returnsDistinctResults
        propertiesToGroupBy = other.propertiesToGroupBy
        havingPredicate = other.havingPredicate
        relationshipKeyPathsForPrefetching = other.relationshipKeyPathsForPrefetching
        shouldRefreshRefetchedObjects = other.shouldRefreshRefetchedObjects
        affectedStores = other.affectedStores
    }

    /// Sorts objects by the request's sort descriptors in memory, breaking ties (and ordering an
    /// unsorted request) by primary key, so every store returns the same order.
    package func sortInMemory(_ objects: inout [NSManagedObject]) {
        let sorts = sortDescriptors ?? []
        objects.sort { a, b in
            for sort in sorts {
                let order = sort.compare(a, to: b)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return (a.objectID.primaryKey ?? 0) < (b.objectID.primaryKey ?? 0)
        }
    }

    /// The items `fetchOffset` and `fetchLimit` select.
    package func page<Item>(_ items: [Item]) -> ArraySlice<Item> {
        var slice = ArraySlice(items)
        if fetchOffset > 0 { slice = slice.dropFirst(fetchOffset) }
        if fetchLimit > 0 { slice = slice.prefix(fetchLimit) }
        return slice
    }
}

/// A request to save a context's changes, as a store receives it.
///
/// Related Core Data documentation: [NSSaveChangesRequest](https://developer.apple.com/documentation/coredata/nssavechangesrequest)
open class NSSaveChangesRequest: NSPersistentStoreRequest {
    /// The objects as the context hands them over; stores read these (no set is built per save).
    package private(set) var insertedList: [NSManagedObject]
    package private(set) var updatedList: [NSManagedObject]
    package private(set) var deletedList: [NSManagedObject]
    package private(set) var lockedList: [NSManagedObject]
    private var sets: [Set<NSManagedObject>?] = [nil, nil, nil, nil]
    /// Whether `sets` holds the answer (given to the Set initializer, `nil` included, or built).
    private var setsKnown = [false, false, false, false]

    /// Objects to insert.
    open var insertedObjects: Set<NSManagedObject>? { cachedSet(0, insertedList) }
    /// Objects to update.
    open var updatedObjects: Set<NSManagedObject>? { cachedSet(1, updatedList) }
    /// Objects to delete.
    open var deletedObjects: Set<NSManagedObject>? { cachedSet(2, deletedList) }
    /// Objects whose rows must not have changed since they were fetched.
    open var lockedObjects: Set<NSManagedObject>? { cachedSet(3, lockedList) }
    open override var requestType: NSPersistentStoreRequestType { .saveRequestType }

    /// Related Core Data documentation: [init(inserted:updated:deleted:locked:)](https://developer.apple.com/documentation/coredata/nssavechangesrequest/init(inserted:updated:deleted:locked:))
    public init(inserted: Set<NSManagedObject>?, updated: Set<NSManagedObject>?, deleted: Set<NSManagedObject>?, locked: Set<NSManagedObject>?) {
        // Designated, as Apple's is, so that a subclass can call it.
        insertedList = Array(inserted ?? [])
        updatedList = Array(updated ?? [])
        deletedList = Array(deleted ?? [])
        lockedList = Array(locked ?? [])
        sets = [inserted, updated, deleted, locked]
        setsKnown = [true, true, true, true]
        super.init()
    }

    /// The context's form: arrays, with Apple's set properties built only when asked for. (A
    /// convenience initializer: a second designated one would make subclasses' synthesized
    /// initializers recurse.)
    package convenience init(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject], locked: [NSManagedObject] = []) {
        self.init(inserted: nil, updated: nil, deleted: nil, locked: nil)
        insertedList = inserted
        updatedList = updated
        deletedList = deleted
        lockedList = locked
        setsKnown = [false, false, false, false]
    }

    private func cachedSet(_ index: Int, _ list: [NSManagedObject]) -> Set<NSManagedObject>? {
        if setsKnown[index] { return sets[index] }
        let built = Set(list)
        sets[index] = built
        setsKnown[index] = true
        return built
    }
}

/// The stored settings of an ``NSFetchRequest`` (of any result type), with Apple's defaults.
///
/// The four that most fetches leave unset (``propertiesToFetch``, ``propertiesToGroupBy``,
/// ``havingPredicate``, ``relationshipKeyPathsForPrefetching``) are kept out of line, in one
/// reference that is `nil` while they all are: a context's fetch copies the settings once and
/// frees them twice (its copy, and the caller's request), and each of the four was a reference
/// to retain or release every time (about 210 instructions a fetch, callgrind case 4).
package struct FetchRequestSettings {
    var entityName: String?
    /// The entity, held strongly (as Apple's `entity` is), unless ``holdEntityWithoutRetaining()``
    /// moved it to the rare settings.
    private var strongEntity: NSEntityDescription?
    var entity: NSEntityDescription? {
        get { strongEntity ?? rare?.entityBackReference?.target }
        set {
            strongEntity = newValue
            if rare?.entityBackReference != nil { updateRare { $0.entityBackReference = nil } }
        }
    }
    var predicate: NSPredicate?
    var sortDescriptors: [NSSortDescriptor]?
    var fetchLimit = 0
    var fetchOffset = 0
    var fetchBatchSize = 0
    var returnsObjectsAsFaults = true
    var includesSubentities = true
    var includesPropertyValues = true
    var includesPendingChanges = true
    var resultType = NSFetchRequestResultType.managedObjectResultType
    var returnsDistinctResults = false
    var shouldRefreshRefetchedObjects = false
    /// The rarely set settings; `nil` when all four are. Never changed in place once shared.
    private var rare: RareSettings?

    /// Whether one of the four rarely set settings is set.
    var hasRareSettings: Bool { rare != nil }

    var propertiesToFetch: [Any]? {
        get { rare?.propertiesToFetch }
        set { updateRare { $0.propertiesToFetch = newValue } }
    }
    var propertiesToGroupBy: [Any]? {
        get { rare?.propertiesToGroupBy }
        set { updateRare { $0.propertiesToGroupBy = newValue } }
    }
    var havingPredicate: NSPredicate? {
        get { rare?.havingPredicate }
        set { updateRare { $0.havingPredicate = newValue } }
    }
    var relationshipKeyPathsForPrefetching: [String]? {
        get { rare?.relationshipKeyPathsForPrefetching }
        set { updateRare { $0.relationshipKeyPathsForPrefetching = newValue } }
    }

    /// Keeps the entity without keeping it alive (a back reference): for a request that its own
    /// entity holds, a fetched property's, which would otherwise keep the entity, and through it the
    /// model's other entities, alive forever (a reference cycle).
    mutating func holdEntityWithoutRetaining() {
        guard let entity = strongEntity else { return }
        updateRare { $0.entityBackReference = entity._reference }
        strongEntity = nil
    }

    /// Changes the rare settings on a box of these settings' own (copied if shared), which goes
    /// when all four are unset again.
    private mutating func updateRare(_ change: (RareSettings) -> Void) {
        if rare == nil {
            rare = RareSettings()
        } else if !isKnownUniquelyReferenced(&rare!) {
            rare = rare!.copy()
        }
        change(rare!)
        if rare!.isEmpty { rare = nil }
    }

    private final class RareSettings {
        var propertiesToFetch: [Any]?
        var propertiesToGroupBy: [Any]?
        var havingPredicate: NSPredicate?
        var relationshipKeyPathsForPrefetching: [String]?
        /// The entity, when a back reference holds it (``holdEntityWithoutRetaining()``).
        var entityBackReference: EntityReference?

        var isEmpty: Bool {
            propertiesToFetch == nil && propertiesToGroupBy == nil && havingPredicate == nil
                && relationshipKeyPathsForPrefetching == nil && entityBackReference == nil
        }

        func copy() -> RareSettings {
            let copy = RareSettings()
            copy.propertiesToFetch = propertiesToFetch
            copy.propertiesToGroupBy = propertiesToGroupBy
            copy.havingPredicate = havingPredicate
            copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
            copy.entityBackReference = entityBackReference
            return copy
        }
    }
}
