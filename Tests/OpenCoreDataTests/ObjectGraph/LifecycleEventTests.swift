import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// An object that records every lifecycle hook the framework calls on it.
final class LifecycleProbe: NSManagedObject {
    @ManagedProperty var name: String?
    @ManagedProperty var stamp: Date?
    @ManagedProperty var saves: Int64

    var events: [String] = []
    /// What `willSave()` does besides recording the call.
    var onWillSave: ((LifecycleProbe) -> Void)?
    /// What `awakeFromFetch()` does besides recording the call.
    var onAwakeFromFetch: ((LifecycleProbe) -> Void)?
    /// What `didSave()` does besides recording the call.
    var onDidSave: ((LifecycleProbe) -> Void)?

    override func awakeFromInsert() { super.awakeFromInsert(); events.append("awakeFromInsert") }
    override func awakeFromFetch() { super.awakeFromFetch(); events.append("awakeFromFetch"); onAwakeFromFetch?(self) }
    override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
        super.awake(fromSnapshotEvents: flags)
        if flags.contains(.rollback) { events.append("awake(rollback)") }
        if flags.contains(.refresh) { events.append("awake(refresh)") }
    }
    override func willSave() {
        super.willSave()
        events.append(isDeleted ? "willSave(deleted)" : "willSave")
        onWillSave?(self)
    }
    override func didSave() { super.didSave(); events.append(isDeleted ? "didSave(deleted)" : "didSave"); onDidSave?(self) }
    override func prepareForDeletion() { super.prepareForDeletion(); events.append("prepareForDeletion") }
    override func willTurnIntoFault() { super.willTurnIntoFault(); events.append("willTurnIntoFault") }
    override func didTurnIntoFault() { super.didTurnIntoFault(); events.append("didTurnIntoFault") }

    static func model(requiringName: Bool = false) -> NSManagedObjectModel {
        let entity = NSEntityDescription(name: "Probe", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: !requiringName),
            NSAttributeDescription(name: "stamp", type: .dateAttributeType),
            NSAttributeDescription(name: "saves", type: .integer64AttributeType, isOptional: false, defaultValue: 0),
        ])
        entity.managedObjectClassName = String(reflecting: LifecycleProbe.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

/// When and how often the lifecycle hooks run, on every store (Apple's documented semantics; see
/// `NSManagedObjectContext+Lifecycle.swift`).
@Suite("Lifecycle events")
struct LifecycleEventTests {
    static let storeTypes = ValidationTests.storeTypes

    private func fetchProbe(named name: String, in context: NSManagedObjectContext) throws -> LifecycleProbe {
        let request = NSFetchRequest<LifecycleProbe>(entityName: "Probe")
        request.predicate = NSPredicate(format: "name == %@", name)
        request.returnsObjectsAsFaults = true
        return try #require(try context.fetch(request).first)
    }

    /// A save skips `willSave()` rounds when no object to save has a class that overrides it: here
    /// objects of a class that does not (`NSManagedObject` itself) come first, inserted, updated or
    /// deleted, and the one probe among them still gets its `willSave()`.
    @Test(arguments: storeTypes)
    func willSaveRunsWhenOneObjectAmongPlainOnesOverridesIt(storeType: String) throws {
        let model = LifecycleProbe.model()
        let plain = NSEntityDescription(name: "Plain", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType)
        ])
        model.entities += [plain]
        let store = try TestStore(storeType, model: model)
        let context = store.newContext()
        let plains = (0..<3).map { insertObject("Plain", ["name": "p\($0)"], into: context) }
        let probe = LifecycleProbe(context: context)
        probe.name = "a"
        try context.save()
        #expect(probe.events == ["awakeFromInsert", "willSave", "didSave"])

        for (change, expected) in [("update", "willSave"), ("delete", "willSave(deleted)")] {
            probe.events = []
            for object in plains { object.setValue("\(change) \(object.value(forKey: "name")!)", forKey: "name") }
            if change == "update" { probe.stamp = Date() } else { context.delete(probe) }
            try context.save()
            #expect(probe.events.contains(expected), "\(change): \(probe.events)")
        }
    }

    @Test(arguments: storeTypes)
    func insertSaveUpdateDeleteCallEachHookOnce(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let context = store.newContext()
        let probe = LifecycleProbe(context: context)
        probe.name = "a"
        let bystander = LifecycleProbe(context: context)
        bystander.name = "b"
        #expect(probe.events == ["awakeFromInsert"])
        try context.save()
        #expect(probe.events == ["awakeFromInsert", "willSave", "didSave"])

        probe.events = []
        bystander.events = []
        probe.stamp = Date()
        try context.save()
        #expect(probe.events == ["willSave", "didSave"])
        #expect(bystander.events.isEmpty, "objects without changes get no willSave/didSave")
        try context.save()  // nothing to save: no hooks
        #expect(probe.events == ["willSave", "didSave"])

        probe.events = []
        context.delete(probe)
        #expect(probe.events == ["prepareForDeletion"])
        try context.save()
        // A saved deletion: willSave and didSave with isDeleted, then the object turns into a fault.
        #expect(probe.events == ["prepareForDeletion", "willSave(deleted)", "didSave(deleted)", "willTurnIntoFault", "didTurnIntoFault"])
        #expect(probe.isFault)
        #expect(bystander.events.isEmpty)
    }

    @Test func awakeFromInsertRunsOnceInTheObjectsLifetime() throws {
        let store = try TestStore(NSInMemoryStoreType, model: LifecycleProbe.model())
        let context = store.newContext()
        let entity = try #require(store.model.entitiesByName["Probe"])
        let probe = LifecycleProbe(entity: entity, insertInto: nil)
        #expect(probe.events.isEmpty, "not inserted yet")
        context.insert(probe)
        #expect(probe.events == ["awakeFromInsert"])
        context.delete(probe)  // never saved: it leaves the context
        context.insert(probe)
        #expect(probe.events == ["awakeFromInsert", "prepareForDeletion"])
        #expect(probe.isInserted && !probe.isDeleted)
        try context.save()
        #expect(probe.events == ["awakeFromInsert", "prepareForDeletion", "willSave", "didSave"], "saved as an insert, not a deletion")
    }

    @Test(arguments: storeTypes)
    func awakeFromFetchRunsWhenAFaultFiresWithChangeTrackingOff(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let writer = store.newContext()
        LifecycleProbe(context: writer).name = "a"
        try writer.save()

        let context = store.newContext()
        let id = try fetchProbe(named: "a", in: store.newContext()).objectID
        let probe = try #require(context.object(with: id) as? LifecycleProbe)
        probe.onAwakeFromFetch = { $0.stamp = Date(timeIntervalSinceReferenceDate: 1) }  // a public setter
        #expect(probe.isFault && probe.events.isEmpty)
        #expect(probe.name == "a")
        #expect(probe.events == ["awakeFromFetch"])
        _ = probe.name
        #expect(probe.events == ["awakeFromFetch"], "once per firing")
        #expect(probe.stamp == Date(timeIntervalSinceReferenceDate: 1))
        #expect(!probe.hasChanges && !context.hasChanges, "values set in awakeFromFetch are not changes")

        // Turned back into a fault and fired again: another awakeFromFetch.
        context.refresh(probe, mergeChanges: false)
        #expect(probe.events == ["awakeFromFetch", "willTurnIntoFault", "didTurnIntoFault"])
        _ = probe.name
        #expect(probe.events.last == "awakeFromFetch" && probe.events.count == 4)
        probe.name = "b"
        #expect(probe.hasChanges && context.updatedObjects.contains(probe), "tracking is back on after awakeFromFetch")
    }

    @Test(arguments: storeTypes)
    func rollbackRefreshAndResetReportTheirEvents(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let context = store.newContext()
        let updated = LifecycleProbe(context: context)
        updated.name = "u"
        let deleted = LifecycleProbe(context: context)
        deleted.name = "d"
        try context.save()
        updated.events = []
        deleted.events = []

        updated.name = "changed"
        context.delete(deleted)
        context.rollback()
        #expect(updated.events == ["awake(rollback)"])
        #expect(updated.name == "u")
        #expect(deleted.events == ["prepareForDeletion", "awake(rollback)"], "prepareForDeletion ran even though the deletion was rolled back")
        #expect(!deleted.isDeleted)

        updated.events = []
        updated.name = "merged"
        context.refresh(updated, mergeChanges: true)
        #expect(updated.events == ["awake(refresh)"])
        #expect(updated.name == "merged")

        updated.events = []
        deleted.events = []
        context.reset()
        #expect(updated.events == ["willTurnIntoFault", "didTurnIntoFault"])
        #expect(deleted.events == ["willTurnIntoFault", "didTurnIntoFault"])
        #expect(updated.isFault && updated.managedObjectContext == nil)
    }

    @Test(arguments: storeTypes)
    func primitiveValuesSetInAwakeFromInsertAndWillSaveAreSavedWithoutAnotherRound(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let context = store.newContext()
        let probe = LifecycleProbe(context: context)
        probe.setPrimitiveValue("from awakeFromInsert", forKey: "name")
        probe.onWillSave = { $0.setPrimitiveValue(($0.primitiveValue(forKey: "saves") as? Int64 ?? 0) + 1, forKey: "saves") }
        try context.save()
        #expect(probe.events == ["awakeFromInsert", "willSave", "didSave"], "a primitive change does not re-run willSave")

        probe.stamp = Date()
        try context.save()
        #expect(probe.events.filter { $0 == "willSave" }.count == 2)
        let reader = try fetchProbe(named: "from awakeFromInsert", in: store.newContext())
        #expect(reader.saves == 2, "the primitive change made in willSave of an update is written")
    }

    @Test(arguments: storeTypes)
    func aGuardedAccessorChangeInWillSaveRunsWillSaveAgainUntilStable(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let context = store.newContext()
        let probe = LifecycleProbe(context: context)
        let other = LifecycleProbe(context: context)
        other.name = "other"
        try context.save()
        probe.events = []
        other.events = []

        // Apple's advice: compare before setting. The change is seen, willSave runs once more,
        // the second call changes nothing, and the save goes through.
        let stamp = Date(timeIntervalSinceReferenceDate: 42)
        probe.onWillSave = { object in
            if object.stamp != stamp { object.stamp = stamp }
            if other.name != "touched" { other.name = "touched" }  // another object, through its accessor
        }
        probe.name = "p"
        try context.save()
        #expect(probe.events == ["willSave", "willSave", "didSave"])
        #expect(other.events == ["willSave", "didSave"], "an object changed by another's willSave gets its own willSave and is saved")
        let reader = store.newContext()
        #expect(try fetchProbe(named: "p", in: reader).stamp == stamp)
        #expect(try fetchProbe(named: "touched", in: reader).name == "touched")
    }

    @Test(arguments: storeTypes)
    func anUnguardedAccessorChangeInWillSaveThrowsInsteadOfLoopingForever(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let context = store.newContext()
        let probe = LifecycleProbe(context: context)
        probe.name = "p"
        try context.save()
        let before = try StoreFingerprint(store)
        probe.events = []

        probe.onWillSave = { $0.stamp = Date() }  // always changes: Apple loops "until your program crashes"
        probe.name = "q"
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(error.code == .coreDataError && (error as NSError).code == NSCoreDataError)
        #expect(error.message.contains("still dirty after 100"))
        #expect(error.message.contains("Probe"))
        #expect(probe.events.filter { $0 == "willSave" }.count == NSManagedObjectContext.willSaveRoundLimit)
        #expect(!probe.events.contains("didSave"))
        #expect(try StoreFingerprint(store) == before, "nothing is written")
        #expect(context.hasChanges)

        probe.onWillSave = nil
        try context.save()
        #expect(try fetchProbe(named: "q", in: store.newContext()).name == "q")
    }

    @Test(arguments: storeTypes)
    func validationRunsAfterWillSaveAndDidSaveChangesLeaveTheContextDirty(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model(requiringName: true))
        let context = store.newContext()
        let probe = LifecycleProbe(context: context)
        // The required name is filled in by willSave: validation sees it (Apple validates after willSave).
        probe.onWillSave = { if $0.primitiveValue(forKey: "name") == nil { $0.setPrimitiveValue("filled", forKey: "name") } }
        try context.save()
        #expect(try fetchProbe(named: "filled", in: store.newContext()).name == "filled")

        // Apple: changes made in didSave through accessors dirty the context for the next save.
        probe.onWillSave = nil
        probe.onDidSave = { object in
            object.onDidSave = nil
            object.saves = 7
        }
        probe.name = "renamed"
        try context.save()
        #expect(context.hasChanges && probe.isUpdated, "the change made in didSave is pending")
        #expect(try fetchProbe(named: "renamed", in: store.newContext()).saves == 0)
        try context.save()
        #expect(try fetchProbe(named: "renamed", in: store.newContext()).saves == 7)
    }

    @Test(arguments: storeTypes)
    func objectsInsertedOrDeletedInWillSaveAreSavedWithTheirOwnWillSave(storeType: String) throws {
        let store = try TestStore(storeType, model: LifecycleProbe.model())
        let context = store.newContext()
        let probe = LifecycleProbe(context: context)
        probe.name = "p"
        var log: LifecycleProbe?
        probe.onWillSave = { object in
            guard log == nil, let context = object.managedObjectContext else { return }
            let entry = LifecycleProbe(context: context)
            entry.name = "log"
            log = entry
        }
        try context.save()
        let entry = try #require(log)
        #expect(entry.events == ["awakeFromInsert", "willSave", "didSave"])
        #expect(try StoreFingerprint(store).rows.count == 2)
    }
}

