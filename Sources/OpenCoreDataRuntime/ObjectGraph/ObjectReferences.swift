import Foundation

/// The identities of a fetch's rows without an `NSManagedObjectID` object per row: for each row its
/// primary key and which (entity, store) pair it belongs to. A lazily batched fetch keeps one of
/// these for its whole result (8 bytes a row for a one-entity result, where 1,000,000 IDs took about
/// 80 MB), and makes the IDs of one batch at a time.
///
/// A store that can answer an ID fetch whose request asks for ``NSFetchRequest/_wantsObjectReferences``
/// with a one-element array holding one of these; any other answer (an array of IDs) is read by
/// ``init(gathering:)`` as well, so the context never depends on which store ran the fetch.
package struct ObjectReferences {
    private struct Kind {
        let entity: NSEntityDescription
        let store: NSPersistentStore
        let root: ObjectIdentifier
    }

    private var kinds: [Kind] = []
    private var keys: [Int64] = []
    /// The kind of each row, while rows have more than one kind; empty while all share `kinds[0]`.
    private var kindIndexes: [UInt16] = []
    /// Every ID, when one could not be kept as a primary key (a store whose references are not
    /// integers): then the result keeps its IDs as they are.
    private var ids: [NSManagedObjectID]?

    package init() {}

    /// The references of a store's answer to an ID fetch: references it built, or its IDs.
    package init(gathering results: [Any]) {
        if results.count == 1, let references = results[0] as? ObjectReferences {
            self = references  // one store's answer, as it is
            return
        }
        for result in results {
            if let references = result as? ObjectReferences {
                append(contentsOf: references)
            } else if let id = result as? NSManagedObjectID {
                append(id)
            }
        }
    }

    /// Adds the rows of `other`, without making their IDs when both keep primary keys.
    private mutating func append(contentsOf other: ObjectReferences) {
        guard ids == nil, other.ids == nil else {
            for index in 0..<other.count { append(other.objectID(at: index)) }
            return
        }
        for index in 0..<other.keys.count {
            let kind = other.kinds[other.kindIndexes.isEmpty ? 0 : Int(other.kindIndexes[index])]
            append(entity: kind.entity, store: kind.store, key: other.keys[index])
        }
    }

    package var count: Int { ids?.count ?? keys.count }

    /// Adds the row of `entity` in `store` with primary key `key`.
    package mutating func append(entity: NSEntityDescription, store: NSPersistentStore, key: Int64) {
        if ids != nil { return append(NSManagedObjectID(entity: entity, store: store, reference: .int64(key))) }
        let kind = kindIndex(entity: entity, store: store)
        if kind != 0, kindIndexes.isEmpty { kindIndexes = Array(repeating: 0, count: keys.count) }
        if !kindIndexes.isEmpty { kindIndexes.append(kind) }
        keys.append(key)
    }

    /// Adds the row `id` names.
    package mutating func append(_ id: NSManagedObjectID) {
        if ids == nil, case .int64(let key) = id.reference, let store = id.persistentStore {
            return append(entity: id.entity, store: store, key: key)
        }
        if ids == nil { ids = (0..<keys.count).map(objectID(at:)) }
        ids!.append(id)
    }

    /// Row `index` as its entity, store and primary key, when the references keep keys; `nil` when
    /// they keep IDs (see ``objectID(at:)``).
    package func row(at index: Int) -> (entity: NSEntityDescription, store: NSPersistentStore, key: Int64)? {
        guard ids == nil else { return nil }
        let kind = kinds[kindIndexes.isEmpty ? 0 : Int(kindIndexes[index])]
        return (kind.entity, kind.store, keys[index])
    }

    /// The ID of row `index`, equal to the one the store makes for that row.
    package func objectID(at index: Int) -> NSManagedObjectID {
        if let ids { return ids[index] }
        let kind = kinds[kindIndexes.isEmpty ? 0 : Int(kindIndexes[index])]
        return NSManagedObjectID(entity: kind.entity, store: kind.store, reference: .int64(keys[index]), root: kind.root)
    }

    private mutating func kindIndex(entity: NSEntityDescription, store: NSPersistentStore) -> UInt16 {
        if let last = kinds.indices.last, kinds[last].entity === entity, kinds[last].store === store { return UInt16(last) }
        if let found = kinds.firstIndex(where: { $0.entity === entity && $0.store === store }) { return UInt16(found) }
        kinds.append(Kind(entity: entity, store: store, root: ObjectIdentifier(entity.rootEntity)))
        return UInt16(kinds.count - 1)
    }
}
