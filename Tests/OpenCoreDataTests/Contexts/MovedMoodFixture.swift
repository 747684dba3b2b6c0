import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Countries X, Y and Z and mood M in X, saved; `first` (the stack's root) and `second` are sibling
/// contexts on one coordinator: merges and conflicts around a moved to-one.
struct MovedMoodFixture {
    let stack: NestedStack
    let first: NSManagedObjectContext
    let second: NSManagedObjectContext
    let x: NSManagedObjectID, y: NSManagedObjectID, z: NSManagedObjectID, m: NSManagedObjectID

    init(mergePolicy: NSMergePolicy? = nil) throws {
        stack = try NestedStack()
        let root = stack.root
        (x, y, z, m) = try root.performAndWait {
            let x = country(1, in: root), y = country(2, in: root), z = country(3, in: root)
            let m = mood(0, x, in: root)
            try root.save()
            return (x.objectID, y.objectID, z.objectID, m.objectID)
        }
        first = root
        second = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        second.persistentStoreCoordinator = root.persistentStoreCoordinator
        if let mergePolicy { for context in [first, second] { context.mergePolicy = mergePolicy } }
    }

    /// `context` moves M to `destination` and saves; returns the did-save notification.
    func move(in context: NSManagedObjectContext, to destination: NSManagedObjectID) throws -> Notification {
        let didSave = NotificationRecorder(.NSManagedObjectContextDidSave, object: context)
        try context.performAndWait {
            try context.existingObject(with: m).setValue(try context.existingObject(with: destination), forKey: "country")
            try context.save()
        }
        return try #require(didSave.last)
    }
}

/// The IDs of a country's moods.
func moods(_ object: NSManagedObject) -> Set<NSManagedObjectID> {
    Set((object.value(forKey: "moods") as? Set<NSManagedObject> ?? []).map(\.objectID))
}
