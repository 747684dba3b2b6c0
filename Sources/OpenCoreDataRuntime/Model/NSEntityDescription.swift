import Foundation
import Synchronization

/// A description of an entity: its name, class, properties and place in an inheritance tree.
///
/// ```swift
/// let country = NSEntityDescription()
/// country.name = "Country"
/// country.managedObjectClassName = NSStringFromClass(Country.self)
/// country.properties = [
///     NSAttributeDescription(name: "numericISO3166Code", type: .integer16AttributeType, isOptional: false),
///     NSAttributeDescription(name: "updatedAt", type: .dateAttributeType, isOptional: false),
/// ]
/// ```
///
/// `properties` returns inherited properties first, then the entity's own; setting it sets the
/// entity's own properties.
///
/// - Note: Linux: there is no Objective-C runtime to find a class by its bare name. A
///   `managedObjectClassName` of `"Module.Class"` (what `NSStringFromClass` returns) is found at once;
///   a bare `"Class"` is found once the class has been used with the model (`init(context:)`,
///   `fetch` of an `NSFetchRequest<Class>`, `entity()`), and until then objects are `NSManagedObject`.
///
/// Related Core Data documentation: [NSEntityDescription](https://developer.apple.com/documentation/coredata/nsentitydescription)
///
/// `@unchecked Sendable` invariant: mutated only while its model is built; read-only once in use.
/// The lazily computed layout is guarded by a lock.
open class NSEntityDescription: NSObject, @unchecked Sendable {
    /// The entity's name.
    open var name: String?
    /// The name of the class that represents the entity.
    open var managedObjectClassName: String! = "NSManagedObject"
    /// Whether the entity has no instances of its own.
    open var isAbstract: Bool = false
    /// Free-form information about the entity.
    open var userInfo: [AnyHashable: Any]?
    /// A string that makes the version hash differ when nothing else does.
    open var versionHashModifier: String?
    /// The name this entity had in the previous model version, for migrations.
    open var renamingIdentifier: String?
    /// Groups of property names (or descriptions) whose values must be unique together.
    open var uniquenessConstraints: [[Any]] = []
    /// The entity's fetch indexes; the SQLite store creates one SQL index for each.
    ///
    /// Related Core Data documentation: [indexes](https://developer.apple.com/documentation/coredata/nsentitydescription/indexes)
    open var indexes: [NSFetchIndexDescription] = [] {
        didSet { for index in indexes { index.entity = self } }
    }
    /// The model that holds this entity (not kept alive by it: see ``BackReference``).
    open internal(set) var managedObjectModel: NSManagedObjectModel! {
        get { _modelReference?.target }
        set { _modelReference = newValue?._reference }
    }
    @exclusivity(unchecked) private var _modelReference: BackReference<NSManagedObjectModel>?
    /// The parent entity.
    open internal(set) var superentity: NSEntityDescription? {
        get { _superentityReference?.target }
        set { _superentityReference = newValue?._reference }
    }
    // No run-time exclusivity check: walking up to the root entity reads it.
    @exclusivity(unchecked) private var _superentityReference: EntityReference?
    /// What back references to this entity hold instead of the entity (see ``BackReference``).
    package let _reference = EntityReference()

    private var _ownProperties: [NSPropertyDescription] = []
    private var _subentities: [NSEntityDescription] = []
    private let layoutCache = Locked<LayoutCache>(LayoutCache())
    private let layoutBits = Atomic<UInt>(0)
    private let retiredLayouts = Locked<[EntityLayout]>([])

    public override init() {
        super.init()
        _reference.attach(self)
    }

    deinit { _reference.detach() }

    /// Decodes an entity archived by ``encode(with:)``: its own properties, subentities and indexes.
    /// The superentity and the model are not decoded (the superentity's subentities link it); a
    /// decoded model links relationships to their destinations.
    ///
    /// Related Core Data documentation: [NSSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding)
    public required init?(coder: NSCoder) {
        super.init()
        _reference.attach(self)
        _archiveProblem = _decodeEntityFields(from: coder)
    }

    /// What was wrong in the archive this entity was decoded from, its properties' included; the
    /// model that holds it fails to decode (see ``ModelArchive/fail(_:_:)``).
    package private(set) final var _archiveProblem: String?

