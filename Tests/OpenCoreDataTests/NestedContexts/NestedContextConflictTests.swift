import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// A child's stale snapshot meeting its parent's newer values goes through the child's merge
/// policy when it saves: Apple checks a child's snapshots against its parent's current values
/// (NSMergeConflict: a conflict "between the managed object context and its in-memory cached
/// state"). Apple documents each policy's rule property by property against "the persistent
/// store"; the results here apply those rules with the parent in the store's place, which is our
/// reading (Apple does not spell out nested results).
///
/// The mood was saved with latitude 1, longitude 10 and date d0. The parent then changes latitude
/// to 2 and longitude to 20 (unsaved); the child, which read the mood before, changes latitude to 3
/// and date to d1.
@Suite("Nested contexts: a stale child against its parent, by merge policy")
struct NestedContextConflictTests {
    static let d0 = Date(timeIntervalSinceReferenceDate: 0)
    static let d1 = Date(timeIntervalSinceReferenceDate: 100)

    /// The stack, the mood's ID, the child (with its stale change made) and the parent's mood.
    func conflict(policy: NSMergePolicy) throws -> (NestedStack, NSManagedObject, NSManagedObjectContext) {
        let stack = try NestedStack()
        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: stack.root)
        mood.setValue(Self.d0, forKey: "date")
        mood.setValue(1.0, forKey: "latitude")
        mood.setValue(10.0, forKey: "longitude")
        try stack.root.save()
        let child = stack.child()
        child.mergePolicy = policy
        let inChild = child.object(with: mood.objectID)
        #expect(inChild.value(forKey: "latitude") as? Double == 1)  // read now: this is the child's snapshot
        mood.setValue(2.0, forKey: "latitude")
        mood.setValue(20.0, forKey: "longitude")
        inChild.setValue(3.0, forKey: "latitude")
        inChild.setValue(Self.d1, forKey: "date")
        return (stack, mood, child)
    }

    func values(_ mood: NSManagedObject) -> (Double?, Double?, Date?) {
        (mood.value(forKey: "latitude") as? Double, mood.value(forKey: "longitude") as? Double, mood.value(forKey: "date") as? Date)
    }

    @Test func errorPolicyFailsWithTheConflict() throws {
        let (stack, mood, child) = try conflict(policy: .error)
        do {
            try child.save()
            Issue.record("the save should fail")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .managedObjectMerge, "found in memory, not in a store")
            #expect((error as NSError).code == 133_020)
            let conflicts = error.conflictList.compactMap { $0 as? NSMergeConflict }
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.cachedSnapshot?["latitude"] as? Double == 1, "what the child read")
            #expect(conflicts.first?.persistedSnapshot?["latitude"] as? Double == 2, "what the parent has now")
            #expect(conflicts.first?.objectSnapshot?["latitude"] as? Double == 3, "the child's values")
        }
        #expect(values(mood) == (2, 20, Self.d0), "the parent is untouched")
        #expect(child.hasChanges, "the child keeps its changes")
        _ = stack
    }

    /// Apple: "merges conflicts between the persistent store's version of the object and the
    /// current in-memory version, giving priority to external changes".
    @Test func storeTrumpKeepsTheParentsChangedPropertiesAndTheChildsOthers() throws {
        let (stack, mood, child) = try conflict(policy: .mergeByPropertyStoreTrump)
        try child.save()
        #expect(values(mood) == (2, 20, Self.d1))
        _ = stack
    }

    /// Apple: "...giving priority to in-memory changes".
    @Test func objectTrumpKeepsTheChildsChangedProperties() throws {
        let (stack, mood, child) = try conflict(policy: .mergeByPropertyObjectTrump)
        try child.save()
        #expect(values(mood) == (3, 20, Self.d1))
        _ = stack
    }

    /// Apple: "overwrites the persistent store's version of the object with the in-memory version"
    /// (whole object: the parent's longitude goes too).
    @Test func overwriteWritesTheChildsWholeObject() throws {
        let (stack, mood, child) = try conflict(policy: .overwrite)
        try child.save()
        #expect(values(mood) == (3, 10, Self.d1))
        _ = stack
    }

    /// Apple: "discards in-memory state changes for objects in conflict".
    @Test func rollbackDiscardsTheChildsChanges() throws {
        let (stack, mood, child) = try conflict(policy: .rollback)
        let inChild = try #require(child.registeredObjects.first)
        try child.save()
        #expect(values(mood) == (2, 20, Self.d0))
        #expect(values(inChild) == (2, 20, Self.d0), "the child takes the parent's values")
        _ = stack
    }

    @Test func aChildThatReadTheParentsCurrentValuesHasNoConflict() throws {
        let (stack, mood, child) = try conflict(policy: .error)
        let inChild = try #require(child.registeredObjects.first)
        child.refresh(inChild, mergeChanges: true)  // the snapshot is the parent's now, changes kept
        try child.save()
        #expect(values(mood) == (3, 20, Self.d1))
        _ = stack
    }

    /// Apple's result for an update to an object the parent deleted is not documented; as for a
    /// row deleted from the store, no policy can merge it and the save fails.
    @Test func anUpdateToAnObjectTheParentDeletedFails() throws {
        let (stack, mood, child) = try conflict(policy: .mergeByPropertyObjectTrump)
        stack.root.delete(mood)
        #expect(throws: OpenCoreDataError.self) { try child.save() }
        #expect(mood.isDeleted)
    }
}