// MARK: - Seed 002, "Lifecycle Events"

/// Seed 002's "Complete Lifecycle Example", as the seed writes it, except `@NSManaged` →
/// `@ManagedProperty` and `#keyPath(Article.x)` → `"x"`.
enum Seed002Lifecycle {
    final class Article: NSManagedObject {
        @ManagedProperty var name: String?
        @ManagedProperty var creationDate: Date?
        @ManagedProperty var lastModified: Date?
        @ManagedProperty var localResourceURL: URL?

        /// Not in the seed: counts the calls, for the test.
        var prepareForDeletionCalls = 0

        override func awakeFromInsert() {
            super.awakeFromInsert()

            // Set creation date once
            setPrimitiveValue(Date(), forKey: "creationDate")
            setPrimitiveValue(Date(), forKey: "lastModified")
        }

        override func willSave() {
            super.willSave()

            // Update modification date on every save
            if !isDeleted && changedValues().keys.contains("name") {
                setPrimitiveValue(Date(), forKey: "lastModified")
            }

            // Clean up files when deleted
            if isDeleted, let url = localResourceURL {
                try? FileManager.default.removeItem(at: url)
            }
        }

        override func prepareForDeletion() {
            super.prepareForDeletion()
            prepareForDeletionCalls += 1

            // Cancel ongoing operations
            // Don't delete files here!
        }
    }

