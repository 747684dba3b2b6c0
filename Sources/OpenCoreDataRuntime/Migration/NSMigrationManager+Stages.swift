import Foundation

// The three stages of a migration (Core Data Model Versioning and Data Migration Programming Guide,
// "Customizing the Migration Process"): for every entity mapping in order, the policy creates the
// destination instances; then, mapping by mapping, their relationships; then it validates them.
// The destination is written to a file beside the target and moved there only at the end.

extension NSMigrationManager {
    /// The stages of one migration, the policies they use, and the error they report.
    private enum Stage: String {
        case creatingInstances = "creating destination instances"
        case creatingRelationships = "creating relationships"
        case validating = "validating"
        case saving = "saving the destination"
    }

    func _migrateInStages(
        from sourceURL: URL, type sStoreType: String, class sourceClass: NSPersistentStore.Type,
        options sOptions: [AnyHashable: Any]?, mapping: NSMappingModel, to dURL: URL, type dStoreType: String,
        class destinationClass: NSPersistentStore.Type, options dOptions: [AnyHashable: Any]?, appending: Bool
    ) throws {
        _associations = [:]
        let mappings = mapping.entityMappings ?? []
        let directory = dURL.deletingLastPathComponent()
        let tag = UUID().uuidString
        // The source is read from a consistent copy, so not even side files appear next to it.
        var readURL = sourceURL
        var sourceCopy: URL?
        if let migrating = sourceClass as? any MigratingPersistentStore.Type {
            let copy = directory.appendingPathComponent(".\(dURL.lastPathComponent).source-\(tag)")
            try migrating.copyStoreForMigration(from: sourceURL, to: copy)
            sourceCopy = copy
            readURL = copy
        }
        let fileBackedDestination = dStoreType != NSInMemoryStoreType
        let writeURL =
            fileBackedDestination
            ? directory.appendingPathComponent(".\(dURL.lastPathComponent).migrating-\(tag)") : dURL
        if appending, let migrating = destinationClass as? any MigratingPersistentStore.Type {
            try migrating.copyStoreForMigration(from: dURL, to: writeURL)
        }
        let sourceCoordinator = NSPersistentStoreCoordinator(managedObjectModel: sourceModel)
        let destinationCoordinator = NSPersistentStoreCoordinator(managedObjectModel: destinationModel)
        func closeAll() {
            for coordinator in [sourceCoordinator, destinationCoordinator] {
                for store in coordinator.persistentStores where store.type != NSInMemoryStoreType {
                    try? coordinator.remove(store)
                }
            }
        }
        defer {
            if let sourceCopy { try? sourceClass.destroyStore(at: sourceCopy, options: nil) }
        }
        var stage = Stage.creatingInstances
        var failing: NSEntityMapping?
        do {
            var readOptions = sOptions ?? [:]
            readOptions[NSMigratePersistentStoresAutomaticallyOption] = false
            readOptions[NSReadOnlyPersistentStoreOption] =
                sourceCopy == nil ? readOptions[NSReadOnlyPersistentStoreOption] : true
            try sourceCoordinator.addPersistentStore(
                ofType: sStoreType, configurationName: nil, at: readURL, options: readOptions)
            try destinationCoordinator.addPersistentStore(
                ofType: dStoreType, configurationName: nil, at: writeURL, options: dOptions)
            let sourceContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            sourceContext.persistentStoreCoordinator = sourceCoordinator
            let destinationContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            destinationContext.persistentStoreCoordinator = destinationCoordinator
            self.sourceContext = sourceContext
            self.destinationContext = destinationContext

            var policies: [NSEntityMigrationPolicy] = []
            for entityMapping in mappings {
                failing = entityMapping
                policies.append(try _policy(for: entityMapping))
            }
            let steps = Float(max(1, mappings.count * 3))
            var done: Float = 0
            for (entityMapping, policy) in zip(mappings, policies) {
                failing = entityMapping
                currentEntityMapping = entityMapping
                try policy.begin(entityMapping, with: self)
                for source in try _sourceInstances(for: entityMapping, policy: policy) {
                    try _checkCancellation()
                    try policy.createDestinationInstances(forSource: source, in: entityMapping, manager: self)
                }
                try policy.endInstanceCreation(forMapping: entityMapping, manager: self)
                try _checkCancellation()
                done += 1
                migrationProgress = done / steps
            }
            stage = .creatingRelationships
            for (entityMapping, policy) in zip(mappings, policies) {
                failing = entityMapping
                currentEntityMapping = entityMapping
                for destination in destinationInstances(
                    forEntityMappingName: entityMapping.name ?? "", sourceInstances: nil)
                {
                    try _checkCancellation()
                    try policy.createRelationships(forDestination: destination, in: entityMapping, manager: self)
                }
                try policy.endRelationshipCreation(forMapping: entityMapping, manager: self)
                try _checkCancellation()
                done += 1
                migrationProgress = done / steps
            }
            stage = .validating
            for (entityMapping, policy) in zip(mappings, policies) {
                failing = entityMapping
                currentEntityMapping = entityMapping
                try policy.performCustomValidation(forMapping: entityMapping, manager: self)
                for destination in destinationInstances(
                    forEntityMappingName: entityMapping.name ?? "", sourceInstances: nil)
                where !destination.isDeleted {
                    try destination.validateForInsert()
                }
                try policy.end(entityMapping, manager: self)
                try _checkCancellation()
                done += 1
                migrationProgress = done / steps
            }
            stage = .saving
            failing = nil
            try destinationContext.save()
            closeAll()
            if fileBackedDestination { try Self._moveStoreFiles(from: writeURL, to: dURL) }
            migrationProgress = 1
        } catch {
            closeAll()
            // Partial results are not kept: the contexts go with the failed migration.
            sourceContext = nil
            destinationContext = nil
            if fileBackedDestination {
                try? destinationClass.destroyStore(at: writeURL, options: nil)
                for suffix in ["-wal", "-shm", "-journal"] {
                    try? FileManager.default.removeItem(atPath: writeURL.path + suffix)
                }
            }
            throw Self._migrationError(error, mapping: failing, stage: stage.rawValue, url: sourceURL)
        }
    }

