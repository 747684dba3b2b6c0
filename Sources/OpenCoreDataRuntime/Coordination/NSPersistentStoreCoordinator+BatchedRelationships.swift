import Foundation

extension NSPersistentStoreCoordinator {
    /// Loads a to-many relationship of many objects, store by store: in one batched read from each
    /// store that adopts ``IncrementalStoreBatchedRelationships``, object by object from any other.
    package func newValues(forRelationship relationship: NSRelationshipDescription, of objectIDs: [NSManagedObjectID],
                           context: NSManagedObjectContext) throws -> IncrementalStoreRelationshipBatch {
        do {
            var byStore: [ObjectIdentifier: (NSIncrementalStore, [NSManagedObjectID])] = [:]
            for id in objectIDs {
                guard let store = id.persistentStore as? NSIncrementalStore else { continue }
                byStore[ObjectIdentifier(store), default: (store, [])].1.append(id)
            }
            var result = IncrementalStoreRelationshipBatch()
            for (store, ids) in byStore.values {
                try _read(store, for: context) {
                    if let batched = store as? any IncrementalStoreBatchedRelationships {
                        let part = try batched.newValues(forRelationship: relationship, forObjectsWith: ids, with: context)
                        result.destinations.merge(part.destinations) { first, _ in first }
                        result.nodes.merge(part.nodes) { first, _ in first }
                    } else {
                        for id in ids {
                            let value = try store.newValue(forRelationship: relationship, forObjectWith: id, with: context)
                            result.destinations[id] = NSIncrementalStore._relationshipIDs(in: value)
                        }
                    }
                }
            }
            return result
        }
    }
}
