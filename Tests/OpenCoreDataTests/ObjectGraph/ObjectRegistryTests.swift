import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// The context's registry holds its objects weakly without Swift weak references: each object
/// leaves it from its `deinit`. Apple documents the semantics checked here (`registeredObjects`,
/// `object(with:)` returning the one instance per ID, unchanged objects not kept alive when
/// `retainsRegisteredObjects` is off); the registry's entry count is internal bookkeeping.
@Suite("Object registry without weak references")
struct ObjectRegistryTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// A store with `count` saved `Item`s (uid 0..<count).
    private func seededStore(_ storeType: String, count: Int) throws -> TestStore {
        let store = try TestStore(storeType, model: TestModels.graph())
        let seeding = store.newContext()
        for uid in 0..<count { insertObject("Item", ["uid": Int64(uid)], into: seeding) }
        try seeding.save()
        return store
    }

    private func items(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
        return try context.fetch(request)
    }

    @Test(arguments: storeTypes)
    func anUnchangedObjectTheAppDropsLeavesTheRegistryAndIsFreed(storeType: String) throws {
        let store = try seededStore(storeType, count: 3)
        let context = store.newContext()
        weak var dropped: NSManagedObject?
        var droppedID: NSManagedObjectID?
        var kept: [NSManagedObject] = []
        do {
            let fetched = try items(context)
            #expect(fetched.count == 3)
            dropped = fetched[0]
            droppedID = fetched[0].objectID
            kept = Array(fetched[1...])
            // `fetched` lives to here (an optimized build may end it at its last use).
            withExtendedLifetime(fetched) { #expect(context.registeredObjects.count == 3) }
        }
        #expect(dropped == nil, "freed once the app let go")
        #expect(context.registeredObjects.count == 2)
        #expect(context.registeredObject(for: droppedID!) == nil)
        #expect(context.registry.count == 2, "its entry left with it, no sweep needed")
        // Asking again makes a new instance (a fault) for the row.
        let again = context.object(with: droppedID!)
        #expect(again.objectID == droppedID && again.isFault)
        #expect(context.registeredObjects.count == 3)
        withExtendedLifetime((kept, store)) {}
    }

    @Test(arguments: storeTypes)
    func aChangedObjectStaysRegisteredUntilSaved(storeType: String) throws {
        let store = try seededStore(storeType, count: 2)
        let context = store.newContext()
        weak var changed: NSManagedObject?
        weak var inserted: NSManagedObject?
        do {
            let fetched = try items(context)
            fetched[0].setValue(Int32(42), forKey: "value")
            changed = fetched[0]
            inserted = insertObject("Item", ["uid": Int64(99)], into: context)
        }
        #expect(changed != nil && inserted != nil, "the change sets keep them")
        #expect(context.registeredObjects.count == 2)
        #expect(context.registeredObject(for: changed!.objectID) === changed)
        let temporaryID = inserted!.objectID
        #expect(context.registeredObject(for: temporaryID) === inserted)
        try context.save()
        // After the save nothing holds them: they leave, under their new (permanent) IDs too.
        #expect(changed == nil && inserted == nil)
        #expect(context.registeredObjects.isEmpty && context.registry.count == 0)
        #expect(context.registeredObject(for: temporaryID) == nil)
        let values = try items(context).map { $0.value(forKey: "value") as? Int32 }
        #expect(values == [42, nil, nil])
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func aSavedObjectIsFoundUnderItsPermanentID(storeType: String) throws {
        let store = try seededStore(storeType, count: 0)
        let context = store.newContext()
        let object = insertObject("Item", ["uid": Int64(7)], into: context)
        let temporaryID = object.objectID
        try context.save()
        #expect(!object.objectID.isTemporaryID)
        #expect(context.registeredObject(for: object.objectID) === object)
        #expect(context.object(with: object.objectID) === object)
        #expect(context.registeredObject(for: temporaryID) == nil)
        #expect(try items(context).first === object)
        withExtendedLifetime(store) {}
    }

    /// An object of no context given a permanent ID through a context does not join its registry
    /// (it could not leave it when freed). Apple's behaviour for such an object is not documented.
    @Test(arguments: storeTypes)
    func permanentIDsForAnObjectOfNoContextLeaveTheRegistryAlone(storeType: String) throws {
        let store = try seededStore(storeType, count: 0)
        let context = store.newContext()
        weak var loose: NSManagedObject?
        do {
            let object = NSManagedObject(entity: store.model.entitiesByName["Item"]!, insertInto: nil)
            loose = object
            try context.obtainPermanentIDs(for: [object])
            #expect(!object.objectID.isTemporaryID)
            #expect(context.registeredObject(for: object.objectID) == nil)
        }
        #expect(loose == nil)
        #expect(context.registeredObjects.isEmpty && context.registry.count == 0)
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func uniquingGivesTheSameInstanceWhileTheAppHoldsIt(storeType: String) throws {
        let store = try seededStore(storeType, count: 4)
        let context = store.newContext()
        let first = try items(context)
        let second = try items(context)
        #expect(zip(first, second).allSatisfy { $0 === $1 })
        for object in first {
            #expect(context.object(with: object.objectID) === object)
            #expect(context.registeredObject(for: object.objectID) === object)
            #expect(try context.existingObject(with: object.objectID) === object)
        }
        #expect(context.registeredObjects == Set(first))
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func retainsRegisteredObjectsKeepsThemAlive(storeType: String) throws {
        let store = try seededStore(storeType, count: 3)
        let context = store.newContext()
        context.retainsRegisteredObjects = true
        weak var object: NSManagedObject?
        do { object = try items(context).first }
        #expect(object != nil, "held by the context")
        #expect(context.registeredObjects.count == 3)
        context.reset()
        #expect(object == nil, "reset lets go of them")
        #expect(context.registeredObjects.isEmpty && context.registry.count == 0)
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func resetForgetsObjectsTheAppStillHolds(storeType: String) throws {
        let store = try seededStore(storeType, count: 3)
        let context = store.newContext()
        var held = try items(context)
        weak let first = held.first
        context.reset()
        #expect(context.registeredObjects.isEmpty && context.registry.count == 0)
        #expect(held.allSatisfy { $0.managedObjectContext == nil })
        held = []
        #expect(first == nil)
        // The rows come back as new instances.
        #expect(try items(context).count == 3)
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func objectsOutliveTheirContextSafely(storeType: String) throws {
        let store = try seededStore(storeType, count: 3)
        var context: NSManagedObjectContext? = store.newContext()
        weak let weakContext = context
        weak var lastOne: NSManagedObject?
        do {
            let fetched = try items(context!)
            lastOne = fetched.last
            let changed = fetched[0]
            changed.setValue(Int32(5), forKey: "value")
            context = nil
            #expect(weakContext == nil, "the objects do not keep their context alive")
            #expect(fetched.allSatisfy { $0.managedObjectContext == nil })
            #expect(changed.value(forKey: "value") as? Int32 == 5)
        }
        // `fetched` was released: each object's deinit found no context and did nothing.
        #expect(lastOne == nil)
        withExtendedLifetime(store) {}
    }

    /// Entries are filed in pages of consecutive keys (`ObjectRegistry.pageSize`): objects spread
    /// over several pages, released in an order that empties pages, refills them and leaves gaps,
    /// are each found under their own ID until released, and leave no entry behind.
    @Test(arguments: storeTypes)
    func objectsAcrossPagesAreFoundUntilReleased(storeType: String) throws {
        let count = ObjectRegistry.pageSize * 5 + 7
        let store = try seededStore(storeType, count: count)
        let context = store.newContext()
        var held: [NSManagedObject?] = try items(context)
        let ids = held.map { $0!.objectID }
        #expect(context.registry.count == count)
        // Every third object first, then the first two pages entirely, then the rest backwards.
        var order = Array(stride(from: 0, to: count, by: 3))
        order += (0..<(2 * ObjectRegistry.pageSize)).filter { $0 % 3 != 0 }
        order += (0..<count).reversed().filter { !order.contains($0) }
        #expect(Set(order).count == count)
        for (step, index) in order.enumerated() {
            held[index] = nil
            #expect(context.registeredObject(for: ids[index]) == nil)
            if step % 17 == 0 {
                for (other, object) in held.enumerated() where object != nil {
                    #expect(context.registeredObject(for: ids[other]) === object)
                }
            }
            if step == count / 2 {
                // A page emptied above is refilled: new faults for released rows are registered again.
                let again = context.object(with: ids[0])
                #expect(again.isFault && context.registeredObject(for: ids[0]) === again)
                held[0] = again
            }
        }
        #expect(context.registry.count == 1)
        held[0] = nil
        #expect(context.registry.count == 0)
        withExtendedLifetime(store) {}
    }

    /// A fetched object makes its ID when first asked (the SQLite store hands the context the row's
    /// key): the ID is made once, equals the one an ID fetch returns (Apple: one ID per row), and the
    /// registry finds the object under it before and after.
    @Test
    func aFetchedObjectMakesItsIDOnceWhenAsked() throws {
        let store = try seededStore(NSSQLiteStoreType, count: 3)
        let context = store.newContext()
        let objects = try items(context)
        #expect(objects.allSatisfy { $0._lazyRowKey != nil }, "no ID made by the fetch")
        let idRequest = NSFetchRequest<NSManagedObjectID>(entityName: "Item")
        idRequest.resultType = .managedObjectIDResultType
        idRequest.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
        let ids = try context.fetch(idRequest)
        #expect(context.registeredObject(for: ids[1]) === objects[1], "found by an equal ID before its own is made")
        let made = objects[1].objectID
        #expect(made == ids[1] && made.hash == ids[1].hash && !made.isTemporaryID)
        #expect(made.persistentStore === context.persistentStoreCoordinator?.persistentStores.first)
        #expect(objects[1].objectID === made, "made once")
        #expect(objects[1]._lazyRowKey == nil && objects[0]._lazyRowKey != nil)
        #expect(context.registeredObject(for: made) === objects[1])
        #expect(try context.existingObject(with: ids[2]) === objects[2])
    }

    /// Saving the changes of fetched objects uses their rows' keys: their IDs stay unmade, and the
    /// rows are written. A deleted object leaves the registry (found there by its row too).
    @Test
    func savingFetchedObjectsDoesNotMakeTheirIDs() throws {
        let store = try seededStore(NSSQLiteStoreType, count: 3)
        let context = store.newContext()
        let objects = try items(context)
        objects[0].setValue(Int64(10), forKey: "uid")
        context.delete(objects[2])
        try context.save()
        #expect(objects[0]._lazyRowKey != nil, "no ID made by the save")
        #expect(context.registeredObjects.count == 2 && !context.registeredObjects.contains(objects[2]))
        let reader = store.newContext()
        #expect(try items(reader).map { $0.value(forKey: "uid") as? Int64 } == [1, 10])
    }

    /// A new object takes a temporary ID's number at insert and makes the ID only when asked
    /// (Apple's IDs of new objects are temporary until saved); the save gives it its row's key,
    /// again without making an ID, and the registry files it under its permanent ID.
    @Test(arguments: storeTypes)
    func newObjectsMakeTheirIDsOnlyWhenAsked(storeType: String) throws {
        let store = try seededStore(storeType, count: 0)
        let context = store.newContext()
        let lazy = insertObject("Item", ["uid": Int64(1)], into: context)
        let asked = insertObject("Item", ["uid": Int64(2)], into: context)
        #expect(lazy._lazyTemporaryNumber != nil && lazy._hasTemporaryID)
        let temporary = asked.objectID
        #expect(temporary.isTemporaryID && asked.objectID === temporary, "made once, kept until the save")
        #expect(context.registeredObject(for: temporary) === asked)
        #expect(context.insertedObjects == [lazy, asked])
        #expect(lazy._lazyTemporaryNumber != nil, "inserting and listing made no ID")

        try context.save()
        #expect(!lazy._hasTemporaryID)
        if storeType == NSSQLiteStoreType {  // the in-memory store files rows by ID, so it makes them
            #expect(lazy._lazyRowKey != nil, "the save gave it its key, no ID")
        }
        let permanent = lazy.objectID
        #expect(!permanent.isTemporaryID && permanent.primaryKey != nil)
        #expect(context.registeredObject(for: permanent) === lazy)
        #expect(!asked.objectID.isTemporaryID && asked.objectID != temporary)
        #expect(context.registeredObject(for: temporary) == nil, "the temporary ID no longer names it")
        #expect(try context.existingObject(with: asked.objectID) === asked)
        let reader = store.newContext()
        #expect(try items(reader).map { $0.value(forKey: "uid") as? Int64 } == [1, 2])
    }

    /// Objects outlive their context, coordinator and model (an error names one, an app keeps
    /// one): their entity stays readable through their layout, their values too. Apple's behaviour
    /// with a deallocated model is not documented; we keep the objects usable and never trap.
    @Test(arguments: storeTypes)
    func objectsOutlivingTheirModelKeepTheirEntity(storeType: String) throws {
        var fetched: NSManagedObject?
        var inserted: NSManagedObject?
        weak var model: NSManagedObjectModel?
        do {
            let store = try seededStore(storeType, count: 1)
            let context = store.newContext()
            fetched = try items(context).first
            inserted = insertObject("Item", ["uid": Int64(5)], into: context)
            try context.save()
            model = context.persistentStoreCoordinator?.managedObjectModel
        }
        #expect(model == nil, "the model is gone")
        #expect(fetched?.entity.name == "Item" && inserted?.entity.name == "Item")
        #expect(fetched?.value(forKey: "uid") as? Int64 == 0 && inserted?.value(forKey: "uid") as? Int64 == 5)
        #expect(inserted?.objectID.isTemporaryID == false && fetched?.objectID.entity.name == "Item")
    }

    /// Several threads asking a fetched object for its ID at once all get the same instance.
    @Test
    func threadsAskingForAFetchedObjectsIDAtOnceGetOneID() throws {
        let store = try seededStore(NSSQLiteStoreType, count: 64)
        let context = store.newContext()
        let objects = try items(context)
        let box = IDBox(objects)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in box.objects.indices { box.record(box.objects[index].objectID, thread: thread, index: index) }
        }
        #expect(box.allSame())
        withExtendedLifetime(store) {}
    }

    /// Threads reading new objects' IDs while their context saves each get a temporary ID or the
    /// permanent one, never nothing; an object whose temporary ID was asked for gets its permanent
    /// ID at the save at once (`_setRowIdentity`), the others when first asked.
    @Test
    func threadsReadingNewObjectsIDsDuringASaveGetTemporaryOrPermanentIDs() throws {
        let store = try seededStore(NSSQLiteStoreType, count: 0)
        let context = store.newContext()
        let objects = (0..<64).map { insertObject("Item", ["uid": Int64($0)], into: context) }
        let asked = objects.enumerated().filter { $0.offset.isMultiple(of: 2) }.map { $0.element.objectID }
        #expect(asked.allSatisfy { $0.isTemporaryID })
        let box = IDBox(objects)
        let failure = SaveFailure()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            if thread == 0 {
                do { try context.save() } catch { failure.record(error) }
            }
            for index in box.objects.indices { box.record(box.objects[index].objectID, thread: thread, index: index) }
        }
        #expect(failure.error == nil)
        #expect(objects.allSatisfy { !$0.objectID.isTemporaryID && $0.objectID.primaryKey != nil })
        #expect(Set(objects.map(\.objectID)).count == 64)
        for (index, object) in objects.enumerated() {
            #expect(context.registeredObject(for: object.objectID) === object)
            if index.isMultiple(of: 2) { #expect(context.registeredObject(for: asked[index / 2]) == nil) }
        }
    }

    /// Objects of rows on different pages of the registry (32 keys a page), registered and dropped
    /// one at a time and kept in turns: the page made last is kept apart from the others and, when
    /// empty, reused for the next new page. Each live object stays the one instance of its ID.
    @Test(arguments: storeTypes)
    func objectsOfManyPagesRegisteredAndDroppedInTurns(storeType: String) throws {
        let store = try seededStore(storeType, count: 100)
        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Item")
        request.resultType = .managedObjectIDResultType
        request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
        let ids = try context.fetch(request)
        #expect(ids.count == 100)
        var kept: [Int: NSManagedObject] = [:]
        // (index, keep): a dropped object leaves its page empty before the next page is made.
        let steps = [(5, false), (70, true), (6, true), (40, true), (99, false), (71, true), (7, false), (0, true)]
        for (index, keep) in steps {
            let object = context.object(with: ids[index])
            #expect(context.registeredObject(for: ids[index]) === object)
            if keep { kept[index] = object }
        }
        kept[70] = nil  // its page keeps object 71
        #expect(context.registry.count == kept.count)
        for index in [5, 7, 99, 70] { #expect(context.registeredObject(for: ids[index]) == nil, "\(index) was dropped") }
        for (index, object) in kept { #expect(context.registeredObject(for: ids[index]) === object) }
        #expect(Set(context.registeredObjects.map(ObjectIdentifier.init)) == Set(kept.values.map(ObjectIdentifier.init)))
        // A fetch of every row finds the live objects, and registers the rest once each.
        let fetched = try items(context)
        for (index, object) in kept { #expect(fetched[index] === object) }
        #expect(context.registry.count == 100)
        #expect(Set(fetched.map(ObjectIdentifier.init)).count == 100)
        withExtendedLifetime(fetched) {}
    }

    /// IDs whose reference is not an integer (an `NSIncrementalStore`'s strings) are filed apart
    /// from the pages, and never confused with an integer key of the same entity.
    @Test
    func stringReferencesAreFiledApart() throws {
        let store = try seededStore(NSSQLiteStoreType, count: 1)
        let context = store.newContext()
        let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Item"])
        let stringID = NSManagedObjectID(entity: entity, store: nil, reference: .string("1"))
        let integerID = try #require(try items(context).first?.objectID)
        let byString = context.object(with: stringID)
        let byInteger = context.object(with: integerID)
        #expect(byString !== byInteger)
        #expect(context.registeredObject(for: stringID) === byString)
        #expect(context.registeredObject(for: NSManagedObjectID(entity: entity, store: nil, reference: .string("1"))) === byString)
        #expect(context.registry.count == 2)
        withExtendedLifetime((byString, byInteger)) {}
    }

    /// The last release of an object on another thread (a confinement violation) while the
    /// context's own thread looks its ID up: the lookup gets the same instance, or (once the object
    /// is deinitializing) a new fault, never a freed object. `OCD_STRESS` runs many more rounds.
    @Test(arguments: storeTypes)
    func anObjectReleasedOnAnotherThreadWhileTheContextLooksItUp(storeType: String) throws {
        let store = try seededStore(storeType, count: 8)
        let context = store.newContext()
        let ids = try items(context).map(\.objectID)
        let rounds = ProcessInfo.processInfo.environment["OCD_STRESS"] != nil ? 200_000 : 3_000
        var mismatches = 0
        for round in 0..<rounds {
            let id = ids[round % ids.count]
            let box = ReleaseBox(context.object(with: id))
            let released = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                box.object = nil  // usually the last reference: the object deinitializes on this thread
                released.signal()
            }
            var lookups = 0
            repeat {
                let found = context.object(with: id)
                if found.objectID != id || context.registeredObject(for: id) !== found { mismatches += 1 }
                if lookups % 8 == 0, !context.registeredObjects.contains(found) { mismatches += 1 }
                lookups += 1
            } while released.wait(timeout: .now()) == .timedOut
        }
        #expect(mismatches == 0)
        #expect(context.registry.count <= ids.count)
        withExtendedLifetime(store) {}
    }
}

/// Hands the only strong reference to an object to another thread.
///
/// `@unchecked Sendable` invariant: the test thread stops using `object` once it is boxed.
private final class ReleaseBox: @unchecked Sendable {
    var object: NSManagedObject?
    init(_ object: NSManagedObject) { self.object = object }
}

/// The IDs several threads read, per thread and object.
///
/// `@unchecked Sendable` invariant: `objects` is read only; `ids` is written under `lock`.
private final class IDBox: @unchecked Sendable {
    let objects: [NSManagedObject]
    private let lock = NSLock()
    private var ids: [[ObjectIdentifier?]]
    init(_ objects: [NSManagedObject]) {
        self.objects = objects
        ids = Array(repeating: Array(repeating: nil, count: objects.count), count: 8)
    }
    func record(_ id: NSManagedObjectID, thread: Int, index: Int) {
        lock.lock()
        ids[thread][index] = ObjectIdentifier(id)
        lock.unlock()
    }
    func allSame() -> Bool { ids.allSatisfy { $0 == ids[0] } && !ids[0].contains(nil) }
}

private final class SaveFailure: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var error: (any Error)?
    func record(_ error: any Error) {
        lock.lock()
        self.error = error
        lock.unlock()
    }
}
