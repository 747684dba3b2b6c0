import Foundation

extension InMemoryStore: IncrementalStoreBatchedRelationships {
    /// Answers from the rows: each source's destinations as `newValue(forRelationship:forObjectWith:with:)`
    /// gives them (order included), with every destination's values, all without leaving memory.
    func newValues(forRelationship relationship: NSRelationshipDescription, forObjectsWith objectIDs: [NSManagedObjectID],
                   with context: NSManagedObjectContext?) throws -> IncrementalStoreRelationshipBatch {
        var result = IncrementalStoreRelationshipBatch()
        for id in objectIDs {
            let value = try newValue(forRelationship: relationship, forObjectWith: id, with: context)
            let destinations = Self._relationshipIDs(in: value)
            result.destinations[id] = destinations
            guard let context else { continue }
            for destination in destinations where result.nodes[destination] == nil {
                result.nodes[destination] = try newValuesForObject(with: destination, with: context)
            }
        }
        return result
    }
}
