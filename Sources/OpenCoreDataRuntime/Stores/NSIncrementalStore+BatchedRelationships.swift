import Foundation

/// The destinations of one to-many relationship for many objects, as a store reads them in one pass.
///
/// OpenCoreData's addition to the `NSIncrementalStore` boundary: Apple's store interface loads a
/// relationship one object at a time (`newValue(forRelationship:forObjectWith:with:)`), which makes
/// `relationshipKeyPathsForPrefetching` cost one store round trip per object.
package struct IncrementalStoreRelationshipBatch {
    /// Each source's destination IDs, in the relationship's order when it is ordered. A source the
    /// store does not hold (or with no destinations) maps to an empty array or is absent.
    package var destinations: [NSManagedObjectID: [NSManagedObjectID]] = [:]
    /// The values of destinations the store read in the same pass, so they need no fault round
    /// trip; a store may leave this empty (the context then fetches the destinations it lacks).
    package var nodes: [NSManagedObjectID: NSIncrementalStoreNode] = [:]

    package init(destinations: [NSManagedObjectID: [NSManagedObjectID]] = [:],
                 nodes: [NSManagedObjectID: NSIncrementalStoreNode] = [:]) {
        self.destinations = destinations
        self.nodes = nodes
    }
}

/// A store that reads a to-many relationship of many objects at once: the batched twin of
/// `newValue(forRelationship:forObjectWith:with:)` that `relationshipKeyPathsForPrefetching` uses for
/// ordered and many-to-many relationships.
///
/// Apple's `NSIncrementalStore` has no such call; it is OpenCoreData's addition. A store that does not
/// adopt the protocol still prefetches correctly: the coordinator asks it object by object. Both
/// built-in stores adopt it (the SQLite store reads a join table or a foreign key with its `Z_FOK_`
/// order in one statement per chunk of IDs; the in-memory store answers from its rows).
package protocol IncrementalStoreBatchedRelationships: NSIncrementalStore {
    /// The destinations of `relationship` (to-many) for every object in `objectIDs`, all of which are
    /// objects of this store whose entity has `relationship`. The answer must agree with
    /// `newValue(forRelationship:forObjectWith:with:)` for each object, order included.
    func newValues(forRelationship relationship: NSRelationshipDescription, forObjectsWith objectIDs: [NSManagedObjectID],
                   with context: NSManagedObjectContext?) throws -> IncrementalStoreRelationshipBatch
}

extension NSIncrementalStore {
    /// The destination IDs in a value `newValue(forRelationship:forObjectWith:with:)` returned: an
    /// array or set of IDs for to-many, one ID (or `NSNull`) for to-one.
    /// Apple's stores return an `NSArray` or `NSSet` (an `NSOrderedSet` for an ordered relationship
    /// in some stores): those, and Swift arrays of `Any`, are read too.
    package static func _relationshipIDs(in value: Any) -> [NSManagedObjectID] {
        switch value {
        case let array as [NSManagedObjectID]: return array
        case let set as Set<NSManagedObjectID>: return Array(set)
        case let id as NSManagedObjectID: return [id]
        case let array as [Any]: return array.compactMap { $0 as? NSManagedObjectID }
        case let set as Set<AnyHashable>: return set.compactMap { $0.base as? NSManagedObjectID }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObjectID }
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObjectID }
        default: return []
        }
    }
}
