import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// A merge that meets the receiver's unsaved relationship changes (found by the randomized
/// multi-context test): after it, both sides of every relationship agree in the receiver. Apple
/// documents the merge as a refresh of each updated object, keeping the receiver's changes
/// (`refresh(_:mergeChanges: true)`); the graph a refresh leaves must still be whole.
@Suite("Merging: the receiver's unsaved relationship changes")
struct MergedRelationshipTests {
    /// The receiver moved M to Z (unsaved) and holds Y unchanged; the other context moves M to Y.
    /// The merge keeps the receiver's M in Z and turns Y into a fault: Y's moods, loaded again
    /// from the store, leave out M, which the receiver has elsewhere.
    @Test func aToManyLoadedAfterAMergeLeavesOutObjectsTheReceiverMovedElsewhere() throws {
        let f = try MovedMoodFixture()
        try f.receiver.performAndWait {
            #expect(moods(try f.receiver.existingObject(with: f.y)).isEmpty)  // Y loaded, unchanged
            try f.receiver.existingObject(with: f.m).setValue(try f.receiver.existingObject(with: f.z), forKey: "country")
        }
        let note = try f.move(in: f.mover, to: f.y)
        try f.receiver.performAndWait {
            f.receiver.mergeChanges(fromContextDidSave: note)
            let m = try f.receiver.existingObject(with: f.m)
            #expect((m.value(forKey: "country") as? NSManagedObject)?.objectID == f.z, "the receiver's change is kept")
            #expect(moods(try f.receiver.existingObject(with: f.y)).isEmpty)
            #expect(moods(try f.receiver.existingObject(with: f.z)) == [f.m])
            #expect(f.receiver._checkInvariants().isEmpty, "\(f.receiver._checkInvariants())")
        }
    }

    /// The receiver added a new mood N to X (unsaved: X's moods changed); the other context moves
    /// M from X to Y. The merge gives X the store's moods plus the receiver's own addition: N, not
    /// M, whose country is now Y.
    @Test func aChangedToManyMergesTheStoresMembersWithTheReceiversAdditions() throws {
        let f = try MovedMoodFixture()
        let n: NSManagedObject = try f.receiver.performAndWait {
            let x = try f.receiver.existingObject(with: f.x)
            #expect(moods(x) == [f.m])
            _ = try f.receiver.existingObject(with: f.m).value(forKey: "country")  // M loaded, unchanged
            return mood(1, x, in: f.receiver)
        }
        let note = try f.move(in: f.mover, to: f.y)
        try f.receiver.performAndWait {
            f.receiver.mergeChanges(fromContextDidSave: note)
            let x = try f.receiver.existingObject(with: f.x)
            #expect(moods(x) == [n.objectID])
            let m = try f.receiver.existingObject(with: f.m)
            #expect((m.value(forKey: "country") as? NSManagedObject)?.objectID == f.y)
            #expect(f.receiver._checkInvariants().isEmpty, "\(f.receiver._checkInvariants())")
            try f.receiver.save()
        }
        let reader = try makeContext(model: f.stack.model, storeType: NSSQLiteStoreType, at: f.stack.url)
        let (storedX, storedY) = try reader.performAndWait {
            (moods(try reader.existingObject(with: f.x)), moods(try reader.existingObject(with: f.y)))
        }
        #expect(storedX == [n.objectID])
        #expect(storedY == [f.m])
    }

    /// A mood moved away from a country whose moods were not loaded: the country's list, loaded
    /// for the removal, already leaves the mood out (its country changed, unsaved), yet the removal
    /// is the country's change, and the save reports the country updated, so that a sibling
    /// holding the country's moods refreshes them.
    @Test func movingAnObjectReportsItsFormerDestinationUpdatedWhenItsListWasNotLoaded() throws {
        let f = try MovedMoodFixture()
        let sibling = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        sibling.persistentStoreCoordinator = f.mover.persistentStoreCoordinator
        let before = try sibling.performAndWait { moods(try sibling.existingObject(with: f.x)) }
        #expect(before == [f.m])
        let note = try f.move(in: f.mover, to: f.y)
        let updated = Set((note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? []).map(\.objectID))
        #expect(updated == [f.m, f.x, f.y])
        let (after, problems) = try sibling.performAndWait {
            sibling.mergeChanges(fromContextDidSave: note)
            return (moods(try sibling.existingObject(with: f.x)), sibling._checkInvariants())
        }
        #expect(after.isEmpty)
        #expect(problems.isEmpty, "\(problems)")
    }
}

/// The sibling that moves M and saves, and the one that merges it.
extension MovedMoodFixture {
    fileprivate var mover: NSManagedObjectContext { first }
    fileprivate var receiver: NSManagedObjectContext { second }
}
