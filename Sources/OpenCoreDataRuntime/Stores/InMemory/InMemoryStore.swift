import Foundation

/// The in-memory store (`NSInMemoryStoreType`): rows live in a dictionary and vanish with the store.
///
/// It is an ``NSIncrementalStore`` like any user store: it answers fetches by evaluating predicates
/// and sort descriptors in memory, and saves atomically (all checks run before anything changes).
///
/// `@unchecked Sendable` invariant: used only under its coordinator's lock.
final class InMemoryStore: NSIncrementalStore, @unchecked Sendable {
    private struct Row {
        /// Slot values: attributes, to-one object IDs, and to-many ID arrays (stripped from nodes).
        var values: RowValues
        var version: Int64
    }

    private var rows: [NSManagedObjectID: Row] = [:]
    private var lastPrimaryKey: [ObjectIdentifier: Int64] = [:]

    override var type: String { NSInMemoryStoreType }
    override var _wantsSavesWithoutChanges: Bool { false }  // nothing to write

    override func loadMetadata() throws {
        if metadata == nil {
            metadata = [NSStoreUUIDKey: UUID().uuidString, NSStoreTypeKey: type]
        }
    }

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw OpenCoreDataError(.persistentStoreOpen, "an in-memory store has no file to read metadata from", url: url)
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        zip(array, try _obtainPermanentKeys(for: array)!).map { object, pk in
            newObjectID(for: object.entity, referenceObject: pk)
        }
    }

    override func _obtainPermanentKeys(for array: [NSManagedObject]) throws -> [Int64]? {
        array.map { object in
            let root = ObjectIdentifier(object.entity.rootEntity)
            let pk = (lastPrimaryKey[root] ?? 0) + 1
            lastPrimaryKey[root] = pk
            return pk
        }
    }

    override func _executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext) throws -> FetchResults {
        .values(try executeFetch(request, context: context))
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        switch request {
        case let fetch as NSFetchRequest<any NSFetchRequestResult>:
            guard let context else { throw OpenCoreDataError(.coreDataError, "a fetch needs a context") }
            return try executeFetch(fetch, context: context)
        case let save as NSSaveChangesRequest:
            try executeSave(save)
            return [Any]()
        default:
            throw OpenCoreDataError(.persistentStoreUnsupportedRequestType, "the in-memory store cannot run \(Swift.type(of: request))")
        }
    }

    private func executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext) throws -> [Any] {
        guard let entity = request.entity else { return [] }
        if FetchDictionaryResults.applies(to: request) {
            let objects = try executeFetch(FetchDictionaryResults.objectRequest(for: request), context: context)
            return try FetchDictionaryResults.rows(
                objects.compactMap { $0 as? NSManagedObject }, request: request, entity: entity)
        }
        var objects: [NSManagedObject] = []
        // `SELF IN ids` (a batch of faults loading, ``FetchBatchLoader``) looks its rows up: going
        // through every row of the store and comparing each with every ID made a batch of 100 cost
        // as much as the whole store (a test's 10,000-object cascade delete, loading its faults in
        // batches, took six minutes).
        let only = Self.identities(in: request.predicate)
        func consider(_ id: NSManagedObjectID, _ row: Row) throws {
            guard id.entity === entity || (request.includesSubentities && id.entity.isKindOf(entity: entity)) else {
                return
            }
            let values = node(row, entity: id.entity)
            try TransformableValues.checkDecoded(values, layout: id.entity.layout, objectID: id)
            let object = context._registerFetchedObject(objectID: id, values: values, version: row.version, asFault: true)
            if only == nil, let predicate = request.predicate, !predicate.evaluate(with: object) { return }
            objects.append(object)
        }
        if let only {
            for id in only { if let row = rows[id] { try consider(id, row) } }
        } else {
            for (id, row) in rows { try consider(id, row) }
        }
        request.sortInMemory(&objects)
        let slice = request.page(objects)
        switch request.resultType {
        case .countResultType: return [slice.count]
        case .managedObjectIDResultType: return slice.map { $0._objectID }
        case .dictionaryResultType:
            let keys = (request.propertiesToFetch ?? entity.layout.properties.map(\.name)).compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
            return slice.map { object in NSDictionary(dictionary: object.dictionaryWithValues(forKeys: keys).filter { !($0.value is NSNull) }) }
        default:
            if !request.returnsObjectsAsFaults { for object in slice { object._fireFault() } }
            return Array(slice)
        }
    }

    /// The distinct IDs of a `SELF IN ids` predicate whose IDs are a constant array, in order;
    /// `nil` for any other predicate.
    private static func identities(in predicate: NSPredicate?) -> [NSManagedObjectID]? {
        guard let comparison = predicate as? NSComparisonPredicate, comparison.predicateOperatorType == .in,
            comparison.comparisonPredicateModifier == .direct,
            comparison.leftExpression.expressionType == .evaluatedObject,
            comparison.rightExpression.expressionType == .constantValue,
            let ids = comparison.rightExpression.constantValue as? [NSManagedObjectID]
        else { return nil }
        var seen = Set<ObjectIDKey>()
        return ids.filter { seen.insert(ObjectIDKey($0)).inserted }
    }

    private func executeSave(_ request: NSSaveChangesRequest) throws {
        var staged = rows
        for object in request.insertedList {
            guard staged[object._objectID] == nil else {
                throw OpenCoreDataError(.persistentStoreSave, "an object with this ID already exists", entityName: object.entity.name, objectID: object._objectID)
            }
            staged[object._objectID] = Row(values: try rowValues(of: object, previous: nil), version: 1)
        }
        for object in request.updatedList {
            guard let row = staged[object._objectID] else {
                if object._version > 0 { throw conflict(object) }  // deleted since it was read
                throw OpenCoreDataError(.persistentStoreSave, "the object to update is not in the store", entityName: object.entity.name, objectID: object._objectID)
            }
            // Optimistic locking, as SQLite's `Z_OPT` check: the row must still be at the version read.
            guard object._version == 0 || row.version == object._version else { throw conflict(object) }
            staged[object._objectID] = Row(values: try rowValues(of: object, previous: row.values), version: row.version + 1)
        }
        for object in request.deletedList {
            if object._version > 0, staged[object._objectID]?.version != object._version { throw conflict(object) }
            staged[object._objectID] = nil
        }
        rows = staged
    }

    private func conflict(_ object: NSManagedObject) -> OpenCoreDataError {
        OpenCoreDataError(
            .persistentStoreSaveConflicts,
            "optimistic locking failure: the row was changed or deleted since it was fetched",
            entityName: object.entity.name, objectID: object._objectID)
    }

    private func rowValues(of object: NSManagedObject, previous: RowValues?) throws -> RowValues {
        var values = object._committedSnapshot()
        for slot in object._layout.relationshipSlots where object._layout.relationships[slot]!.isToMany {
            if let list = object._values[slot] as? ManagedObjectList {
                values[slot] = list.objects.map { $0._objectID }
            } else {
                values[slot] = previous?[slot]
            }
        }
        for slot in values.indices where object._layout.properties[slot].isTransient { values[slot] = nil }
        try TransformableValues.encode(&values, layout: object._layout, objectID: object._objectID)
        CompositeValues.normalize(&values, layout: object._layout)
        return values
    }

    /// A row's values as a node carries them: to-many slots empty, transformable values read back.
    private func node(_ row: Row, entity: NSEntityDescription) -> RowValues {
        var values = row.values
        for (slot, value) in values.enumerated() where value is [NSManagedObjectID] { values[slot] = nil }
        TransformableValues.decode(&values, layout: entity.layout)
        return values
    }

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        guard let row = rows[objectID] else {
            throw OpenCoreDataError(.persistentStoreOperation, "the store has no object with this ID", entityName: objectID.entity.name, objectID: objectID)
        }
        return NSIncrementalStoreNode(objectID: objectID, slotValues: node(row, entity: objectID.entity), version: UInt64(row.version))
    }

    override func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
                           with context: NSManagedObjectContext?) throws -> Any {
        guard let row = rows[objectID], let slot = objectID.entity.layout.indexByName[relationship.name] else { return NSNull() }
        // Rows deleted since the owner was saved leave its to-many, as they leave a SQLite join.
        if relationship.isToMany { return (row.values[slot] as? [NSManagedObjectID] ?? []).filter { rows[$0] != nil } }
        return row.values[slot] as? NSManagedObjectID ?? NSNull()
    }
}
