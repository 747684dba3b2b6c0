import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Only this file uses this class.
final class EntityReferenceMood: NSManagedObject {}

@Suite("Back references")
struct BackReferenceTests {
    /// A property's entity, a relationship's destination, an index's entity and a subentity's
    /// superentity read the entity while it lives and `nil` once it is gone, as the weak references
    /// they were did. (Apple declares a property's `entity` `unowned(unsafe)`, which would dangle;
    /// what Apple's other back references read after their entity is freed is not documented.)
    /// An entity never put in a model, and an object made of it outside any context, are freed once
    /// both are dropped (the entity and its layout used to hold each other for good); while the
    /// object lives it keeps its entity.
    @Test func anEntityOutsideAModelIsFreedWithItsObjects() {
        weak var weakEntity: NSEntityDescription?
        weak var weakObject: NSManagedObject?
        do {
            let entity = NSEntityDescription(name: "Loose", properties: [NSAttributeDescription(name: "n", type: .integer64AttributeType)])
            weakEntity = entity
            var object: NSManagedObject? = NSManagedObject(entity: entity, insertInto: nil)
            object?.setValue(Int64(7), forKey: "n")
            weakObject = object
            #expect(object?.value(forKey: "n") as? Int64 == 7)
            withExtendedLifetime(entity) {}
            let second = NSManagedObject(entity: entity, insertInto: nil)  // the same layout while the first lives
            #expect(second.entity === object?.entity)
            object = nil
        }
        #expect(weakObject == nil)
        #expect(weakEntity == nil)
    }

    @Test func backReferencesReadNilOnceTheirEntityIsGone() {
        let attribute = NSAttributeDescription(name: "name", type: .stringAttributeType)
        let index = NSFetchIndexDescription(
            name: "byName", elements: [NSFetchIndexElementDescription(property: attribute, collationType: .binary)])
        let child = NSEntityDescription(name: "Child")
        let other = NSEntityDescription(name: "Other")
        let relationship: NSRelationshipDescription
        weak var gone: NSEntityDescription?
        do {
            let parent = NSEntityDescription(name: "Parent", properties: [attribute])
            parent.subentities = [child]
            parent.indexes = [index]
            relationship = NSRelationshipDescription(name: "parent", destination: parent, toMany: false)
            other.properties = [relationship]
            #expect(attribute.entity === parent)
            #expect(child.superentity === parent)
            #expect(index.entity === parent)
            #expect(relationship.destinationEntity === parent)
            #expect(child.properties.map(\.name) == ["name"], "inherited through the superentity")
            gone = parent
        }
        #expect(gone == nil, "nothing the entity pointed to kept it alive")
        #expect(attribute.entity == nil)
        #expect(child.superentity == nil)
        #expect(child.properties.isEmpty)
        #expect(index.entity == nil)
        #expect(relationship.destinationEntity == nil)
        #expect(relationship.entity === other, "the relationship's own entity is still there")
    }

    /// Nothing in a model in use holds a weak reference to an entity, so retaining one takes the
    /// runtime's fast path. A weakly referenced object gets a side table, and every retain and
    /// release of it then takes the slow one: each fault made retains and releases its entity
    /// (`init(entity:insertInto:)` takes it owned). This reads the Swift runtime's 64-bit
    /// reference-count word, whose two top bits are both set when it points to a side table (an
    /// ABI detail: the check is skipped on other word sizes).
    @Test func entitiesOfAModelInUseHaveNoSideTable() throws {
        let model = MoodsModel.make(moodClass: NSStringFromClass(EntityReferenceMood.self))
        let index = NSFetchIndexDescription(
            name: "byDate",
            elements: [NSFetchIndexElementDescription(
                property: model.entitiesByName["Mood"]!.propertiesByName["date"]!, collationType: .binary)])
        model.entitiesByName["Mood"]!.indexes = [index]
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let context = try makeContext(
            model: model, storeType: NSSQLiteStoreType, at: directory.url.appendingPathComponent("moods.sqlite"))
        try context.performAndWait {
            let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: context)
            mood.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "date")
            try context.save()
            context.reset()
            let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Mood"))
            #expect(fetched.first is EntityReferenceMood)
            #expect(EntityReferenceMood.entity() === model.entitiesByName["Mood"])
        }
        guard MemoryLayout<Int>.size == 8 else { return }
        func hasSideTable(_ object: AnyObject) -> Bool {
            let word = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()).load(fromByteOffset: 8, as: UInt64.self)
            return word >> 62 == 0b11
        }
        for entity in model.entities { #expect(!hasSideTable(entity), "\(entity.name ?? "?") has a side table") }
        // Every fetch and insert retains the model and the coordinator too.
        #expect(!hasSideTable(model), "the model has a side table")
        let coordinator = try #require(context.persistentStoreCoordinator)
        #expect(!hasSideTable(coordinator), "the coordinator has a side table")
    }

    /// An entity's model and a store's coordinator read `nil` once they are gone, as the weak
    /// references they were did.
    @Test func modelAndCoordinatorBackReferencesReadNilOnceTheyAreGone() throws {
        let entity: NSEntityDescription
        let store: NSPersistentStore
        weak var goneModel: NSManagedObjectModel?
        weak var goneCoordinator: NSPersistentStoreCoordinator?
        do {
            let model = MoodsModel.make()
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
            entity = try #require(model.entitiesByName["Mood"])
            #expect(entity.managedObjectModel === model)
            #expect(store.persistentStoreCoordinator === coordinator)
            goneModel = model
            goneCoordinator = coordinator
        }
        #expect(goneCoordinator == nil)
        #expect(goneModel == nil)
        #expect(store.persistentStoreCoordinator == nil)
        #expect(entity.managedObjectModel == nil)
    }

    /// A model read from a model file is freed when the program drops it, with its entities and
    /// properties: the readers leave no reference cycle behind (LeakSanitizer reported models read
    /// from Xcode files as leaked). Each format the readers take is checked.
    @Test(arguments: [ModelFixtures.momcom, ModelFixtures.sampleModel, ModelFixtures.employeeDirectory, ModelFixtures.momXML])
    func aModelReadFromAFileIsFreedWhenDropped(path: String) throws {
        weak var goneModel: NSManagedObjectModel?
        weak var goneEntity: NSEntityDescription?
        weak var goneProperty: NSPropertyDescription?
        do {
            let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(path))
            let entity = try #require(model.entities.first { !$0.relationshipsByName.isEmpty } ?? model.entities.first)
            goneModel = model
            goneEntity = entity
            goneProperty = entity.properties.first
            #expect(goneProperty != nil)
            for case let fetched as NSFetchedPropertyDescription in model.entities.flatMap(\.properties) {
                #expect(fetched.fetchRequest?.entity != nil, "a fetched property's request still reads its entity")
            }
        }
        #expect(goneModel == nil)
        #expect(goneEntity == nil)
        #expect(goneProperty == nil)
    }
}
