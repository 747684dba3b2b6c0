import Foundation
import OpenCoreData

// Code that uses the library's `Managed` unqualified: this module declares no `Managed` of its own
// (the test target does, as the seeds do, and still compiles).

/// A class conforming to the library's `Managed`.
public final class Shelf: NSManagedObject, Managed {
    @ManagedProperty public var code: Int16
    @ManagedProperty public var label: String?

    public static var defaultSortDescriptors: [NSSortDescriptor] { [NSSortDescriptor(key: "code", ascending: true)] }

    /// `Shelf` with `code`, found or created through the library's helpers.
    public static func findOrCreate(code: Int16, in context: NSManagedObjectContext) -> Shelf {
        findOrCreate(in: context, matching: NSPredicate(format: "code == %d", Int(code))) { shelf in
            shelf.code = code
            shelf.label = "shelf \(code)"
        }
    }

    /// A model with one entity, `Shelf`, of this class.
    public static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription(name: "Shelf", properties: [
            NSAttributeDescription(name: "code", type: .integer16AttributeType, isOptional: false),
            NSAttributeDescription(name: "label", type: .stringAttributeType),
        ])
        entity.managedObjectClassName = NSStringFromClass(Shelf.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}
