import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Random events of inserts, deletes (with the nullify rule), attribute and relationship changes,
/// some followed by saves (not of deletions, whose undo after a save is not supported); then every event undone, one at a time, and redone: after each step the
/// object graph (both sides of each relationship) is as it was after the matching event.
@Suite("NSManagedObjectContext undo, randomized")
struct ContextUndoFuzzTests {
    /// The graph as names: each live employee's name, age and department, each live department's
    /// employees (the inverse side, read on its own).
    private func picture(_ context: NSManagedObjectContext, _ all: [NSManagedObject]) -> [String] {
        all.filter { $0.managedObjectContext === context && !$0.isDeleted }.map { object in
            let name = object.value(forKey: "name") as! String
            if object.entity.name == "Department" {
                let staff = (object.value(forKey: "employees") as? Set<NSManagedObject> ?? []).map { $0.value(forKey: "name") as! String }
                return "\(name): \(staff.sorted())"
            }
            let department = (object.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String
            return "\(name) \((object.value(forKey: "age") as? Int32).map(String.init) ?? "?") in \(department ?? "-")"
        }.sorted()
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func undoingEveryEventRetracesTheGraph(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let coordinator = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSInMemoryStoreType)
        let context = StoreHarness.context(coordinator)
        var all: [NSManagedObject] = []
        var counter = 0
        func insert(_ entity: String) -> NSManagedObject {
            let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            object.setValue("\(entity.prefix(1))\(counter)", forKey: "name")
            counter += 1
            all.append(object)
            return object
        }
        for _ in 0..<3 { _ = insert("Department") }
        for _ in 0..<6 { insert("Employee").setValue(all[random.next(below: 3)], forKey: "department") }
        try context.save()
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager

        var pictures = [picture(context, all)]
        var deletedSinceSave = false
        for _ in 0..<40 {
            undoManager.beginUndoGrouping()
            for _ in 0..<(1 + random.next(below: 3)) {
                let live = all.filter { $0.managedObjectContext === context && !$0.isDeleted }
                let employees = live.filter { $0.entity.name == "Employee" }
                let departments = live.filter { $0.entity.name == "Department" }
                switch random.next(below: 6) {
                case 0:
                    insert("Employee").setValue(departments.isEmpty ? nil : departments[random.next(below: departments.count)], forKey: "department")
                case 1:
                    if random.next(below: 4) == 0 { _ = insert("Department") }
                case 2:
                    if !employees.isEmpty { context.delete(employees[random.next(below: employees.count)]); deletedSinceSave = true }
                case 3:
                    if !employees.isEmpty { employees[random.next(below: employees.count)].setValue(Int32(random.next(below: 70)), forKey: "age") }
                case 4:
                    if !employees.isEmpty, !departments.isEmpty {
                        employees[random.next(below: employees.count)].setValue(departments[random.next(below: departments.count)], forKey: "department")
                    }
                default:
                    if departments.count > 1, random.next(below: 3) == 0 {
                        context.delete(departments[random.next(below: departments.count)])
                        deletedSinceSave = true
                    }
                }
            }
            undoManager.endUndoGrouping()
            // An event that changed nothing registers no group (an empty group is dropped).
            let now = picture(context, all)
            if now != pictures.last { pictures.append(now) }
            if !deletedSinceSave, random.next(below: 3) == 0 { try context.save() }
        }
        var step = pictures.count - 1
        while undoManager.canUndo {
            context.undo()
            step -= 1
            #expect(picture(context, all) == pictures[step], "undo back to step \(step)")
        }
        #expect(step == 0)
        while undoManager.canRedo {
            context.redo()
            step += 1
            #expect(picture(context, all) == pictures[step], "redo step \(step)")
        }
        #expect(step == pictures.count - 1)
        try context.save()
    }
}
