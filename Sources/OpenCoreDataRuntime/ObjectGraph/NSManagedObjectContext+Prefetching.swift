import Foundation

extension NSManagedObjectContext {
    /// Loads the relationships a fetch request names in `relationshipKeyPathsForPrefetching`: one
    /// fetch per key path step instead of one per object.
    ///
    /// Each step works on the objects the previous one reached (the fetched objects first):
    /// - a to-one relationship fetches the destinations not loaded yet with `SELF IN %@`, and each
    ///   source then holds its destination object (not just its ID);
    /// - an unordered to-many relationship whose inverse is to-one fetches the destinations with
    ///   `inverse IN %@` and fills each source's to-many slot with its group;
    /// - an ordered or many-to-many relationship asks the stores for the destinations of all the
    ///   sources at once (``IncrementalStoreBatchedRelationships``: a join table or a foreign key
    ///   with its order column, with the destinations' rows), keeping each source's order.
    ///
    /// The sources hold what was loaded strongly, so prefetched objects live as long as the
    /// objects that reference them, although the context holds unchanged objects weakly (Apple
    /// keeps them the same way).
    package func _prefetch(_ keyPaths: [String], for objects: [NSManagedObject]) throws {
        guard !objects.isEmpty else { return }
        var done: [String: [NSManagedObject]] = [:]
        for keyPath in keyPaths {
            var sources = objects
            var path = ""
            for name in keyPath.split(separator: ".").map(String.init) {
                path = path.isEmpty ? name : path + "." + name
                if let reached = done[path] { sources = reached; continue }
                sources = try _prefetch(relationship: name, of: sources)
                done[path] = sources
                if sources.isEmpty { break }
            }
        }
    }

