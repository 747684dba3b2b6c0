import Foundation

/// A property whose value is the result of a fetch request: a weak, one-way link to objects that
/// the store finds when the property is read, rather than a relationship saved with the object.
///
/// ```swift
/// // Each playlist lists the songs of its genre, whatever playlist they were added to.
/// let request = NSFetchRequest<any NSFetchRequestResult>(entityName: "Song")
/// request.predicate = NSPredicate(format: "genre == $FETCH_SOURCE.genre")
/// request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
/// let songsOfGenre = NSFetchedPropertyDescription()
/// songsOfGenre.name = "songsOfGenre"
/// songsOfGenre.fetchRequest = request
/// playlist.properties += [songsOfGenre]
/// // later
/// let songs = playlistObject.value(forKey: "songsOfGenre") as! [NSManagedObject]
/// ```
///
/// As on Apple platforms:
/// - the value is an array (ordered by the request's sort descriptors), fetched through the
///   object's context the first time it is read (`value(forKey:)`, or a `@ManagedProperty` of an
///   array type), so it reflects the context's unsaved changes like any fetch;
/// - it is then cached until the object turns into a fault; `refresh(_:mergeChanges:)` drops it, and
///   the next read fetches again. It does not follow later changes by itself;
/// - the predicate may use `$FETCH_SOURCE` (the object that owns the property) and
///   `$FETCHED_PROPERTY` (this description, for example `$FETCHED_PROPERTY.userInfo.tag`);
/// - nothing is saved: the property has no column, never appears in `changedValues()` or
///   `committedValues(forKeys:)`, and is not part of the entity's version hash.
///
/// Adding a store fails with `persistentStoreIncompatibleSchema` when a fetched property has no
/// fetch request or its request names an entity the model does not have; loading a model file with
/// such a fetched property fails, naming the file and line. A predicate in a model file that does
/// not parse is reported when the property is read, so the rest of the model stays usable.
///
/// - Note: Linux: a fetched property's value cannot be set (Apple's documentation does not say
///   what setting it does): `setValue(_:forKey:)` is ignored and logged, and
///   `setCheckedValue(_:forKey:)` throws. A fetch that fails when the value is read through
///   `value(forKey:)` is logged and reads as `nil`; ``NSManagedObject/checkedValue(forKey:)`` throws
///   the error instead. Key paths on `$FETCH_SOURCE` and `$FETCHED_PROPERTY` are resolved before the
///   fetch, so the store can run the rest of the predicate in SQL.
///
/// Related Core Data documentation: [NSFetchedPropertyDescription](https://developer.apple.com/documentation/coredata/nsfetchedpropertydescription)
///
/// `@unchecked Sendable` invariant: as for ``NSPropertyDescription``, mutated only while its model is
/// built and read-only once a coordinator uses the model.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The fetch request that produces the property's value.
    ///
    /// Related Core Data documentation: [fetchRequest](https://developer.apple.com/documentation/coredata/nsfetchedpropertydescription/fetchrequest)
    /// Its entity is held without being kept alive: the entity holds this property, so a strong
    /// reference back would keep a model read from a file alive forever.
    open var fetchRequest: NSFetchRequest<any NSFetchRequestResult>? {
        didSet { fetchRequest?._settings.holdEntityWithoutRetaining() }
    }

    /// Why the model file's predicate for this property did not parse; reading the property throws it.
    package var _predicateError: OpenCoreDataError?

    public override init() { super.init() }

    /// Decodes a fetched property and its fetch request (`NSFetchRequest`: entity name, predicate
    /// format, sort descriptors; see ``NSPropertyDescription/init(coder:)``).
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        let archived = ModelArchive.object(coder, "NSFetchRequest", [ArchivedFetchRequest.self]) as? ArchivedFetchRequest
        fetchRequest = archived?.request
        fetchRequest?._settings.holdEntityWithoutRetaining()  // an initializer's own assignment skips didSet
        _noteArchiveProblem(archived?.problem.map { "fetched property \(name): \($0)" })
    }

    /// Encodes the fetched property with the keys of Apple's compiled models (see ``NSPropertyDescription/encode(with:)``).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        if let fetchRequest {
            coder.encode(ArchivedFetchRequest(fetchRequest), forKey: "NSFetchRequest")
            ModelArchive.encode(fetchRequest.entityName, forKey: "_NSFetchRequestEntityName", with: coder)
        }
    }

    /// Convenience initializer (not Apple API) for models built in code.
    public convenience init(name: String, fetchRequest: NSFetchRequest<any NSFetchRequestResult>) {
        self.init()
        self.name = name
        self.fetchRequest = fetchRequest
        fetchRequest._settings.holdEntityWithoutRetaining()  // an initializer's own assignment skips didSet
    }

    open override var description: String {
        let request = fetchRequest.map { "\($0.entityName ?? "?") where \($0.predicate?.predicateFormat ?? "TRUEPREDICATE")" }
        return super.description + ", fetchRequest \(request ?? "nil")"
    }

    // MARK: Model checks

    /// The entity the request fetches in `model`, or `nil` if it names none of the model's entities.
    package func _destinationEntity(in model: NSManagedObjectModel) -> NSEntityDescription? {
        guard let request = fetchRequest else { return nil }
        if let entity = request.entity, model.entities.contains(where: { $0 === entity }) { return entity }
        return request.entityName.flatMap { model.entitiesByName[$0] }
    }

    /// Checks every fetched property of `model`: each needs a fetch request for one of the model's
    /// entities. Runs when a store is added, before any file is created.
    package static func _validateFetchedProperties(in model: NSManagedObjectModel) throws {
        for entity in model.entities {
            for case let fetched as NSFetchedPropertyDescription in entity.ownProperties
            where fetched._destinationEntity(in: model) == nil {
                throw fetched._noDestinationError(entityName: entity.name, objectID: nil)
            }
        }
    }

    private func _noDestinationError(entityName: String?, objectID: NSManagedObjectID?) -> OpenCoreDataError {
        let what = fetchRequest.map { "its fetch request names no entity of the model (\($0.entityName ?? "no entity name"))" }
            ?? "it has no fetch request"
        return OpenCoreDataError(
            .persistentStoreIncompatibleSchema, "fetched property \(entityName ?? "?").\(name): \(what)",
            entityName: entityName, key: name, objectID: objectID)
    }

    // MARK: The request for one object

    /// The request to run for `source`: a copy of ``fetchRequest`` whose predicate has
    /// `$FETCH_SOURCE` and `$FETCHED_PROPERTY` bound, and key paths on them resolved to constants.
    package func _request(for source: NSManagedObject, model: NSManagedObjectModel) throws -> NSFetchRequest<any NSFetchRequestResult> {
        guard let template = fetchRequest, let entity = _destinationEntity(in: model) else {
            throw _noDestinationError(entityName: source.entity.name, objectID: source.objectID)
        }
        if let error = _predicateError { throw error }
        let request = NSFetchRequest<any NSFetchRequestResult>()
        request.copySettings(from: template)
        request.entity = entity
        if let predicate = template.predicate {
            let bound = predicate.withSubstitutionVariables(["FETCH_SOURCE": source, "FETCHED_PROPERTY": self])
            request.predicate = FetchedPropertyVariables.resolvingConstantKeyPaths(in: bound, property: self)
        }
        return request
    }
}

