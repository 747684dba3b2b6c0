import Foundation

/// A description of a whole object graph: its entities, configurations and fetch request templates.
///
/// ```swift
/// let model = NSManagedObjectModel()
/// model.entities = [moodEntity, countryEntity, continentEntity]
/// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
/// ```
///
/// Related Core Data documentation: [NSManagedObjectModel](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel)
///
/// `@unchecked Sendable` invariant: mutated only while being built; read-only once a coordinator
/// uses it (Apple raises on later mutation). Lazily computed lookups are guarded by a lock.
open class NSManagedObjectModel: NSObject, @unchecked Sendable {
    private var _entities: [NSEntityDescription] = []
    private var configurationEntities: [String: [NSEntityDescription]] = [:]
    private var fetchRequestTemplates: [String: NSFetchRequest<any NSFetchRequestResult>] = [:]
    private let lookup = Locked<EntityNameLookup>(EntityNameLookup())
    private let entityByClass = Locked<[ObjectIdentifier: NSEntityDescription]>([:])

    /// Identifiers the developer gives a model version (Xcode's "Version Identifier").
    open var versionIdentifiers: Set<AnyHashable> = []
    /// Localized entity and property names (stored; Core Data uses them in error messages).
    open var localizationDictionary: [String: String]?
    /// What the Xcode model file said that has no Core Data property yet (templates, indexes, ...).
    package var _xcodeModelFile: XcodeModelFileInfo?

    /// What back references to this model hold instead of the model (see ``BackReference``).
    package let _reference = BackReference<NSManagedObjectModel>()

    public override init() {
        super.init()
        _reference.attach(self)
    }

    /// Decodes a model archived by ``encode(with:)``, or any archive with the keys of Apple's
    /// compiled models that this framework writes: entities, configurations, fetch request
    /// templates and version identifiers, with every relationship linked to its destination and
    /// inverse. The decoded model has the version hashes of the archived one.
    ///
    /// ```swift
    /// let data = try NSKeyedArchiver.archivedData(withRootObject: model, requiringSecureCoding: true)
    /// let copy = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSManagedObjectModel.self, from: data)
    /// ```
    ///
    /// Related Core Data documentation: [NSSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding)
    public required init?(coder: NSCoder) {
        super.init()
        _reference.attach(self)
        guard _decodeModelFields(from: coder) else { return nil }
    }

    deinit {
        _reference.detach()
        // Each entity and its layout hold each other (`EntityLayout.entity`): let go here.
        for entity in _entities { entity._releaseLayouts() }
    }

    /// Encodes the model with the keys of Apple's compiled models (`NSEntities`, `NSProperties`, ...),
    /// so that the archive is a `.mom` that ``init(contentsOf:)`` loads with the same version hashes.
    /// See ``write(toCompiledModelAt:)`` and ``writeCompiledModelBundle(_:currentVersionName:to:)``.
    ///
    /// - Note: Linux: classes are archived under their Swift names (`OpenCoreDataRuntime.NSEntityDescription`),
    ///   as Foundation on Linux names every class; predicates and expressions as their format strings.
    ///
    /// Related Core Data documentation: [NSCoding](https://developer.apple.com/documentation/foundation/nscoding)
    open func encode(with coder: NSCoder) { _encodeModelFields(with: coder) }

    /// The entities, including subentities. Setting it makes this model their owner.
    open var entities: [NSEntityDescription] {
        get { _entities }
        set {
            for old in _entities where !newValue.contains(where: { $0 === old }) { old._releaseLayouts() }
            _entities = newValue
            for entity in newValue {
                entity.managedObjectModel = self
                entity.invalidateLayout()
            }
            lookup.withLock { $0 = EntityNameLookup() }
            entityByClass.withLock { $0.removeAll() }
        }
    }

    /// The entities by name.
    open var entitiesByName: [String: NSEntityDescription] {
        lookup.withLock { $0.byName(_entities) }
    }

    /// `entitiesByName[name]`, without copying the dictionary out of its lock, and without hashing
    /// `name` when it is the name asked for last: a fetch loop resolves one entity name over and over
    /// (the dictionary's copy and the hash were about 430 instructions a fetch, callgrind case 4).
    package func _entity(named name: String) -> NSEntityDescription? {
        lookup.withLock { lookup in
            if let last = lookup.last, last.name == name { return last.entity }
            guard let entity = lookup.byName(_entities)[name] else { return nil }
            lookup.last = (name, entity)
            return entity
        }
    }

    /// The lazily built name lookup; emptied when ``entities`` is set.
    private struct EntityNameLookup {
        var dictionary: [String: NSEntityDescription]?
        /// The last name ``_entity(named:)`` resolved.
        var last: (name: String, entity: NSEntityDescription)?

        mutating func byName(_ entities: [NSEntityDescription]) -> [String: NSEntityDescription] {
            if let dictionary { return dictionary }
            let made = Dictionary(entities.compactMap { e in e.name.map { ($0, e) } }, uniquingKeysWith: { a, _ in a })
            dictionary = made
            return made
        }
    }

    /// The names of the model's configurations, sorted (the default configuration is not listed).
    ///
    /// Related Core Data documentation: [configurations](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/configurations)
    open var configurations: [String] { configurationEntities.keys.sorted() }

    /// The names of the model's configurations (``configurations``).
    open var configurationNames: [String] { configurations }

    /// The entities in a configuration; `nil` for the default configuration's (all entities).
    open func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration, configuration != "Default", configuration != "PF_DEFAULT_CONFIGURATION_NAME" else {
            return _entities
        }
        return configurationEntities[configuration]
    }

    /// Sets the entities of a configuration.
    open func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        configurationEntities[configuration] = entities
    }

    /// The fetch request template with the given name.
    open func fetchRequestTemplate(forName name: String) -> NSFetchRequest<any NSFetchRequestResult>? {
        fetchRequestTemplates[name]
    }

    /// Stores a fetch request template.
    open func setFetchRequestTemplate(_ fetchRequestTemplate: NSFetchRequest<any NSFetchRequestResult>?, forName name: String) {
        fetchRequestTemplates[name] = fetchRequestTemplate
    }

    /// The names of the fetch request templates, by name.
    open var fetchRequestTemplatesByName: [String: NSFetchRequest<any NSFetchRequestResult>] { fetchRequestTemplates }

    open override var description: String {
        "(<NSManagedObjectModel>) entities [\(_entities.compactMap(\.name).joined(separator: ", "))]"
    }

    /// The entity whose `managedObjectClassName` names `cls` (qualified or bare).
    package func entity(forClass cls: NSManagedObject.Type) -> NSEntityDescription? {
        if let cached = entityByClass.withLock({ $0[ObjectIdentifier(cls)] }) { return cached }
        guard let found = findEntity(forClass: cls) else { return nil }
        entityByClass.withLock { $0[ObjectIdentifier(cls)] = found }
        return found
    }

    private func findEntity(forClass cls: NSManagedObject.Type) -> NSEntityDescription? {
        let qualified = String(reflecting: cls)
        let bare = ManagedObjectClassRegistry.bareName(of: cls)
        if let e = _entities.first(where: { $0.managedObjectClassName == qualified }) { return e }
        if let e = _entities.first(where: {
            guard let n = $0.managedObjectClassName else { return false }
            return n == bare || n.hasSuffix("." + bare)
        }) { return e }
        return entitiesByName[bare]
    }
}
