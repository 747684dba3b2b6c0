import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

@Suite("NSManagedObjectContext on the in-memory store")
struct ManagedObjectContextTests {
    let model = MoodsModel.make()

    @Test func insertSaveAndFetch() throws {
        let context = try makeContext(model: model)
        let country = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        country.setValue(Int16(616), forKey: "numericISO3166Code")
        country.setValue(Date(timeIntervalSinceReferenceDate: 100), forKey: "updatedAt")
        #expect(country.isInserted)
        #expect(country.objectID.isTemporaryID)
        #expect(context.hasChanges)
        #expect(context.insertedObjects == [country])

        try context.save()
        #expect(!country.isInserted)
        #expect(!country.objectID.isTemporaryID)
        #expect(!context.hasChanges)
        #expect(country.objectID.uriRepresentation().absoluteString.hasSuffix("/Country/p1"))

        let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Country"))
        #expect(fetched.count == 1)
        #expect(fetched.first === country, "uniquing: one instance per object ID per context")
        #expect(fetched.first?.value(forKey: "numericISO3166Code") as? Int16 == 616)
    }

    @Test func defaultValuesAndChangedValues() throws {
        let context = try makeContext(model: model)
        let country = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        #expect(country.value(forKey: "numericISO3166Code") as? Int16 == 0, "default value from the model")
        country.setValue(Date(), forKey: "updatedAt")
        try context.save()
        #expect(country.changedValues().isEmpty)
        country.setValue(440, forKey: "numericISO3166Code")  // an Int converts to the attribute's Int16
        #expect(country.isUpdated)
        #expect(country.changedValues().keys.sorted() == ["numericISO3166Code"])
        #expect(country.committedValues(forKeys: ["numericISO3166Code"])["numericISO3166Code"] as? Int16 == 0)
        #expect(context.updatedObjects == [country])
        context.rollback()
        #expect(country.value(forKey: "numericISO3166Code") as? Int16 == 0)
        #expect(!context.hasChanges)
    }

    @Test func missingRequiredValueFailsTheSaveAndKeepsChanges() throws {
        let context = try makeContext(model: model)
        let country = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        #expect {
            try context.save()
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.code == .validationMissingMandatoryProperty && e?.key == "updatedAt"
                && (error as NSError).code == NSValidationMissingMandatoryPropertyError
                && (error as NSError).domain == NSCocoaErrorDomain
        }
        #expect(country.isInserted, "a failed save leaves the context's changes in place")
        country.setValue(Date(), forKey: "updatedAt")
        try context.save()
    }

    @Test func relationshipsKeepInversesConsistent() throws {
        let context = try makeContext(model: model)
        let poland = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        let lithuania = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: context)
        mood.setValue(poland, forKey: "country")
        #expect((poland.value(forKey: "moods") as? Set<NSManagedObject>) == [mood])
        mood.setValue(lithuania, forKey: "country")
        #expect((poland.value(forKey: "moods") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect((lithuania.value(forKey: "moods") as? Set<NSManagedObject>) == [mood])
        poland.mutableSetValue(forKey: "moods").add(mood)
        #expect(mood.value(forKey: "country") as? NSManagedObject === poland)
        #expect((lithuania.value(forKey: "moods") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(mood.value(forKeyPath: "country.numericISO3166Code") as? Int16 == 0)
        #expect(context._checkInvariants().isEmpty)
    }

    @Test func relationshipsSurviveSaveAndReload() throws {
        let context = try makeContext(model: model)
        let poland = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        poland.setValue(Date(), forKey: "updatedAt")
        for _ in 0..<3 {
            let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: context)
            mood.setValue(Date(), forKey: "date")
            mood.setValue(poland, forKey: "country")
        }
        try context.save()
        let id = poland.objectID

        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        let again = other.object(with: id)
        #expect(again !== poland)
        #expect(again.isFault)
        #expect(again.hasFault(forRelationshipNamed: "moods"))
        let moods = again.value(forKey: "moods") as? Set<NSManagedObject>
        #expect(moods?.count == 3)
        #expect(moods?.allSatisfy { $0.value(forKey: "country") as? NSManagedObject === again } == true)
    }

    @Test func deleteCascadesAndNullifies() throws {
        let context = try makeContext(model: model)
        let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
        continent.setValue(Date(), forKey: "updatedAt")
        let country = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
        country.setValue(Date(), forKey: "updatedAt")
        country.setValue(continent, forKey: "continent")
        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: context)
        mood.setValue(Date(), forKey: "date")
        mood.setValue(country, forKey: "country")
        try context.save()

        context.delete(country)  // moods cascade, continent.countries is nullified
        #expect(country.isDeleted)
        #expect(!mood.isDeleted, "delete rules run when changes are processed")
        context.processPendingChanges()
        #expect(mood.isDeleted)
        #expect((continent.value(forKey: "countries") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(context._checkInvariants().isEmpty)
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Mood")) == 0)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Continent")) == 1)
        #expect(country.managedObjectContext == nil)
    }

    @Test func fetchReflectsPendingChanges() throws {
        let context = try makeContext(model: model)
        let saved = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
        saved.setValue(Date(), forKey: "updatedAt")
        try context.save()
        let unsaved = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
        unsaved.setValue(Date(), forKey: "updatedAt")
        let request = NSFetchRequest<NSManagedObject>(entityName: "Continent")
        #expect(try context.count(for: request) == 2)
        context.delete(saved)
        #expect(try context.fetch(request) == [unsaved])
        request.includesPendingChanges = false
        #expect(try context.fetch(request) == [saved])
    }

    @Test func existingObjectAndURIs() throws {
        let context = try makeContext(model: model)
        let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
        continent.setValue(Date(), forKey: "updatedAt")
        // Apple: a registered object is returned even while its ID is temporary.
        #expect(try context.existingObject(with: continent.objectID) === continent)
        try context.obtainPermanentIDs(for: [continent])
        #expect(!continent.objectID.isTemporaryID)
        try context.save()
        let uri = continent.objectID.uriRepresentation()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let id = try #require(coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(id == continent.objectID)
        #expect(id.hashValue == continent.objectID.hashValue)
        #expect(try context.existingObject(with: id) === continent)

        context.delete(continent)
        try context.save()
        let fresh = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        fresh.persistentStoreCoordinator = coordinator
        #expect(throws: OpenCoreDataError.self) { _ = try fresh.existingObject(with: id) }
    }

    @Test func unknownKeysDoNotCrash() throws {
        let context = try makeContext(model: model)
        let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
        #expect(continent.value(forKey: "nope") == nil)
        continent.setValue(1, forKey: "nope")
        #expect(throws: OpenCoreDataError.self) { try continent.checkedValue(forKey: "nope") }
        #expect(throws: OpenCoreDataError.self) { try continent.setCheckedValue("text", forKey: "numericISO3166Code") }
        #expect(throws: OpenCoreDataError.self) {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Nope"))
        }
        // A malformed format string does not crash at NSPredicate(format:); the fetch throws.
        let malformed = NSFetchRequest<NSManagedObject>(entityName: "Continent")
        malformed.predicate = NSPredicate(format: "numericISO3166Code == AND")
        #expect { try context.fetch(malformed) } throws: { ($0 as? OpenCoreDataError)?.code == .invalidFormat }
        // A key path the entity does not have fails the fetch, as Apple's "keypath not found in entity".
        let unknown = NSFetchRequest<NSManagedObject>(entityName: "Continent")
        unknown.predicate = NSPredicate(format: "nope == 1")
        #expect { try context.fetch(unknown) } throws: { ($0 as? OpenCoreDataError)?.code == .unknownKey }
    }

    @Test func performVariants() async throws {
        let context = try makeContext(model: model)
        let (count, id) = try await context.perform { () throws -> (Int, NSManagedObjectID) in
            let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
            continent.setValue(Date(), forKey: "updatedAt")
            try context.save()
            return (try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Continent")), continent.objectID)
        }
        #expect(count == 1)
        // Unchanged objects nobody references are released (retainsRegisteredObjects is false).
        #expect(context.performAndWait { context.registeredObjects.count } == 0)
        let held = context.performAndWait { context.object(with: id) }
        let nested = context.performAndWait { context.performAndWait { context.registeredObjects.count } }
        #expect(nested == 1)
        withExtendedLifetime(held) {}
        await withCheckedContinuation { continuation in
            context.perform {
                // NSFetchRequest.execute() finds the context whose block is running.
                #expect((try? NSFetchRequest<NSManagedObject>(entityName: "Continent").execute())?.count == 1)
                continuation.resume()
            }
        }
    }
}