    /// The error a failed migration throws: the cause, with the entity mapping and stage in the
    /// message (cancellation as 134120, Cocoa errors keep their code, others become 134110).
    private static func _migrationError(_ error: any Error, mapping: NSEntityMapping?, stage: String, url: URL)
        -> OpenCoreDataError
    {
        let place =
            mapping.map { "entity mapping \"\($0.name ?? "?")\" (\(stage))" } ?? stage
        let entity = mapping?.destinationEntityName ?? mapping?.sourceEntityName
        if var ours = error as? OpenCoreDataError {
            if ours.code == .migrationCancelled, ours.message.hasPrefix("migration failed") { return ours }
            ours.message = "migration failed in \(place); the source store is unchanged: \(ours.message)"
            ours.entityName = ours.entityName ?? entity
            ours.url = ours.url ?? url
            return ours
        }
        return OpenCoreDataError(
            .migration, "migration failed in \(place); the source store is unchanged: \(error)", entityName: entity,
            url: url, underlyingError: error as NSError)
    }

    /// Throws 134120 with the error given to ``cancelMigrationWithError(_:)``.
    func _checkCancellation() throws {
        guard
            let cancellation = _cancellation.withLock({ value in
                defer { value = nil }
                return value
            })
        else { return }
        throw OpenCoreDataError(
            .migrationCancelled, "the migration was cancelled: \(cancellation.description)",
            underlyingError: cancellation.error)
    }

    /// The policy of an entity mapping: an instance of its policy class, or the default policy.
    private func _policy(for mapping: NSEntityMapping) throws -> NSEntityMigrationPolicy {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty else { return NSEntityMigrationPolicy() }
        guard let cls = EntityMigrationPolicyClassRegistry.resolve(name) else {
            throw OpenCoreDataError(
                .migration,
                "no NSEntityMigrationPolicy subclass named \(name) (on Linux give the module-qualified Swift name, e.g. MyModule.\(name.split(separator: ".").last ?? ""))"
            )
        }
        return cls.init()
    }

