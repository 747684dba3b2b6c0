import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

// This module declares its own `protocol Managed` (ManagedPropertyEndToEndTests.swift, as the seeds
// do); `Shelf` (test support) conforms to the library's. Both compile side by side.

@Suite("The library's Managed helpers")
struct ManagedProtocolTests {
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func findOrCreateFindsInMemoryThenInTheStoreThenCreates(storeType: String) throws {
        let store = try TestStore(storeType, model: Shelf.model())
        let context = store.newContext()
        #expect(Shelf.entityName == "Shelf")
        let first = Shelf.findOrCreate(code: 1, in: context)
        #expect(first.isInserted && first.label == "shelf 1")
        #expect(Shelf.findOrCreate(code: 1, in: context) === first, "found in memory, not created twice")
        let made: Shelf = context.insertObject()
        made.code = 0
        try context.save()

        let reader = store.newContext()
        let fetched = Shelf.findOrFetch(in: reader, matching: NSPredicate(format: "code == 1"))
        #expect(fetched?.label == "shelf 1" && fetched?.isInserted == false, "fetched from the store")
        #expect(Shelf.materializedObject(in: reader, matching: NSPredicate(format: "code == 0")) == nil, "never loaded here")
        #expect(Shelf.fetch(in: reader).count == 2)
        #expect(try reader.fetch(Shelf.sortedFetchRequest).map(\.code) == [0, 1])
        #expect(try reader.fetch(Shelf.sortedFetchRequest(with: NSPredicate(format: "code > 0"))).map(\.code) == [1])
        #expect(Shelf.fetch(in: reader) { $0.fetchLimit = 1 }.count == 1)
    }

    @Test func theLibrarysProtocolCanBeNamedWhereAModuleShadowsIt() {
        // Here `Managed` is this module's protocol; the library's is `OpenCoreData.Managed`.
        #expect((Shelf.self as Any) is any OpenCoreData.Managed.Type)
        #expect(!((Shelf.self as Any) is any Managed.Type))
    }
}

/// Used only here, with a model that names it by a bare class name nothing can resolve.
final class UnresolvedBin: NSManagedObject, OpenCoreData.Managed {
    @ManagedProperty var code: Int16
    static var entityName: String { "Bin" }
}

@Suite("insertObject() without class resolution")
struct InsertObjectClassTests {
    @Test func insertObjectRecordsTheClassItWasAskedFor() throws {
        let entity = NSEntityDescription(name: "Bin", managedObjectClassName: "NoModuleHasThisName",
                                         properties: [NSAttributeDescription(name: "code", type: .integer16AttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let context = try makeContext(model: model)
        // insertNewObject(forEntityName:) cannot know the class: a plain NSManagedObject.
        #expect(!(NSEntityDescription.insertNewObject(forEntityName: "Bin", into: context) is UnresolvedBin))
        // The seed's insertObject<A>() knows A: it records the class instead of trapping.
        let bin: UnresolvedBin = context.insertObject()
        bin.code = 7
        #expect(bin.isInserted && bin.value(forKey: "code") as? Int16 == 7)
        #expect(NSEntityDescription.insertNewObject(forEntityName: "Bin", into: context) is UnresolvedBin, "now known")
    }

    @Test func insertObjectForAMissingEntityLogsInsteadOfTrapping() throws {
        let context = try makeContext(model: NSManagedObjectModel())
        let bin: UnresolvedBin = context.insertObject()
        #expect(!bin.isInserted)
        #expect(!context.hasChanges)
    }
}
