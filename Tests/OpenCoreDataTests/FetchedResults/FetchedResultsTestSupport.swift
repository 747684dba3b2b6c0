import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Records what a fetched results controller tells its delegate.
final class FetchedResultsRecorder: NSFetchedResultsControllerDelegate {
    struct ObjectChange {
        let object: NSManagedObject
        let type: NSFetchedResultsChangeType
        let indexPath: IndexPath?
        let newIndexPath: IndexPath?
    }
    struct SectionChange {
        let name: String
        let index: Int
        let type: NSFetchedResultsChangeType
    }

    var events: [String] = []
    var objectChanges: [ObjectChange] = []
    var sectionChanges: [SectionChange] = []
    var controllers: [NSFetchedResultsController<any NSFetchRequestResult>] = []

    func reset() {
        events = []
        objectChanges = []
        sectionChanges = []
        controllers = []
    }

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) {
        events.append("will")
        controllers.append(controller)
    }

    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        events.append("object")
        objectChanges.append(ObjectChange(object: anObject as! NSManagedObject, type: type, indexPath: indexPath, newIndexPath: newIndexPath))
    }

    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange sectionInfo: any NSFetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType
    ) {
        events.append("section")
        sectionChanges.append(SectionChange(name: sectionInfo.name, index: sectionIndex, type: type))
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) {
        events.append("did")
    }

    /// The recorded changes, for a failure's message.
    func describe() -> String {
        let objects = objectChanges.map { "\($0.type.rawValue) \($0.object.value(forKey: "name") ?? "?") \($0.indexPath.map { "\($0)" } ?? "-") -> \($0.newIndexPath.map { "\($0)" } ?? "-")" }
        let sections = sectionChanges.map { "section \($0.type.rawValue) \($0.name) \($0.index)" }
        return (objects + sections).joined(separator: "; ")
    }

    /// The sections after applying the recorded changes to `old` as UIKit's batch updates do, one
    /// batch (will- to didChangeContent) after the other: deletes and moves' origins at old paths
    /// (last first), section deletes, section inserts, then inserts and moves' destinations at new
    /// paths (first first). Updates must name the object at both paths.
    func apply(to old: [(name: String, objects: [NSManagedObject])]) -> [(name: String, objects: [NSManagedObject])] {
        var batches: [(objects: [ObjectChange], sections: [SectionChange])] = []
        var objects = objectChanges.makeIterator(), sections = sectionChanges.makeIterator()
        for event in events {
            switch event {
            case "will": batches.append(([], []))
            case "object": if let change = objects.next(), !batches.isEmpty { batches[batches.count - 1].objects.append(change) }
            case "section": if let change = sections.next(), !batches.isEmpty { batches[batches.count - 1].sections.append(change) }
            default: break
            }
        }
        if batches.count <= 1 { return apply(objectChanges, sectionChanges, to: old) }
        return batches.reduce(old) { apply($1.objects, $1.sections, to: $0) }
    }

    private func apply(_ objectChanges: [ObjectChange], _ sectionChanges: [SectionChange],
                       to old: [(name: String, objects: [NSManagedObject])]) -> [(name: String, objects: [NSManagedObject])] {
        var sections = old
        let removals = objectChanges.filter { $0.type == .delete || $0.type == .move }
            .map { $0.indexPath! }.sorted { ($0[0], $0[1]) > ($1[0], $1[1]) }
        for path in removals {
            guard sections.indices.contains(path[0]), sections[path[0]].objects.indices.contains(path[1]) else {
                Issue.record("a removal at \(path) outside the old sections \(sections.map(\.objects.count)): \(describe())")
                return sections
            }
            sections[path[0]].objects.remove(at: path[1])
        }
        for change in sectionChanges.filter({ $0.type == .delete }).sorted(by: { $0.index > $1.index }) {
            #expect(sections[change.index].objects.isEmpty, "a deleted section's objects were deleted or moved out")
            #expect(sections[change.index].name == change.name)
            sections.remove(at: change.index)
        }
        for change in sectionChanges.filter({ $0.type == .insert }).sorted(by: { $0.index < $1.index }) {
            sections.insert((change.name, []), at: change.index)
        }
        let insertions = objectChanges.filter { $0.type == .insert || $0.type == .move }
            .sorted { ($0.newIndexPath![0], $0.newIndexPath![1]) < ($1.newIndexPath![0], $1.newIndexPath![1]) }
        for change in insertions {
            let path = change.newIndexPath!
            guard sections.indices.contains(path[0]), path[1] <= sections[path[0]].objects.count else {
                Issue.record("an insertion at \(path) outside the sections \(sections.map(\.objects.count)): \(describe())")
                return sections
            }
            sections[path[0]].objects.insert(change.object, at: path[1])
        }
        for change in objectChanges where change.type == .update {
            guard old.indices.contains(change.indexPath![0]), old[change.indexPath![0]].objects.indices.contains(change.indexPath![1]),
                sections.indices.contains(change.newIndexPath![0]),
                sections[change.newIndexPath![0]].objects.indices.contains(change.newIndexPath![1])
            else {
                Issue.record("an update at \(change.indexPath!) -> \(change.newIndexPath!) outside the sections: \(describe())")
                continue
            }
            #expect(old[change.indexPath![0]].objects[change.indexPath![1]] === change.object, "an update's old path")
            #expect(sections[change.newIndexPath![0]].objects[change.newIndexPath![1]] === change.object, "an update's new path")
        }
        return sections
    }
}

