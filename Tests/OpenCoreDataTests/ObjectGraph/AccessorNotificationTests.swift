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
        let entity = NSEntityDescription(
            name: "Reading",
            properties: [
                NSAttributeDescription(name: "note", type: .stringAttributeType),
                NSAttributeDescription(name: "count", type: .integer64AttributeType),
            ])
        entity.managedObjectClassName = NSStringFromClass(NotifyingReading.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let store = try TestStore(NSInMemoryStoreType, model: model)
        let context = store.newContext()
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

final class NotifyingReading: NSManagedObject {
    @ManagedProperty var note: String?
    @ManagedProperty var count: Int64
    var accesses: [String] = []

    override func willAccessValue(forKey key: String?) {
        accesses.append("will \(key ?? "")")
        super.willAccessValue(forKey: key)
    }

    override func didAccessValue(forKey key: String?) {
        accesses.append("did \(key ?? "")")
        super.didAccessValue(forKey: key)
    }
}
