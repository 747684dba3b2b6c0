import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Delete rules (nullify, cascade, deny, no action) and relationship count validation, on every store.
@Suite("Delete rules and relationship validation")
struct DeleteRuleTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    private func object(_ entity: String, _ uid: Int64, in context: NSManagedObjectContext) throws -> NSManagedObject? {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "uid == %lld", uid)
        return try context.fetch(request).first
    }

    private func count(_ entity: String, in context: NSManagedObjectContext) throws -> Int {
        try context.count(for: NSFetchRequest<NSManagedObject>(entityName: entity))
    }

    @Test(arguments: storeTypes)
    func denyFailsTheSaveAndChangesNothing(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: context)
        let item = insertObject("Item", ["uid": 2], into: context)
        owner.mutableSetValue(forKey: "guarded").add(item)
        try context.save()

        context.delete(owner)
        #expect(owner.isDeleted)
        #expect(item.value(forKey: "guardian") as? NSManagedObject === owner, "deny leaves the relationship alone")
        #expect {
            try context.save()
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.code == .validationRelationshipDeniedDelete && e?.key == "guarded" && e?.objectID == owner.objectID
                && (error as NSError).code == NSValidationRelationshipDeniedDeleteError
        }
        #expect(context.deletedObjects == [owner], "a failed save leaves the context's changes in place")
        #expect(owner.isDeleted)
        let reader = store.newContext()
        #expect(try count("Owner", in: reader) == 1, "the store is unchanged")
        #expect(try object("Item", 2, in: reader)?.value(forKeyPath: "guardian.uid") as? Int64 == 1)

        // Emptying the relationship lets the delete through.
        owner.mutableSetValue(forKey: "guarded").remove(item)
        try context.save()
        #expect(try count("Owner", in: store.newContext()) == 0)
        let reader2 = store.newContext()
        #expect(try object("Item", 2, in: reader2)?.value(forKey: "guardian") == nil)
    }

    @Test(arguments: storeTypes)
    func denyIsCheckedOnFaultsAndUnloadedRelationships(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let writer = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: writer)
        owner.mutableSetValue(forKey: "guarded").add(insertObject("Item", ["uid": 2], into: writer))
        try writer.save()

        let context = store.newContext()
        let fault = context.object(with: owner.objectID)
        #expect(fault.isFault)
        context.delete(fault)
        #expect { try context.save() } throws: { ($0 as? OpenCoreDataError)?.code == .validationRelationshipDeniedDelete }
    }

    @Test(arguments: storeTypes)
    func validationErrorsAreGrouped(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: context)
        owner.mutableSetValue(forKey: "guarded").add(insertObject("Item", ["uid": 2], into: context))
        try context.save()
        context.delete(owner)
        _ = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)  // no uid
        #expect {
            try context.save()
        } throws: { error in
            let e = error as? OpenCoreDataError
            let details = ((error as NSError).userInfo[NSDetailedErrorsKey] as? [NSError])?.map(\.code).sorted()
            return e?.code == .validationMultipleErrors
                && details == [NSValidationMissingMandatoryPropertyError, NSValidationRelationshipDeniedDeleteError]
        }
    }

    @Test(arguments: storeTypes)
    func cascadeReachesFaultsAndUnloadedRelationships(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let writer = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: writer)
        let tag = insertObject("Tag", ["uid": 9], into: writer)
        owner.mutableSetValue(forKey: "tags").add(tag)
        for i in 0..<3 {
            let item = insertObject("Item", ["uid": Int64(10 + i), "owner": owner], into: writer)
            insertObject("Item", ["uid": Int64(20 + i), "parent": item], into: writer)
        }
        try writer.save()

        let context = store.newContext()
        let fault = context.object(with: owner.objectID)
        let tagHere = context.object(with: tag.objectID)
        context.delete(fault)
        #expect(context.deletedObjects == [fault], "the rules run when changes are processed, as on Apple")
        context.processPendingChanges()
        let deleted = context.deletedObjects
        #expect(deleted.count == 7, "the owner, its items and their subitems are deleted before the save")
        #expect(deleted.allSatisfy { $0.isDeleted })
        #expect((tagHere.value(forKey: "owners") as? Set<NSManagedObject>)?.isEmpty == true, "the inverse is nullified")
        #expect(context._checkInvariants().isEmpty)
        try context.save()

        let reader = store.newContext()
        #expect(try count("Owner", in: reader) == 0)
        #expect(try count("Item", in: reader) == 0)
        #expect((try object("Tag", 9, in: reader)?.value(forKey: "owners") as? Set<NSManagedObject>)?.isEmpty == true)
        _ = reader
    }

    @Test(arguments: storeTypes)
    func noActionLeavesTheInverseAlone(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: context)
        let tag = insertObject("Tag", ["uid": 2], into: context)
        owner.mutableSetValue(forKey: "tags").add(tag)
        try context.save()
        context.delete(tag)
        #expect((owner.value(forKey: "tags") as? Set<NSManagedObject>) == [tag])
    }

    @Test(arguments: storeTypes)
    func deletingANewObjectWithDenyNullifiesIt(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        let context = store.newContext()
        let owner = insertObject("Owner", ["uid": 1], into: context)
        let item = insertObject("Item", ["uid": 2, "guardian": owner], into: context)
        context.delete(owner)
        #expect(!context.insertedObjects.contains(owner) && !context.deletedObjects.contains(owner))
        context.processPendingChanges()
        #expect(item.value(forKey: "guardian") == nil)
        #expect(owner.managedObjectContext == nil, "a new object leaves the context once its rules ran")
        try context.save()
    }

    /// `Team.members`: required, 2...3 objects; `Team.reserves`: optional, 2...0 (no maximum).
    private static func teamModel() -> NSManagedObjectModel {
        let team = NSEntityDescription(name: "Team")
        let player = NSEntityDescription(name: "Player")
        let members = NSRelationshipDescription(name: "members", destination: player, toMany: true, isOptional: false)
        members.minCount = 2
        members.maxCount = 3
        let reserves = NSRelationshipDescription(name: "reserves", destination: player, toMany: true)
        reserves.minCount = 2
        team.properties = [members, reserves]
        let model = NSManagedObjectModel()
        model.entities = [team, player]
        return model
    }

    @Test(arguments: storeTypes)
    func relationshipCountLimits(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.teamModel())
        let context = store.newContext()
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
        let players = (0..<5).map { _ in NSEntityDescription.insertNewObject(forEntityName: "Player", into: context) }
        func saveError() -> Int? {
            do { try context.save(); return nil } catch { return (error as NSError).code }
        }
        #expect(saveError() == NSValidationRelationshipLacksMinimumCountError, "required and empty")
        team.mutableSetValue(forKey: "members").add(players[0])
        #expect(saveError() == NSValidationRelationshipLacksMinimumCountError)
        team.mutableSetValue(forKey: "members").addObjects(from: Array(players[1...3]))
        #expect(saveError() == NSValidationRelationshipExceedsMaximumCountError)
        team.mutableSetValue(forKey: "members").remove(players[3])
        #expect(saveError() == nil, "an optional relationship may be empty despite its minimum")
        team.mutableSetValue(forKey: "reserves").add(players[4])
        #expect(saveError() == NSValidationRelationshipLacksMinimumCountError)
        team.mutableSetValue(forKey: "reserves").add(players[3])
        #expect(saveError() == nil)
        let reader = store.newContext()  // objects hold their context weakly: keep it alive
        #expect(reader.object(with: team.objectID).mutableSetValue(forKey: "members").count == 3)
    }
}
