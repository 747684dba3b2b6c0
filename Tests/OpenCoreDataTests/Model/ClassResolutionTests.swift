import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Only this file uses this class, so nothing registers it before the test runs.
final class BareNamedCity: NSManagedObject {
    @ManagedProperty var name: String?
}

@Suite("Class resolution without an Objective-C runtime")
struct ClassResolutionTests {
    @Test func bareClassNameFromAnXcodeModelResolvesThroughTheTargetsModule() throws {
        // Xcode writes representedClassName="BareNamedCity" for "Current Product Module"; Apple's
        // model compiler adds the module. Here the test target ships resources, so its module is a
        // candidate and the class is found on first use, by insertNewObject(forEntityName:into:).
        let city = NSEntityDescription(name: "City", managedObjectClassName: "BareNamedCity",
                                       properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [city]
        let context = try makeContext(model: model)
        let object = NSEntityDescription.insertNewObject(forEntityName: "City", into: context)
        let typed = try #require(object as? BareNamedCity)
        typed.name = "Vilnius"
        #expect(object.value(forKey: "name") as? String == "Vilnius")
    }

    @Test func qualifiedClassNameResolvesAtOnce() throws {
        let entity = NSEntityDescription(name: "City2", managedObjectClassName: NSStringFromClass(BareNamedCity.self))
        #expect(NSStringFromClass(BareNamedCity.self) == "OpenCoreDataTests.BareNamedCity")
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let context = try makeContext(model: model)
        #expect(NSEntityDescription.insertNewObject(forEntityName: "City2", into: context) is BareNamedCity)
    }

    /// Names of classes this program does not have, as models from other apps hold them: each entity
    /// is represented by `NSManagedObject` (Apple logs that the class was not found and does the same).
    /// A release build once crashed here, casting the lookup's nil metatype; CI runs this in release.
    @Test(arguments: ["Shop.Item", "Item", "NoSuchModule.NoSuchClass", "Foundation.NoSuchClass", "Swift.Int",
                      "$s4main4ItemC", "Item<Int>", "Shop..Item", ".Item", "9Item", "Shop.Item ", "🍏"])
    func unknownClassNamesGivePlainManagedObjects(_ name: String) throws {
        let entity = NSEntityDescription(name: "Item", managedObjectClassName: name,
                                         properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let context = try makeContext(model: model)
        let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
        #expect(type(of: object) == NSManagedObject.self)
        object.setValue("x", forKey: "name")
        try context.save()
    }
}
