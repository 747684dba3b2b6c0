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

/// A fetched row's object is made through `init(entity:insertInto:)`, which subclasses may
/// override, and receives the row's ID there instead of a temporary one. An overriding initializer
/// that makes other managed objects first must not hand them that ID.
@Suite("Fault construction", .serialized)  // the side objects are counted in one static list
struct FaultConstructionTests {
    static func model() -> NSManagedObjectModel {
        let noisy = NSEntityDescription(
            name: "Noisy", managedObjectClassName: NSStringFromClass(FaultConstructionNoisy.self),
            properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
        let side = NSEntityDescription(
            name: "Side", properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [noisy, side]
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
}
