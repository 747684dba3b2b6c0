import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// A change reaches the delegate without a re-fetch: one insert into a 100,000-row controller with
/// sections is placed by binary search (issue 40 asks for well under 1 ms; the benchmarks package
/// measures it in a release build, this debug-build test allows more).
@Suite("NSFetchedResultsController at scale")
struct FetchedResultsScaleTests {
    @Test func oneInsertIntoAHundredThousandRowsIsIncremental() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
        department.setValue("Apps", forKey: "name")
        for index in 0..<100_000 {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue(String(format: "e%06d", index), forKey: "name")
            employee.setValue(Int32(index % 100), forKey: "age")
        }
        try context.save()
        context.reset()

        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "age", cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        #expect(controller.sections?.count == 100)

        let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        employee.setValue("e050000x", forKey: "name")
        employee.setValue(Int32(50), forKey: "age")
        let userInfo: [AnyHashable: Any] = [NSInsertedObjectsKey: Set([employee])]
        let start = DispatchTime.now()
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: context, userInfo: userInfo)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
        #expect(recorder.objectChanges.map(\.newIndexPath) == [IndexPath(row: 500, section: 50)])
        #if DEBUG
        let limit = 10.0  // unoptimized code and the checks of a debug build
        #else
        let limit = 1.0
        #endif
        #expect(elapsed < limit, "one insert took \(elapsed) ms")
        print("NSFetchedResultsController: one insert into 100,000 rows reached the delegate in \(elapsed) ms")
    }
}