    /// Encodes the entity with the keys of Apple's compiled models (`NSEntityName`, `NSProperties`,
    /// ...; see ``NSManagedObjectModel/encode(with:)``).
    ///
    /// Related Core Data documentation: [NSCoding](https://developer.apple.com/documentation/foundation/nscoding)
    open func encode(with coder: NSCoder) { _encodeEntityFields(with: coder) }

    /// Convenience initializer (not Apple API) for models built in code.
    public convenience init(name: String, managedObjectClassName: String? = nil, properties: [NSPropertyDescription] = []) {
        self.init()
        self.name = name
        self.managedObjectClassName = managedObjectClassName ?? "NSManagedObject"
        self.properties = properties
    }

    /// All properties: inherited ones first, then the entity's own. Setting it sets the own ones.
    open var properties: [NSPropertyDescription] {
        get { (superentity?.properties ?? []) + _ownProperties }
        set {
            let inherited = Set((superentity?.properties ?? []).map(ObjectIdentifier.init))
            _ownProperties = newValue.filter { !inherited.contains(ObjectIdentifier($0)) }
            for property in _ownProperties { property.entity = self }
            invalidateLayout()
        }
    }

    /// The entity's own properties, without inherited ones.
    package var ownProperties: [NSPropertyDescription] { _ownProperties }

    /// The properties by name, inherited ones included.
    open var propertiesByName: [String: NSPropertyDescription] {
        Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { _, own in own })
    }
    /// The attributes by name, inherited ones included.
    open var attributesByName: [String: NSAttributeDescription] {
        propertiesByName.compactMapValues { $0 as? NSAttributeDescription }
    }
    /// The relationships by name, inherited ones included.
    open var relationshipsByName: [String: NSRelationshipDescription] {
        propertiesByName.compactMapValues { $0 as? NSRelationshipDescription }
    }

    /// The child entities. Setting it makes this entity their superentity.
    open var subentities: [NSEntityDescription] {
        get { _subentities }
        set {
            for old in _subentities where old.superentity === self { old.superentity = nil; old.invalidateLayout() }
            _subentities = newValue
            for child in newValue { child.superentity = self; child.invalidateLayout() }
            invalidateLayout()
        }
    }
    /// The child entities by name.
    open var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(_subentities.compactMap { e in e.name.map { ($0, e) } }, uniquingKeysWith: { a, _ in a })
    }

    /// The relationships whose destination is `entity`.
    open func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        properties.compactMap { $0 as? NSRelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    /// Whether this entity is `entity` or inherits from it.
    open func isKindOf(entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = self
        while let e = current {
            if e === entity { return true }
            current = e.superentity
        }
        return false
    }

    /// Returns the entity named `entityName` in the context's model.
    ///
    /// Related Core Data documentation: [entity(forEntityName:in:)](https://developer.apple.com/documentation/coredata/nsentitydescription/entity(forentityname:in:))
    open class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription? {
        context.persistentStoreCoordinator?.managedObjectModel._entity(named: entityName)
    }

    /// Creates an object of the named entity and inserts it in `context`.
    ///
    /// Returns a plain `NSManagedObject` that is not inserted (and logs) if the model has no such
    /// entity; Apple raises `NSInternalInconsistencyException` there.
    open class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext) -> NSManagedObject {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            reportMisuse("insertNewObject(forEntityName:into:): no entity named \(entityName) in the context's model")
            return NSManagedObject(entity: NSEntityDescription(name: entityName), insertInto: nil)
        }
        let cls = entity.layout.managedObjectClass
        return cls.init(entity: entity, insertInto: context)
    }

    open override var description: String {
        "(<NSEntityDescription>) name \(name ?? "nil"), managedObjectClassName \(managedObjectClassName ?? "nil"), superentity \(superentity?.name ?? "nil"), properties [\(properties.map(\.name).joined(separator: ", "))]"
    }

    // MARK: Layout

    /// The entity's slot layout (computed once, then shared by every object of the entity).
    ///
    /// Read on every object created and every row fetched, so the settled layout is published as an
    /// unretained pointer read with one atomic load. A layout is never freed while its entity lives:
    /// one invalidated by editing the model (before use, as Apple requires) is kept, so a reader
    /// that loaded the old pointer concurrently never sees freed memory.
    package var layout: EntityLayout {
        let bits = layoutBits.load(ordering: .acquiring)
        if bits != 0 { return Unmanaged<EntityLayout>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue() }
        return layoutCache.withLock { cache in
            if let layout = cache.layout { return layout }
            guard managedObjectModel != nil else {
                // No model's `deinit` will break entity <-> layout: the objects hold the layout,
                // which goes with the last of them (and then the entity, unless the app keeps it).
                // Never published for the unlocked read, since it can be freed.
                if let layout = cache.looseLayout { return layout }
                let made = EntityLayout(entity: self)
                cache.looseLayout = made
                return made
            }
            let made = EntityLayout(entity: self)
            cache.layout = made
            layoutBits.store(UInt(bitPattern: Unmanaged.passUnretained(made).toOpaque()), ordering: .releasing)
            return made
        }
    }

    /// The entity's layout: held for good (until its model goes) by an entity of a model, and
    /// only while objects hold it by an entity outside one.
    private struct LayoutCache {
        var layout: EntityLayout?
        weak var looseLayout: EntityLayout?
    }

    /// ``layout`` lent to `body` without a retain: the entity keeps it (once a fetch's layout was
    /// read only to note the fetched class, a retain and a release a fetch).
    @inline(__always)
    package func withLayout<R>(_ body: (EntityLayout) throws -> R) rethrows -> R {
        let bits = layoutBits.load(ordering: .acquiring)
        guard bits != 0 else { return try body(layout) }
        let layout = Unmanaged<EntityLayout>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
        return try layout._withUnsafeGuaranteedRef(body)
    }

    /// Drops the entity's layouts (its model is going): objects that hold one keep the entity
    /// alive through it; without objects, the entity and its layouts go.
    package func _releaseLayouts() {
        layoutCache.withLock { cache in
            layoutBits.store(0, ordering: .releasing)
            cache.layout = nil
        }
        retiredLayouts.withLock { $0.removeAll() }
    }

    package func invalidateLayout() {
        layoutCache.withLock { cache in
            layoutBits.store(0, ordering: .releasing)
            // A loose layout was never published for the unlocked read: nothing to keep.
            if let layout = cache.layout { retiredLayouts.withLock { $0.append(layout) } }
            cache = LayoutCache()
        }
        for child in _subentities { child.invalidateLayout() }
    }

    /// The root of the inheritance tree this entity belongs to.
    package var rootEntity: NSEntityDescription {
        var e = self
        while let parent = e.superentity { e = parent }
        return e
    }
}

