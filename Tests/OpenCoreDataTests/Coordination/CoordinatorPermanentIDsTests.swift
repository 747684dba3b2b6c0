import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// A save's new objects get permanent IDs from their stores: with one SQLite store, the store's
/// primary keys for the whole list at once; with several stores, each store's for its objects, in
/// the list's order, whether the store hands out row keys (SQLite) or IDs (the in-memory store).
@Suite struct CoordinatorPermanentIDsTests {
    /// `Note` in configuration "Left", `Tag` in "Right" (two SQLite files), `Memo` in "Memory".
    private static func model() -> NSManagedObjectModel {
        let note = NSEntityDescription(name: "Note", properties: [
            NSAttributeDescription(name: "text", type: .stringAttributeType, isOptional: false)
        ])
        let tag = NSEntityDescription(name: "Tag", properties: [
            NSAttributeDescription(name: "text", type: .stringAttributeType, isOptional: false)
        ])
        let memo = NSEntityDescription(name: "Memo", properties: [
            NSAttributeDescription(name: "text", type: .stringAttributeType, isOptional: false)
        ])
        let model = NSManagedObjectModel()
        model.entities = [note, tag, memo]
        model.setEntities([note], forConfigurationName: "Left")
        model.setEntities([tag], forConfigurationName: "Right")
        model.setEntities([memo], forConfigurationName: "Memory")
        return model
    }

    /// Objects of three stores, inserted in turn: after the save each has a permanent ID of its own
    /// entity's store, and a context that never saw them finds each by its ID with its own text.
    @Test func objectsOfSeveralStoresGetTheirOwnStoresIDs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-permanent-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        defer { StoreHarness.close(coordinator) }
        let left = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: "Left", at: directory.appendingPathComponent("left.sqlite"))
        let right = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: "Right", at: directory.appendingPathComponent("right.sqlite"))
        let memory = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: "Memory", at: nil, options: nil)
        let entities = ["Note", "Tag", "Memo"]
        let stores = ["Note": left, "Tag": right, "Memo": memory]

        let context = StoreHarness.context(coordinator)
        let saved = try context.performAndWait { () throws -> [(NSManagedObjectID, String)] in
            let objects = (0..<12).map { index in
                insertObject(entities[index % 3], ["text": "\(entities[index % 3]) \(index)"], into: context)
            }
            try context.save()
            return objects.map { ($0.objectID, $0.value(forKey: "text") as! String) }
        }
        #expect(Set(saved.map(\.0)).count == 12)
        for (id, text) in saved {
            #expect(!id.isTemporaryID)
            #expect(id.persistentStore === stores[id.entity.name!], "\(text)")
        }
        let reader = StoreHarness.context(coordinator)
        try reader.performAndWait { () throws -> Void in
            for (id, text) in saved {
                #expect(try reader.existingObject(with: id).value(forKey: "text") as? String == text)
            }
        }
    }
}
