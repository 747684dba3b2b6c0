import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// An `NSIncrementalStore` written as an app writes one, with Apple's public calls only: rows keyed
/// by its own reference objects (an `Int`, a `String` with spaces and slashes, or `Data`, chosen
/// with the `KeyKind` option), nodes that hold attributes only (every relationship is left to
/// `newValue(forRelationship:forObjectWith:with:)`), and counts of what it is asked.
///
/// `@unchecked Sendable` invariant: used only under its coordinator's lock.
final class KeyedTestStore: NSIncrementalStore, @unchecked Sendable {
    static let storeType = "KeyedTestStore"
    static let kindOption = "KeyKind"
    static func register() { NSPersistentStoreCoordinator.registerStoreClass(KeyedTestStore.self, forStoreType: storeType) }

    enum KeyKind: String, CaseIterable, Sendable { case int, string, data }

    private struct Row {
        var entity: String
        var attributes: [String: Any]
        var toOne: [String: AnyHashable]
        var toMany: [String: [AnyHashable]]
    }
    private var rows: [AnyHashable: Row] = [:]
    private var lastKey = 0
    /// `newValuesForObject(with:with:)` calls.
    private(set) var nodeLoads = 0
    /// `newValue(forRelationship:forObjectWith:with:)` calls, by relationship name.
    private(set) var relationshipLoads: [String: Int] = [:]
    /// The save requests, as the counts of their inserted, updated and deleted sets.
    private(set) var saves: [[Int]] = []

    override var type: String { Self.storeType }
    var kind: KeyKind { (options?[Self.kindOption] as? String).flatMap(KeyKind.init) ?? .int }

    override func loadMetadata() throws {
        if metadata == nil { metadata = [NSStoreUUIDKey: UUID().uuidString, NSStoreTypeKey: type] }
    }

    /// The key of the `n`th object, of the store's kind.
    func key(_ n: Int) -> AnyHashable {
        switch kind {
        case .int: return n
        case .string: return "row \(n)/of a/b?c#d%e"
        case .data: return Data([0, 0xFF, UInt8(n), 0x2F, 0x20])
        }
    }

    /// The key an ID was made with, read back as the type the store uses (as an app's store does).
    func key(of objectID: NSManagedObjectID) -> AnyHashable? {
        let reference = referenceObject(for: objectID)
        switch kind {
        case .int: return reference as? Int
        case .string: return reference as? String
        case .data: return reference as? Data
        }
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        array.map { object in
            lastKey += 1
            return newObjectID(for: object.entity, referenceObject: key(lastKey))
        }
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        if let save = request as? NSSaveChangesRequest {
            let inserted = save.insertedObjects ?? [], updated = save.updatedObjects ?? [], deleted = save.deletedObjects ?? []
            saves.append([inserted.count, updated.count, deleted.count])
            for object in inserted.union(updated) {
                guard let key = key(of: object.objectID) else { throw OpenCoreDataError(.persistentStoreOperation, "KeyedTestStore: no such row") }
                rows[key] = row(of: object)
            }
            for object in deleted { if let key = key(of: object.objectID) { rows[key] = nil } }
            return [Any]()
        }
        guard let fetch = request as? NSFetchRequest<any NSFetchRequestResult>, let context, let entity = fetch.entity else {
            throw OpenCoreDataError(.persistentStoreOperation, "KeyedTestStore: no such row")
        }
        return rows.filter { $0.value.entity == entity.name }.keys
            .map { context.object(with: newObjectID(for: entity, referenceObject: $0.base)) }
    }

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        nodeLoads += 1
        guard let key = key(of: objectID), let row = rows[key] else { throw OpenCoreDataError(.persistentStoreOperation, "KeyedTestStore: no such row") }
        return NSIncrementalStoreNode(objectID: objectID, withValues: row.attributes, version: 1)
    }

    override func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
                           with context: NSManagedObjectContext?) throws -> Any {
        relationshipLoads[relationship.name, default: 0] += 1
        guard let key = key(of: objectID), let row = rows[key], let destination = relationship.destinationEntity else {
            throw OpenCoreDataError(.persistentStoreOperation, "KeyedTestStore: no such row")
        }
        if relationship.isToMany {
            // An `NSArray`, as an Objective-C store returns it.
            return NSArray(array: (row.toMany[relationship.name] ?? []).map { newObjectID(for: destination, referenceObject: $0.base) })
        }
        return row.toOne[relationship.name].map { newObjectID(for: destination, referenceObject: $0.base) } ?? NSNull()
    }

    private func row(of object: NSManagedObject) -> Row {
        var row = Row(entity: object.entity.name ?? "", attributes: [:], toOne: [:], toMany: [:])
        for (name, _) in object.entity.attributesByName {
            if let value = object.value(forKey: name) { row.attributes[name] = value }
        }
        for (name, relationship) in object.entity.relationshipsByName {
            if relationship.isToMany {
                let objects = (object.value(forKey: name) as? Set<NSManagedObject>) ?? []
                row.toMany[name] = objects.compactMap { key(of: $0.objectID) }
            } else if let destination = object.value(forKey: name) as? NSManagedObject {
                row.toOne[name] = key(of: destination.objectID)
            }
        }
        return row
    }
}