    /// The source instances of a mapping: its source expression's value (Xcode's `FETCH(…)`), or
    /// every instance of its source entity (without subentities) when it has none.
    private func _sourceInstances(for mapping: NSEntityMapping, policy: NSEntityMigrationPolicy) throws
        -> [NSManagedObject]
    {
        switch mapping.mappingType {
        case .addEntityMappingType, .removeEntityMappingType: return []
        default: break
        }
        guard let entityName = mapping.sourceEntityName else { return [] }
        guard let expression = mapping.sourceExpression else {
            return try sourceContext.fetch(
                _fetchRequest(forSourceEntityNamed: entityName, predicateString: "TRUEPREDICATE")
            )
            .compactMap { $0 as? NSManagedObject }
        }
        // FETCH(request, context, countOnly): fetched here so that a store error is thrown, not dropped.
        if expression.expressionType == .function, expression.function == "FETCH", let arguments = expression.arguments,
            arguments.count == 3
        {
            let request = try _evaluate(
                arguments[0], source: nil, destination: nil, mapping: mapping, propertyMapping: nil, policy: policy)
            guard let request = request as? NSFetchRequest<any NSFetchRequestResult> else {
                throw OpenCoreDataError(
                    .migration,
                    "the source expression of entity mapping \(mapping.name ?? "?") does not make a fetch request")
            }
            return try sourceContext.fetch(request).compactMap { $0 as? NSManagedObject }
        }
        let value = try _evaluate(
            expression, source: nil, destination: nil, mapping: mapping, propertyMapping: nil, policy: policy)
        // A bare fetch request (what a compiled `.cdm` keeps of Xcode's FETCH) is fetched in the source.
        if let request = value as? NSFetchRequest<any NSFetchRequestResult> {
            return try sourceContext.fetch(request).compactMap { $0 as? NSManagedObject }
        }
        return MigrationValues.managedObjects(in: value)
    }

    /// Apple's `fetchRequestForSourceEntityNamed:predicateString:`: the entity's own instances
    /// (subentities have mappings of their own, so Xcode's generated mappings would otherwise
    /// migrate them twice).
    func _fetchRequest(forSourceEntityNamed name: String, predicateString: String) throws
        -> NSFetchRequest<any NSFetchRequestResult>
    {
        guard sourceModel.entitiesByName[name] != nil else {
            throw OpenCoreDataError(.migration, "the source model has no entity named \(name)", entityName: name)
        }
        let request = NSFetchRequest<any NSFetchRequestResult>(entityName: name)
        request.includesSubentities = false
        request.predicate = try NSPredicate(validatingFormat: predicateString)
        return request
    }

    /// Evaluates a mapping expression with Apple's variables (`$manager`, `$source`,
    /// `$destination`, `$entityMapping`, `$propertyMapping`, `$entityPolicy`), rethrowing an error
    /// a policy function threw inside it.
    func _evaluate(
        _ expression: NSExpression, source: NSManagedObject?, destination: NSManagedObject?, mapping: NSEntityMapping,
        propertyMapping: NSPropertyMapping?, policy: NSEntityMigrationPolicy
    ) throws -> Any? {
        var bindings: [String: Any] = [
            NSMigrationManagerKey: self, NSMigrationEntityMappingKey: mapping, NSMigrationEntityPolicyKey: policy,
        ]
        if let source { bindings[NSMigrationSourceObjectKey] = source }
        if let destination { bindings[NSMigrationDestinationObjectKey] = destination }
        if let propertyMapping { bindings[NSMigrationPropertyMappingKey] = propertyMapping }
        policy._manager = self
        _expressionError = nil
        _currentPropertyMapping = propertyMapping
        defer { _currentPropertyMapping = nil }
        let value = PredicateEvaluator.value(
            of: expression, object: source, scope: EvaluationScope(bindings: bindings, context: nil))
        if let error = _expressionError {
            _expressionError = nil
            throw error
        }
        return value
    }

