import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

class RowEmployee: NSManagedObject {}
final class RowManager: RowEmployee {}

/// What the fetch path's shortcuts must keep: rows decode to the values saved (NULL, empty and
/// non-ASCII text apart), fetched object IDs equal and hash as IDs made any other way (so a row
/// finds the instance already registered for it), and typed results hold the right instances
/// whether or not they are all of exactly the requested class.
@Suite("Fetch materialization")
struct FetchMaterializationTests {
    static func model() -> NSManagedObjectModel {
        let employee = NSEntityDescription(
            name: "Employee",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType),
                NSAttributeDescription(name: "age", type: .integer16AttributeType),
            ])
        employee.managedObjectClassName = NSStringFromClass(RowEmployee.self)
        let manager = NSEntityDescription(
            name: "Manager", properties: [NSAttributeDescription(name: "level", type: .integer64AttributeType)])
        manager.managedObjectClassName = NSStringFromClass(RowManager.self)
        employee.subentities = [manager]
        let model = NSManagedObjectModel()
        model.entities = [employee, manager, TestModels.item()]
        return model
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func rowsDecodeToTheSavedValues(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let seeding = store.newContext()
        let date = Date(timeIntervalSinceReferenceDate: 123_456.75)
        insertObject(
            "Item",
            ["int64": Int64(0), "string": "", "int16": Int16(-3), "int32": Int32(70_000), "bool": false,
             "double": -0.5, "date": date], into: seeding)
        insertObject("Item", ["int64": Int64(1), "string": "héllo wörld, 你好"], into: seeding)
        insertObject("Item", ["int64": Int64(2)], into: seeding)
        try seeding.save()

        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "int64", ascending: true)]
        request.returnsObjectsAsFaults = false
        let items = try context.fetch(request)
        #expect(items.count == 3)
        guard items.count == 3 else { return }
        // An empty string is not NULL, and NULL is not an empty string.
        #expect(items[0].value(forKey: "string") as? String == "")
        #expect(items[0].value(forKey: "int16") as? Int16 == -3)
        #expect(items[0].value(forKey: "int32") as? Int32 == 70_000)
        #expect(items[0].value(forKey: "bool") as? Bool == false)
        #expect(items[0].value(forKey: "double") as? Double == -0.5)
        #expect(items[0].value(forKey: "date") as? Date == date)
        #expect(items[1].value(forKey: "string") as? String == "héllo wörld, 你好")
        for key in ["string", "int16", "int32", "bool", "double", "date"] {
            #expect(items[2].value(forKey: key) == nil, "\(key)")
        }
        withExtendedLifetime(store) {}
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func fetchedRowsFindTheInstanceRegisteredForTheirID(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let seeding = store.newContext()
        let manager = insertObject("Manager", ["name": "Ada", "level": Int64(3)], into: seeding)
        insertObject("Employee", ["name": "Bob"], into: seeding)
        try seeding.save()
        let managerID = manager.objectID

        // A fault made from the saved ID first (its hash walks to the root entity), then a fetch of
        // the root entity whose rows make their IDs from the store's decoding plan.
        let context = store.newContext()
        let fault = context.object(with: managerID)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let fetched = try context.fetch(request)
        #expect(fetched.count == 2)
        #expect(fetched.first === fault)
        #expect(fetched.first?.objectID == managerID)
        #expect(fetched.first?.objectID.hash == managerID.hash)
        #expect(fetched.first?.value(forKey: "level") as? Int64 == 3)
        #expect(context.registeredObject(for: managerID) === fault)
        withExtendedLifetime(store) {}
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func typedResultsHoldTheFetchedInstances(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let seeding = store.newContext()
        for index in 0..<5 { insertObject("Employee", ["name": "e\(index)", "age": Int16(index)], into: seeding) }
        insertObject("Manager", ["name": "m", "level": Int64(9)], into: seeding)
        try seeding.save()
        let context = store.newContext()

        // Every row of exactly the requested class.
        let exact = NSFetchRequest<RowManager>(entityName: "Manager")
        let managers: [RowManager] = try context.fetch(exact)
        #expect(managers.count == 1)
        #expect(managers.first?.value(forKey: "level") as? Int64 == 9)

        // Rows of the class and of a subclass, typed as the superclass.
        let mixed = NSFetchRequest<RowEmployee>(entityName: "Employee")
        mixed.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let employees: [RowEmployee] = try context.fetch(mixed)
        #expect(employees.map { $0.value(forKey: "name") as? String } == ["e0", "e1", "e2", "e3", "e4", "m"])
        #expect(employees.last === managers.first)
        #expect(employees.filter { $0 is RowManager }.count == 1)

        // Rows of exactly the class, without the subentity: the array works as any `[RowEmployee]`.
        let plain = NSFetchRequest<RowEmployee>(entityName: "Employee")
        plain.includesSubentities = false
        var only: [RowEmployee] = try context.fetch(plain)
        #expect(only.count == 5)
        only.append(managers[0])
        #expect(only.count == 6)
        #expect(Set(only.map(ObjectIdentifier.init)).count == 6)
        withExtendedLifetime(store) {}
    }

    /// A typed fetch whose first row becomes a fault of the requested class and whose second row is
    /// an instance registered with another class (a plain `NSManagedObject` inserted by entity): the
    /// store must not report the results as all of one class, or the `[T]` would hold an object that
    /// is not a `T`. The plain instance is left out, as any result that is not a `T` is (Apple's
    /// bridging to `[T]` would trap on it).
    @Test func typedResultsLeaveOutARegisteredInstanceOfAnotherClass() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let context = store.newContext()
        weak var first: NSManagedObject?
        do {
            let typed = insertObject("Employee", ["name": "a"], into: context)
            #expect(typed is RowEmployee)
            first = typed
            try context.save()
        }
        #expect(first == nil, "the first row is made again by the fetch")
        let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Employee"])
        let plain = NSManagedObject(entity: entity, insertInto: context)
        plain.setValue("b", forKey: "name")
        try context.save()
        #expect(type(of: plain) == NSManagedObject.self)

        let request = NSFetchRequest<RowEmployee>(entityName: "Employee")
        let employees = try context.fetch(request)
        #expect(employees.count == 1)
        #expect(employees.allSatisfy { type(of: $0) == RowEmployee.self })
        #expect(employees.first?.value(forKey: "name") as? String == "a")
        let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(all.count == 2 && all.contains { $0 === plain })
        withExtendedLifetime(store) {}
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func batchedTypedResultsHoldTheFetchedInstances(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let seeding = store.newContext()
        for index in 0..<5 { insertObject("Employee", ["name": "e\(index)"], into: seeding) }
        insertObject("Manager", ["name": "m", "level": Int64(9)], into: seeding)
        try seeding.save()
        let context = store.newContext()

        // Apple: a batched fetch returns all matching objects; their values load a batch at a time.
        let mixed = NSFetchRequest<RowEmployee>(entityName: "Employee")
        mixed.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        mixed.fetchBatchSize = 2
        let employees: [RowEmployee] = try context.fetch(mixed)
        #expect(employees.map { $0.value(forKey: "name") as? String } == ["e0", "e1", "e2", "e3", "e4", "m"])
        #expect(employees.last is RowManager)

        let exact = NSFetchRequest<RowManager>(entityName: "Manager")
        exact.fetchBatchSize = 2
        let managers: [RowManager] = try context.fetch(exact)
        #expect(managers.count == 1)
        #expect(managers.first === employees.last)

        let untyped = NSFetchRequest<any NSFetchRequestResult>(entityName: "Employee")
        untyped.fetchBatchSize = 4
        #expect(try context.fetch(untyped).count == 6)
        withExtendedLifetime(store) {}
    }

    /// Typed results hand their objects over without extra references: dropping the array frees
    /// the objects (the context holds unchanged objects weakly, as Apple's does by default).
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func droppedTypedResultsAreFreed(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let seeding = store.newContext()
        for index in 0..<3 { insertObject("Employee", ["name": "e\(index)"], into: seeding) }
        try seeding.save()
        let context = store.newContext()
        weak var first: RowEmployee?
        weak var last: RowEmployee?
        do {
            let request = NSFetchRequest<RowEmployee>(entityName: "Employee")
            request.includesSubentities = false
            let employees = try context.fetch(request)
            #expect(employees.count == 3)
            first = employees.first
            last = employees.last
            // `employees` lives to here (an optimized build may end it at its last use).
            withExtendedLifetime(employees) { #expect(first != nil && last != nil) }
        }
        #expect(first == nil)
        #expect(last == nil)
        withExtendedLifetime(store) {}
    }
}
