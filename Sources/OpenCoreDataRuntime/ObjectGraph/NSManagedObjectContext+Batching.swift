import Foundation

/// Loads the rows of a batched fetch (`fetchBatchSize` > 0) one batch at a time, when the first
/// fault of a batch fires. Shared by the batches of one fetch.
///
/// Only a window of recent batches keeps its values: when a batch loads, unchanged objects of
/// batches older than ``window`` turn back into faults (they fire again, batch-wise, if read).
/// So iterating a large result keeps the loaded values bounded; the array itself still holds
/// one (empty) fault per row.
///
/// The rows' identities are kept as ``ObjectReferences`` (a primary key a row), and a batch's
/// objects are found again through the context's registry: no ID per row (80 bytes each), and no
/// weak reference per loaded object (which gave each a side table for the rest of its life).
///
/// Not `Sendable`: used on its context's queue only, like the faults that hold it.
package final class FetchBatchLoader {
    private weak var context: NSManagedObjectContext?
    private let entity: NSEntityDescription
    private let references: ObjectReferences
    /// The rows' IDs, when the loader was made from objects that have them (their references are
    /// then not gathered: about 2,300 instructions an ID, callgrind case 8).
    private let ids: [NSManagedObjectID]?
    private let batchSize: Int
    /// How many loaded batches keep their values (`nil`: all of them).
    package let window: Int?
    /// Whether a batch's rows become the snapshots of faults that stay faults until used (a
    /// relationship's destinations, ``NSManagedObjectContext/_batchFaults(_:entity:)``), rather
    /// than the values of objects.
    private let asFaults: Bool
    /// The batches loaded last, most recent last.
    private var loaded: [Int] = []

    init(context: NSManagedObjectContext, entity: NSEntityDescription, references: ObjectReferences, batchSize: Int) {
        self.context = context
        self.entity = entity
        self.references = references
        ids = nil
        self.batchSize = batchSize
        window = 2
        asFaults = false
    }

    /// A loader of the rows of `ids`, whose faults stay faults (``NSManagedObjectContext/_batchFaults(_:entity:)``).
    init(
        context: NSManagedObjectContext, entity: NSEntityDescription, faultsOf ids: [NSManagedObjectID], batchSize: Int
    ) {
        self.context = context
        self.entity = entity
        references = ObjectReferences()
        self.ids = ids
        self.batchSize = batchSize
        window = nil
        asFaults = true
    }

    private func rows(of batch: Int) -> Range<Int> {
        (batch * batchSize)..<min(ids?.count ?? references.count, (batch + 1) * batchSize)
    }

    /// Loads batch `batch`, which holds `object`, in one fetch; returns false if it could not.
    fileprivate func load(batch: Int, containing object: NSManagedObject) -> Bool {
        guard let context else { return false }
        let range = rows(of: batch)
        let request = NSManagedObjectContext._batchRequest(
            entity: entity, ids: ids.map { Array($0[range]) } ?? range.map(references.objectID(at:)))
        request.returnsObjectsAsFaults = asFaults
        guard let fetched = try? context._fetchWithoutPrefetching(request) else { return false }
        guard let window else { return withExtendedLifetime(fetched) { !object._isFault } }
        loaded.removeAll { $0 == batch }
        loaded.append(batch)
        while loaded.count > window {
            // The objects turned back into faults load their batch again when used: loading it
            // gave them snapshots, which took the place of their batch (``NSManagedObject/_fetchBatch``).
            let evicted = loaded.removeFirst()
            let batch = FetchBatch(loader: self, index: evicted)
            for row in rows(of: evicted) {
                guard let old = context._registeredObject(references, at: row), old !== object, !old.hasChanges else { continue }
                old._turnIntoFault()
                old._fetchBatch = batch
            }
        }
        return withExtendedLifetime(fetched) { !object._isFault }
    }
}

