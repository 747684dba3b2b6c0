import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Apple: a managed property's accessor brackets its read with `willAccessValue(forKey:)` and
/// `didAccessValue(forKey:)` (the pattern of Core Data's "Managed Object Accessor Methods"). The
/// typed accessors read a value of the attribute's own type, a nil value, and a value of another
/// type (set as a primitive value, converted on the way out) by three different paths; each must
/// notify once before and once after.
@Suite("Accessor notifications")
struct AccessorNotificationTests {
    @Test func everyKindOfReadIsBracketedOnce() throws {
        let (context, _, store) = try readingContext()
        defer { withExtendedLifetime(store) {} }
        context.performAndWait {
            let reading = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: context) as! NotifyingReading

            reading.accesses = []
            #expect(reading.note == nil)
            #expect(reading.accesses == ["will note", "did note"], "a nil value")

            reading.note = "kept"
            reading.accesses = []
            #expect(reading.note == "kept")
            #expect(reading.accesses == ["will note", "did note"], "a value of the attribute's type")

            reading.setPrimitiveValue(5, forKey: "count")  // an `Int`, not the attribute's `Int64`
            reading.accesses = []
            #expect(reading.count == 5)
            #expect(reading.accesses == ["will count", "did count"], "a value of another type, converted")
        }
    }
}

/// The accessors skip the notification calls for a class that keeps `NSManagedObject`'s (which
/// fire a fault and otherwise do nothing): an override, the class's own or inherited, must still be
/// called, and what was found for one class must not be used for another class of the same entity.
@Suite("Accessor notifications kept or overridden")
struct KeptNotificationTests {
    @Test func everyKindOfWriteIsBracketedOnce() throws {
        let (context, _, store) = try readingContext()
        context.performAndWait {
            let inserted = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: context)
            let reading = inserted as! NotifyingReading
            reading.changes = []
            reading.note = "kept"
            #expect(reading.changes == ["will note", "did note"], "a typed write")
            reading.changes = []
            reading.size = 2  // `Int` has no typed accessor
            #expect(reading.changes == ["will size", "did size"], "a write through the generic accessor")
        }
        withExtendedLifetime(store) {}
    }

    @Test func anInheritedOverrideIsCalledForReadsAndWrites() throws {
        let (context, entity, store) = try readingContext()
        context.performAndWait {
            let reading = InheritingReading(entity: entity, insertInto: context)
            reading.accesses = []
            reading.count = 3
            #expect(reading.count == 3)
            #expect(reading.size == 0)
            #expect(reading.accesses == ["will count", "did count", "will size", "did size"])
            #expect(reading.changes == ["will count", "did count"])
        }
        withExtendedLifetime(store) {}
    }

    @Test func classesOfOneEntityAreToldApart() throws {
        let (context, entity, store) = try readingContext()
        context.performAndWait {
            let notifying = NotifyingReading(entity: entity, insertInto: context)
            let quiet = QuietReading(entity: entity, insertInto: context)
            for round in 1...2 {
                notifying.accesses = []
                notifying.changes = []
                quiet.note = "quiet \(round)"
                #expect(quiet.note == "quiet \(round)")
                notifying.note = "notifying \(round)"
                #expect(notifying.note == "notifying \(round)")
                #expect(notifying.accesses == ["will note", "did note"], "round \(round)")
                #expect(notifying.changes == ["will note", "did note"], "round \(round)")
            }
        }
        withExtendedLifetime(store) {}
    }

    @Test func aKeptFaultStillFiresOnRead() throws {
        let (context, entity, store) = try readingContext()
        try context.performAndWait {
            let quiet = QuietReading(entity: entity, insertInto: context)
            quiet.note = "saved"
            try context.save()
            context.refresh(quiet, mergeChanges: false)
            #expect(quiet.isFault)
            #expect(quiet.note == "saved")
            #expect(!quiet.isFault)
        }
        withExtendedLifetime(store) {}
    }
}

/// A context on an in-memory store of one entity, `Reading` (`note`, `count`, `size`), whose class is
/// `NotifyingReading`.
private func readingContext() throws -> (NSManagedObjectContext, NSEntityDescription, TestStore) {
    let entity = NSEntityDescription(
        name: "Reading",
        properties: [
            NSAttributeDescription(name: "note", type: .stringAttributeType),
            NSAttributeDescription(name: "count", type: .integer64AttributeType),
            NSAttributeDescription(name: "size", type: .integer64AttributeType),
        ])
    entity.managedObjectClassName = NSStringFromClass(NotifyingReading.self)
    let model = NSManagedObjectModel()
    model.entities = [entity]
    let store = try TestStore(NSInMemoryStoreType, model: model)
    return (store.newContext(), entity, store)
}

/// Keeps every notification method of `NSManagedObject`.
final class QuietReading: NSManagedObject {
    @ManagedProperty var note: String?
    @ManagedProperty var count: Int64
    @ManagedProperty var size: Int
}

/// Overrides none itself: inherits `NotifyingReading`'s.
final class InheritingReading: NotifyingReading {}

class NotifyingReading: NSManagedObject {
    @ManagedProperty var note: String?
    @ManagedProperty var count: Int64
    @ManagedProperty var size: Int
    var accesses: [String] = []
    var changes: [String] = []

    override func willAccessValue(forKey key: String?) {
        accesses.append("will \(key ?? "")")
        super.willAccessValue(forKey: key)
    }

    override func didAccessValue(forKey key: String?) {
        accesses.append("did \(key ?? "")")
        super.didAccessValue(forKey: key)
    }

    override func willChangeValue(forKey key: String) {
        changes.append("will \(key)")
        super.willChangeValue(forKey: key)
    }

    override func didChangeValue(forKey key: String) {
        changes.append("did \(key)")
        super.didChangeValue(forKey: key)
    }
}
