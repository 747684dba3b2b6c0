import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Apple's SQLite store computes a derived attribute as it writes the row, after the context has
/// validated the object: a new object has no derived value to validate (only its default value),
/// so a required derived attribute without a default value fails with
/// `NSValidationMissingMandatoryPropertyError` (1570) at its first save, as on Apple.
@Suite("Derived attributes: validation")
struct DerivedAttributeValidationTests {
    static func model(optional: Bool, defaultValue: Any? = nil) -> NSManagedObjectModel {
        let searchName = NSDerivedAttributeDescription()
        searchName.name = "searchName"
        searchName.attributeType = .stringAttributeType
        searchName.derivationExpression = NSExpression(format: "canonical:(name)")
        searchName.isOptional = optional
        searchName.defaultValue = defaultValue
        let article = NSEntityDescription(name: "Article", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false), searchName,
        ])
        let model = NSManagedObjectModel()
        model.entities = [article]
        return model
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aRequiredDerivedAttributeFailsAtInsert(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model(optional: false))
        let context = store.newContext()
        context.performAndWait {
            insertObject("Article", ["name": "Café"], into: context)
            do {
                try context.save()
                Issue.record("the save succeeded")
            } catch {
                let nsError = error as NSError
                #expect(nsError.domain == NSCocoaErrorDomain && nsError.code == NSValidationMissingMandatoryPropertyError, "\(error)")
                #expect(nsError.userInfo[NSValidationKeyErrorKey] as? String == "searchName")
            }
            #expect(context.hasChanges, "nothing was saved")
        }
        let reader = store.newContext()
        #expect(try reader.performAndWait { try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Article")) } == 0)
    }

    /// Optional, or with a default value (which a new object holds before the store computes the
    /// value): the save goes through and the value is derived.
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func anOptionalOrDefaultedDerivedAttributeSaves(storeType: String) throws {
        for model in [Self.model(optional: true), Self.model(optional: false, defaultValue: "")] {
            let store = try TestStore(storeType, model: model)
            let context = store.newContext()
            try context.performAndWait {
                let article = insertObject("Article", ["name": "Café"], into: context)
                try context.save()
                #expect(article.value(forKey: "searchName") as? String == "cafe")
            }
        }
    }
}