    /// Moves a closed store file (and any side files) to where the migration should leave it.
    private static func _moveStoreFiles(from source: URL, to destination: URL) throws {
        let manager = FileManager.default
        for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: destination.path + suffix) {
            try manager.removeItem(atPath: destination.path + suffix)
        }
        // rename(2) replaces an existing destination (a later pass) atomically.
        guard rename(source.path, destination.path) == 0 else {
            throw OpenCoreDataError(
                .migration, "cannot move the migrated store into place (errno \(errno))", url: destination)
        }
        for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: source.path + suffix) {
            try manager.moveItem(atPath: source.path + suffix, toPath: destination.path + suffix)
        }
    }
}

// MARK: FUNCTION($manager, …) and FUNCTION($entityPolicy, …)

extension NSMigrationManager: ExpressionFunctionReceiver {
    package func _expressionFunction(_ selector: String, arguments: [Any?]) -> Any? {
        func string(_ index: Int) -> String? {
            index < arguments.count ? arguments[index].flatMap { PredicateValues.normalize($0) as? String } : nil
        }
        func objects(_ index: Int) -> [NSManagedObject]? {
            guard index < arguments.count, let value = PredicateValues.normalize(arguments[index]) else { return nil }
            return MigrationValues.managedObjects(in: value)
        }
        do {
            switch selector {
            case "destinationInstancesForEntityMappingNamed:sourceInstances:":
                guard let name = string(0) else { break }
                return destinationInstances(forEntityMappingName: name, sourceInstances: objects(1) ?? [])
            case "sourceInstancesForEntityMappingNamed:destinationInstances:":
                guard let name = string(0) else { break }
                return sourceInstances(forEntityMappingName: name, destinationInstances: objects(1) ?? [])
            case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
                return _destinationInstances(forSourceInstances: objects(1) ?? [])
            case "fetchRequestForSourceEntityNamed:predicateString:":
                guard let name = string(0) else { break }
                return try _fetchRequest(forSourceEntityNamed: name, predicateString: string(1) ?? "TRUEPREDICATE")
            case "valueForKey:", "valueForKeyPath:":
                guard let key = string(0) else { break }
                return PredicateKeyPath.value(of: self, keyPath: key)
            default:
                throw OpenCoreDataError(
                    .migration, "NSMigrationManager does not answer FUNCTION($manager, \"\(selector)\")")
            }
            throw OpenCoreDataError(.migration, "FUNCTION($manager, \"\(selector)\") got arguments it cannot use")
        } catch {
            _expressionError = _expressionError ?? error
            return nil
        }
    }

    package func _expressionValue(forKey key: String) -> Any? {
        switch key {
        case "sourceContext": sourceContext
        case "destinationContext": destinationContext
        case "sourceModel": sourceModel
        case "destinationModel": destinationModel
        case "mappingModel": mappingModel
        case "currentEntityMapping": currentEntityMapping
        case "userInfo": userInfo
        case "migrationProgress": migrationProgress
        default: nil
        }
    }

    /// Every destination instance made from `sources` by any mapping, restricted to the
    /// destination entity of the relationship being mapped (Xcode's
    /// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`, used where several
    /// mappings, one per subentity, migrate a relationship's destinations).
    private func _destinationInstances(forSourceInstances sources: [NSManagedObject]) -> [NSManagedObject] {
        var target: NSEntityDescription?
        if let name = _currentPropertyMapping?.name, let mapping = currentEntityMapping,
            let entity = destinationEntity(for: mapping)
        {
            target = entity.relationshipsByName[name]?.destinationEntity
        }
        var result: [NSManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for source in sources {
            for associations in _associations.values {
                for destination in associations.destinations(of: source)
                where seen.insert(ObjectIdentifier(destination)).inserted {
                    if let target, !destination.entity.isKindOf(entity: target) { continue }
                    result.append(destination)
                }
            }
        }
        return result
    }
}

extension NSEntityMigrationPolicy: ExpressionFunctionReceiver {
    package func _expressionFunction(_ selector: String, arguments: [Any?]) -> Any? {
        guard let manager = _manager else { return nil }
        do {
            return try migrationFunction(named: selector, arguments: arguments, manager: manager)
        } catch {
            manager._expressionError = manager._expressionError ?? error
            return nil
        }
    }

    package func _expressionValue(forKey key: String) -> Any? { nil }
}
