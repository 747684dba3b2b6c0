import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Uniqueness constraints and the merge policies that resolve their conflicts (seed 002,
/// "Constraints"), run against every store.
@Suite("Constraint conflicts")
struct ConstraintConflictTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]
    static let resolvingPolicies: [NSMergePolicyType] = [
        .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
        .overwriteMergePolicyType, .rollbackMergePolicyType,
    ]

    private func fetch(_ entity: String, _ context: NSManagedObjectContext, sortedBy key: String? = nil) throws
        -> [NSManagedObject]
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.sortDescriptors = key.map { [NSSortDescriptor(key: $0, ascending: true)] }
        return try context.fetch(request)
    }

    /// What the store holds, read through a fresh context, plus (SQLite) the bytes of the store
    /// file and its write-ahead log: equal before and after a failed save means nothing was written.
    private func storeState(_ store: TestStore) throws -> [String] {
        let context = store.newContext()
        var state: [String] = []
        for entity in ["Category", "Article", "Person", "User", "Animal", "Device"] {
            for object in try fetch(entity, context) {
                let values = object.entity.attributesByName.keys.sorted().map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }
                state.append("\(object.entity.name!) \(object.objectID.uriRepresentation().lastPathComponent) \(values)")
            }
        }
        state.sort()
        if let url = store.url {
            for file in [url, URL(fileURLWithPath: url.path + "-wal")] {
                let data = (try? Data(contentsOf: file)) ?? Data()
                state.append("\(file.lastPathComponent): \(data.count) bytes, hash \(data.hashValue)")
            }
        }
        return state
    }

    private func conflicts(_ error: OpenCoreDataError) -> [NSConstraintConflict] {
        ((error as NSError).userInfo["conflictList"] as? [Any] ?? []).compactMap { $0 as? NSConstraintConflict }
    }

    // MARK: SQLite schema

    /// The SQLite store backs each constraint with a unique index named as Core Data names it
    /// (FORMATS.md §1.8: `Z_<Entity>_UNIQUE_<prop>[_<prop>…]`, binary collation, ascending); a
    /// parent's constraint is one index on the table its subentities share.
    @Test func sqliteUniqueIndexesAreNamedAsCoreDataNamesThem() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.constraints())
        let raw = try RawDatabase(try #require(store.url))
        let indexes = try raw.rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'Z\\_%UNIQUE%' ESCAPE '\\' ORDER BY name")
            .map { "\($0[0] as? String ?? "") | \($0[1] as? String ?? "")" }
        #expect(indexes == [
            "Z_Animal_UNIQUE_tag | CREATE UNIQUE INDEX Z_Animal_UNIQUE_tag ON ZANIMAL (ZTAG COLLATE BINARY ASC)",
            "Z_Category_UNIQUE_name | CREATE UNIQUE INDEX Z_Category_UNIQUE_name ON ZCATEGORY (ZNAME COLLATE BINARY ASC)",
            "Z_Device_UNIQUE_identifier | CREATE UNIQUE INDEX Z_Device_UNIQUE_identifier ON ZDEVICE (ZIDENTIFIER COLLATE BINARY ASC)",
            "Z_Device_UNIQUE_serial | CREATE UNIQUE INDEX Z_Device_UNIQUE_serial ON ZDEVICE (ZSERIAL COLLATE BINARY ASC)",
            "Z_Person_UNIQUE_firstName_lastName | CREATE UNIQUE INDEX Z_Person_UNIQUE_firstName_lastName ON ZPERSON (ZFIRSTNAME COLLATE BINARY ASC, ZLASTNAME COLLATE BINARY ASC)",
            "Z_User_UNIQUE_email | CREATE UNIQUE INDEX Z_User_UNIQUE_email ON ZUSER (ZEMAIL COLLATE BINARY ASC)",
            "Z_User_UNIQUE_username | CREATE UNIQUE INDEX Z_User_UNIQUE_username ON ZUSER (ZUSERNAME COLLATE BINARY ASC)",
        ])
    }

    // MARK: Seed 002

    /// Seed 002, "How Constraints Work": with `NSMergeByPropertyStoreTrumpMergePolicy` a second
    /// "Swift" category "keeps first, discards second". The stored object survives, the duplicate
    /// leaves the context, and the article attached to the duplicate now points at the stored one.
    @Test(arguments: storeTypes)
    func seed002DuplicateCategoryWithStoreTrumpKeepsTheStoredObject(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        context.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy

        // First save
        let category1 = insertObject("Category", ["name": "Swift", "detail": "stored"], into: context)
        try context.save()

        // Duplicate attempt
        let category2 = insertObject("Category", ["name": "Swift", "detail": "duplicate", "rank": 3], into: context)
        let article = insertObject("Article", ["title": "Core Data Best Practices", "category": category2], into: context)
        try context.save()  // With correct merge policy: keeps first, discards second

        #expect(category2.managedObjectContext == nil)
        #expect(category2.isDeleted)
        #expect(article.value(forKey: "category") as? NSManagedObject === category1)
        #expect((category1.value(forKey: "articles") as? Set<NSManagedObject>)?.contains(article) == true)
        #expect(category1.value(forKey: "detail") as? String == "stored")  // the store's value trumps
        // The stored row had no rank: the duplicate's merges in. (Apple documents the merge "by
        // individual property"; filling only properties the stored row lacks is our reading.)
        #expect(category1.value(forKey: "rank") as? Int32 == 3)
        #expect(!context.hasChanges)

        let fresh = store.newContext()
        let stored = try fetch("Category", fresh)
        #expect(stored.count == 1)
        #expect(stored.first?.objectID == category1.objectID)
        #expect(stored.first?.value(forKey: "detail") as? String == "stored")
        #expect(stored.first?.value(forKey: "articlesCount") as? Int64 == 1)  // derived after the merge
        let articles = try fetch("Article", fresh)
        #expect(articles.count == 1)
        #expect((articles.first?.value(forKey: "category") as? NSManagedObject)?.objectID == category1.objectID)
    }

    /// Seed 002, "Compound Constraints": John Doe and John Smith are different combinations and
    /// both save; a second John Doe conflicts on the pair.
    @Test(arguments: storeTypes)
    func seed002CompoundConstraintOnFirstAndLastName(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        insertObject("Person", ["firstName": "John", "lastName": "Doe"], into: context)
        insertObject("Person", ["firstName": "John", "lastName": "Smith"], into: context)  // allowed
        insertObject("Person", ["firstName": "Jane", "lastName": "Doe"], into: context)  // allowed
        try context.save()
        #expect(try fetch("Person", store.newContext()).count == 3)

        let before = try storeState(store)
        let duplicate = insertObject("Person", ["firstName": "John", "lastName": "Doe", "age": 40], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(error.code == .managedObjectConstraintMerge)
        let conflict = try #require(conflicts(error).first)
        #expect(conflicts(error).count == 1)
        #expect(conflict.constraint == ["firstName", "lastName"])
        #expect(conflict.constraintValues["firstName"] as? String == "John")
        #expect(conflict.constraintValues["lastName"] as? String == "Doe")
        #expect(conflict.conflictingObjects == [duplicate])
        #expect(conflict.databaseObject?.value(forKey: "lastName") as? String == "Doe")
        #expect(try storeState(store) == before)

        context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try context.save()
        let people = try fetch("Person", store.newContext(), sortedBy: "lastName")
        #expect(people.count == 3)
        let johnDoe = try #require(people.first { $0.value(forKey: "firstName") as? String == "John" && $0.value(forKey: "lastName") as? String == "Doe" })
        #expect(johnDoe.value(forKey: "age") as? Int16 == 40)  // object trump: the new value wins
    }

    /// Seed 002, "Multiple Constraints": `email` and `username` must each be unique; each one a
    /// new user shares is its own conflict.
    @Test(arguments: storeTypes)
    func seed002MultipleConstraintsEachReportTheirConflict(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        insertObject("User", ["email": "test@example.com", "username": "testuser"], into: context)
        try context.save()
        insertObject("User", ["email": "other@example.com", "username": "testuser"], into: context)
        insertObject("User", ["email": "test@example.com", "username": "someone"], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(Set(conflicts(error).map(\.constraint)) == [["email"], ["username"]])
        #expect(conflicts(error).allSatisfy { $0.databaseObject != nil && $0.conflictingObjects.count == 1 })

        context.mergePolicy = NSMergePolicy.mergeByPropertyStoreTrump
        try context.save()
        let users = try fetch("User", store.newContext())
        #expect(users.count == 1)
        #expect(users.first?.value(forKey: "username") as? String == "testuser")
        #expect(users.first?.value(forKey: "email") as? String == "test@example.com")
    }

    // MARK: The error policy

    /// The default policy is `.error`: a duplicate of a stored row throws Core Data's constraint
    /// error (133021) with the conflict under "conflictList", the store is unchanged, and the
    /// context keeps its changes so they can be fixed and saved.
    @Test(arguments: storeTypes)
    func errorPolicyThrowsWithTheConflictAndWritesNothing(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        #expect((context.mergePolicy as? NSMergePolicy) === NSMergePolicy.error)
        #expect((context.mergePolicy as? NSMergePolicy)?.mergeType == .errorMergePolicyType)
        let category1 = insertObject("Category", ["name": "Swift", "detail": "stored"], into: context)
        try context.save()
        let before = try storeState(store)

        let category2 = insertObject("Category", ["name": "Swift", "detail": "duplicate"], into: context)
        let other = insertObject("Category", ["name": "Rust"], into: context)
        let article = insertObject("Article", ["title": "A", "category": category2], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        let nsError = error as NSError
        #expect(nsError.domain == NSCocoaErrorDomain)
        #expect(nsError.code == NSManagedObjectConstraintMergeError)
        #expect(!error.description.contains("duplicate"))
        let list = conflicts(error)
        #expect(list.count == 1)
        let conflict = try #require(list.first)
        #expect(conflict.constraint == ["name"])
        #expect(conflict.constraintValues["name"] as? String == "Swift")
        #expect(conflict.databaseObject === category1)
        #expect(conflict.databaseSnapshot?["name"] as? String == "Swift")
        #expect(conflict.databaseSnapshot?["detail"] as? String == "stored")
        #expect(conflict.conflictingObjects == [category2])
        #expect(conflict.conflictingSnapshots.first?["detail"] as? String == "duplicate")

        #expect(try storeState(store) == before)
        #expect(context.insertedObjects == [category2, other, article])
        #expect(category2.value(forKey: "name") as? String == "Swift")

        category2.setValue("Kotlin", forKey: "name")
        try context.save()
        #expect(try fetch("Category", store.newContext()).count == 3)
    }

    /// Two new objects with the same values in one save: one conflict without a database object
    /// that lists both; nothing is written.
    @Test(arguments: storeTypes)
    func errorPolicyReportsTwoNewObjectsInOneSave(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let before = try storeState(store)
        let first = insertObject("Category", ["name": "Swift"], into: context)
        let second = insertObject("Category", ["name": "Swift"], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(error.code == .managedObjectConstraintMerge)
        let conflict = try #require(conflicts(error).first)
        #expect(conflict.databaseObject == nil)
        #expect(conflict.databaseSnapshot == nil)
        #expect(conflict.conflictingObjects == [first, second])
        #expect(conflict.conflictingSnapshots.count == 2)
        #expect(try storeState(store) == before)
        #expect(try fetch("Category", store.newContext()).isEmpty)
    }

    /// A value that is not an `NSMergePolicy` acts as the error policy (Apple's property is `Any`).
    @Test func mergePolicyOfAnotherTypeActsAsTheErrorPolicy() throws {
        let store = try TestStore(NSInMemoryStoreType, model: TestModels.constraints())
        let context = store.newContext()
        context.mergePolicy = "not a policy"
        insertObject("Category", ["name": "Swift"], into: context)
        insertObject("Category", ["name": "Swift"], into: context)
        #expect(throws: OpenCoreDataError.self) { try context.save() }
        #expect(NSErrorMergePolicy === NSMergePolicy.error)
        #expect(NSOverwriteMergePolicy.mergeType == .overwriteMergePolicyType)
        #expect(NSRollbackMergePolicy === NSMergePolicy.rollback)
        #expect(NSMergeByPropertyObjectTrumpMergePolicy.mergeType == .mergeByPropertyObjectTrumpMergePolicyType)
    }

    // MARK: Each resolving policy

    /// Two new "Swift" categories in one save: the first created is kept (seed 002's "keeps
    /// first"), the second merged into it and deleted; its article moves to the first.
    /// Attribute values by policy — store trump and rollback keep the first's, object trump takes
    /// what the second set, overwrite takes all the second's values (its unset `rank` too). Which
    /// object Apple keeps and how it merges attributes between two new objects is not documented;
    /// this is our reading of the policies' documentation.
    @Test(arguments: storeTypes, resolvingPolicies)
    func twoNewObjectsInOneSave(storeType: String, policy: NSMergePolicyType) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        context.mergePolicy = NSMergePolicy(merge: policy)
        let first = insertObject("Category", ["name": "Swift", "detail": "first", "rank": 1], into: context)
        let second = insertObject("Category", ["name": "Swift", "detail": "second"], into: context)
        let article = insertObject("Article", ["title": "A", "category": second], into: context)
        try context.save()

        #expect(first.managedObjectContext === context)
        #expect(second.managedObjectContext == nil)
        #expect(article.value(forKey: "category") as? NSManagedObject === first)
        let expected: (String, Int32?) =
            switch policy {
            case .mergeByPropertyObjectTrumpMergePolicyType: ("second", 1)
            case .overwriteMergePolicyType: ("second", nil)
            default: ("first", 1)
            }
        let stored = try fetch("Category", store.newContext())
        #expect(stored.count == 1)
        #expect(stored.first?.objectID == first.objectID)
        #expect(stored.first?.value(forKey: "detail") as? String == expected.0)
        #expect(stored.first?.value(forKey: "rank") as? Int32 == expected.1)
        let reader = store.newContext()
        let articles = try fetch("Article", reader)
        #expect(articles.count == 1)  // the cascade rule of the discarded duplicate deleted nothing
        #expect((articles.first?.value(forKey: "category") as? NSManagedObject)?.objectID == first.objectID)
    }

    /// A new object against a stored row: the stored object is kept under every resolving policy
    /// and the new one's article moves to it. Attributes: store trump and rollback keep the
    /// stored values; object trump takes what the new object set; overwrite takes all its values.
    /// (Apple does not document which object survives under overwrite; we keep the stored row's
    /// identity and write the new object's values into it.)
    @Test(arguments: storeTypes, resolvingPolicies)
    func newObjectAgainstAStoredRow(storeType: String, policy: NSMergePolicyType) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let stored = insertObject("Category", ["name": "Swift", "detail": "stored", "rank": 1], into: context)
        try context.save()
        context.mergePolicy = NSMergePolicy(merge: policy)
        let incoming = insertObject("Category", ["name": "Swift", "detail": "new"], into: context)
        let article = insertObject("Article", ["title": "A", "category": incoming], into: context)
        try context.save()

        #expect(incoming.managedObjectContext == nil)
        #expect(article.value(forKey: "category") as? NSManagedObject === stored)
        let expected: (String, Int32?) =
            switch policy {
            case .mergeByPropertyObjectTrumpMergePolicyType: ("new", 1)
            case .overwriteMergePolicyType: ("new", nil)
            default: ("stored", 1)
            }
        let rows = try fetch("Category", store.newContext())
        #expect(rows.count == 1)
        #expect(rows.first?.objectID == stored.objectID)
        #expect(rows.first?.value(forKey: "detail") as? String == expected.0)
        #expect(rows.first?.value(forKey: "rank") as? Int32 == expected.1)
        let reader = store.newContext()
        let articles = try fetch("Article", reader)
        #expect(articles.count == 1)
        #expect((articles.first?.value(forKey: "category") as? NSManagedObject)?.objectID == stored.objectID)
    }

    /// An object changed to the values of another stored row conflicts too (it is not new).
    @Test(arguments: storeTypes)
    func updatedObjectConflictsWithAnotherStoredRow(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let swift = insertObject("Category", ["name": "Swift"], into: context)
        let rust = insertObject("Category", ["name": "Rust"], into: context)
        try context.save()
        let before = try storeState(store)
        rust.setValue("Swift", forKey: "name")
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(conflicts(error).first?.databaseObject === swift)
        #expect(conflicts(error).first?.conflictingObjects == [rust])
        #expect(conflicts(error).first?.conflictingSnapshots.first?["name"] as? String == "Rust")  // as last saved
        #expect(try storeState(store) == before)
        rust.setValue("Go", forKey: "name")
        try context.save()
        #expect(Set(try fetch("Category", store.newContext()).compactMap { $0.value(forKey: "name") as? String }) == ["Swift", "Go"])
    }

    /// A stored object changed in the same save (but not in its constrained values) still holds
    /// its values against a new duplicate.
    @Test(arguments: storeTypes)
    func newObjectConflictsWithAStoredObjectChangedInTheSameSave(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let swift = insertObject("Category", ["name": "Swift"], into: context)
        try context.save()
        let before = try storeState(store)
        swift.setValue("changed", forKey: "detail")
        let duplicate = insertObject("Category", ["name": "Swift"], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(conflicts(error).first?.databaseObject === swift)
        #expect(conflicts(error).first?.conflictingObjects == [duplicate])
        #expect(try storeState(store) == before)
        context.mergePolicy = NSMergePolicy.rollback
        try context.save()
        let rows = try fetch("Category", store.newContext())
        #expect(rows.count == 1)
        #expect(rows.first?.value(forKey: "detail") as? String == "changed")
    }

    /// Two saved objects changed to the same values in one save: one conflict without a database
    /// object. Store trump keeps the first saved one and deletes the other (that Apple deletes a
    /// saved object here, rather than reverting it, is our reading: not documented).
    @Test(arguments: storeTypes)
    func twoChangedObjectsInOneSave(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let swift = insertObject("Category", ["name": "Swift"], into: context)
        let rust = insertObject("Category", ["name": "Rust", "rank": 2], into: context)
        try context.save()
        let before = try storeState(store)
        swift.setValue("Go", forKey: "name")
        rust.setValue("Go", forKey: "name")
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        let conflict = try #require(conflicts(error).first)
        #expect(conflict.databaseObject == nil)
        #expect(Set(conflict.conflictingObjects) == [swift, rust])
        #expect(Set(conflict.conflictingSnapshots.compactMap { $0["name"] as? String }) == ["Swift", "Rust"])
        #expect(try storeState(store) == before)

        context.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try context.save()
        let rows = try fetch("Category", store.newContext())
        #expect(rows.count == 1)
        #expect(rows.first?.objectID == swift.objectID)  // the first saved
        #expect(rows.first?.value(forKey: "rank") as? Int32 == 2)  // merged in: Swift had none
    }

    /// Values that move between rows in one save are no conflict: two saved categories swap
    /// names, and a renamed one's old name goes to a new category. (SQLite checks its unique index
    /// statement by statement; the store frees the moving values first.)
    @Test(arguments: storeTypes)
    func valuesMovingBetweenRowsInOneSave(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let swift = insertObject("Category", ["name": "Swift"], into: context)
        let rust = insertObject("Category", ["name": "Rust"], into: context)
        try context.save()
        swift.setValue("Rust", forKey: "name")
        rust.setValue("Swift", forKey: "name")
        try context.save()
        rust.setValue("Go", forKey: "name")
        insertObject("Category", ["name": "Swift"], into: context)
        try context.save()
        let reader = store.newContext()
        let rows = try fetch("Category", reader)
        #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0.objectID, $0.value(forKey: "name") as? String ?? "") })
            .filter { $0.key == swift.objectID || $0.key == rust.objectID } == [swift.objectID: "Rust", rust.objectID: "Go"])
        #expect(Set(rows.compactMap { $0.value(forKey: "name") as? String }) == ["Rust", "Go", "Swift"])
    }

    // MARK: Inheritance

    /// A constraint on a parent entity applies across its subentities: a `Dog` may not reuse the
    /// tag of a stored `Animal`, and the parent's row is kept under store trump.
    @Test(arguments: storeTypes)
    func constraintOnAParentEntityCoversSubentities(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let animal = insertObject("Animal", ["tag": "T1"], into: context)
        try context.save()
        let before = try storeState(store)
        let dog = insertObject("Dog", ["tag": "T1", "breed": "Collie"], into: context)
        insertObject("Dog", ["tag": "T2", "breed": "Pug"], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(conflicts(error).count == 1)
        #expect(conflicts(error).first?.databaseObject === animal)
        #expect(conflicts(error).first?.conflictingObjects == [dog])
        #expect(try storeState(store) == before)

        context.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try context.save()
        let all = try fetch("Animal", store.newContext(), sortedBy: "tag")
        #expect(all.map { $0.value(forKey: "tag") as? String } == ["T1", "T2"])
        #expect(all.map { $0.entity.name } == ["Animal", "Dog"])

        // Two new dogs sharing a tag conflict with each other too.
        insertObject("Dog", ["tag": "T3"], into: context)
        insertObject("Dog", ["tag": "T3"], into: context)
        context.mergePolicy = NSMergePolicy.error
        let second = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(conflicts(second).first?.conflictingObjects.count == 2)
    }

    // MARK: Subclassing

    /// A subclass's `resolve(constraintConflicts:)` is what the save calls; it may inspect the
    /// conflicts and hand them to `super`.
    @Test(arguments: storeTypes)
    func subclassOverrideSeesTheConflicts(storeType: String) throws {
        final class RecordingPolicy: NSMergePolicy, @unchecked Sendable {
            var seen: [[String]] = []
            init() { super.init(merge: .mergeByPropertyStoreTrumpMergePolicyType) }
            override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
                seen += list.map(\.constraint)
                try super.resolve(constraintConflicts: list)
            }
        }
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let policy = RecordingPolicy()
        context.mergePolicy = policy
        insertObject("Category", ["name": "Swift"], into: context)
        insertObject("Category", ["name": "Swift"], into: context)
        try context.save()
        #expect(policy.seen == [["name"]])
        #expect(try fetch("Category", store.newContext()).count == 1)
    }

    /// A subclass that throws its own error stops the save; nothing is written.
    @Test(arguments: storeTypes)
    func subclassThatThrowsFailsTheSave(storeType: String) throws {
        struct Refused: Error {}
        final class RefusingPolicy: NSMergePolicy, @unchecked Sendable {
            init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
            override func resolve(constraintConflicts list: [NSConstraintConflict]) throws { throw Refused() }
        }
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        context.mergePolicy = RefusingPolicy()
        insertObject("Category", ["name": "Swift"], into: context)
        insertObject("Category", ["name": "Swift"], into: context)
        #expect(throws: Refused.self) { try context.save() }
        #expect(try fetch("Category", store.newContext()).isEmpty)
        #expect(context.insertedObjects.count == 2)
    }

    /// A subclass that resolves nothing does not loop forever: the save throws 133021.
    @Test func subclassThatResolvesNothingEndsWithTheConstraintError() throws {
        final class IdlePolicy: NSMergePolicy, @unchecked Sendable {
            init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
            override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {}
        }
        let store = try TestStore(NSInMemoryStoreType, model: TestModels.constraints())
        let context = store.newContext()
        context.mergePolicy = IdlePolicy()
        insertObject("Category", ["name": "Swift"], into: context)
        insertObject("Category", ["name": "Swift"], into: context)
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(error.code == .managedObjectConstraintMerge)
        #expect(try fetch("Category", store.newContext()).isEmpty)
    }

    /// Constraints on a UUID and on an integer: stored rows are found by those values too (the
    /// SQLite store compares the stored blob and integer), and object trump updates the stored row.
    @Test(arguments: storeTypes)
    func constraintsOnUUIDAndIntegerValues(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        let id = UUID()
        let stored = insertObject("Device", ["identifier": id, "serial": 7, "label": "old"], into: context)
        try context.save()
        let before = try storeState(store)
        insertObject("Device", ["identifier": id, "label": "same id"], into: context)
        insertObject("Device", ["serial": Int16(7), "label": "same serial"], into: context)  // any integer type
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(Set(conflicts(error).map(\.constraint)) == [["identifier"], ["serial"]])
        #expect(conflicts(error).allSatisfy { $0.databaseObject === stored })
        #expect(try storeState(store) == before)

        context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try context.save()
        let reader = store.newContext()
        let devices = try fetch("Device", reader)
        #expect(devices.count == 1)
        #expect(devices.first?.value(forKey: "identifier") as? UUID == id)
        #expect(devices.first?.value(forKey: "serial") as? Int64 == 7)
        #expect(["same id", "same serial"].contains(devices.first?.value(forKey: "label") as? String ?? ""))
    }

    /// Nil values never conflict (as in SQL unique indexes); objects without constrained values
    /// save side by side.
    @Test(arguments: storeTypes)
    func nilValuesDoNotConflict(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.constraints())
        let context = store.newContext()
        insertObject("Person", ["firstName": "John"], into: context)
        insertObject("Person", ["firstName": "John"], into: context)
        try context.save()
        #expect(try fetch("Person", store.newContext()).count == 2)
    }
}
