import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// NSFetchedResultsController: sections, lookups and the changes it reports (Apple's documented
/// semantics; the index paths are those UIKit's batch updates expect). Changes arrive as the
/// context's `NSManagedObjectContextObjectsDidChange` notifications, posted here with Apple's
/// user info (the contract), so these tests do not depend on when the context posts them.
@Suite("NSFetchedResultsController")
struct FetchedResultsControllerTests {
    static let adults = NSPredicate(format: "age >= 18")

    /// Ann 30, Bob 40 in Apps; Cid 25 in Books; Dee 50 in Cars; Eve 10 (not an adult) in Cars.
    private func fixture() throws -> (CompanyFixture, NSFetchedResultsController<NSManagedObject>, FetchedResultsRecorder) {
        var company = try CompanyFixture()
        company.employee("Ann", age: 30, department: company.departments[0])
        company.employee("Bob", age: 40, department: company.departments[0])
        company.employee("Cid", age: 25, department: company.departments[1])
        company.employee("Dee", age: 50, department: company.departments[2])
        company.employee("Eve", age: 10, department: company.departments[2])
        let controller = NSFetchedResultsController(
            fetchRequest: CompanyFixture.request(predicate: Self.adults), managedObjectContext: company.context,
            sectionNameKeyPath: "department.name", cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (company, controller, recorder)
    }

    private func names(_ objects: [NSManagedObject]?) -> [String] {
        (objects ?? []).map { $0.value(forKey: "name") as! String }
    }

    @Test func sectionsFromAKeyPathThroughAToOneRelationship() throws {
        let (_, controller, _) = try fixture()
        #expect(controller.sections?.map(\.name) == ["Apps", "Books", "Cars"])
        #expect(controller.sections?.map(\.numberOfObjects) == [2, 1, 1])
        #expect(controller.sections?.map(\.indexTitle) == ["A", "B", "C"])
        #expect(names(controller.fetchedObjects) == ["Ann", "Bob", "Cid", "Dee"])
        #expect(names(controller.sections?[0].objects?.map { $0 as! NSManagedObject }) == ["Ann", "Bob"])
    }

    @Test func objectAtAndIndexPathForObject() throws {
        let (company, controller, _) = try fixture()
        #expect(controller.object(at: IndexPath(row: 1, section: 0)) === company.employees[1])
        #expect(controller.object(at: IndexPath(item: 0, section: 2)) === company.employees[3])
        #expect(controller.indexPath(forObject: company.employees[2]) == IndexPath(row: 0, section: 1))
        #expect(controller.indexPath(forObject: company.employees[4]) == nil, "Eve does not match the predicate")
    }

    @Test func beforeTheFetchThereAreNoResults() throws {
        let company = try CompanyFixture()
        let controller = NSFetchedResultsController(
            fetchRequest: CompanyFixture.request(), managedObjectContext: company.context, sectionNameKeyPath: nil, cacheName: "Employees")
        #expect(controller.fetchedObjects == nil)
        #expect(controller.sections == nil)
        #expect(controller.cacheName == "Employees")
        NSFetchedResultsController<NSManagedObject>.deleteCache(withName: "Employees")  // a no-op on Linux
    }

    @Test func withoutASectionKeyPathThereIsOneSection() throws {
        var company = try CompanyFixture()
        let controller = NSFetchedResultsController(
            fetchRequest: CompanyFixture.request(), managedObjectContext: company.context, sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.count == 1, "one section even when empty (Apple does not document the empty case)")
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        let ann = company.employee("Ann", age: 30, department: nil)
        company.postChange(inserted: [ann])
        #expect(recorder.sectionChanges.isEmpty)
        #expect(recorder.objectChanges.map(\.newIndexPath) == [IndexPath(row: 0, section: 0)])
    }

    @Test func aFetchRequestWithoutSortDescriptorsThrows() throws {
        let company = try CompanyFixture()
        let controller = NSFetchedResultsController(
            fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Employee"), managedObjectContext: company.context,
            sectionNameKeyPath: nil, cacheName: nil)
        #expect(throws: OpenCoreDataError.self) { try controller.performFetch() }
    }

    @Test func sectionIndexTitlesAndLookups() throws {
        let company = try CompanyFixture(departmentNames: ["alpha", "Apps", "beta"])
        var fixture = company
        fixture.employee("Ann", age: 30, department: company.departments[0])
        fixture.employee("Bob", age: 30, department: company.departments[1])
        fixture.employee("Cid", age: 30, department: company.departments[2])
        let request = CompanyFixture.request()
        request.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: true, selector: Selector("caseInsensitiveCompare:"))]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: company.context, sectionNameKeyPath: "department.name", cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["alpha", "Apps", "beta"])
        #expect(controller.sectionIndexTitle(forSectionName: "alpha") == "A")
        #expect(controller.sectionIndexTitles == ["A", "B"], "a title shared by two sections appears once")
        #expect(controller.section(forSectionIndexTitle: "A", at: 0) == 0)
        #expect(controller.section(forSectionIndexTitle: "B", at: 1) == 2)
        #expect(controller.section(forSectionIndexTitle: "Z", at: 1) == 2, "an unknown title: the title at the index")
    }

    @Test func aDelegateNamesTheSectionIndexTitles() throws {
        final class Titles: NSFetchedResultsControllerDelegate {
            func controller(
                _ controller: NSFetchedResultsController<any NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String
            ) -> String? { "#" + sectionName }
        }
        let (_, controller, _) = try fixture()
        let titles = Titles()
        controller.delegate = titles
        try controller.performFetch()
        #expect(controller.sectionIndexTitles == ["#Apps", "#Books", "#Cars"])
    }

    // MARK: Changes

    @Test func anInsertIsReportedAtItsNewIndexPath() throws {
        var (company, controller, recorder) = try fixture()
        let old = currentSections(controller)
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        company.postChange(inserted: [ada])
        #expect(recorder.events == ["will", "object", "did"])
        #expect(recorder.objectChanges.count == 1)
        #expect(recorder.objectChanges[0].type == .insert)
        #expect(recorder.objectChanges[0].indexPath == nil)
        #expect(recorder.objectChanges[0].newIndexPath == IndexPath(row: 1, section: 0))
        #expect(names(controller.fetchedObjects) == ["Ann", "Ada", "Bob", "Cid", "Dee"])
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
    }

    @Test func aDeleteIsReportedAtItsOldIndexPath() throws {
        let (company, controller, recorder) = try fixture()
        let bob = company.employees[1]
        company.context.delete(bob)
        company.postChange(deleted: [bob])
        #expect(recorder.objectChanges.map(\.type) == [.delete])
        #expect(recorder.objectChanges[0].indexPath == IndexPath(row: 1, section: 0))
        #expect(recorder.objectChanges[0].newIndexPath == nil)
        #expect(controller.indexPath(forObject: bob) == nil)
    }

    @Test func aChangeOutsideTheSortKeysIsAnUpdate() throws {
        let (company, controller, recorder) = try fixture()
        let old = currentSections(controller)
        company.employees[2].setValue(false, forKey: "active")
        company.postChange(updated: [company.employees[2]])
        #expect(recorder.objectChanges.map(\.type) == [.update])
        #expect(recorder.objectChanges[0].indexPath == IndexPath(row: 0, section: 1))
        #expect(recorder.objectChanges[0].newIndexPath == IndexPath(row: 0, section: 1))
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
    }

    @Test func aSortKeyChangeThatChangesThePlaceIsAMove() throws {
        let (company, controller, recorder) = try fixture()
        let old = currentSections(controller)
        company.employees[0].setValue(Int32(45), forKey: "age")  // Ann passes Bob
        company.postChange(updated: [company.employees[0]])
        #expect(recorder.objectChanges.map(\.type) == [.move])
        #expect(recorder.objectChanges[0].indexPath == IndexPath(row: 0, section: 0))
        #expect(recorder.objectChanges[0].newIndexPath == IndexPath(row: 1, section: 0))
        #expect(names(controller.fetchedObjects) == ["Bob", "Ann", "Cid", "Dee"])
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
    }

    @Test func aSortKeyChangeThatKeepsThePlaceIsAnUpdate() throws {
        let (company, controller, recorder) = try fixture()
        company.employees[0].setValue(Int32(31), forKey: "age")  // Ann stays before Bob
        company.postChange(updated: [company.employees[0]])
        #expect(recorder.objectChanges.map(\.type) == [.update])
        #expect(recorder.objectChanges[0].indexPath == IndexPath(row: 0, section: 0))
        #expect(controller.indexPath(forObject: company.employees[0]) == IndexPath(row: 0, section: 0))
    }

    @Test func enteringAndLeavingThePredicateAreInsertsAndDeletes() throws {
        let (company, controller, recorder) = try fixture()
        let old = currentSections(controller)
        company.employees[4].setValue(Int32(18), forKey: "age")  // Eve becomes an adult: enters
        company.employees[2].setValue(Int32(17), forKey: "age")  // Cid leaves; Books is left empty
        company.postChange(updated: [company.employees[4], company.employees[2]])
        let byType = Dictionary(grouping: recorder.objectChanges, by: \.type)
        #expect(byType[.insert]?.map(\.object) == [company.employees[4]])
        #expect(byType[.insert]?.first?.newIndexPath == IndexPath(row: 0, section: 1), "Cars is section 1 after Books goes")
        #expect(byType[.delete]?.map(\.object) == [company.employees[2]])
        #expect(byType[.delete]?.first?.indexPath == IndexPath(row: 0, section: 1))
        #expect(recorder.sectionChanges.map(\.type) == [.delete])
        #expect(recorder.sectionChanges.first?.index == 1)
        #expect(recorder.sectionChanges.first?.name == "Books")
        #expect(recorder.events.first == "will" && recorder.events.last == "did")
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
    }

    @Test func changingTheSectionIsAMoveAndMayInsertASection() throws {
        let (company, controller, recorder) = try fixture()
        let old = currentSections(controller)
        company.employees[3].setValue(company.departments[3], forKey: "department")  // Dee: Cars -> Docs (new section)
        company.postChange(updated: [company.employees[3], company.departments[2], company.departments[3]])
        #expect(recorder.objectChanges.map(\.type) == [.move])
        #expect(recorder.objectChanges[0].indexPath == IndexPath(row: 0, section: 2))
        #expect(recorder.objectChanges[0].newIndexPath == IndexPath(row: 0, section: 2))
        #expect(Set(recorder.sectionChanges.map { "\($0.type == .insert ? "+" : "-")\($0.name)@\($0.index)" }) == ["-Cars@2", "+Docs@2"])
        #expect(controller.sections?.map(\.name) == ["Apps", "Books", "Docs"])
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
    }

    @Test func objectsOfOtherEntitiesAndUnchangedBatchesAreNotReported() throws {
        let (company, _, recorder) = try fixture()
        company.departments[0].setValue("Apps!", forKey: "name")
        company.postChange(updated: [company.departments[0]])
        company.postChange()
        #expect(recorder.events.isEmpty)
    }

    @Test func withoutADelegateTheControllerDoesNotTrackChanges() throws {
        var (company, controller, _) = try fixture()
        controller.delegate = nil
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        company.postChange(inserted: [ada])
        #expect(controller.fetchedObjects?.count == 4, "Apple: no delegate, no tracking")
    }

    @Test func theDelegateGetsAViewOfTheController() throws {
        var (company, controller, recorder) = try fixture()
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        company.postChange(inserted: [ada])
        let view = try #require(recorder.controllers.first)
        #expect(view.fetchedObjects?.count == 5)
        #expect(view.object(at: IndexPath(row: 1, section: 0)) as? NSManagedObject === ada)
        #expect(view.managedObjectContext === controller.managedObjectContext)
    }

    @Test func theDifferenceCallbackReplacesTheOthers() throws {
        var (company, controller, _) = try fixture()
        let recorder = FetchedResultsDifferenceRecorder()
        controller.delegate = recorder
        let before = controller.fetchedObjects!.map(\.objectID)
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        company.employees[0].setValue(Int32(45), forKey: "age")
        company.context.delete(company.employees[3])
        company.postChange(inserted: [ada], updated: [company.employees[0]], deleted: [company.employees[3]])
        #expect(recorder.otherCalls == 0, "Apple: when the delegate implements it, no other change method is called")
        let difference = try #require(recorder.differences.first)
        #expect(before.applying(difference) == controller.fetchedObjects!.map(\.objectID))
    }

    @Test func aResetRefetchesAndReportsTheDifference() throws {
        let (company, controller, recorder) = try fixture()
        let old = currentSections(controller)
        company.context.reset()
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: company.context, userInfo: [
            NSInvalidatedAllObjectsKey: [NSManagedObjectID]()
        ])
        #expect(controller.fetchedObjects?.isEmpty == true, "the unsaved employees are gone")
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
    }

    // MARK: End to end

    @Test func theContextsOwnNotificationsDriveTheController() throws {
        var (company, controller, recorder) = try fixture()
        try company.context.save()  // reports the fixture's objects as inserted: for the controller, updates
        recorder.reset()
        let old = currentSections(controller)
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        company.employees[3].setValue(Int32(12), forKey: "age")  // Dee leaves; Cars is left empty
        company.employees[2].setValue(Int32(20), forKey: "age")  // Cid stays in place
        company.context.processPendingChanges()
        #expect(recorder.events.first == "will" && recorder.events.last == "did")
        #expect(Set(recorder.objectChanges.map { "\($0.type.rawValue)\($0.object.value(forKey: "name")!)" }) == ["1Ada", "2Dee", "4Cid"])
        #expect(recorder.sectionChanges.map(\.name) == ["Cars"])
        #expect(sameSections(recorder.apply(to: old), currentSections(controller)))
        #expect(controller.indexPath(forObject: ada) == IndexPath(row: 1, section: 0))

        recorder.reset()
        try company.context.save()  // nothing changed since: no batch
        #expect(recorder.events.isEmpty)
    }

    /// A change to an inserted, unsaved object made in a later event comes in ObjectsDidChange under
    /// `NSUpdatedObjectsKey`, as Apple reports it, so the controller moves the object.
    @Test func aChangeToAnUnsavedObjectInALaterEventIsReported() throws {
        var (company, controller, recorder) = try fixture()
        company.context.processPendingChanges()  // the fixture's objects are reported inserted
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        company.context.processPendingChanges()
        recorder.reset()
        ada.setValue(Int32(45), forKey: "age")  // passes Bob
        company.context.processPendingChanges()
        #expect(recorder.objectChanges.map(\.type) == [.move])
        #expect(controller.indexPath(forObject: ada) == IndexPath(row: 2, section: 0))
    }

    @Test func anUndoneInsertLeavesTheController() throws {
        var (company, controller, recorder) = try fixture()
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        company.context.undoManager = undoManager
        undoManager.beginUndoGrouping()
        let ada = company.employee("Ada", age: 35, department: company.departments[0])
        undoManager.endUndoGrouping()  // the checkpoint processes pending changes: Ada is reported
        #expect(controller.indexPath(forObject: ada) == IndexPath(row: 1, section: 0))
        recorder.reset()
        company.context.undo()
        #expect(recorder.objectChanges.map(\.type) == [.delete])
        #expect(controller.indexPath(forObject: ada) == nil)
    }

    // MARK: Against a model

    /// Random batches of inserts, deletes, age changes (moves or updates), department changes
    /// (section changes), name changes and predicate crossings; after each batch, the reported
    /// changes applied to the old sections give the sections recomputed from scratch, and the
    /// controller's own sections, fetched objects and index paths agree.
    @Test(arguments: [(true, 1), (false, 2), (true, 3), (true, 4)])
    func randomBatchesAgreeWithARecomputedModel(sectioned: Bool, seed: UInt64) throws {
        try randomBatches(sectioned: sectioned, seed: seed, contextPosts: false)
    }

    /// The same, end to end: the context posts its ObjectsDidChange, here from the save that ends
    /// each batch (delete rules run, so departments change too).
    @Test(arguments: [(true, 5), (false, 6), (true, 7)])
    func randomBatchesPostedByTheContextAgreeWithARecomputedModel(sectioned: Bool, seed: UInt64) throws {
        try randomBatches(sectioned: sectioned, seed: seed, contextPosts: true)
    }

    /// The same with batches ended by `processPendingChanges()`, nothing saved: new objects stay
    /// unsaved across events, and an object changed in several events is reported once a batch.
    @Test(arguments: [(true, 8), (false, 9), (true, 10)])
    func randomBatchesOfUnsavedEventsAgreeWithARecomputedModel(sectioned: Bool, seed: UInt64) throws {
        try randomBatches(sectioned: sectioned, seed: seed, contextPosts: true, saves: false)
    }

    private func randomBatches(sectioned: Bool, seed: UInt64, contextPosts: Bool, saves: Bool = true) throws {
        var random = SeededGenerator(seed: seed)
        var company = try CompanyFixture(departmentNames: ["A", "B", "C", "D", "E"])
        let predicate = NSPredicate(format: "age >= 20")
        for index in 0..<40 {
            company.employee(String(format: "e%03d", index), age: Int32(random.next(below: 60)),
                             department: random.next(below: 6) == 0 ? nil : company.departments[random.next(below: 5)])
        }
        // The fixture's event ends before the controller fetches, as an app's would: an object the
        // controller fetched while it was new and unreported, then deleted in the same event, is in
        // no set of that event's ObjectsDidChange (Apple's rule), so the controller would keep it.
        company.context.processPendingChanges()
        let controller = NSFetchedResultsController(
            fetchRequest: CompanyFixture.request(predicate: predicate), managedObjectContext: company.context,
            sectionNameKeyPath: sectioned ? "department.name" : nil, cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        #expect(sameSections(currentSections(controller), company.expectedSections(predicate: predicate, sectioned: sectioned)))

        var nextName = 40
        for _ in 0..<150 {
            let old = currentSections(controller)
            recorder.reset()
            var inserted: [NSManagedObject] = [], updated: [NSManagedObject] = [], deleted: [NSManagedObject] = []
            for _ in 0..<(1 + random.next(below: 6)) {
                let live = company.employees.filter { !$0.isDeleted && $0.managedObjectContext != nil }
                let target = live.isEmpty ? nil : live[random.next(below: live.count)]
                switch random.next(below: 6) {
                case 0:
                    inserted.append(company.employee(String(format: "e%03d", nextName), age: Int32(random.next(below: 60)),
                                                     department: company.departments[random.next(below: 5)]))
                    nextName += 1
                case 1:
                    if let target { company.context.delete(target); deleted.append(target) }
                case 2:
                    target?.setValue(Int32(random.next(below: 60)), forKey: "age")
                    updated += [target].compactMap { $0 }
                case 3:
                    target?.setValue(random.next(below: 6) == 0 ? nil : company.departments[random.next(below: 5)], forKey: "department")
                    updated += [target].compactMap { $0 }
                case 4:
                    target?.setValue(String(format: "e%03d", nextName), forKey: "name")
                    nextName += 1
                    updated += [target].compactMap { $0 }
                default:
                    target?.setValue(random.next(below: 2) == 0, forKey: "active")
                    updated += [target].compactMap { $0 }
                }
            }
            if contextPosts, saves {
                try company.context.save()
            } else if contextPosts {
                company.context.processPendingChanges()
            } else {
                company.postChange(inserted: inserted, updated: updated, deleted: deleted)
            }
            let expected = company.expectedSections(predicate: predicate, sectioned: sectioned)
            #expect(sameSections(currentSections(controller), expected))
            // Apple reports each object at most once between will- and didChangeContent.
            var changes = recorder.objectChanges.makeIterator()
            var batch: [ObjectIdentifier] = []
            for event in recorder.events {
                if event == "will" { batch = [] }
                if event == "object", let change = changes.next() { batch.append(ObjectIdentifier(change.object)) }
                if event == "did" { #expect(Set(batch).count == batch.count, "an object reported twice in one batch: \(recorder.describe())") }
            }
            #expect(sameSections(recorder.apply(to: old), expected), "the reported changes turn the old sections into the new")
            for (sectionIndex, section) in expected.enumerated() {
                for (row, object) in section.objects.enumerated() {
                    #expect(controller.indexPath(forObject: object) == IndexPath(row: row, section: sectionIndex))
                }
            }
            #expect(controller.fetchedObjects?.count == expected.reduce(0) { $0 + $1.objects.count })
            // One batch that disagrees is enough: the later ones inherit its difference.
            if !sameSections(currentSections(controller), expected) { return }
        }
    }
}

extension SeededGenerator {
    /// A number in `0..<bound`.
    mutating func next(below bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
}