    static func model() -> NSManagedObjectModel {
        let article = NSEntityDescription(name: "Article", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType),
            NSAttributeDescription(name: "creationDate", type: .dateAttributeType),
            NSAttributeDescription(name: "lastModified", type: .dateAttributeType),
            NSAttributeDescription(name: "localResourceURL", type: .URIAttributeType),
        ])
        article.managedObjectClassName = String(reflecting: Article.self)
        let model = NSManagedObjectModel()
        model.entities = [article]
        return model
    }
}

@Suite("Seed 002: lifecycle events")
struct Seed002LifecycleTests {
    typealias Article = Seed002Lifecycle.Article

    private func reread(_ article: Article, in store: TestStore) throws -> NSManagedObject {
        try store.newContext().existingObject(with: article.objectID)
    }

    @Test(arguments: ValidationTests.storeTypes)
    func awakeFromInsertSetsDatesOnceAndWillSaveUpdatesLastModifiedWhenTheNameChanges(storeType: String) throws {
        let store = try TestStore(storeType, model: Seed002Lifecycle.model())
        let context = store.newContext()
        let start = Date()
        let article = Article(context: context)
        let created = try #require(article.creationDate)
        #expect(created >= start && article.lastModified != nil)
        article.name = "Core Data Best Practices"
        try context.save()
        #expect(try reread(article, in: store).value(forKey: "creationDate") as? Date == created)

        // A save that does not change the name leaves lastModified alone.
        let firstModified = try #require(article.lastModified)
        article.localResourceURL = URL(fileURLWithPath: "/tmp/none")
        try context.save()
        #expect(article.lastModified == firstModified)

        // Changing the name updates lastModified in willSave, without another willSave round.
        Thread.sleep(forTimeInterval: 0.01)
        article.name = "Core Data Best Practices, 2nd edition"
        try context.save()
        let modified = try #require(article.lastModified)
        #expect(modified > firstModified)
        #expect(article.creationDate == created, "the creation date is set once")
        #expect(try reread(article, in: store).value(forKey: "lastModified") as? Date == modified)
    }

