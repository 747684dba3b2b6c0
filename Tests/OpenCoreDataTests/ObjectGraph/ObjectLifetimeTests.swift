import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Which objects a context keeps alive (`retainsRegisteredObjects` off), and refreshing.
@Suite("Object lifetimes and refresh")
struct ObjectLifetimeTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// The graph model with `Owner` and `Item` objects of class ``TrackedObject``.
    private static func model() -> NSManagedObjectModel {
        let model = TestModels.graph()
        for name in ["Owner", "Item"] { model.entitiesByName[name]!.managedObjectClassName = NSStringFromClass(TrackedObject.self) }
        return model
    }

    private func fetchItems(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
    }

    @Test(arguments: storeTypes)
    func unchangedObjectsAreReleasedChangedOnesKeptUntilSaved(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let item = store.model.entitiesByName["Item"]!
        let context = store.newContext()
        do {
            for uid in 0..<100 { insertObject("Item", ["uid": Int64(uid)], into: context) }
            #expect(LifetimeTracker.live(item) == 100, "inserted objects are kept until saved")
            try context.save()
        }
        #expect(LifetimeTracker.live(item) == 0, "saved, unchanged and dropped: released")

        do {
            let fetched = try fetchItems(context)
            #expect(LifetimeTracker.live(item) == 100)
            for object in fetched.prefix(10) { object.setValue(Int32(7), forKey: "value") }
        }
        #expect(LifetimeTracker.live(item) == 10, "objects with unsaved changes stay")
        #expect(context.updatedObjects.count == 10)
        try context.save()
        #expect(LifetimeTracker.live(item) == 0)
    }

    /// Inside a `performAndWait` block, `registeredObjects` is built once and kept current (seed
    /// 004 asks for it once per lookup); the objects it holds are released when the block ends, as
    /// Apple's autoreleased set would be. What it returns is always exact.
    @Test(arguments: storeTypes)
    func registeredObjectsStayExactInsideABlockAndReleaseAfterIt(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let item = store.model.entitiesByName["Item"]!
        let context = store.newContext()
        try context.performAndWait {
            for uid in 0..<20 { insertObject("Item", ["uid": Int64(uid)], into: context) }
            try context.save()
        }
        #expect(LifetimeTracker.live(item) == 0)

        try context.performAndWait {
            let fetched = try fetchItems(context)
            #expect(withExtendedLifetime(fetched) { context.registeredObjects.count } == 20)
            // From here the block's set holds them, though `fetched` is gone.
            let extra = insertObject("Item", ["uid": Int64(99)], into: context)
            #expect(context.registeredObjects.count == 21 && context.registeredObjects.contains(extra))
            let victim = context.registeredObjects.first { ($0.value(forKey: "uid") as? Int64) == 3 }!
            context.delete(victim)
            try context.save()  // a saved deletion leaves the context
            #expect(context.registeredObjects.count == 20 && !context.registeredObjects.contains(victim))
            #expect(LifetimeTracker.live(item) >= 20, "held by the block's set until the block ends")
        }
        #expect(LifetimeTracker.live(item) == 0, "released once the block ended")
        context.performAndWait {
            #expect(context.registeredObjects.isEmpty)
            context.reset()
            #expect(context.registeredObjects.isEmpty)
        }
    }

    @Test(arguments: storeTypes)
    func turningAnObjectIntoAFaultFreesItsValues(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let item = store.model.entitiesByName["Item"]!
        let writer = store.newContext()
        let ownerID: NSManagedObjectID
        do {
            let owner = insertObject("Owner", ["uid": Int64(1)], into: writer)
            owner.setValue(insertObject("Item", ["uid": Int64(2)], into: writer), forKey: "best")
            try writer.save()
            ownerID = owner.objectID
        }
        // The owner and its item hold each other (best/bestOf) in a strong cycle, as on Apple;
        // turning them into faults breaks it.
        #expect(LifetimeTracker.live(item) == 1)
        writer.refreshAllObjects()
        #expect(LifetimeTracker.live(item) == 0)
        let context = store.newContext()
        let owner = context.object(with: ownerID)
        #expect((owner.value(forKeyPath: "best.uid") as? Int64) == 2)
        #expect(LifetimeTracker.live(item) == 1, "the owner holds its loaded destination")
        context.refresh(owner, mergeChanges: false)
        #expect(owner.isFault)
        #expect(LifetimeTracker.live(item) == 0, "a fault holds no values")
        #expect((owner.value(forKeyPath: "best.uid") as? Int64) == 2, "and fires again")
    }

    @Test(arguments: storeTypes)
    func refreshMergingChangesReadsTheStoreAndKeepsUnsavedChanges(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        let object = insertObject("Item", ["uid": Int64(1), "value": Int32(1)], into: context)
        try context.save()

        object.setValue(Int32(5), forKey: "value")
        let other = store.newContext()
        let there = other.object(with: object.objectID)
        there.setValue(Int64(42), forKey: "uid")
        there.setValue(Int32(9), forKey: "value")
        try other.save()

        context.refresh(object, mergeChanges: true)
        #expect(object.value(forKey: "uid") as? Int64 == 42, "the store's value")
        #expect(object.value(forKey: "value") as? Int32 == 5, "the unsaved change on top")
        #expect(object.isUpdated)
        #expect(object.committedValues(forKeys: ["value"])["value"] as? Int32 == 9)

        context.refreshAllObjects()
        #expect(object.value(forKey: "value") as? Int32 == 5, "refreshAllObjects merges changed objects")
        context.refresh(object, mergeChanges: false)
        #expect(object.value(forKey: "value") as? Int32 == 9, "without merging, the change is gone")
        #expect(!context.hasChanges)
    }

    /// New objects that leave their context unsaved (a rollback, or a deletion before any save)
    /// let go of each other: related objects hold each other strongly, and no context reaches them
    /// any more to break that (`reset()`, `refresh`), so such a graph was never freed. Apple keeps
    /// no such graph alive either (its rollback forgets inserted objects); what a dropped object's
    /// relationships then read on Apple is not documented: here they read empty, its attributes
    /// keep their values.
    @Test(arguments: ["rollback", "delete", "delete and rollback"])
    func newObjectsThatLeaveUnsavedAreFreed(how: String) throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let owner = store.model.entitiesByName["Owner"]!, item = store.model.entitiesByName["Item"]!
        let context = store.newContext()
        weak var dropped: NSManagedObject?
        do {
            let o = insertObject("Owner", ["uid": Int64(1)], into: context)
            // Relationships of every delete rule, so that no rule leaves a cycle.
            let a = insertObject("Item", ["uid": Int64(2), "owner": o, "bestOf": o], into: context)
            insertObject("Item", ["uid": Int64(3), "listOwner": o, "parent": a], into: context)
            insertObject("Item", ["uid": Int64(4), "guardian": o], into: context)
            insertObject("Tag", ["uid": Int64(5), "owners": Set([o])], into: context)
            dropped = o
            switch how {
            case "rollback": context.rollback()
            case "delete":
                for object in context.insertedObjects { context.delete(object) }
                context.processPendingChanges()
            default:
                for object in context.insertedObjects { context.delete(object) }
                context.rollback()
            }
            #expect(context.insertedObjects.isEmpty && context.registeredObjects.isEmpty)
            #expect(o.value(forKey: "uid") as? Int64 == 1, "attributes keep their values")
            #expect(o.managedObjectContext == nil)
        }
        #expect(dropped == nil)
        #expect(LifetimeTracker.live(owner) == 0)
        #expect(LifetimeTracker.live(item) == 0)
    }
}
