import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// A fetch into a context whose registry is empty does not look its rows up (no row can have an
/// object yet) for as long as no other object is filed, and must notice when one is. Here an
/// `awakeFromFetch` fetches the same rows while the first fetch is still going through them (Apple
/// documents no such limit on `awakeFromFetch`): every row must still have one instance.
@Suite("Fetches into an empty registry", .serialized)
struct FetchRegistrationTests {
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aFetchDuringAFetchGivesEveryRowOneInstance(storeType: String) throws {
        let entity = NSEntityDescription(
            name: "Probe", properties: [NSAttributeDescription(name: "uid", type: .integer64AttributeType)])
        entity.managedObjectClassName = NSStringFromClass(NestedFetchingProbe.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let store = try TestStore(storeType, model: model)
        let seeding = store.newContext()
        try seeding.performAndWait {
            for uid in 0..<40 {
                NSManagedObject(entity: entity, insertInto: seeding).setValue(Int64(uid), forKey: "uid")
            }
            try seeding.save()
        }

        let context = store.newContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Probe")
            request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
            request.returnsObjectsAsFaults = false  // awoken row by row, as they are fetched
            NestedFetchingProbe.nested = nil
            NestedFetchingProbe.armed = true
            let outer = try context.fetch(request)
            let nested = try #require(NestedFetchingProbe.nested)
            #expect(outer.count == 40 && nested.count == 40)
            let nestedByID = Dictionary(uniqueKeysWithValues: nested.map { ($0.objectID, $0) })
            #expect(outer.allSatisfy { nestedByID[$0.objectID] === $0 }, "one instance per row")
            #expect(context.registeredObjects.count == 40)
            #expect(outer.allSatisfy { context.object(with: $0.objectID) === $0 })
        }
        withExtendedLifetime(store) {}
    }
}

/// Fetches every probe, in the opposite order, when the first one awakes while `armed`.
final class NestedFetchingProbe: NSManagedObject {
    // Only the serialized suite above sets these, on its context's queue.
    nonisolated(unsafe) static var armed = false
    nonisolated(unsafe) static var nested: [NSManagedObject]?

    override func awakeFromFetch() {
        super.awakeFromFetch()
        guard Self.armed, let context = managedObjectContext else { return }
        Self.armed = false
        let request = NSFetchRequest<NSManagedObject>(entityName: "Probe")
        request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: false)]
        Self.nested = try? context.fetch(request)
    }
}
