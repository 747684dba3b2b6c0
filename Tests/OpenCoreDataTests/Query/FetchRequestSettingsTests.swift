import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A context runs a copy of every request it is given (`copySettings(from:)`): every setting must
/// reach the copy, whether the request is of the class itself (its stored settings are copied in
/// one assignment) or of a subclass (read through its overridable accessors).
@Suite("Fetch request settings")
struct FetchRequestSettingsTests {
    private static func configured<R>(_ request: NSFetchRequest<R>, entity: NSEntityDescription) -> NSFetchRequest<R> {
        request.entity = entity
        request.predicate = NSPredicate(format: "int64 > 3")
        request.sortDescriptors = [NSSortDescriptor(key: "string", ascending: false)]
        request.fetchLimit = 7
        request.fetchOffset = 2
        request.fetchBatchSize = 20
        request.returnsObjectsAsFaults = false
        request.includesSubentities = false
        request.includesPropertyValues = false
        request.includesPendingChanges = false
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["string"]
        request.returnsDistinctResults = true
        request.propertiesToGroupBy = ["string"]
        request.havingPredicate = NSPredicate(format: "string != nil")
        request.relationshipKeyPathsForPrefetching = ["owner"]
        request.shouldRefreshRefetchedObjects = true
        request.affectedStores = []
        return request
    }

    private static func expectSettings<R>(_ copy: NSFetchRequest<R>, entity: NSEntityDescription) {
        #expect(copy.entity === entity)
        #expect(copy.entityName == entity.name)
        #expect(copy.predicate == NSPredicate(format: "int64 > 3"))
        #expect(copy.sortDescriptors?.first?.key == "string" && copy.sortDescriptors?.first?.ascending == false)
        #expect(copy.fetchLimit == 7 && copy.fetchOffset == 2 && copy.fetchBatchSize == 20)
        #expect(!copy.returnsObjectsAsFaults && !copy.includesSubentities)
        #expect(!copy.includesPropertyValues && !copy.includesPendingChanges)
        #expect(copy.resultType == .dictionaryResultType)
        #expect(copy.propertiesToFetch as? [String] == ["string"])
        #expect(copy.returnsDistinctResults)
        #expect(copy.propertiesToGroupBy as? [String] == ["string"])
        #expect(copy.havingPredicate == NSPredicate(format: "string != nil"))
        #expect(copy.relationshipKeyPathsForPrefetching == ["owner"])
        #expect(copy.shouldRefreshRefetchedObjects)
        #expect(copy.affectedStores?.isEmpty == true)
    }

    @Test func everySettingReachesTheCopy() {
        let entity = TestModels.item()
        let request = Self.configured(NSFetchRequest<NSManagedObject>(), entity: entity)
        let copy = NSFetchRequest<any NSFetchRequestResult>()
        copy.copySettings(from: request)
        Self.expectSettings(copy, entity: entity)
        // The copy is independent of the original.
        copy.fetchLimit = 1
        #expect(request.fetchLimit == 7)
    }

    /// The four rarely set settings are kept together out of line and shared by copies until one
    /// changes: a change to one of them in a copy, or in the original, leaves the other as it was,
    /// and each can be unset again.
    @Test func theRarelySetSettingsAreCopiedOnWrite() {
        let entity = TestModels.item()
        let request = Self.configured(NSFetchRequest<NSManagedObject>(), entity: entity)
        let copy = NSFetchRequest<any NSFetchRequestResult>()
        copy.copySettings(from: request)
        copy.propertiesToFetch = ["int64"]
        copy.havingPredicate = nil
        #expect(request.propertiesToFetch as? [String] == ["string"])
        #expect(request.havingPredicate == NSPredicate(format: "string != nil"))
        request.relationshipKeyPathsForPrefetching = ["other"]
        request.propertiesToGroupBy = nil
        #expect(copy.relationshipKeyPathsForPrefetching == ["owner"])
        #expect(copy.propertiesToGroupBy as? [String] == ["string"])
        #expect(copy.propertiesToFetch as? [String] == ["int64"] && copy.havingPredicate == nil)
        copy.propertiesToFetch = nil
        copy.propertiesToGroupBy = nil
        copy.relationshipKeyPathsForPrefetching = nil
        #expect(copy.propertiesToFetch == nil && copy.propertiesToGroupBy == nil)
        #expect(copy.havingPredicate == nil && copy.relationshipKeyPathsForPrefetching == nil)
        #expect(request.propertiesToFetch as? [String] == ["string"])
        #expect(request.relationshipKeyPathsForPrefetching == ["other"])
    }

    @Test func aSubclassesSettingsAreReadThroughItsAccessors() {
        let entity = TestModels.item()
        let request = Self.configured(LimitOverridingRequest(), entity: entity)
        let copy = NSFetchRequest<any NSFetchRequestResult>()
        copy.copySettings(from: request)
        #expect(copy.fetchLimit == 99, "the override's value, not the stored one")
        copy.fetchLimit = 7
        Self.expectSettings(copy, entity: entity)
    }
}

extension FetchRequestSettingsTests {
    /// A subclass's overriding accessor holds however the request reaches the SQLite store: through a
    /// context (which copies it) and through the coordinator's `execute(_:with:)` (the store reads
    /// stored settings only from a request of the class itself, so it copies a subclass's first).
    @Test func aSubclassesAccessorsHoldThroughContextAndCoordinator() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        try context.performAndWait { () throws -> Void in
            for name in ["Ann", "Bob", "Cy"] { insertObject("Employee", ["name": name, "age": 30], into: context) }
            try context.save()
            let request = FirstOnlyRequest()
            request.entityName = "Employee"
            request.entity = store.model.entitiesByName["Employee"]
            #expect(try context.fetch(request).count == 1)
            let executed = try store.coordinator.execute(request, with: context) as? [Any]
            #expect(executed?.count == 1)
        }
    }
}

/// An untyped request whose `fetchLimit` getter says 1.
private final class FirstOnlyRequest: NSFetchRequest<any NSFetchRequestResult> {
    override var fetchLimit: Int {
        get { 1 }
        set {}
    }
}

/// A request whose `fetchLimit` getter is overridden.
private final class LimitOverridingRequest: NSFetchRequest<NSManagedObject> {
    override var fetchLimit: Int {
        get { 99 }
        set {}
    }
}