    /// Loads relationship `name` of `sources` and returns the destinations, each once.
    private func _prefetch(relationship name: String, of sources: [NSManagedObject]) throws -> [NSManagedObject] {
        var byEntity: [ObjectIdentifier: (NSRelationshipDescription, [NSManagedObject])] = [:]
        for source in sources {
            guard let relationship = source.entity.layout.propertiesByName[name] as? NSRelationshipDescription else { continue }
            byEntity[ObjectIdentifier(relationship), default: (relationship, [])].1.append(source)
        }
        var reached: [NSManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for (relationship, group) in byEntity.values {
            let destinations = relationship.isToMany
                ? try _prefetchToMany(relationship, of: group) : try _prefetchToOne(relationship, of: group)
            for destination in destinations where seen.insert(ObjectIdentifier(destination)).inserted {
                reached.append(destination)
            }
        }
        return reached
    }

    private func _prefetchToOne(_ relationship: NSRelationshipDescription, of sources: [NSManagedObject]) throws -> [NSManagedObject] {
        var missing: [NSManagedObjectID] = []
        var seen = Set<NSManagedObjectID>()
        for source in sources {
            if source._isFault { source._fireFault() }
            guard let slot = source._layout.indexByName[relationship.name] else { continue }
            let id: NSManagedObjectID?
            switch source._values[slot] {
            case let object as NSManagedObject: id = object._isFault && !object._hasSnapshot ? object.objectID : nil
            case let objectID as NSManagedObjectID: id = objectID
            default: id = nil
            }
            guard let id, !id.isTemporaryID, registeredObject(for: id).map({ $0._isFault && !$0._hasSnapshot }) ?? true,
                  seen.insert(id).inserted else { continue }
            missing.append(id)
        }
        var fetched: [NSManagedObject] = []
        if !missing.isEmpty, let destination = relationship.destinationEntity {
            let request = NSFetchRequest<any NSFetchRequestResult>()
            request.entity = destination
            request.predicate = NSPredicate(format: "SELF IN %@", missing)
            request.returnsObjectsAsFaults = false
            fetched = try _fetchWithoutPrefetching(request).managedObjects
        }
        // Each source now holds its destination object (`_toOne` swaps the stored ID for it); until
        // then `fetched` keeps the loaded objects alive, as the registry holds them weakly.
        return withExtendedLifetime(fetched) {
            sources.compactMap { source in
                source._layout.indexByName[relationship.name].flatMap { source._toOne(slot: $0) }
            }
        }
    }

    private func _prefetchToMany(_ relationship: NSRelationshipDescription, of sources: [NSManagedObject]) throws -> [NSManagedObject] {
        let unloaded = sources.filter { source in
            if source._isFault { source._fireFault() }
            guard let slot = source._layout.indexByName[relationship.name] else { return false }
            return !(source._values[slot] is ManagedObjectList) && !source._hasTemporaryID
        }
        if !unloaded.isEmpty, relationship.isOrdered || relationship.inverseRelationship?.isToMany != false {
            try _prefetchThroughStores(relationship, of: unloaded)
        } else if !unloaded.isEmpty, let inverse = relationship.inverseRelationship, let destination = relationship.destinationEntity {
            let request = NSFetchRequest<any NSFetchRequestResult>()
            request.entity = destination
            request.predicate = NSPredicate(format: "%K IN %@", inverse.name, unloaded.map(\.objectID))
            request.returnsObjectsAsFaults = false
            let fetched = try _fetchWithoutPrefetching(request).managedObjects
            var groups: [ObjectIDKey: [NSManagedObject]] = [:]
            // The inverse's slot looked up once per entity, and its value read without casts from
            // `Any?` (per destination, the name lookup and two casts were about 2,300
            // instructions, callgrind case 8p).
            var slotLayout: EntityLayout?
            var inverseSlot: Int?
            for object in fetched where !object._isDeleted {
                if object._layout !== slotLayout {
                    slotLayout = object._layout
                    inverseSlot = object._layout.indexByName[inverse.name]
                }
                guard let slot = inverseSlot else { continue }
                let value = object._values[slot]
                let owner = ValueConversion.managedObject(in: value)?.objectID
                    ?? ValueConversion.boxedReference(in: value, as: NSManagedObjectID.self)
                    ?? (value as? NSManagedObject)?.objectID ?? value as? NSManagedObjectID
                if let owner { groups[ObjectIDKey(owner), default: []].append(object) }
            }
            for source in unloaded {
                let slot = source._layout.indexByName[relationship.name]!
                source._values[slot] = ManagedObjectList.unordered(Set(groups[ObjectIDKey(source.objectID)] ?? []))
            }
        }
        return sources.flatMap { source in
            source._layout.indexByName[relationship.name].map { source._toMany(slot: $0).objects } ?? []
        }
    }

    /// Fills the unloaded to-many slots of `sources` from one batched store read: the stores give
    /// each source's destination IDs in order, and usually the destinations' values; destinations
    /// without values that are not loaded yet come in one fetch.
    private func _prefetchThroughStores(_ relationship: NSRelationshipDescription, of sources: [NSManagedObject]) throws {
        guard let coordinator = persistentStoreCoordinator else { return }
        let batch = try coordinator.newValues(forRelationship: relationship, of: sources.map(\.objectID), context: self)
        // `loaded` keeps the destinations alive until the sources hold them (the registry is weak).
        var loaded: [Any] = batch.nodes.values.map { node in
            _registerFetchedObject(objectID: node.objectID, values: node.slotValues, version: Int64(node.version), asFault: false)
        }
        var missing: [NSManagedObjectID] = []
        var seen = Set<NSManagedObjectID>()
        for ids in batch.destinations.values {
            for id in ids where batch.nodes[id] == nil && seen.insert(id).inserted {
                if registeredObject(for: id).map({ $0._isFault && !$0._hasSnapshot }) ?? true { missing.append(id) }
            }
        }
        if !missing.isEmpty, let destination = relationship.destinationEntity {
            let request = NSFetchRequest<any NSFetchRequestResult>()
            request.entity = destination
            request.predicate = NSPredicate(format: "SELF IN %@", missing)
            request.returnsObjectsAsFaults = false
            loaded += try _fetchWithoutPrefetching(request).values
        }
        withExtendedLifetime(loaded) {
            // A source the stores did not answer for (its store was removed) stays unloaded.
            for source in sources {
                guard let slot = source._layout.indexByName[relationship.name], let ids = batch.destinations[source.objectID]
                else { continue }
                let objects = ids.map { object(with: $0) }
                source._values[slot] = relationship.isOrdered ? ManagedObjectList.ordered(objects) : ManagedObjectList.unordered(Set(objects))
            }
        }
    }
}