    @Test(arguments: ValidationTests.storeTypes)
    func theLocalFileIsDeletedOnlyWhenTheDeletionIsSaved(storeType: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("article.pdf")
        try Data("pdf".utf8).write(to: file)

        let store = try TestStore(storeType, model: Seed002Lifecycle.model())
        let context = store.newContext()
        let article = Article(context: context)
        article.name = "Swift"
        article.localResourceURL = file
        try context.save()
        #expect(FileManager.default.fileExists(atPath: file.path), "saving an insert keeps the file")

        article.name = "Swift 6"
        try context.save()
        #expect(FileManager.default.fileExists(atPath: file.path), "saving an update keeps the file")

        // prepareForDeletion runs at delete(_:), and the deletion can still be rolled back.
        context.delete(article)
        #expect(article.prepareForDeletionCalls == 1)
        #expect(FileManager.default.fileExists(atPath: file.path), "prepareForDeletion does not delete the file")
        context.rollback()
        #expect(!article.isDeleted)
        #expect(FileManager.default.fileExists(atPath: file.path), "a rolled-back deletion keeps the file")

        // The saved deletion removes it, in willSave with isDeleted true.
        context.delete(article)
        #expect(article.prepareForDeletionCalls == 2)
        try context.save()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try StoreFingerprint(store).rows.isEmpty)
    }
}
