import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// The Swift runtime internals the runtime uses where they are known to hold, and the plain-Swift
/// versions `OCD_PORTABLE_RUNTIME` selects instead (docs/runtime-internals.md): both give the same
/// answers here, for types of the standard library, of Foundation, of this test module (another
/// module than the runtime's) and generic ones. Run in both configurations (docs/runtime-internals.md).
@Suite("Runtime internals and their portable versions")
struct RuntimeInternalsTests {
    struct Box<Value> { var value: Value }
    final class Node {}

    /// A class of this module whose `deinit` runs its `probe` (before `NSManagedObject`'s own
    /// `deinit`, which takes the object out of its context's registry).
    final class Probe: NSManagedObject {
        var probe: (() -> Void)?
        deinit { probe?() }
    }

    final class Notifying: NSManagedObject {
        override func willAccessValue(forKey key: String?) { super.willAccessValue(forKey: key) }
    }

    final class Saving: NSManagedObject {
        override func willSave() {}
    }

    /// What a `Probe`'s `deinit` saw.
    final class Sighting {
        var registered: NSManagedObject?
        var registeredCount = -1
        var lookedUp: ObjectIdentifier?
    }

    private func model(_ cls: NSManagedObject.Type) -> NSManagedObjectModel {
        let entity = NSEntityDescription(name: "Dial", properties: [
            NSAttributeDescription(name: "level", type: .integer16AttributeType)
        ])
        entity.managedObjectClassName = String(reflecting: cls)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    /// An object whose last reference is gone is still in its context's registry until
    /// `NSManagedObject`'s `deinit` takes it out. Looked up meanwhile, it must not be handed out
    /// (`swift_tryRetain` fails for it; the portable version's weak reference is `nil`): a lookup
    /// by its ID finds nothing, `registeredObjects` leaves it out, and `object(with:)` makes a new
    /// instance. An unconditional retain there would hand out an object about to be freed.
    @Test func aDeinitializingObjectIsNeverHandedOut() throws {
        let store = try TestStore(NSInMemoryStoreType, model: model(Probe.self))
        let context = store.newContext()
        var probe: Probe? = Probe(context: context)
        try context.save()
        let id = try #require(probe?.objectID)
        let original = ObjectIdentifier(try #require(probe))
        let sighting = Sighting()
        probe?.probe = {
            sighting.registered = context.registeredObject(for: id)
            sighting.registeredCount = context.registeredObjects.count
            sighting.lookedUp = ObjectIdentifier(context.object(with: id))
        }
        probe = nil
        #expect(sighting.registered == nil)
        #expect(sighting.registeredCount == 0)
        #expect(sighting.lookedUp != nil && sighting.lookedUp != original)
        #expect(context.registeredObject(for: id) == nil, "the new fault was released; nothing is left")
        #expect(context.registry.count == 0)
        withExtendedLifetime(store) {}
    }

    /// `exactly(_:as:)` answers only for a value whose dynamic type is exactly `T`, one of the types
    /// an `Any` holds inline; anything else (a bridged number, an optional, a generic wrapper, a type
    /// stored out of line) has no answer, for the caller's general cast.
    @Test func exactlyAnswersOnlyForItsOwnInlineType() {
        #expect(ValueConversion.exactly(Int64(5) as Any, as: Int64.self) == 5)
        #expect(ValueConversion.exactly(Int16(-2) as Any, as: Int16.self) == -2)
        #expect(ValueConversion.exactly(2.5 as Any, as: Double.self) == 2.5)
        #expect(ValueConversion.exactly(true as Any, as: Bool.self) == true)
        #expect(ValueConversion.exactly("name" as Any, as: String.self) == "name")
        let long = String(repeating: "long ", count: 20)  // not a small string: a heap object
        #expect(ValueConversion.exactly(long as Any, as: String.self) == long)
        let date = Date(timeIntervalSinceReferenceDate: 12)
        #expect(ValueConversion.exactly(date as Any, as: Date.self) == date)

        #expect(ValueConversion.exactly(5 as Any, as: Int64.self) == nil, "an Int is not an Int64")
        #expect(ValueConversion.exactly(NSNumber(value: 5) as Any, as: Int64.self) == nil, "no bridging")
        #expect(ValueConversion.exactly(Int64?.some(5) as Any, as: Int64.self) == nil, "a boxed optional")
        #expect(ValueConversion.exactly(Box(value: Int64(5)) as Any, as: Int64.self) == nil)
        #expect(ValueConversion.exactly(NSString(string: "name") as Any, as: String.self) == nil)
        let uuid = UUID()
        #expect(ValueConversion.exactly(uuid as Any, as: UUID.self) == nil, "UUID is not one of the inline types")

        let values: [Any?] = [Int64(7), nil, "seven", Box(value: 7)]
        #expect(ValueConversion.exactly(in: values, at: 0, as: Int64.self) == 7)
        #expect(ValueConversion.exactly(in: values, at: 1, as: Int64.self) == nil)
        #expect(ValueConversion.exactly(in: values, at: 2, as: String.self) == "seven")
        #expect(ValueConversion.exactly(in: values, at: 3, as: Int.self) == nil)
        #expect(ValueConversion.exactly(in: values, at: 4, as: Int.self) == nil, "out of range")
        values.withUnsafeBufferPointer { buffer in
            #expect(ValueConversion.isNil(at: buffer.baseAddress! + 1))
            #expect(!ValueConversion.isNil(at: buffer.baseAddress!))
            #expect(ValueConversion.holds(at: buffer.baseAddress!, valueOfType: Int64.self))
            #expect(!ValueConversion.holds(at: buffer.baseAddress!, valueOfType: Int.self))
            #expect(!ValueConversion.holds(at: buffer.baseAddress! + 1, valueOfType: Int64.self))
            #expect(ValueConversion.holds(at: buffer.baseAddress! + 3, valueOfType: Box<Int>.self))
            #expect(!ValueConversion.holds(at: buffer.baseAddress! + 3, valueOfType: Box<Int64>.self))
        }
        let any: Any = Int32(3)
        withUnsafePointer(to: any) { #expect(ValueConversion.exactly(at: $0, as: Int32.self) == 3) }
    }

    /// `isOptionalType(_:)` for optionals of every kind of type, and for types that are not optionals.
    @Test func optionalTypesAreRecognized() {
        #expect(ValueConversion.isOptionalType(Int?.self))
        #expect(ValueConversion.isOptionalType(Int??.self))
        #expect(ValueConversion.isOptionalType(Any?.self))
        #expect(ValueConversion.isOptionalType(String?.self))
        #expect(ValueConversion.isOptionalType(Box<Int>?.self))
        #expect(ValueConversion.isOptionalType(NSManagedObject?.self))
        #expect(ValueConversion.isOptionalType(Node?.self))
        #expect(ValueConversion.isOptionalType(Date?.self))
        #expect(!ValueConversion.isOptionalType(Int.self))
        #expect(!ValueConversion.isOptionalType(Box<Int?>.self))
        #expect(!ValueConversion.isOptionalType([Int?].self))
        #expect(!ValueConversion.isOptionalType(Node.self))
        #expect(!ValueConversion.isOptionalType(NSNumber.self))
        #expect(!ValueConversion.isOptionalType(Any.self))
        #expect(ValueConversion.unwrap(Int?.some(4) as Any) as? Int == 4)
        #expect(ValueConversion.unwrap(Int?.none as Any) == nil)
    }

    /// References read from their containers: managed objects of a class of this module, IDs, other
    /// class instances; value types and `nil` give no reference.
    @Test func referencesAreReadFromTheirContainers() throws {
        let store = try TestStore(NSInMemoryStoreType, model: model(Probe.self))
        let context = store.newContext()
        let probe = Probe(context: context)
        let node = Node()
        #expect(ValueConversion.managedObject(probe as Any) === probe)
        #expect(ValueConversion.managedObject(in: probe as Any?) === probe)
        #expect(ValueConversion.managedObject(in: nil) == nil)
        #expect(ValueConversion.managedObject(in: node as Any?) == nil)
        #expect(ValueConversion.managedObject(in: "probe" as Any?) == nil)
        #expect(ValueConversion.boxedManagedObject(probe as NSManagedObject as Any) === probe)
        #expect(ValueConversion.boxedReference(in: node as Any?, as: Node.self) === node)
        #expect(ValueConversion.boxedReference(in: Int64(1) as Any?, as: Node.self) == nil)
        #expect(ValueConversion.classInstance(in: node as Any?) === node)
        #expect(ValueConversion.classInstance(in: probe.objectID as Any?) === probe.objectID)
        #expect(ValueConversion.classInstance(in: Int64(1) as Any?) == nil)
        #expect(ValueConversion.classInstance(in: Box(value: node) as Any?) == nil)
        #expect(ValueConversion.classInstance(in: nil) == nil)
        // `NSManagedObjectID`'s `isEqual(_:)` reads the other ID where it lies.
        #expect(probe.objectID.isEqual(probe.objectID as Any?))
        #expect(!probe.objectID.isEqual("an ID" as Any?))
        withExtendedLifetime(store) {}
    }

    /// The hooks a class keeps (found by the runtime's vtable lookup), for classes of this module;
    /// the portable version takes every class to override every hook, so each is called.
    @Test func keptMethodsFollowTheClassesOverrides() throws {
        func object(_ cls: NSManagedObject.Type) -> NSManagedObject {
            cls.init(entity: model(cls).entities[0], insertInto: nil)
        }
        #if OCD_PORTABLE_RUNTIME
        #expect(object(Probe.self)._keptMethods == [])
        #expect(object(Notifying.self)._keptMethods == [])
        #expect(NSManagedObject._overridesValidateValue(NSManagedObject.self))
        #else
        #expect(object(Probe.self)._keptMethods == [.access, .change, .validation])
        #expect(object(Notifying.self)._keptMethods == [.change, .validation])
        #expect(object(Saving.self)._keptMethods == [.access, .change, .validation])
        #expect(!NSManagedObject._overridesValidateValue(NSManagedObject.self))
        #endif
    }
}