/// What Apple documents (and Apple-semantics acceptance code observed) of the `NSIncrementalStore`
/// contract: reference objects and URIs, faults and relationships, empty saves.
@Suite("NSIncrementalStore contract")
struct IncrementalStoreContractTests {
    /// Author (`name`, to-many `books`) ↔ Book (`title`, to-one `author`).
    static func model() -> NSManagedObjectModel {
        let author = NSEntityDescription(name: "Author", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let book = NSEntityDescription(name: "Book", properties: [NSAttributeDescription(name: "title", type: .stringAttributeType)])
        let books = NSRelationshipDescription(name: "books", destination: book, toMany: true)
        let writer = NSRelationshipDescription(name: "author", destination: author, toMany: false)
        books.inverseRelationship = writer
        writer.inverseRelationship = books
        author.properties += [books]
        book.properties += [writer]
        let model = NSManagedObjectModel()
        model.entities = [author, book]
        return model
    }

    struct Fixture {
        let coordinator: NSPersistentStoreCoordinator
        let store: KeyedTestStore
        let author: NSManagedObjectID
        let books: [NSManagedObjectID]

        func context() -> NSManagedObjectContext { StoreHarness.context(coordinator) }
    }

    /// A store of `kind` holding one author with three books, saved by a context of its own.
    static func fixture(_ kind: KeyedTestStore.KeyKind) throws -> Fixture {
        KeyedTestStore.register()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        let added = try coordinator.addPersistentStore(
            ofType: KeyedTestStore.storeType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"),
            options: [KeyedTestStore.kindOption: kind.rawValue])
        let store = try #require(added as? KeyedTestStore)
        let context = StoreHarness.context(coordinator)
        return try context.performAndWait {
            let author = insertObject("Author", ["name": "Le Guin"], into: context)
            let books = ["Earthsea", "The Dispossessed", "Lathe of Heaven"].map {
                insertObject("Book", ["title": $0, "author": author], into: context)
            }
            try context.save()
            return Fixture(coordinator: coordinator, store: store, author: author.objectID, books: books.map(\.objectID))
        }
    }

    // MARK: Reference objects and URIs

    /// Apple: `referenceObject(for:)` "returns the reference data used to construct" the ID, and
    /// `managedObjectID(forURIRepresentation:)` turns a URI back into the ID. An integer comes back
    /// as an `NSNumber` on Apple (it casts to the store's `Int`); a string or `Data` as itself. The
    /// URI of an integer key is Apple's `x-coredata://<store UUID>/<Entity>/p<key>`; Apple does not
    /// document its form for other reference objects, so OpenCoreData writes a string as `s` and its
    /// percent-escaped UTF-8 (every byte but RFC 3986's unreserved characters), `Data` as `d` and
    /// hex (docs/linux-differences.md).
    @Test(arguments: KeyedTestStore.KeyKind.allCases)
    func referenceObjectsSurviveTheURI(kind: KeyedTestStore.KeyKind) throws {
        let fixture = try Self.fixture(kind)
        let store = fixture.store
        let id = fixture.books[0]
        #expect(!id.isTemporaryID)
        let key = try #require(store.key(of: id), "referenceObject(for:) gives back the store's \(kind) key")
        #expect(key == store.key(1) || key == store.key(2) || key == store.key(3) || key == store.key(4))

        let uri = id.uriRepresentation()
        #expect(uri.scheme == "x-coredata")
        #expect(uri.host == store.identifier)
        let last = uri.absoluteString.components(separatedBy: "/").last ?? ""
        #expect(uri.absoluteString.hasPrefix("x-coredata://\(store.identifier!)/Book/"))
        switch kind {
        case .int: #expect(last == "p\(key)")
        case .string:
            #expect(last.hasPrefix("s") && !last.contains(" ") && last.contains("%2F"))
            #expect(last.dropFirst().removingPercentEncoding == key as? String)
        case .data: #expect(last == "d" + (key as! Data).map { String(format: "%02x", $0) }.joined())
        }

        let back = try #require(fixture.coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(back == id && back.hash == id.hash)
        #expect(back.entity === id.entity && back.persistentStore === store)
        #expect(store.key(of: back) == key, "the store gets back exactly the key it gave")
        // A context resolves it through the store.
        let reader = fixture.context()
        let title = try reader.performAndWait { try reader.existingObject(with: back).value(forKey: "title") as? String }
        #expect(["Earthsea", "The Dispossessed", "Lathe of Heaven"].contains(title ?? ""))
    }

    /// Every integer type (and `NSNumber`) makes the same ID for the same number, as `NSNumber`s
    /// are equal on Apple; `referenceObject(for:)` casts to any of them.
    @Test func integerReferenceObjectsOfAnyTypeMakeOneID() throws {
        let fixture = try Self.fixture(.int)
        let entity = try #require(fixture.coordinator.managedObjectModel.entitiesByName["Book"])
        let ids = [7 as Int, Int64(7), Int32(7), UInt8(7), NSNumber(value: 7)].map {
            fixture.store.newObjectID(for: entity, referenceObject: $0)
        }
        #expect(Set(ids).count == 1)
        let reference = fixture.store.referenceObject(for: ids[0])
        #expect(reference as? Int == 7 && reference as? Int64 == 7 && reference as? NSNumber == NSNumber(value: 7))
        #expect(ids[0].uriRepresentation().lastPathComponent == "p7")
    }

    /// Apple writes an incremental store's reference object after `p` as text: such a URI of a
    /// string key resolves to that string.
    @Test func applesFormOfAStringKeyResolves() throws {
        let fixture = try Self.fixture(.string)
        let key = try #require(fixture.store.key(of: fixture.books[0]) as? String)
        let escaped = try #require(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let url = try #require(URL(string: "x-coredata://\(fixture.store.identifier!)/Book/p\(escaped)"))
        #expect(fixture.coordinator.managedObjectID(forURIRepresentation: url) == fixture.books[0])
    }

    /// URIs of other forms, other stores or other entities resolve to nothing.
    @Test func foreignURIsResolveToNothing() throws {
        let fixture = try Self.fixture(.string)
        let good = fixture.books[0].uriRepresentation().absoluteString
        let identifier = fixture.store.identifier!
        for text in [
            good.replacingOccurrences(of: identifier, with: UUID().uuidString),
            good.replacingOccurrences(of: "/Book/", with: "/Nope/"),
            "x-coredata://\(identifier)/Book/q1", "x-coredata://\(identifier)/Book/dzz", "x-coredata://\(identifier)/Book",
            "x-coredata:///Book/t1", "https://\(identifier)/Book/p1",
        ] {
            let url = try #require(URL(string: text))
            #expect(fixture.coordinator.managedObjectID(forURIRepresentation: url) == nil, "\(text)")
        }
    }

    // MARK: Faults and relationships

    /// Apple's `NSIncrementalStoreNode`: "For to-one relationships ... A missing key will be resolved
    /// lazily through calling newValueForRelationship:forObjectWithID:withContext:error:", and
    /// likewise a to-many. Firing a fault asks the store for the node; the to-one the node left out
    /// is asked for; the to-many is asked for once, on first access, and then kept.
    @Test func faultsAskTheStoreForWhatTheNodeLeftOut() throws {
        let fixture = try Self.fixture(.string)
        let store = fixture.store
        let reader = fixture.context()
        try reader.performAndWait {
            let book = reader.object(with: fixture.books[1])
            #expect(book.isFault)
            let loads = store.nodeLoads
            #expect(book.value(forKey: "title") as? String == "The Dispossessed")
            #expect(store.nodeLoads == loads + 1, "firing the fault asked for the node")
            let author = try #require(book.value(forKey: "author") as? NSManagedObject, "the to-one the node left out")
            #expect(author.objectID == fixture.author)
            #expect(store.relationshipLoads["author"] == 1)
            #expect(author.value(forKey: "name") as? String == "Le Guin")

            #expect(store.relationshipLoads["books"] == nil, "a to-many is not asked for before it is used")
            let books = try #require(author.value(forKey: "books") as? Set<NSManagedObject>)
            #expect(Set(books.map(\.objectID)) == Set(fixture.books))
            #expect(store.relationshipLoads["books"] == 1)
            _ = author.value(forKey: "books")
            #expect((author.value(forKey: "books") as? Set<NSManagedObject>)?.count == 3)
            #expect(store.relationshipLoads["books"] == 1, "then kept")
            #expect(store.relationshipLoads["author"] == 1)
        }
    }

    /// A context that did not save the to-one reads it through the store.
    @Test(arguments: KeyedTestStore.KeyKind.allCases)
    func aSecondContextResolvesASavedToOne(kind: KeyedTestStore.KeyKind) throws {
        let fixture = try Self.fixture(kind)
        let reader = fixture.context()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            let books = try reader.fetch(request)
            #expect(books.count == 3)
            for book in books {
                let author = try #require(book.value(forKey: "author") as? NSManagedObject)
                #expect(author.objectID == fixture.author)
                #expect(author.value(forKey: "name") as? String == "Le Guin")
            }
        }
    }

