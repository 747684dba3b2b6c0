import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Behaviour every store must share, run unchanged against each store type.
@Suite("Store conformance")
struct StoreConformanceTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    private func fetch(
        _ entity: String, _ context: NSManagedObjectContext, predicate: NSPredicate? = nil,
        sort: [NSSortDescriptor]? = nil, configure: (NSFetchRequest<NSManagedObject>) -> Void = { _ in }
    ) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = predicate
        request.sortDescriptors = sort
        configure(request)
        return try context.fetch(request)
    }

    private func names(_ objects: [NSManagedObject], _ key: String = "name") -> [String] {
        objects.compactMap { $0.value(forKey: key) as? String }
    }

    /// Seeds departments and employees: Sales {Ann 30, Bob 40, Cid nil-age}, Lab {Dee 25 (Manager)}.
    private func seed(_ store: TestStore) throws {
        let context = store.newContext()
        let sales = insertObject("Department", ["name": "Sales", "budget": 100.5], into: context)
        let lab = insertObject("Department", ["name": "Lab", "budget": 20.0], into: context)
        for (name, age) in [("Ann", 30), ("Bob", 40)] {
            insertObject("Employee", ["name": name, "age": age, "department": sales], into: context)
        }
        insertObject("Employee", ["name": "Cid", "department": sales, "active": false], into: context)
        insertObject("Manager", ["name": "Dee", "age": 25, "level": 3, "department": lab], into: context)
        try context.save()
    }

    @Test(arguments: storeTypes)
    func insertSaveAndFetch(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let departments = try fetch("Department", context)
        #expect(Set(names(departments)) == ["Sales", "Lab"])
        let sales = try #require(departments.first { $0.value(forKey: "name") as? String == "Sales" })
        #expect(sales.value(forKey: "budget") as? Double == 100.5)
        #expect(!sales.objectID.isTemporaryID)
        #expect(sales.objectID.persistentStore === store.coordinator.persistentStores.first)
    }

    @Test(arguments: storeTypes)
    func update(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let ann = try #require(try fetch("Employee", context).first { $0.value(forKey: "name") as? String == "Ann" })
        ann.setValue(31, forKey: "age")
        #expect(ann.isUpdated)
        try context.save()
        #expect(!ann.hasChanges)
        let again = try #require(
            try fetch("Employee", store.newContext()).first { $0.value(forKey: "name") as? String == "Ann" })
        #expect(again.value(forKey: "age") as? Int32 == 31)
        // A second update of the same object saves too (its version moved on).
        ann.setValue(32, forKey: "age")
        try context.save()
        let third = try #require(
            try fetch("Employee", store.newContext()).first { $0.value(forKey: "name") as? String == "Ann" })
        #expect(third.value(forKey: "age") as? Int32 == 32)
    }

    @Test(arguments: storeTypes)
    func delete(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let bob = try #require(try fetch("Employee", context).first { $0.value(forKey: "name") as? String == "Bob" })
        context.delete(bob)
        try context.save()
        let remaining = try fetch("Employee", store.newContext())
        #expect(Set(names(remaining)) == ["Ann", "Cid", "Dee"])
        let reader = store.newContext()  // objects hold their context weakly: keep it alive
        let sales = try #require(
            try fetch("Department", reader).first { $0.value(forKey: "name") as? String == "Sales" })
        #expect((sales.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 2)
    }

    @Test(arguments: storeTypes)
    func count(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 4)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 2)
        let managers = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        managers.includesSubentities = false
        #expect(try context.count(for: managers) == 3)
        do {
            let older = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            older.predicate = comparison("age", .greaterThanOrEqualTo, 30)
            #expect(try context.count(for: older) == 2)
        }
    }

    @Test(arguments: storeTypes)
    func sortLimitAndOffset(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        do {
            let ascending = try fetch("Employee", context, sort: [NSSortDescriptor(key: "name", ascending: true)])
            #expect(names(ascending) == ["Ann", "Bob", "Cid", "Dee"])
            let byAge = try fetch(
                "Employee", context,
                sort: [NSSortDescriptor(key: "age", ascending: false), NSSortDescriptor(key: "name", ascending: true)])
            #expect(names(byAge) == ["Bob", "Ann", "Dee", "Cid"])  // nil sorts first ascending, so last descending
            let page = try fetch("Employee", context, sort: [NSSortDescriptor(key: "name", ascending: false)]) {
                $0.fetchLimit = 2
                $0.fetchOffset = 1
            }
            #expect(names(page) == ["Cid", "Bob"])
            let byDepartment = try fetch(
                "Employee", context,
                sort: [
                    NSSortDescriptor(key: "department.name", ascending: true),
                    NSSortDescriptor(key: "name", ascending: true),
                ])
            #expect(names(byDepartment) == ["Dee", "Ann", "Bob", "Cid"])
        }
        let limited = try fetch("Employee", context) { $0.fetchLimit = 3 }
        #expect(limited.count == 3)
    }

    @Test(arguments: storeTypes)
    func predicateFilters(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        func matching(_ predicate: NSPredicate, _ entity: String = "Employee") throws -> Set<String> {
            Set(names(try fetch(entity, context, predicate: predicate)))
        }
        #expect(try matching(NSPredicate(value: true)) == ["Ann", "Bob", "Cid", "Dee"])
        #expect(try matching(NSPredicate(value: false)) == [])
        do {
            #expect(try matching(comparison("name", .equalTo, "Ann")) == ["Ann"])
            #expect(try matching(comparison("age", .notEqualTo, 30)) == ["Bob", "Cid", "Dee"])  // nil age is "not 30"
            #expect(try matching(comparison("age", .lessThan, 30)) == ["Dee"])
            #expect(try matching(comparison("age", .equalTo, nil)) == ["Cid"])
            #expect(try matching(comparison("age", .in, [25, 40])) == ["Bob", "Dee"])
            #expect(try matching(comparison("age", .between, [26, 40])) == ["Ann", "Bob"])
            #expect(try matching(comparison("active", .equalTo, false)) == ["Cid"])
            #expect(
                try matching(and(comparison("age", .greaterThan, 20), comparison("department.name", .equalTo, "Sales")))
                    == ["Ann", "Bob"])
            #expect(
                try matching(or(comparison("name", .equalTo, "Ann"), comparison("name", .equalTo, "Dee"))) == [
                    "Ann", "Dee",
                ])
            #expect(try matching(not(comparison("age", .greaterThan, 26))) == ["Cid", "Dee"])
            #expect(try matching(comparison("name", .beginsWith, "a", options: .caseInsensitive)) == ["Ann"])
            #expect(try matching(comparison("name", .contains, "E", options: .caseInsensitive)) == ["Dee"])
            #expect(try matching(comparison("name", .like, "?o*")) == ["Bob"])
            #expect(try matching(comparison("department.budget", .greaterThan, 50)) == ["Ann", "Bob", "Cid"])
            // To-many key paths: ANY, ALL (vacuous for no destinations) and @count.
            func anyAll(
                _ key: String, _ modifier: NSComparisonPredicate.Modifier, _ op: NSComparisonPredicate.Operator,
                _ value: Any
            ) -> NSPredicate {
                NSComparisonPredicate(
                    leftExpression: NSExpression(forKeyPath: key),
                    rightExpression: NSExpression(forConstantValue: value),
                    modifier: modifier, type: op)
            }
            #expect(try matching(anyAll("employees.name", .any, .equalTo, "Ann"), "Department") == ["Sales"])
            // The values of a to-many key path form a set without nils: Cid's missing age takes no part.
            #expect(try matching(anyAll("employees.age", .all, .greaterThan, 20), "Department") == ["Lab", "Sales"])
            #expect(try matching(anyAll("employees.age", .all, .greaterThan, 26), "Department") == ["Sales"])
            #expect(try matching(comparison("employees.@count", .greaterThanOrEqualTo, 2), "Department") == ["Sales"])
            #expect(try matching(not(anyAll("employees.name", .any, .beginsWith, "D")), "Department") == ["Sales"])
            let lab = try #require(
                try fetch("Department", context, predicate: comparison("name", .equalTo, "Lab")).first)
            #expect(try matching(comparison("department", .equalTo, lab)) == ["Dee"])
            #expect(try matching(comparison("department", .notEqualTo, lab.objectID)) == ["Ann", "Bob", "Cid"])
        }
    }

    @Test(arguments: storeTypes)
    func relationshipsWithInverses(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let employees = try fetch("Employee", context)
        let ann = try #require(employees.first { $0.value(forKey: "name") as? String == "Ann" })
        let department = try #require(ann.value(forKey: "department") as? NSManagedObject)
        #expect(department.value(forKey: "name") as? String == "Sales")
        let staff = try #require(department.value(forKey: "employees") as? Set<NSManagedObject>)
        #expect(Set(names(Array(staff))) == ["Ann", "Bob", "Cid"])
        #expect(staff.contains(ann))  // the same instance: uniquing across relationship and fetch

        // Move Ann to the lab; both inverses follow, in this context and after a save.
        let lab = try #require(try fetch("Department", context).first { $0.value(forKey: "name") as? String == "Lab" })
        ann.setValue(lab, forKey: "department")
        #expect((lab.value(forKey: "employees") as? Set<NSManagedObject>)?.contains(ann) == true)
        try context.save()
        let fresh = store.newContext()
        let freshLab = try #require(
            try fetch("Department", fresh).first { $0.value(forKey: "name") as? String == "Lab" })
        #expect(
            Set(names(Array(freshLab.value(forKey: "employees") as? Set<NSManagedObject> ?? []))) == ["Ann", "Dee"])

        // Many-to-many: projects ↔ members.
        let rocket = insertObject("Project", ["title": "Rocket"], into: context)
        let boat = insertObject("Project", ["title": "Boat"], into: context)
        let bob = try #require(employees.first { $0.value(forKey: "name") as? String == "Bob" })
        ann.setValue(Set([rocket, boat]), forKey: "projects")
        bob.setValue(Set([rocket]), forKey: "projects")
        try context.save()
        let third = store.newContext()
        let projects = try fetch("Project", third)
        let freshRocket = try #require(projects.first { $0.value(forKey: "title") as? String == "Rocket" })
        let freshBoat = try #require(projects.first { $0.value(forKey: "title") as? String == "Boat" })
        #expect(
            Set(names(Array(freshRocket.value(forKey: "members") as? Set<NSManagedObject> ?? []))) == ["Ann", "Bob"])
        #expect(Set(names(Array(freshBoat.value(forKey: "members") as? Set<NSManagedObject> ?? []))) == ["Ann"])
        do {
            let busy = try fetch("Project", third, predicate: comparison("members.@count", .equalTo, 2))
            #expect(names(busy, "title") == ["Rocket"])
            let boatCrew = NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: "projects.title"),
                rightExpression: NSExpression(forConstantValue: "Boat"),
                modifier: .any, type: .equalTo)
            #expect(names(try fetch("Employee", third, predicate: boatCrew)) == ["Ann"])
        }
        // Removing one side updates the pair.
        let freshBob = try #require(try fetch("Employee", third).first { $0.value(forKey: "name") as? String == "Bob" })
        freshBob.setValue(Set<NSManagedObject>(), forKey: "projects")
        try third.save()
        let fourth = store.newContext()
        let rocketAgain = try #require(
            try fetch("Project", fourth).first { $0.value(forKey: "title") as? String == "Rocket" })
        #expect(Set(names(Array(rocketAgain.value(forKey: "members") as? Set<NSManagedObject> ?? []))) == ["Ann"])
    }

    @Test(arguments: storeTypes)
    func inheritance(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let all = try fetch("Employee", context)
        #expect(all.count == 4)
        let dee = try #require(all.first { $0.value(forKey: "name") as? String == "Dee" })
        #expect(dee.entity.name == "Manager")
        #expect(dee.value(forKey: "level") as? Int16 == 3)
        let direct = try fetch("Employee", context) { $0.includesSubentities = false }
        #expect(Set(names(direct)) == ["Ann", "Bob", "Cid"])
        #expect(names(try fetch("Manager", context)) == ["Dee"])
        // A to-one to the superentity resolves to the concrete subentity.
        let lab = try #require(dee.value(forKey: "department") as? NSManagedObject)
        let staff = try #require(lab.value(forKey: "employees") as? Set<NSManagedObject>)
        #expect(staff.first?.entity.name == "Manager")
    }

    @Test(arguments: storeTypes)
    func uniquingAndFaults(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let first = try fetch("Department", context)
        let second = try fetch("Department", context)
        #expect(Set(first.map(ObjectIdentifier.init)) == Set(second.map(ObjectIdentifier.init)))
        for object in first { #expect(context.object(with: object.objectID) === object) }

        let faults = try fetch("Department", store.newContext()) { $0.returnsObjectsAsFaults = true }
        #expect(faults.allSatisfy { $0.isFault })
        #expect(Set(names(faults)) == ["Sales", "Lab"])  // reading fires the faults
        #expect(faults.allSatisfy { !$0.isFault })

        let keysContext = store.newContext()  // objects hold their context weakly: keep it alive to fire faults
        let keysOnly = try fetch("Department", keysContext) { $0.includesPropertyValues = false }
        #expect(keysOnly.count == 2)
        #expect(Set(names(keysOnly)) == ["Sales", "Lab"])  // the faults load from the store

        let loaded = try fetch("Department", store.newContext()) { $0.returnsObjectsAsFaults = false }
        #expect(loaded.allSatisfy { !$0.isFault })

        // A fault made from an ID alone loads from the store.
        let other = store.newContext()
        let fault = other.object(with: first[0].objectID)
        #expect(fault.isFault)
        #expect(fault.value(forKey: "name") as? String == first[0].value(forKey: "name") as? String)
        let existing = try store.newContext().existingObject(with: first[0].objectID)
        #expect(existing.value(forKey: "name") as? String == first[0].value(forKey: "name") as? String)

        let ids = try store.newContext().fetch(
            NSFetchRequest<NSManagedObjectID>(entityName: "Department").withResultType(.managedObjectIDResultType))
        #expect(Set(ids) == Set(first.map(\.objectID)))
    }

    @Test(arguments: storeTypes)
    func rollback(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        let sales = try #require(
            try fetch("Department", context).first { $0.value(forKey: "name") as? String == "Sales" })
        sales.setValue("Renamed", forKey: "name")
        let temp = insertObject("Department", ["name": "Temp"], into: context)
        context.rollback()
        #expect(sales.value(forKey: "name") as? String == "Sales")
        #expect(temp.managedObjectContext == nil)
        #expect(!context.hasChanges)
        try context.save()
        #expect(Set(names(try fetch("Department", store.newContext()))) == ["Sales", "Lab"])
    }

    @Test(arguments: storeTypes)
    func pendingChangesInFetch(storeType: String) throws {
        let store = try TestStore(storeType)
        try seed(store)
        let context = store.newContext()
        insertObject("Department", ["name": "Unsaved"], into: context)
        let lab = try #require(try fetch("Department", context).first { $0.value(forKey: "name") as? String == "Lab" })
        context.delete(lab)
        #expect(Set(names(try fetch("Department", context))) == ["Sales", "Unsaved"])
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 2)
        let ignoring = try fetch("Department", context) { $0.includesPendingChanges = false }
        #expect(Set(names(ignoring)).contains("Lab"))
        try context.save()
        #expect(Set(names(try fetch("Department", store.newContext()))) == ["Sales", "Unsaved"])
    }
}

extension NSFetchRequest {
    fileprivate func withResultType(_ type: NSFetchRequestResultType) -> Self {
        resultType = type
        return self
    }
}
