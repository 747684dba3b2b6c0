import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Makes an object of another entity before calling `super`, as an app's initializer might. (At top
/// level: Foundation's `NSStringFromClass` traps on nested classes on Linux.)
final class FaultConstructionNoisy: NSManagedObject {
    nonisolated(unsafe) static var sideObjects: [NSManagedObject] = []

    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        if let other = entity.managedObjectModel?.entitiesByName["Side"] {
            Self.sideObjects.append(NSManagedObject(entity: other, insertInto: nil))
        }
        super.init(entity: entity, insertInto: context)
    }
}

/// Fetches `Side` rows inside its initializer, while the fetch that makes it is still reading its
/// own rows: the inner fetch must not take the outer one's row identity (the SQLite store reuses a
/// fetch's row offer for the next fetch).
final class FaultConstructionFetching: NSManagedObject {
    nonisolated(unsafe) static var context: NSManagedObjectContext?
    nonisolated(unsafe) static var innerCounts: [Int] = []

    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        if context == nil, let fetching = Self.context {
            Self.innerCounts.append((try? fetching.fetch(NSFetchRequest<NSManagedObject>(entityName: "Side")))?.count ?? -1)
        }
        super.init(entity: entity, insertInto: context)
    }
}

/// A fetched row's object is made through `init(entity:insertInto:)`, which subclasses may
/// override, and receives the row's ID there instead of a temporary one. An overriding initializer
/// that makes other managed objects first must not hand them that ID.
@Suite("Fault construction", .serialized)  // the side objects are counted in one static list
struct FaultConstructionTests {
    /// An entity `name` of class `cls` and a plain entity `Side`, each with an Integer 64 `n`.
    static func model(_ name: String = "Noisy", class cls: AnyClass = FaultConstructionNoisy.self) -> NSManagedObjectModel {
        let custom = NSEntityDescription(
            name: name, managedObjectClassName: NSStringFromClass(cls),
            properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
        let side = NSEntityDescription(
            name: "Side", properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [custom, side]
        return model
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func fetchedObjectsKeepTheirRowIDsWhenAnInitializerMakesOtherObjects(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let writer = store.newContext()
        try writer.performAndWait {
            for i in 0..<5 {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Noisy", into: writer)
                object.setValue(Int64(i), forKey: "n")
            }
            try writer.save()
        }
        let savedIDs = try writer.performAndWait { () throws -> Set<NSManagedObjectID> in
            Set(try writer.fetch(NSFetchRequest<NSManagedObject>(entityName: "Noisy")).map(\.objectID))
        }
        FaultConstructionNoisy.sideObjects.removeAll()

        let reader = store.newContext()
        let fetched = try reader.performAndWait { () throws -> [NSManagedObject] in
            try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Noisy"))
        }
        #expect(fetched.count == 5)
        #expect(Set(fetched.map(\.objectID)) == savedIDs)
        #expect(fetched.allSatisfy { !$0.objectID.isTemporaryID && $0 is FaultConstructionNoisy })
        // Each side object was made inside a fault's initializer and kept a temporary ID of its own.
        #expect(FaultConstructionNoisy.sideObjects.count == 5)
        #expect(FaultConstructionNoisy.sideObjects.allSatisfy { $0.objectID.isTemporaryID && $0.entity.name == "Side" })
        reader.performAndWait {
            #expect(fetched.map { $0.value(forKey: "n") as? Int64 ?? -1 }.sorted() == [0, 1, 2, 3, 4])
        }
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aFetchInsideAnInitializerDuringAFetchKeepsEachRowsIdentity(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model("Fetching", class: FaultConstructionFetching.self))
        let writer = store.newContext()
        let savedIDs = try writer.performAndWait { () throws -> [Int64: NSManagedObjectID] in
            var objects: [Int64: NSManagedObject] = [:]
            for i in 0..<4 {
                objects[Int64(i)] = insertObject("Fetching", ["n": Int64(i)], into: writer)
                insertObject("Side", ["n": Int64(100 + i)], into: writer)
            }
            try writer.save()
            return objects.mapValues(\.objectID)
        }

        let reader = store.newContext()
        FaultConstructionFetching.context = reader
        FaultConstructionFetching.innerCounts = []
        defer { FaultConstructionFetching.context = nil }
        try reader.performAndWait {
            // A fetch first, so that the store has a row offer to reuse when the outer fetch starts.
            #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Side")).count == 4)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Fetching")
            request.returnsObjectsAsFaults = false
            let fetched = try reader.fetch(request)
            FaultConstructionFetching.context = nil
            #expect(fetched.count == 4)
            #expect(FaultConstructionFetching.innerCounts == [4, 4, 4, 4], "each inner fetch saw every Side row")
            for object in fetched {
                let n = try #require(object.value(forKey: "n") as? Int64)
                #expect(object.objectID == savedIDs[n], "row \(n) keeps its own ID")
                #expect(object.entity.name == "Fetching")
            }
            // And the store's next fetches, after the reuse, still give each row its identity.
            let sides = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Side"))
            #expect(Set(sides.compactMap { $0.value(forKey: "n") as? Int64 }) == [100, 101, 102, 103])
            #expect(sides.allSatisfy { $0.entity.name == "Side" && !$0.objectID.isTemporaryID })
            let again = try reader.fetch(request)
            #expect(Set(again.map(\.objectID)) == Set(savedIDs.values))
        }
    }
}