    // MARK: Saves

    /// Apple's context sends its stores a save request for every save, with empty sets when
    /// nothing changed.
    @Test func aSaveWithoutChangesSendsOneEmptyRequest() throws {
        let fixture = try Self.fixture(.string)
        #expect(fixture.store.saves == [[4, 0, 0]])
        let context = fixture.context()
        try context.performAndWait {
            #expect(!context.hasChanges)
            try context.save()
            #expect(fixture.store.saves == [[4, 0, 0], [0, 0, 0]])
            // A fetched, unchanged object changes nothing either.
            _ = try context.existingObject(with: fixture.author).value(forKey: "name")
            try context.save()
            #expect(fixture.store.saves == [[4, 0, 0], [0, 0, 0], [0, 0, 0]])
        }
    }

    /// The SQLite store answers an empty save without a write transaction (it runs no statement at
    /// all), and still writes metadata that changed.
    @Test func anEmptySaveOnSQLiteRunsNoStatement() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        try context.performAndWait {
            insertObject("Owner", ["uid": Int64(1)], into: context)
            try context.save()
        }
        let sqlite = try sqliteStore(store.coordinator)
        nonisolated(unsafe) var statements: [String] = []
        sqlite.connection?.statementObserver = { statements.append($0) }
        try context.performAndWait { try context.save() }
        #expect(statements.isEmpty, "\(statements)")

        var metadata = store.coordinator.metadata(for: sqlite)
        metadata["Note"] = "kept"
        store.coordinator.setMetadata(metadata, for: sqlite)
        try context.performAndWait { try context.save() }
        #expect(statements.filter { $0 == "BEGIN IMMEDIATE" }.count == 1)
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: store.url!)["Note"] as? String == "kept")
    }

    /// A read-only store accepts a save without changes (nothing is written).
    @Test func anEmptySaveOfAReadOnlyStoreSucceeds() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let url = try #require(store.url)
        try store.reopen()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: store.model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        try context.performAndWait { try context.save() }
    }
}
