import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@Suite("Transient attributes")
struct TransientAttributeTests {
    private func model() -> NSManagedObjectModel {
        let note = NSAttributeDescription(name: "scratch", type: .stringAttributeType)
        note.isTransient = true
        let entity = NSEntityDescription(name: "Note", properties: [
            NSAttributeDescription(name: "title", type: .stringAttributeType, isOptional: false), note,
        ])
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func transientValuesLiveInMemoryOnly(storeType: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = storeType == NSSQLiteStoreType ? directory.file("Notes.sqlite") : nil
        let model = model()
        let context = try makeContext(model: model, storeType: storeType, at: url)
        let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
        note.setValue("kept", forKey: "title")
        note.setValue("in memory", forKey: "scratch")
        try context.save()
        #expect(note.value(forKey: "scratch") as? String == "in memory", "a save keeps the in-memory value")

        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        let again = try other.existingObject(with: note.objectID)
        #expect(again.value(forKey: "title") as? String == "kept")
        #expect(again.value(forKey: "scratch") == nil, "transient values are not saved")
        // Transient properties are not part of the version hash's property list.
        #expect(model.entitiesByName["Note"]!.versionHash != Data(count: 32))
        if let url {
            let schema = try RawDatabase(url).value("SELECT sql FROM sqlite_master WHERE name = 'ZNOTE'") as? String ?? ""
            #expect(schema.contains("ZTITLE"))
            #expect(!schema.contains("ZSCRATCH"), "no column for a transient attribute")
        }
    }

    /// Apple: `hasPersistentChangedValues` is whether the object has changes that are saved, so a
    /// change to a transient property alone makes `hasChanges` true but not it; a change to a stored
    /// one makes both true. (OpenCoreData reads an entity's transient slots from its layout.)
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func onlyStoredChangesArePersistentChanges(storeType: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = storeType == NSSQLiteStoreType ? directory.file("Notes.sqlite") : nil
        let context = try makeContext(model: model(), storeType: storeType, at: url)
        let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
        #expect(note.hasPersistentChangedValues, "an inserted object has persistent changes")
        note.setValue("kept", forKey: "title")
        try context.save()
        #expect(!note.hasChanges && !note.hasPersistentChangedValues)

        note.setValue("in memory", forKey: "scratch")
        #expect(note.hasChanges)
        #expect(!note.hasPersistentChangedValues, "a transient change alone is not a persistent change")
        note.setValue("changed", forKey: "title")
        #expect(note.hasPersistentChangedValues)
        try context.save()
        context.delete(note)
        #expect(note.hasPersistentChangedValues, "a deleted object has persistent changes")
    }
}