@Suite("Faults whose context is gone")
struct OrphanedFaultTests {
    @Test func readingAFaultAfterItsContextIsGoneDoesNotCrash() throws {
        let model = MoodsModel.make()
        var fault: NSManagedObject?
        do {
            let context = try makeContext(model: model)
            let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
            continent.setValue(Date(), forKey: "updatedAt")
            try context.save()
            let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            other.persistentStoreCoordinator = context.persistentStoreCoordinator
            fault = other.object(with: continent.objectID)
            #expect(fault?.isFault == true)
        }
        // Apple raises "could not fulfill a fault"; we log and read empty values.
        #expect(fault?.value(forKey: "updatedAt") == nil)
        #expect(fault?.isFault == false)
    }
}

@Suite("Changed objects whose context is gone")
struct OrphanedChangedObjectTests {
    /// A context's changed objects are held by the link its objects share (`ContextLink.changed`);
    /// the context's `deinit` lets them go, and a change made after it is not recorded anywhere.
    @Test func changedObjectsAreReleasedWithTheirContext() throws {
        let model = MoodsModel.make()
        weak var released: NSManagedObject?
        var kept: NSManagedObject?
        do {
            let context = try makeContext(model: model)
            let objects = [1, 2].map { code in
                let continent = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
                continent.setValue(Int16(code), forKey: "numericISO3166Code")
                continent.setValue(Date(), forKey: "updatedAt")
                return continent
            }
            try context.save()
            for object in objects { object.setValue(Date(timeIntervalSinceReferenceDate: 1), forKey: "updatedAt") }
            #expect(context.updatedObjects.count == 2)
            released = objects[0]
            kept = objects[1]
        }
        // Only the context's change set held the first object (`objects` is gone with the block).
        #expect(released == nil, "no longer held once the context is gone")
        kept?.setValue(Date(timeIntervalSinceReferenceDate: 2), forKey: "updatedAt")  // not recorded: no context
        #expect(kept?.managedObjectContext == nil)
        weak let keptWeakly = kept
        kept = nil
        #expect(keptWeakly == nil, "a change after the context is gone does not keep the object")
    }
}