/// A delegate that implements the difference callback.
final class FetchedResultsDifferenceRecorder: NSFetchedResultsControllerDelegate {
    var differences: [CollectionDifference<NSManagedObjectID>] = []
    var otherCalls = 0

    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        differences.append(diff)
    }

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) { otherCalls += 1 }
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) { otherCalls += 1 }
}

/// The company model's departments and employees, and the controller's sections recomputed from
/// scratch (filter, sort, group), the model the reported changes are checked against.
struct CompanyFixture {
    let context: NSManagedObjectContext
    var departments: [NSManagedObject] = []
    var employees: [NSManagedObject] = []

    init(departmentNames: [String] = ["Apps", "Books", "Cars", "Docs"]) throws {
        let coordinator = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSInMemoryStoreType)
        context = StoreHarness.context(coordinator)
        for name in departmentNames {
            let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
            department.setValue(name, forKey: "name")
            departments.append(department)
        }
    }

    @discardableResult
    mutating func employee(_ name: String, age: Int32, department: NSManagedObject?) -> NSManagedObject {
        let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        employee.setValue(name, forKey: "name")
        employee.setValue(age, forKey: "age")
        employee.setValue(department, forKey: "department")
        employees.append(employee)
        return employee
    }

    /// Employees sorted by department name, age and name.
    static func request(predicate: NSPredicate? = nil) -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = predicate
        request.sortDescriptors = [
            NSSortDescriptor(key: "department.name", ascending: true), NSSortDescriptor(key: "age", ascending: true),
            NSSortDescriptor(key: "name", ascending: true),
        ]
        return request
    }

    /// The sections a controller with `request` and section key path `department.name` (or none)
    /// should show now: the live employees filtered, sorted and grouped from scratch.
    func expectedSections(predicate: NSPredicate?, sectioned: Bool) -> [(name: String, objects: [NSManagedObject])] {
        let live = employees.filter { !$0.isDeleted && $0.managedObjectContext === context && (predicate?.evaluate(with: $0) ?? true) }
        func key(_ object: NSManagedObject) -> (String, Int32, String) {
            ((object.value(forKeyPath: "department.name") as? String) ?? "", object.value(forKey: "age") as! Int32,
             object.value(forKey: "name") as! String)
        }
        // A nil department name sorts first; "" sorts first among strings too, so the key stands for it.
        let sorted = live.sorted { key($0) < key($1) }
        guard sectioned else { return [("", sorted)] }
        var sections: [(name: String, objects: [NSManagedObject])] = []
        for object in sorted {
            let name = key(object).0
            if sections.last?.name == name { sections[sections.count - 1].objects.append(object) } else { sections.append((name, [object])) }
        }
        return sections
    }

    /// Posts the context's change notification as Apple's contract describes it.
    func postChange(inserted: [NSManagedObject] = [], updated: [NSManagedObject] = [], deleted: [NSManagedObject] = []) {
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: context, userInfo: [
            NSInsertedObjectsKey: Set(inserted), NSUpdatedObjectsKey: Set(updated), NSDeletedObjectsKey: Set(deleted),
        ])
    }
}

/// The sections of a controller as names and objects.
func currentSections<T>(_ controller: NSFetchedResultsController<T>) -> [(name: String, objects: [NSManagedObject])] {
    (controller.sections ?? []).map { ($0.name, ($0.objects ?? []).map { $0 as! NSManagedObject }) }
}

/// Whether two section lists hold the same names and the same objects in order.
func sameSections(_ a: [(name: String, objects: [NSManagedObject])], _ b: [(name: String, objects: [NSManagedObject])]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { x, y in
        x.name == y.name && x.objects.count == y.objects.count && zip(x.objects, y.objects).allSatisfy { $0 === $1 }
    }
}
