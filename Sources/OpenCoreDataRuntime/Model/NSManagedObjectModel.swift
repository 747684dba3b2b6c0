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
    private let lookup = Locked<[String: NSEntityDescription]?>(nil)
    private let entityByClass = Locked<[ObjectIdentifier: NSEntityDescription]>([:])

    /// Identifiers the developer gives a model version (Xcode's "Version Identifier").
    open var versionIdentifiers: Set<AnyHashable> = []
    /// Localized entity and property names (stored; Core Data uses them in error messages).
    open var localizationDictionary: [String: String]?
    /// What the Xcode model file said that has no Core Data property yet (templates, indexes, ...).
    package var _xcodeModelFile: XcodeModelFileInfo?

    public override init() { super.init() }

    /// The entities, including subentities. Setting it makes this model their owner.
    open var entities: [NSEntityDescription] {
        get { _entities }
        set {
            _entities = newValue
            for entity in newValue {
                entity.managedObjectModel = self
                entity.invalidateLayout()
            }
            lookup.withLock { $0 = nil }
            entityByClass.withLock { $0.removeAll() }
        }
    }

    /// The entities by name.
    open var entitiesByName: [String: NSEntityDescription] {
        lookup.withLock { cache in
            if let cache { return cache }
            let made = Dictionary(_entities.compactMap { e in e.name.map { ($0, e) } }, uniquingKeysWith: { a, _ in a })
            cache = made
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
