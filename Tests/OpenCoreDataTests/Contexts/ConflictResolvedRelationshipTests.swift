import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// A save whose optimistic-locking conflict the merge policy resolves in favour of the saver's
/// change of a to-one (found by the randomized multi-context test, issue 40). Sibling B moved mood
/// M from X to Y and saved; sibling A, which had not merged that, moves M from X to Z and saves
/// with `mergeByPropertyObjectTrump`: A's Z wins. The store's former destination, Y, loses M, so
/// A's save must report Y as updated, and B, merging it, must drop M from Y's moods.
///
/// Apple documents that a to-one change updates the inverse to-manys of both the old and the new
/// destination, and that the did-save's updated objects are those whose changes were saved; that
/// it reports Y in this exact case (the old destination as the store had it, not as A had read
/// it) is not documented: it is what keeps every sibling's graph whole, which Apple's merges do.
@Suite("Conflicts: a to-one won by the saver")
struct ConflictResolvedRelationshipTests {

    /// A has read M (in X), and, when `aHoldsY`, Y with its moods as they were before B's save
    /// (none); B moves M to Y and saves, and, when `bFaultsM`, turns M back into a fault (Y's moods
    /// stay loaded: the merge of M alone then cannot reach them); A, not having merged B's save,
    /// moves M to Z and saves: the conflict is resolved for A. A's did-save lists Y; B, merging
    /// it, has M in Z and in no other country's moods.
    @Test(arguments: [false, true], [false, true])
    func theStoresFormerDestinationIsReportedAndASiblingDropsTheObjectFromIt(aHoldsY: Bool, bFaultsM: Bool) throws {
        let f = try MovedMoodFixture(mergePolicy: NSMergePolicy.mergeByPropertyObjectTrump)
        try f.a.performAndWait {
            _ = try f.a.existingObject(with: f.m).value(forKey: "country")  // M read in X
            if aHoldsY { #expect(moods(try f.a.existingObject(with: f.y)).isEmpty) }
        }
        _ = try f.move(in: f.b, to: f.y)
        try f.b.performAndWait { () throws in
            #expect(moods(try f.b.existingObject(with: f.y)) == [f.m])
            if bFaultsM { f.b.refresh(try f.b.existingObject(with: f.m), mergeChanges: false) }
        }

        let aSaved = try f.move(in: f.a, to: f.z)  // a conflict on M, resolved for A
        #expect(updatedIDs(aSaved).isSuperset(of: [f.m, f.x, f.z]))
        #expect(updatedIDs(aSaved).contains(f.y), "the store's former destination of M is part of the save")

        try f.expectBothHoldMInZ(afterBMerges: aSaved)
        // The store agrees.
        let reader = try makeContext(model: f.stack.model, storeType: NSSQLiteStoreType, at: f.stack.url)
        try reader.performAndWait { () throws in
            #expect(moods(try reader.existingObject(with: f.y)).isEmpty)
            #expect(moods(try reader.existingObject(with: f.z)) == [f.m])
        }
    }
}

/// The same move reached by a merge instead of a conflict (found by the randomized test): A has
/// moved M from X to Z, unsaved, when B moves M to Y and saves; A merges B's save, which refreshes
/// M keeping A's change on top of the store's values (M in Y). A's save then takes M out of Y, so
/// it must report Y, though A's change was made when M was in X. B, merging it, drops M from Y.
@Suite("Merges: a to-one changed here, moved by a merged save")
struct MergedMoveOfAChangedToOneTests {
    @Test func theSaveReportsTheDestinationTheMergeFound() throws {
        let f = try MovedMoodFixture(mergePolicy: NSMergePolicy.mergeByPropertyObjectTrump)
        try f.a.performAndWait {
            try f.a.existingObject(with: f.m).setValue(try f.a.existingObject(with: f.z), forKey: "country")
        }
        let bSaved = try f.move(in: f.b, to: f.y)
        let aSaved = NotificationRecorder(.NSManagedObjectContextDidSave, object: f.a)
        try f.a.performAndWait { () throws in
            f.a.mergeChanges(fromContextDidSave: bSaved)
            #expect((try f.a.existingObject(with: f.m).value(forKey: "country") as? NSManagedObject)?.objectID == f.z, "A's change kept")
            try f.a.save()
        }
        let note = try #require(aSaved.last)
        let updated = updatedIDs(note)
        #expect(updated.isSuperset(of: [f.m, f.z]))
        #expect(updated.contains(f.y), "the store's destination of M when A saved is part of the save")
        try f.expectBothHoldMInZ(afterBMerges: note)
    }
}

/// The IDs of a did-save's updated objects.
private func updatedIDs(_ note: Notification) -> Set<NSManagedObjectID> {
    Set((note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? []).map(\.objectID))
}

/// Sibling A (the stack's root) and sibling B.
extension MovedMoodFixture {
    fileprivate var a: NSManagedObjectContext { first }
    fileprivate var b: NSManagedObjectContext { second }

    /// After A saved M in Z: B merges A's save (`note`), and then both hold M in Z and in no other
    /// country's moods (Y's in particular), with whole graphs; A has nothing left unsaved.
    fileprivate func expectBothHoldMInZ(afterBMerges note: Notification) throws {
        try b.performAndWait { () throws in
            b.mergeChanges(fromContextDidSave: note)
            #expect((try b.existingObject(with: m).value(forKey: "country") as? NSManagedObject)?.objectID == z)
            #expect(moods(try b.existingObject(with: y)).isEmpty, "B's Y no longer lists M")
            #expect(moods(try b.existingObject(with: z)) == [m])
            #expect(b._checkInvariants().isEmpty, "\(b._checkInvariants())")
        }
        try a.performAndWait { () throws in
            #expect(!a.hasChanges)
            #expect(moods(try a.existingObject(with: y)).isEmpty)
            #expect(moods(try a.existingObject(with: z)) == [m])
            #expect(a._checkInvariants().isEmpty, "\(a._checkInvariants())")
        }
    }
}
