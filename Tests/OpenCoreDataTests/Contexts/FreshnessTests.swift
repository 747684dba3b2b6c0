import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// `stalenessInterval` (how old the row a fault fires from may be) and
/// `shouldRefreshRefetchedObjects` (a refetch keeps in-memory values unless it is set), after
/// another context's save. Apple: "the maximum length of time that may have elapsed since the store
/// previously fetched data before fulfilling a fault issues a new fetch rather than using the
/// previously-fetched data"; negative means infinite.
@Suite("Freshness")
struct FreshnessTests {
    /// A store with department D (budget 1), and a function that sets D's budget from another context.
    private func fixture() throws -> (TestStore, NSManagedObjectID, (Double) throws -> Void) {
        let store = try TestStore(NSSQLiteStoreType)
        let writer = store.newContext()
        let id = try writer.performAndWait {
            let d = insertObject("Department", ["name": "D", "budget": 1.0], into: writer)
            try writer.save()
            return d.objectID
        }
        let update = { (budget: Double) throws in
            try writer.performAndWait {
                try writer.existingObject(with: id).setValue(budget, forKey: "budget")
                try writer.save()
            }
        }
        return (store, id, update)
    }

    /// Fetches the department as a fault holding its row (`returnsObjectsAsFaults`, the default).
    private func fetchFault(_ context: NSManagedObjectContext) throws -> NSManagedObject {
        let department = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        #expect(department.isFault)
        return department
    }

    @Test func aFaultFiresFromItsCachedRowUnlessTheRowIsStale() throws {
        let (store, _, update) = try fixture()
        let unlimited = store.newContext()  // stalenessInterval -1: the cached row, however old
        let zero = store.newContext()
        zero.stalenessInterval = 0  // never the cached row
        let hour = store.newContext()
        hour.stalenessInterval = 3600
        let faults = try [unlimited, zero, hour].map { context in try context.performAndWait { try fetchFault(context) } }
        try update(2)
        #expect(unlimited.performAndWait { faults[0].value(forKey: "budget") as? Double } == 1)
        #expect(zero.performAndWait { faults[1].value(forKey: "budget") as? Double } == 2)
        #expect(hour.performAndWait { faults[2].value(forKey: "budget") as? Double } == 1, "read less than an hour ago")
    }

    @Test func aRowReadLongerAgoThanTheIntervalIsReadAgain() throws {
        let (store, _, update) = try fixture()
        let context = store.newContext()
        context.stalenessInterval = 0.05
        let fault = try context.performAndWait { try fetchFault(context) }
        try update(3)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(context.performAndWait { fault.value(forKey: "budget") as? Double } == 3)
    }

    @Test func aRefetchKeepsInMemoryValuesUnlessShouldRefreshRefetchedObjects() throws {
        let (store, _, update) = try fixture()
        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        request.returnsObjectsAsFaults = false
        let department = try #require(try context.performAndWait { try context.fetch(request).first })
        context.performAndWait {
            department.setValue("local", forKey: "name")
            context.processPendingChanges()  // reported as updated now; the refetch's report is a refresh
        }
        try update(4)
        try context.performAndWait {
            _ = try context.fetch(request)
            #expect(department.value(forKey: "budget") as? Double == 1, "a refetch keeps the values in memory")
        }
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        request.shouldRefreshRefetchedObjects = true
        try context.performAndWait {
            _ = try context.fetch(request)
            #expect(department.value(forKey: "budget") as? Double == 4)
            #expect(department.value(forKey: "name") as? String == "local", "unsaved changes stay")
            context.processPendingChanges()
        }
        #expect(changes.last?.objects(NSRefreshedObjectsKey) == [department])
    }

    @Test func refreshAllObjectsSeesAnotherContextsSaveAndReportsTheObjectsRefreshed() throws {
        let (store, id, update) = try fixture()
        let context = store.newContext()
        let department = try context.performAndWait { try context.existingObject(with: id) }
        try update(5)
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, object: context)
        context.performAndWait {
            #expect(department.value(forKey: "budget") as? Double == 1)
            context.refreshAllObjects()
            #expect(department.isFault)
            context.processPendingChanges()
            #expect(department.value(forKey: "budget") as? Double == 5)
        }
        #expect(changes.count == 1)
        #expect(changes.last?.objects(NSRefreshedObjectsKey) == [department])
    }
}
