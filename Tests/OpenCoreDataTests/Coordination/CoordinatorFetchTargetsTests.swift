import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Which stores a coordinator sends a fetch to: every store that holds the entity, or the request's
/// `affectedStores`. Asked again for the same entity, the coordinator reads the stores it found the
/// first time (and lends the only one, when there is one, without copying it out); these tests make
/// each fetch twice so that both ways run.
@Suite struct CoordinatorFetchTargetsTests {
    private static func names(
        _ context: NSManagedObjectContext, affectedStores: [NSPersistentStore]? = nil
    ) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.affectedStores = affectedStores
        return try context.fetch(request).map { $0.value(forKey: "name") as! String }.sorted()
    }

    /// Two SQLite files with employees, added to one coordinator: a fetch returns the rows of both,
    /// and a request naming one store gets that store's rows.
    @Test func aFetchGoesToEveryStoreOfTheEntity() throws {
        let first = try TestStore(NSSQLiteStoreType)
        let second = try TestStore(NSSQLiteStoreType)
        for (store, names) in [(first, ["Ann", "Bob"]), (second, ["Cy"])] {
            let context = store.newContext()
            try context.performAndWait { () throws -> Void in
                for name in names { insertObject("Employee", ["name": name, "age": 30], into: context) }
                try context.save()
            }
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: first.model)
        defer { StoreHarness.close(coordinator) }
        let a = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: first.url)
        let b = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: second.url)
        let context = StoreHarness.context(coordinator)
        try context.performAndWait { () throws -> Void in
            #expect(try Self.names(context) == ["Ann", "Bob", "Cy"])
            #expect(try Self.names(context) == ["Ann", "Bob", "Cy"])
            #expect(try Self.names(context, affectedStores: [b]) == ["Cy"])
            #expect(try Self.names(context, affectedStores: [a]) == ["Ann", "Bob"])
        }
    }

    /// With one store, a request whose `affectedStores` is empty fetches nothing, also after a fetch
    /// of the entity from every store. Apple documents `nil` as every store; an empty array is taken
    /// to mean none (Apple's behaviour for it is not documented).
    @Test func anEmptyAffectedStoresFetchesNothing() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        try context.performAndWait { () throws -> Void in
            insertObject("Employee", ["name": "Ann", "age": 30], into: context)
            try context.save()
            #expect(try Self.names(store.newContext()) == ["Ann"])
            #expect(try Self.names(store.newContext()) == ["Ann"])
            #expect(try Self.names(store.newContext(), affectedStores: []) == [])
        }
    }
}