/// One batch of a batched fetch. The faults of a batch share it, so a firing fault finds its batch
/// without a table of every row (a 1,000,000-row fetch used to build one).
package final class FetchBatch {
    private let loader: FetchBatchLoader
    private let index: Int

    init(loader: FetchBatchLoader, index: Int) {
        self.loader = loader
        self.index = index
    }

    /// Loads this batch, which holds `object`; returns false if it could not.
    package func load(containing object: NSManagedObject) -> Bool { loader.load(batch: index, containing: object) }
}

extension NSManagedObjectContext {
    /// How many of a to-many relationship's destination faults load together (``_batchFaults(_:entity:)``).
    package static let relationshipFaultBatchSize = 100

    /// Groups `objects`, a to-many relationship's destinations just loaded, so that the first of
    /// the faults among them to fire loads the rows of its batch of ``relationshipFaultBatchSize``
    /// in one fetch, as snapshots: the others stay faults and fire from their snapshot when used,
    /// without going to the store, as a fault whose row is in Apple's row cache does. Firing each on
    /// its own was a statement a destination: in case 8 (100 moods a country) about 9,200
    /// instructions a mood, 4,400 in batches, and 418 ms against 153 ms for the case. Objects that
    /// are not plain faults (realized, holding a snapshot, or in a batch already) are left alone.
    package func _batchFaults(_ objects: [NSManagedObject], entity: NSEntityDescription) {
        let faults = objects.filter { object in
            object._isFault && !object._hasSnapshot && object._fetchBatch == nil && !object._hasTemporaryID
        }
        guard faults.count > 1 else { return }
        _batchFaults(faults, ids: faults.map(\.objectID), entity: entity)
    }

    /// ``_batchFaults(_:entity:)`` for `faults` that are plain faults, all of them, with their IDs
    /// (a merge has them, and an ID made again is a lock and an allocation an object).
    package func _batchFaults(_ faults: [NSManagedObject], ids: [NSManagedObjectID], entity: NSEntityDescription) {
        guard faults.count > 1 else { return }
        let batchSize = Self.relationshipFaultBatchSize
        let loader = FetchBatchLoader(context: self, entity: entity, faultsOf: ids, batchSize: batchSize)
        var batch: FetchBatch?
        for (index, fault) in faults.enumerated() {
            if index % batchSize == 0 { batch = FetchBatch(loader: loader, index: index / batchSize) }
            fault._fetchBatch = batch
        }
    }