/// Resolves key paths whose operand is a constant (what `$FETCH_SOURCE.name` and
/// `$FETCHED_PROPERTY.userInfo.tag` become once bound) into constants, so that the SQL compiler,
/// which needs key paths of the fetched entity on one side and constants on the other, can run them.
enum FetchedPropertyVariables {
    static func resolvingConstantKeyPaths(in predicate: NSPredicate, property: NSFetchedPropertyDescription) -> NSPredicate {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            let left = resolve(comparison.leftExpression, property)
            let right = resolve(comparison.rightExpression, property)
            if left === comparison.leftExpression, right === comparison.rightExpression { return comparison }
            return NSComparisonPredicate(
                leftExpression: left, rightExpression: right,
                modifier: comparison.comparisonPredicateModifier, type: comparison.predicateOperatorType,
                options: comparison.options)
        case let compound as NSCompoundPredicate:
            let parts = compound.subpredicates.compactMap { $0 as? NSPredicate }
            let resolved = parts.map { resolvingConstantKeyPaths(in: $0, property: property) }
            if zip(resolved, parts).allSatisfy({ $0 === $1 }) { return compound }
            return NSCompoundPredicate(type: compound.compoundPredicateType, subpredicates: resolved)
        default:
            return predicate
        }
    }

    /// `expression` with constant-operand key paths resolved; the same instance when there are none.
    private static func resolve(_ expression: NSExpression, _ property: NSFetchedPropertyDescription) -> NSExpression {
        switch expression._node {
        case .keyPath(let operand?, let path):
            let base = resolve(operand, property)
            if case .constant(let value) = base._node { return NSExpression(forConstantValue: self.value(of: value, keyPath: path)) }
            return base === operand ? expression : NSExpression(_node: .keyPath(operand: base, path: path))
        case .function(let name, let operand, let arguments):
            let newOperand = operand.map { resolve($0, property) }
            let newArguments = arguments.map { resolve($0, property) }
            if newOperand === operand, zip(newArguments, arguments).allSatisfy({ $0 === $1 }) { return expression }
            return NSExpression(_node: .function(name: name, operand: newOperand, arguments: newArguments))
        case .aggregate(let items):
            let newItems = items.map { resolve($0, property) }
            return zip(newItems, items).allSatisfy({ $0 === $1 }) ? expression : NSExpression(_node: .aggregate(newItems))
        default:
            return expression
        }
    }

    /// KVC on a bound variable: a managed object or dictionary as predicates read them, a property
    /// description by its public properties (`name`, `userInfo`, `entity`, ...).
    private static func value(of root: Any?, keyPath: String) -> Any? {
        guard let description = root as? NSPropertyDescription else { return PredicateKeyPath.value(of: root, keyPath: keyPath) }
        let (head, rest) = split(keyPath)
        let value: Any?
        switch head {
        case "name": value = description.name
        case "userInfo": value = description.userInfo
        case "entity": value = description.entity
        case "isOptional", "optional": value = description.isOptional
        case "isTransient", "transient": value = description.isTransient
        case "versionHashModifier": value = description.versionHashModifier
        case "renamingIdentifier": value = description.renamingIdentifier
        case "self", "SELF": return rest.map { self.value(of: description, keyPath: $0) } ?? description
        default: value = nil
        }
        return rest.map { PredicateKeyPath.value(of: value, keyPath: $0) } ?? value
    }

    private static func split(_ keyPath: String) -> (String, String?) {
        guard let dot = keyPath.firstIndex(of: ".") else { return (keyPath, nil) }
        return (String(keyPath[..<dot]), String(keyPath[keyPath.index(after: dot)...]))
    }
}
