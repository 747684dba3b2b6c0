import Foundation

/// The results of a fetch with a `fetchBatchSize`, loaded one batch at a time as they are read:
/// what Apple's `fetch(_:)` returns on Apple platforms, where the `[T]` is backed by a lazily
/// loading `NSArray`.
///
/// On Linux a Swift array cannot load lazily, so ``NSManagedObjectContext/fetch(_:)`` returns every
/// row as a fault up front (one object per row). This collection keeps only the rows' identities
/// (about 8 bytes a row) and the objects of the batches read last; the first element read in a
/// batch loads the whole batch in one query, with the request's
/// `relationshipKeyPathsForPrefetching`. Objects of older batches are released unless the app
/// holds them, so iterating a result of any size takes about the same memory:
///
/// ```swift
/// let request = Item.fetchRequest()
/// request.fetchBatchSize = 1000
/// for item in try context.fetchBatched(request) { total += item.amount }
/// ```
///
/// The identities are recorded when the fetch runs, as Apple records them: rows inserted later are
/// not in the results, and an object whose row is deleted later stays a fault that cannot be
/// fulfilled. Read it on its context's queue, like the objects it returns. Without a
/// `fetchBatchSize`, or while the context has unsaved changes to the entity that the fetch must
/// merge (`includesPendingChanges`), the results are fetched at once, as ``NSManagedObjectContext/fetch(_:)``
/// fetches them.
///
/// Related Core Data documentation: [fetchBatchSize](https://developer.apple.com/documentation/coredata/nsfetchrequest/fetchbatchsize)
public struct BatchedFetchResults<Element: NSManagedObject>: RandomAccessCollection {
    private let storage: Storage

    fileprivate init(storage: Storage) { self.storage = storage }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.count }

    /// The object at `position`, loading its batch if no recent read loaded it.
    public subscript(position: Int) -> Element {
        // Every object is of the entity's class or a subentity's, which the fetch checked are `Element`s.
        unsafeDowncast(storage.object(at: position), to: Element.self)
    }

    /// The number of rows a batch loads (the request's `fetchBatchSize`; 0 when fetched at once).
    public var batchSize: Int { storage.batchSize }

    /// How many batches keep their objects: the one read last and the one before.
    package static var window: Int { 2 }

    fileprivate final class Storage {
        let context: NSManagedObjectContext
        let entity: NSEntityDescription?
        let batchSize: Int
        let prefetching: [String]
        let references: ObjectReferences
        /// The results, when fetched at once.
        let all: [NSManagedObject]?
        /// The batches read last, most recent last, with their objects in result order.
        var loaded: [(batch: Int, objects: ContiguousArray<NSManagedObject>)] = []

        init(context: NSManagedObjectContext, all: [NSManagedObject]) {
            self.context = context
            entity = nil
            batchSize = 0
            prefetching = []
            references = ObjectReferences()
            self.all = all
        }

        init(context: NSManagedObjectContext, entity: NSEntityDescription, batchSize: Int, prefetching: [String],
             references: ObjectReferences)
        {
            self.context = context
            self.entity = entity
            self.batchSize = batchSize
            self.prefetching = prefetching
            self.references = references
            all = nil
        }

        var count: Int { all?.count ?? references.count }

        func object(at position: Int) -> NSManagedObject {
            if let all { return all[position] }
            precondition(position >= 0 && position < references.count, "BatchedFetchResults: index out of range")
            let batch = position / batchSize
            if let last = loaded.last, last.batch == batch { return last.objects[position - batch * batchSize] }
            if let found = loaded.firstIndex(where: { $0.batch == batch }) {
                let entry = loaded.remove(at: found)
                loaded.append(entry)
                return entry.objects[position - batch * batchSize]
            }
            let objects = load(batch)
            loaded.append((batch, objects))
            if loaded.count > BatchedFetchResults.window { loaded.removeFirst() }
            return objects[position - batch * batchSize]
        }

        /// Batch `batch`'s objects, loaded in one fetch. If the fetch fails (a store error), they
        /// stay faults, which report the error when they fire, as Apple's faults do.
        private func load(_ batch: Int) -> ContiguousArray<NSManagedObject> {
            let range = (batch * batchSize)..<Swift.min(references.count, (batch + 1) * batchSize)
            let ids = range.map(references.objectID(at:))
            return context.performAndWait {
                let request = NSManagedObjectContext._batchRequest(entity: entity!, ids: ids)
                if !prefetching.isEmpty { request.relationshipKeyPathsForPrefetching = prefetching }
                let fetched = (try? context._fetch(request))?.managedObjects ?? []
                // Rows come in primary-key order, which is the batch's own order unless the request
                // sorts: then they are the batch as it is, without a lookup per row.
                var objects = ContiguousArray<NSManagedObject>()
                objects.reserveCapacity(ids.count)
                if fetched.count == ids.count {
                    // Compared by row, not by `objectID`, which would make each fetched object's ID.
                    for (object, row) in zip(fetched, range) {
                        guard NSManagedObjectContext._isObject(object, row: row, of: references) else { break }
                        objects.append(object)
                    }
                    if objects.count == ids.count { return objects }
                }
                // Held until the objects are collected: registered objects are held weakly.
                return withExtendedLifetime(fetched) { ContiguousArray(ids.map(context.object(with:))) }
            }
        }
    }
}

extension NSManagedObjectContext {
    /// Runs a fetch request with a `fetchBatchSize` and returns its results as a collection that
    /// loads them one batch at a time as they are read (see ``BatchedFetchResults``): the memory
    /// Apple's batched `fetch(_:)` takes, where Linux's `fetch(_:)` must make an object per row.
    ///
    /// Throws as ``fetch(_:)`` does.
    ///
    /// - Note: Linux: Apple has no such method; its `fetch(_:)` returns a lazily loading array.
    ///
    /// Related Core Data documentation: [fetchBatchSize](https://developer.apple.com/documentation/coredata/nsfetchrequest/fetchbatchsize)
    public func fetchBatched<T: NSManagedObject>(_ request: NSFetchRequest<T>) throws -> BatchedFetchResults<T> {
        try performAndWait { () throws(any Error) -> BatchedFetchResults<T> in
            let erased = try prepared(request)
            guard let entity = _batchingEntity(erased), Self.allInstances(of: entity, are: T.self) else {
                let all: [NSManagedObject] = try fetch(request)  // an upcast of the array, not a copy
                return BatchedFetchResults(storage: .init(context: self, all: all))
            }
            let references = try _identityReferences(for: erased, entity: entity)
            return BatchedFetchResults(
                storage: .init(
                    context: self, entity: entity, batchSize: erased.fetchBatchSize,
                    prefetching: erased.relationshipKeyPathsForPrefetching ?? [], references: references))
        }
    }

    /// Whether every object of `entity` and its subentities is an instance of `type`.
    private static func allInstances<T: NSManagedObject>(of entity: NSEntityDescription, are type: T.Type) -> Bool {
        entity.layout.managedObjectClass is T.Type && entity.subentities.allSatisfy { allInstances(of: $0, are: type) }
    }
}