    /// A batched fetch: the object IDs up front, faults that load in batches of `fetchBatchSize`.
    /// `nil` when the request does not qualify (pending changes for the entity are merged by a
    /// plain fetch instead).
    ///
    /// The faults come as `[NSManagedObject]`: a typed `fetch` takes them as they are, without an
    /// `[Any]` of one 32-byte container per row beside its own array (case 9's peak memory).
    package func _batchedFetch(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> [NSManagedObject]? {
        guard let entity = _batchingEntity(request) else { return nil }
        let references = try _identityReferences(for: request, entity: entity)
        let batchSize = request.fetchBatchSize
        let loader = FetchBatchLoader(context: self, entity: entity, references: references, batchSize: batchSize)
        var results: [NSManagedObject] = []
        results.reserveCapacity(references.count)
        // One fault per row, all kept by `results`, in a registry grown once.
        registry.reserveCapacity(registry.count + references.count)
        var batch: FetchBatch?
        var offer: FaultConstruction.RowOffer?
        for index in 0..<references.count {
            if index % batchSize == 0 { batch = FetchBatch(loader: loader, index: index / batchSize) }
            let object = _object(references, at: index, offer: &offer)
            if object._isFault, !object._hasSnapshot { object._fetchBatch = batch }
            results.append(object)
        }
        return results
    }

    /// The identities of the rows a batched request matches, in its order, as primary keys where
    /// the store gives them (see ``ObjectReferences``).
    package func _identityReferences(for request: NSFetchRequest<any NSFetchRequestResult>, entity: NSEntityDescription)
        throws -> ObjectReferences
    {
        let identities = Self._identityRequest(for: request, entity: entity)
        identities._wantsObjectReferences = true
        return ObjectReferences(gathering: try _fetchWithoutPrefetching(identities).values)
    }

    /// The registered object for row `index` of `references`, found without making its ID.
    package func _registeredObject(_ references: ObjectReferences, at index: Int) -> NSManagedObject? {
        guard let row = references.row(at: index) else { return registry.object(for: references.objectID(at: index)) }
        return registry.object(store: row.store._objectIDStore, root: row.entity.layout.rootID, key: row.key)
    }

    /// Whether `object` is row `index` of `references`, decided without making its ID.
    package static func _isObject(_ object: NSManagedObject, row index: Int, of references: ObjectReferences) -> Bool {
        guard let row = references.row(at: index) else { return object.objectID._isSameID(as: references.objectID(at: index)) }
        return ObjectRegistry.isObject(object, rowOf: row.store._objectIDStore, root: row.entity.layout.rootID, key: row.key)
    }

    /// The object for row `index` of `references`: the registered one, or a new fault that makes its
    /// ID only if asked for. `offer` is reused from row to row of one store.
    private func _object(_ references: ObjectReferences, at index: Int, offer: inout FaultConstruction.RowOffer?)
        -> NSManagedObject
    {
        guard let row = references.row(at: index) else { return object(with: references.objectID(at: index)) }
        let layout = row.entity.layout
        let store = row.store._objectIDStore
        if let object = registry.object(store: store, root: layout.rootID, key: row.key) { return object }
        if offer?.store !== store { offer = FaultConstruction.RowOffer(store: store, entity: row.entity) }
        offer!.entity = row.entity
        offer!.key = row.key
        let object = NSManagedObject.makeFault(class: layout.managedObjectClass, row: offer!, context: self)
        register(object)
        return object
    }
}

extension NSManagedObjectContext {
    /// The entity of `request` if it is fetched in batches: a nonzero `fetchBatchSize`, managed
    /// objects as results, and no unsaved changes to merge for the entity (a plain fetch merges them).
    /// Never in a child context: batches load from the stores, past the parent's unsaved changes.
    package func _batchingEntity(_ request: NSFetchRequest<any NSFetchRequestResult>) -> NSEntityDescription? {
        // The context's copy (``prepared(_:)``), of the class itself: its stored settings are read.
        guard request._settings.fetchBatchSize > 0, _parentContext == nil, request._settings.resultType == .managedObjectResultType,
            let entity = request._settings.entity,
            !(request.includesPendingChanges && hasPendingChanges(for: entity))
        else { return nil }
        return entity
    }

    /// The fetch of a batched request's identities: every matching row's ID, in the request's order.
    package static func _identityRequest(for request: NSFetchRequest<any NSFetchRequestResult>, entity: NSEntityDescription)
        -> NSFetchRequest<any NSFetchRequestResult>
    {
        let idRequest = NSFetchRequest<any NSFetchRequestResult>()
        idRequest.copySettings(from: request)
        idRequest.entity = entity
        idRequest.resultType = .managedObjectIDResultType
        idRequest.fetchBatchSize = 0
        idRequest.relationshipKeyPathsForPrefetching = nil
        return idRequest
    }

    /// The fetch of one batch: the rows of `ids` with their values, as the store has them.
    package static func _batchRequest(entity: NSEntityDescription, ids: [NSManagedObjectID])
        -> NSFetchRequest<any NSFetchRequestResult>
    {
        let request = NSFetchRequest<any NSFetchRequestResult>()
        request.entity = entity
        request.includesSubentities = true
        // `SELF IN ids`, built directly: parsing a format with a 1,000-ID argument cost more than the rows.
        request.predicate = NSComparisonPredicate(
            leftExpression: .expressionForEvaluatedObject(), rightExpression: NSExpression(forConstantValue: ids),
            modifier: .direct, type: .in)
        request.returnsObjectsAsFaults = false
        request.includesPendingChanges = false
        return request
    }
}
