import Foundation
import OpenCoreData
@testable import OpenCoreDataRuntime

/// A minimal user-written `NSIncrementalStore` (rows in a dictionary, Apple's four overrides only):
/// it adopts none of OpenCoreData's additions, so tests see how the context treats a third-party
/// store. It counts its per-object relationship loads.
///
/// `@unchecked Sendable` invariant: used only under its coordinator's lock.
final class DictionaryTestStore: NSIncrementalStore, @unchecked Sendable {
    static let storeType = "DictionaryTestStore"
    static func register() { NSPersistentStoreCoordinator.registerStoreClass(DictionaryTestStore.self, forStoreType: storeType) }

    private struct Row {
        var values: [String: Any]
        var toMany: [String: [NSManagedObjectID]]
    }
    private var rows: [NSManagedObjectID: Row] = [:]
    private var lastKey: Int64 = 0
    /// How often `newValue(forRelationship:forObjectWith:with:)` ran.
    private(set) var relationshipLoads = 0

    override var type: String { Self.storeType }

    override func loadMetadata() throws {
        if metadata == nil { metadata = [NSStoreUUIDKey: UUID().uuidString, NSStoreTypeKey: type] }
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        array.map { object in
            lastKey += 1
            return newObjectID(for: object.entity, referenceObject: lastKey)
        }
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        if let save = request as? NSSaveChangesRequest {
            for object in (save.insertedObjects ?? []).union(save.updatedObjects ?? []) { rows[object.objectID] = row(of: object) }
            for object in save.deletedObjects ?? [] { rows[object.objectID] = nil }
            return [Any]()
        }
        guard let fetch = request as? NSFetchRequest<any NSFetchRequestResult>, let context, let entity = fetch.entity else {
            throw OpenCoreDataError(.persistentStoreUnsupportedRequestType, "DictionaryTestStore runs fetches and saves only")
        }
        let objects = rows.keys.filter { $0.entity === entity }.map { context.object(with: $0) }
            .filter { fetch.predicate?.evaluate(with: $0) ?? true }
        switch fetch.resultType {
        case .managedObjectIDResultType: return objects.map(\.objectID)
        case .countResultType: return [objects.count]
        default: return objects
        }
    }

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        guard let row = rows[objectID] else {
            throw OpenCoreDataError(.persistentStoreOperation, "no such object", objectID: objectID)
        }
        return NSIncrementalStoreNode(objectID: objectID, withValues: row.values, version: 1)
    }

    override func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
                           with context: NSManagedObjectContext?) throws -> Any {
        relationshipLoads += 1
        guard let row = rows[objectID] else { return relationship.isToMany ? [NSManagedObjectID]() : NSNull() }
        if relationship.isToMany { return row.toMany[relationship.name] ?? [] }
        return row.values[relationship.name] ?? NSNull()
    }

    /// Attributes and to-one IDs (`NSNull` for none) as node values; to-many relationships as ID arrays (in order).
    private func row(of object: NSManagedObject) -> Row {
        var row = Row(values: [:], toMany: [:])
        for property in object.entity.properties where !property.isTransient {
            let value = object.value(forKey: property.name)
            guard let relationship = property as? NSRelationshipDescription else {
                if let value, !(value is NSNull) { row.values[property.name] = value }
                continue
            }
            switch value {
            case let set as Set<NSManagedObject>: row.toMany[property.name] = set.map(\.objectID)
            case let ordered as NSOrderedSet: row.toMany[property.name] = ordered.array.compactMap { ($0 as? NSManagedObject)?.objectID }
            case let destination as NSManagedObject where !relationship.isToMany: row.values[property.name] = destination.objectID
            // An empty to-one as `NSNull`, as Apple's node documentation asks (left out, it would be
            // asked for with `newValue(forRelationship:forObjectWith:with:)` when the fault fires).
            case nil where !relationship.isToMany: row.values[property.name] = NSNull()
            default: break
            }
        }
        return row
    }
}
