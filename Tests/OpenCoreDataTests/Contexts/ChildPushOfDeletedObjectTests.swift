import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// A merged deletion of an object that this context's own changes moved into another object's
/// to-many (found by the randomized multi-context test, issue 40). Sibling `second` deletes mood M
/// and saves; before `first` merges that, C, `first`'s child, moves M into a country W it inserted
/// and saves into `first`. When the deletion is merged, W (inserted in `first`, so not refreshed
/// by the merge) must stop listing M: the store has no row for M, and an object whose row is gone
/// must not be handed out. Then `first` saves and agrees with the store.
///
/// Apple documents that merged deletions leave the context; what an inserted object that holds
/// one in a to-many shows afterwards is not documented. Dropping it is what keeps the context in
/// agreement with the store, as the test in `MultiContextFuzzTests` requires.
@Suite("Contexts: a merged deletion held by this context's changes")
struct ChildPushOfDeletedObjectTests {
    /// When `childFirst`, C pushes its move before `first` merges the deletion (the case above);
    /// otherwise after (C's save is then refused: `first` has no row to update for M).
    @Test(arguments: [true, false])
    func anInsertedObjectDropsAMergedDeletion(childFirst: Bool) throws {
        let f = try MovedMoodFixture(mergePolicy: NSMergePolicy.mergeByPropertyObjectTrump)
        let a = f.first, b = f.second
        let c = f.stack.child(of: a)
        c.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try c.performAndWait { _ = try c.existingObject(with: f.m).value(forKey: "country") }
        // `first` holds X and M, loaded (the objects a context's user would have at hand).
        let held: [NSManagedObject] = try a.performAndWait {
            let x = try a.existingObject(with: f.x), m = try a.existingObject(with: f.m)
            #expect(moods(x) == [f.m])
            return [x, m]
        }
        let didSave = NotificationRecorder(.NSManagedObjectContextDidSave, object: b)
        try b.performAndWait {
            b.delete(try b.existingObject(with: f.m))
            try b.save()
        }
        let deletion = try #require(didSave.last)
        if !childFirst { a.mergeChanges(fromContextDidSave: deletion) }

        let pushed: Bool = c.performAndWait {
            let w = country(9, in: c)
            do {
                try c.existingObject(with: f.m).setValue(w, forKey: "country")
                try c.save()
                return true
            } catch {
                c.rollback()
                return false
            }
        }
        #expect(pushed == childFirst, "a push of an object the parent no longer has is refused")
        if childFirst { a.mergeChanges(fromContextDidSave: deletion) }

        try a.performAndWait { () throws in
            #expect(a._checkInvariants().isEmpty, "\(a._checkInvariants())")
            let w = a.registeredObjects.first { $0.entity.name == "Country" && code($0) == 9 }
            #expect((w != nil) == childFirst)
            if let w { #expect(moods(w).isEmpty, "W no longer lists M, whose row is gone") }
            #expect(moods(held[0]).isEmpty)
            #expect(!a.registeredObjects.contains { $0.objectID == f.m })
            try a.save()
            #expect(!a.hasChanges)
        }
        // The store agrees.
        let reader = try makeContext(model: f.stack.model, storeType: NSSQLiteStoreType, at: f.stack.url)
        try reader.performAndWait { () throws in
            #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Mood")) == 0)
            let codes = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Country")).map(code).sorted()
            #expect(codes == (childFirst ? [1, 2, 3, 9] : [1, 2, 3]))
        }
    }

    /// `first` moves M into a country W it inserted and saves, then turns M back into a fault: W's
    /// moods stay loaded, holding the fault, which names no destination of its own. `second`, which
    /// read M in X before that, deletes M and saves (its deletion wins the conflict); `first`
    /// merges the deletion: W no longer lists M.
    @Test func aLoadedListDropsAMergedDeletionThatIsAFaultHere() throws {
        let f = try MovedMoodFixture(mergePolicy: NSMergePolicy.mergeByPropertyObjectTrump)
        let a = f.first, b = f.second
        let bMood = try b.performAndWait { try b.existingObject(with: f.m) }
        _ = b.performAndWait { bMood.value(forKey: "country") }
        let w: NSManagedObject = try a.performAndWait {
            let w = country(9, in: a)
            let m = try a.existingObject(with: f.m)
            m.setValue(w, forKey: "country")
            try a.save()
            a.refresh(m, mergeChanges: false)
            #expect(m.isFault && moods(w) == [f.m])
            return w
        }
        let didSave = NotificationRecorder(.NSManagedObjectContextDidSave, object: b)
        try b.performAndWait {
            b.delete(bMood)
            try b.save()
        }
        a.mergeChanges(fromContextDidSave: try #require(didSave.last))
        try a.performAndWait { () throws in
            #expect(!a.registeredObjects.contains { $0.objectID == f.m })
            #expect(moods(w).isEmpty, "W no longer lists M, whose row is gone")
            #expect(a._checkInvariants().isEmpty, "\(a._checkInvariants())")
            #expect(!a.hasChanges)
        }
        let reader = try makeContext(model: f.stack.model, storeType: NSSQLiteStoreType, at: f.stack.url)
        try reader.performAndWait { () throws in
            #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Mood")) == 0)
        }
    }

    /// `second` deletes M (in X) and has not saved; `first` moves M to Z and saves; `second` merges
    /// that (when `zChanged`, Z has a change of `second`'s own, so the merge keeps it loaded and
    /// reloads its moods; otherwise Z turns into a fault and loads them on access). The store's Z
    /// lists M, but M, deleted here, is not part of it: `second`'s Z must not list M, before or
    /// after `second` saves the deletion.
    ///
    /// When `inNoCountry`, M is in no country when `second` deletes it (its nullify rule then
    /// changes nothing), so the merge's refresh gives the deleted M the store's country, Z, and Z's
    /// moods list it until the save; the save of the deletion must take it out of them.
    @Test(arguments: [false, true], [(false, false), (true, false), (false, true), (true, true)])
    func anObjectDeletedHereIsNotInAListLoadedAfterAMergeMovedIt(zChanged: Bool, how: (byChild: Bool, inNoCountry: Bool)) throws {
        let (byChild, inNoCountry) = how
        let f = try MovedMoodFixture(mergePolicy: NSMergePolicy.mergeByPropertyObjectTrump)
        let a = f.first, b = f.second
        if inNoCountry {
            try a.performAndWait {
                try a.existingObject(with: f.m).setValue(nil, forKey: "country")
                try a.save()
            }
        }
        let z: NSManagedObject = try b.performAndWait {
            let z = try b.existingObject(with: f.z)
            _ = moods(z)
            if zChanged { mood(5, z, in: b) }
            return z
        }
        if byChild {
            let d = f.stack.child(of: b)
            try d.performAndWait {
                d.delete(try d.existingObject(with: f.m))
                try d.save()
            }
        } else {
            try b.performAndWait {
                b.delete(try b.existingObject(with: f.m))
                b.processPendingChanges()
            }
        }
        b.performAndWait { b.refreshAllObjects() }
        let aSaved = try f.move(in: a, to: f.z)
        try b.performAndWait { () throws in
            b.mergeChanges(fromContextDidSave: aSaved)
            if !inNoCountry { #expect(!moods(z).contains(f.m), "M, deleted here, is not listed") }
            try b.save()
            #expect(!moods(z).contains(f.m), "M, deleted here, is not listed")
            #expect(b._checkInvariants().isEmpty, "\(b._checkInvariants())")
        }
        let reader = try makeContext(model: f.stack.model, storeType: NSSQLiteStoreType, at: f.stack.url)
        try reader.performAndWait { () throws in
            #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Mood")) == (zChanged ? 1 : 0))
        }
    }
}