/// How an entity's values are laid out in an object: one slot per property, inherited properties
/// first so a property has the same slot in an entity and all its subentities.
///
/// `@unchecked Sendable` invariant: immutable after init, except the class cache, which is locked.
package final class EntityLayout: @unchecked Sendable {
    /// A process-unique number, used by ``ManagedPropertyKey`` caches.
    package let id: UInt32
    /// Strong: objects reach their entity through their layout, and an object may outlive its
    /// context, coordinator and model (an error names it, an app keeps it). An unowned reference
    /// trapped there once the object's ID (which held the entity) was no longer made eagerly.
    /// The entity keeps its layout too; the cycle is broken when the model goes
    /// (``NSEntityDescription/_releaseLayouts()``), after which the layouts its objects hold keep
    /// it alive. An entity outside a model holds its layout weakly, so there is no cycle.
    package let entity: NSEntityDescription
    package let properties: [NSPropertyDescription]
    /// The name of each slot's property, read once (validation at save passes them per property
    /// and object; `NSPropertyDescription.name` is an `open` property, a dynamic call each time).
    package let names: [String]
    package let indexByName: [String: Int]
    /// `entity.propertiesByName`, built once for the hot paths (predicate checks, SQL compilation).
    package let propertiesByName: [String: NSPropertyDescription]
    /// Attribute type per slot (`nil` for relationships).
    package let attributeTypes: [NSAttributeType?]
    /// Relationship per slot (`nil` for attributes).
    package let relationships: [NSRelationshipDescription?]
    /// Slots that hold stored (non-transient) attributes.
    package let storedAttributeSlots: [Int]
    /// Slots that hold relationships.
    package let relationshipSlots: [Int]
    /// Slots of stored transformable attributes (their values pass through a value transformer).
    package let transformableSlots: [Int]
    /// Slots of stored composite attributes (their values are dictionaries the stores normalize).
    package let compositeSlots: [Int]
    /// Slots of derived attributes (read-only; computed at save).
    package let derivedSlots: [Int]
    /// Slots of stored properties that must have a value at save (required attributes and to-ones).
    package let requiredSlots: [Int]
    /// Slots of transient properties. Read per saved object (`hasPersistentChangedValues`), where
    /// asking each changed property's `open` getter cost about 90 instructions.
    package let transientSlots: [Int]
    /// Whether each slot's property is optional, read without a call on the property (validation of
    /// every `nil` value).
    package let isOptionalSlot: [Bool]
    /// Whether each slot's property has validation predicates, read per property of every object
    /// saved without a call (and a retain) on the property; `nil` for an app's subclass of a
    /// property class, whose `open` getter is asked each time.
    package let hasValidationPredicates: [Bool?]
    /// Whether every property is an attribute of a framework property class with no validation
    /// predicates and a typed field (``RowLayout``): then an object whose every value lies in its
    /// field, or is nil where the attribute is optional, passes the default
    /// `validateValue(_:forKey:)` for every property, and is checked in one pass
    /// (``NSManagedObject/_validateForSave()``).
    package let validatesInPlace: Bool
    /// Fetched properties by name. They have no slot: nothing of theirs is stored.
    package let fetchedPropertiesByName: [String: NSFetchedPropertyDescription]
    /// The values a new object starts with (defaults; empty to-many lists), computed once and shared
    /// copy-on-write by every new object and fault.
    package let initialValues: RowValues
    /// Where each slot's value lies in the objects' ``RowValues``.
    package let rowLayout: RowLayout
    /// The identity of the entity's root entity (the one whose primary keys it shares), found once:
    /// walking up the `superentity` links costs about 450 instructions.
    package let rootID: ObjectIdentifier
    private let classCache = Locked<NSManagedObject.Type?>(nil)
    /// The cached class's metadata pointer once it is settled (0 before): read without the lock on
    /// every object created and every fault made.
    private let classBits = Atomic<UInt>(0)
    /// The class whose instances' hook methods were looked up last, and in its three low bits
    /// what was found (``NSManagedObject/_keptMethods``); 0 before.
    package let keptMethods = Atomic<UInt>(0)

    private static let counter = Locked<UInt32>(0)

    init(entity: NSEntityDescription) {
        id = Self.counter.withLock { $0 &+= 1; return $0 }
        self.entity = entity
        var seen = [String: Int]()
        var props: [NSPropertyDescription] = []
        var fetched: [String: NSFetchedPropertyDescription] = [:]
        for property in entity.properties {
            if let property = property as? NSFetchedPropertyDescription {
                fetched[property.name] = property
                continue
            }
            if let existing = seen[property.name] {
                props[existing] = property  // an own property overrides an inherited one of the same name
            } else {
                seen[property.name] = props.count
                props.append(property)
            }
        }
        properties = props
        names = props.map(\.name)
        fetchedPropertiesByName = fetched
        indexByName = seen
        propertiesByName = seen.mapValues { props[$0] }
        attributeTypes = props.map { ($0 as? NSAttributeDescription)?.attributeType }
        relationships = props.map { $0 as? NSRelationshipDescription }
        hasValidationPredicates = props.map { $0._isFrameworkClass ? $0._hasValidationPredicates : nil }
        storedAttributeSlots = props.indices.filter { props[$0] is NSAttributeDescription && !props[$0].isTransient }
        relationshipSlots = props.indices.filter { props[$0] is NSRelationshipDescription }
        transformableSlots = props.indices.filter {
            !props[$0].isTransient && (props[$0] as? NSAttributeDescription)?.attributeType == .transformableAttributeType
        }
        derivedSlots = props.indices.filter { props[$0] is NSDerivedAttributeDescription }
        compositeSlots = props.indices.filter { !props[$0].isTransient && props[$0] is NSCompositeAttributeDescription }
        rowLayout = RowLayout(attributeTypes: attributeTypes)
        validatesInPlace = props.indices.allSatisfy { [rowLayout, attributeTypes, hasValidationPredicates] slot in
            props[slot] is NSAttributeDescription && !(props[slot] is NSDerivedAttributeDescription)
                && attributeTypes[slot] != nil && hasValidationPredicates[slot] == false
                && rowLayout.kinds[slot] != .any
        }
        var initial = RowValues(for: rowLayout)
        for (slot, property) in props.enumerated() {
            if let attribute = property as? NSAttributeDescription, let value = attribute.defaultValue {
                initial[slot] = ValueConversion.canonicalize(value, for: attribute.attributeType)
            } else if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                initial[slot] = relationship.isOrdered ? ManagedObjectList.ordered([]) : ManagedObjectList.unordered([])
            }
        }
        initialValues = initial
        rootID = ObjectIdentifier(entity.rootEntity)
        transientSlots = props.indices.filter { props[$0].isTransient }
        isOptionalSlot = props.map(\.isOptional)
        requiredSlots = props.indices.filter { slot in
            let property = props[slot]
            guard !property.isOptional, !property.isTransient else { return false }
            return (property as? NSRelationshipDescription)?.isToMany != true
        }
    }

    /// The class that represents the entity (see NSEntityDescription's Linux note).
    package var managedObjectClass: NSManagedObject.Type {
        #if !OCD_PORTABLE_RUNTIME
        let bits = classBits.load(ordering: .relaxed)
        if bits != 0 { return MetatypeBits.managedObjectClass(bits) }
        #endif
        if let cached = classCache.withLock({ $0 }) {
            // NSManagedObject itself is not settled: a subclass seen later replaces it.
            if cached != NSManagedObject.self { classBits.store(MetatypeBits.bits(of: cached), ordering: .relaxed) }
            return cached
        }
        guard let resolved = ManagedObjectClassRegistry.resolve(entity.managedObjectClassName) else {
            return NSManagedObject.self
        }
        // Noted as an object of the class notes it (cached, and registered for `entity()`): faults
        // are made from this class and do not note their own (see `NSManagedObject.init(entity:insertInto:)`).
        if resolved == NSManagedObject.self { classCache.withLock { $0 = resolved } } else { noteNewClass(resolved) }
        return resolved
    }

    /// Records the class that represents this entity, once the class is seen in use. Runs for every
    /// object created (not for faults, whose class is ``managedObjectClass``), so the common case
    /// (the class is already known) costs one atomic load.
    @inline(__always)
    package func noteClass(_ cls: NSManagedObject.Type) {
        if classBits.load(ordering: .relaxed) == MetatypeBits.bits(of: cls) { return }
        noteNewClass(cls)
    }

    /// Whether `type` is the class already noted (``noteClass(_:)``), checked without casting it:
    /// a fetch's result type is mostly its entity's class (the cast was about 35 instructions a
    /// fetch, callgrind case 4).
    @inline(__always)
    package func hasNotedClass(_ type: Any.Type) -> Bool {
        classBits.load(ordering: .relaxed) == MetatypeBits.bits(of: type)
    }

    private func noteNewClass(_ cls: NSManagedObject.Type) {
        guard cls != NSManagedObject.self else { return }
        let isNew = classCache.withLock { cached -> Bool in
            if cached == cls { return false }
            if cached == nil || cached == NSManagedObject.self { cached = cls }
            return true
        }
        if classCache.withLock({ $0 }) == cls { classBits.store(MetatypeBits.bits(of: cls), ordering: .relaxed) }
        guard isNew else { return }
        ManagedObjectClassRegistry.register(cls)
        ManagedObjectClassRegistry.noteEntity(entity, for: cls)
    }

}

