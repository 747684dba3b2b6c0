import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Optimistic locking when the other writer is another coordinator on the same SQLite file: the
/// stale save meets the row's newer version (`Z_OPT`) written through the other coordinator, and
/// each merge policy gives the result it gives between two contexts of one coordinator
/// (`OptimisticLockingTests`).
@Suite("Optimistic locking between two coordinators")
struct TwoCoordinatorConflictTests {
    /// Sales (budget 100.5) saved; A reads it through the store's coordinator; B, through a second
    /// coordinator on the same file, renames it "B", sets the budget to 2 and saves; A renames it
    /// "A" and saves under `policy`.
    private func conflictingSave(policy: NSMergePolicy) throws
        -> (store: TestStore, a: NSManagedObject, context: NSManagedObjectContext, result: Result<Void, any Error>)
    {
        try OptimisticLockingTests.conflictingSave(NSSQLiteStoreType, policy: policy, throughSecondCoordinator: true)
    }

    private func stored(_ store: TestStore) throws -> (String?, Double?) {
        let rows = try store.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))
        return (rows.first?.value(forKey: "name") as? String, rows.first?.value(forKey: "budget") as? Double)
    }

    @Test func theErrorPolicyThrowsWithTheConflictAndItsSnapshots() throws {
        let (store, a, _, result) = try conflictingSave(policy: .error)
        guard case .failure(let failure) = result else {
            Issue.record("a stale save through another coordinator went through")
            return
        }
        let error = failure as NSError
        // 133020, as Apple's error policy reports an optimistic locking failure ("Could not merge changes.").
        #expect(error.code == NSManagedObjectMergeError)
        let conflict = try #require((error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [Any])?.first as? NSMergeConflict)
        #expect(conflict.sourceObject === a)
        #expect(conflict.oldVersionNumber == 1)
        #expect(conflict.newVersionNumber == 2)
        #expect(conflict.objectSnapshot?["name"] as? String == "A")
        #expect(conflict.cachedSnapshot?["name"] as? String == "Sales")
        #expect(conflict.persistedSnapshot?["name"] as? String == "B")
        #expect(conflict.persistedSnapshot?["budget"] as? Double == 2)
        #expect(try stored(store) == ("B", 2))
    }

    @Test func eachMergePolicyGivesItsResult() throws {
        let expected: [(NSMergePolicy, (String, Double))] = [
            (.mergeByPropertyStoreTrump, ("B", 2)), (.mergeByPropertyObjectTrump, ("A", 2)),
            (.overwrite, ("A", 100.5)), (.rollback, ("B", 2)),
        ]
        for (policy, values) in expected {
            let (store, _, _, result) = try conflictingSave(policy: policy)
            #expect(throws: Never.self) { try result.get() }
            let row = try stored(store)
            #expect(row.0 == values.0 && row.1 == values.1, "policy \(policy.mergeType.rawValue)")
        }
    }
}
