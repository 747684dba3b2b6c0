import Foundation

/// Loads the rows of a batched fetch (`fetchBatchSize` > 0) one batch at a time, when the first
/// fault of a batch fires. Shared by the batches of one fetch.
///
/// Only a window of recent batches keeps its values: when a batch loads, unchanged objects of
/// batches older than ``window`` turn back into faults (they fire again, batch-wise, if read).
/// So iterating a large result keeps the loaded values bounded; the array itself still holds
/// one (empty) fault per row.
///
/// Not `Sendable`: used on its context's queue only, like the faults that hold it.
package final class FetchBatchLoader {
    private weak var context: NSManagedObjectContext?
    private let entity: NSEntityDescription
    private let ids: [NSManagedObjectID]
    private let batchSize: Int
    /// How many loaded batches keep their values.
    package let window = 2
    private var loaded: [(batch: Int, objects: [WeakObject])] = []

    init(context: NSManagedObjectContext, entity: NSEntityDescription, ids: [NSManagedObjectID], batchSize: Int) {
        self.context = context
        self.entity = entity
        self.ids = ids
        self.batchSize = batchSize
    }

    /// Loads batch `batch`, which holds `object`, in one fetch; returns false if it could not.
    fileprivate func load(batch: Int, containing object: NSManagedObject) -> Bool {
        guard let context else { return false }
        let batchIDs = Array(ids[(batch * batchSize)..<min(ids.count, (batch + 1) * batchSize)])
        let request = NSManagedObjectContext._batchRequest(entity: entity, ids: batchIDs)
        guard let fetched = try? context._fetchWithoutPrefetching(request) else { return false }
        let objects = fetched.compactMap { $0 as? NSManagedObject }
        loaded.removeAll { $0.batch == batch }
        loaded.append((batch, objects.map(WeakObject.init)))
        while loaded.count > window {
            for entry in loaded.removeFirst().objects {
                guard let old = entry.object, old !== object, !old.hasChanges else { continue }
                old._turnIntoFault()
            }
        }
        return !object._isFault
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
    /// A batched fetch: the object IDs up front, faults that load in batches of `fetchBatchSize`.
    /// `nil` when the request does not qualify (pending changes for the entity are merged by a
    /// plain fetch instead).
    ///
    /// The faults come as `[NSManagedObject]`: a typed `fetch` takes them as they are, without an
    /// `[Any]` of one 32-byte container per row beside its own array (case 9's peak memory).
    package func _batchedFetch(_ request: NSFetchRequest<any NSFetchRequestResult>) throws -> [NSManagedObject]? {
        guard let entity = _batchingEntity(request) else { return nil }
        let ids = try _fetchWithoutPrefetching(Self._identityRequest(for: request, entity: entity))
            .compactMap { $0 as? NSManagedObjectID }
        let batchSize = request.fetchBatchSize
        let loader = FetchBatchLoader(context: self, entity: entity, ids: ids, batchSize: batchSize)
        var results: [NSManagedObject] = []
        results.reserveCapacity(ids.count)
        // One fault per row, all kept by `results`, in a registry grown once rather than rehashed
        // as it doubles.
        registry.reserveCapacity(registry.count + ids.count)
        var batch: FetchBatch?
        for (index, id) in ids.enumerated() {
            if index % batchSize == 0 { batch = FetchBatch(loader: loader, index: index / batchSize) }
            let object = self.object(with: id)
            if object._isFault, object._snapshot == nil { object._fetchBatch = batch }
            results.append(object)
        }
        return results
    }
}

extension NSManagedObjectContext {
    /// The entity of `request` if it is fetched in batches: a nonzero `fetchBatchSize`, managed
    /// objects as results, and no unsaved changes to merge for the entity (a plain fetch merges them).
    package func _batchingEntity(_ request: NSFetchRequest<any NSFetchRequestResult>) -> NSEntityDescription? {
        guard request.fetchBatchSize > 0, request.resultType == .managedObjectResultType, let entity = request.entity,
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