/// Finds `NSManagedObject` subclasses by name without an Objective-C runtime.
package enum ManagedObjectClassRegistry {
    private static let byName = Locked<[String: NSManagedObject.Type]>([:])

    /// Not weak references, which would slow every retain of the entities (see ``BackReference``).
    private static let entities = Locked<[ObjectIdentifier: EntityReference]>([:])

    /// Remembers the entity a class was last used with, for `entity()`.
    package static func noteEntity(_ entity: NSEntityDescription, for cls: NSManagedObject.Type) {
        entities.withLock { $0[ObjectIdentifier(cls)] = entity._reference }
    }

    /// The entity a class was last used with.
    package static func entity(for cls: NSManagedObject.Type) -> NSEntityDescription? {
        entities.withLock { $0[ObjectIdentifier(cls)]?.target }
    }

    package static func register(_ cls: NSManagedObject.Type) {
        let qualified = String(reflecting: cls)
        let bare = qualified.split(separator: ".").last.map(String.init) ?? qualified
        byName.withLock { $0[qualified] = cls; if $0[bare] == nil { $0[bare] = cls } }
    }

    package static func resolve(_ name: String?) -> NSManagedObject.Type? {
        guard let name, !name.isEmpty, name != "NSManagedObject" else { return nil }
        if let known = byName.withLock({ $0[name] }) { return known }
        guard let cls = type(named: name, as: NSManagedObject.Type.self) else { return nil }
        register(cls)
        return cls
    }

    /// The type named `name` if it is a `T`: a module-qualified Swift name, or a bare name, as Xcode
    /// writes for "Current Product Module" (Apple's model compiler adds the module of the target that
    /// ships the model). Here a bare name is tried in the targets whose SwiftPM resource bundles
    /// (`<Package>_<Target>.resources`) sit beside the executable. Managed object classes and entity
    /// migration policies are found this way.
    ///
    /// A name that is not a dotted Swift identifier (a model file may hold anything) is not looked up:
    /// the runtime's demangler would read it as a mangled name.
    package static func type<T>(named name: String, as: T.Type) -> T? {
        guard isTypeName(name) else { return nil }
        if let found = lookUp(name, as: T.self) { return found }
        guard !name.contains(".") else { return nil }
        for module in candidateModules {
            if let found = lookUp("\(module).\(name)", as: T.self) { return found }
        }
        return nil
    }

    /// The type named `name` as a `T`. The looked-up metatype is unwrapped before the cast: with `T` a
    /// metatype, `_typeByName(name) as? T` compiles under `-O` to a cast of the optional that does not
    /// check for nil first, and an unknown name crashes a release build.
    private static func lookUp<T>(_ name: String, as: T.Type) -> T? {
        guard let found: any Any.Type = _typeByName(name) else { return nil }
        return found as? T
    }

    /// Whether `name` is one or more Swift identifiers joined by dots (`Item`, `Shop.Item`).
    package static func isTypeName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 1024 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            guard let first = part.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return part.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
        }
    }

    /// Module names of the program's SwiftPM targets that ship resources, found once.
    private static let candidateModules: [String] = {
        let directory = Bundle.main.executableURL?.deletingLastPathComponent() ?? Bundle.main.bundleURL
        let children = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var modules: [String] = []
        for child in children.sorted() where child.hasSuffix(".resources") || child.hasSuffix(".bundle") {
            let stem = child.split(separator: ".").first.map(String.init) ?? child
            // `<Package>_<Target>`: either part may hold underscores, so try every split.
            var index = stem.startIndex
            while let underscore = stem[index...].firstIndex(of: "_") {
                var target = String(stem[stem.index(after: underscore)...])
                if target.hasSuffix("-tool") { target.removeLast(5) }  // SwiftPM's host-build variant
                // A target's module name is its name with non-identifier characters as `_`.
                let module = String(target.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
                if !module.isEmpty, !modules.contains(module) { modules.append(module) }
                index = stem.index(after: underscore)
            }
        }
        return modules
    }()

    /// The bare class name (`Country` for `MyApp.Country`).
    package static func bareName(of cls: AnyClass) -> String {
        let qualified = String(reflecting: cls)
        return qualified.split(separator: ".").last.map(String.init) ?? qualified
    }
}

/// Reports a programming error that Apple answers with an Objective-C exception, without crashing.
package func reportMisuse(_ message: String) {
    FileHandle.standardError.write(Data("OpenCoreData: \(message)\n".utf8))
}
