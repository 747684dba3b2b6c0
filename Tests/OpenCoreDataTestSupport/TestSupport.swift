import Foundation
import OpenCoreData

/// Builds coordinators and contexts for store tests.
public enum StoreHarness {
    /// A coordinator with one store of `storeType` (at `url`, or a fresh file in `directory`).
    public static func coordinator(
        model: NSManagedObjectModel, storeType: String, url: URL? = nil, directory: TemporaryDirectory? = nil,
        options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStoreCoordinator {
        ReferenceCycles.install()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let location = url ?? directory?.file("Store.sqlite") ?? URL(fileURLWithPath: "/dev/null")
        try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: location, options: options)
        return coordinator
    }

    /// A private-queue context on `coordinator`.
    public static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        ReferenceCycles.install()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Removes every store from the coordinator (closing SQLite files).
    public static func close(_ coordinator: NSPersistentStoreCoordinator) {
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
    }
}

/// Models built in code for store tests.
public enum TestModels {
    /// One entity, `Wide`, of `count` `Int64` attributes named `a0`, `a1`, …: past 64 of them, an
    /// object keeps the changes of slots past 63 apart from the others.
    public static func wide(attributes count: Int) -> (model: NSManagedObjectModel, entity: NSEntityDescription) {
        let entity = NSEntityDescription(
            name: "Wide", managedObjectClassName: "NSManagedObject",
            properties: (0..<count).map { NSAttributeDescription(name: "a\($0)", type: .integer64AttributeType) })
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return (model, entity)
    }

    /// Company: `Department` 1—n `Employee` (inverse `department`), `Employee` ↔ `Project` many-to-many
    /// (`projects`/`members`), `Manager` a subentity of `Employee`, and `Item` with one attribute of
    /// every stored type.
    public static func company() -> NSManagedObjectModel {
        let department = NSEntityDescription(
            name: "Department",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
                NSAttributeDescription(name: "budget", type: .doubleAttributeType),
            ])
        let employee = NSEntityDescription(
            name: "Employee",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
                NSAttributeDescription(name: "age", type: .integer32AttributeType),
                NSAttributeDescription(name: "hiredAt", type: .dateAttributeType),
                NSAttributeDescription(name: "active", type: .booleanAttributeType, defaultValue: true),
            ])
        let manager = NSEntityDescription(
            name: "Manager",
            properties: [
                NSAttributeDescription(name: "level", type: .integer16AttributeType, defaultValue: 1)
            ])
        let project = NSEntityDescription(
            name: "Project",
            properties: [
                NSAttributeDescription(name: "title", type: .stringAttributeType, isOptional: false)
            ])
        let employees = NSRelationshipDescription(name: "employees", destination: employee, toMany: true)
        let worksIn = NSRelationshipDescription(name: "department", destination: department, toMany: false)
        employees.inverseRelationship = worksIn
        worksIn.inverseRelationship = employees
        let projects = NSRelationshipDescription(name: "projects", destination: project, toMany: true)
        let members = NSRelationshipDescription(name: "members", destination: employee, toMany: true)
        projects.inverseRelationship = members
        members.inverseRelationship = projects
        department.properties += [employees]
        employee.properties += [worksIn, projects]
        project.properties += [members]
        employee.subentities = [manager]
        let model = NSManagedObjectModel()
        model.entities = [department, employee, manager, project, item()]
        return model
    }

    /// `Item`: one optional attribute of every type the SQLite store stores.
    public static func item() -> NSEntityDescription {
        NSEntityDescription(
            name: "Item",
            properties: [
                NSAttributeDescription(name: "int16", type: .integer16AttributeType),
                NSAttributeDescription(name: "int32", type: .integer32AttributeType),
                NSAttributeDescription(name: "int64", type: .integer64AttributeType),
                NSAttributeDescription(name: "decimal", type: .decimalAttributeType),
                NSAttributeDescription(name: "double", type: .doubleAttributeType),
                NSAttributeDescription(name: "float", type: .floatAttributeType),
                NSAttributeDescription(name: "string", type: .stringAttributeType),
                NSAttributeDescription(name: "bool", type: .booleanAttributeType),
                NSAttributeDescription(name: "date", type: .dateAttributeType),
                NSAttributeDescription(name: "binary", type: .binaryDataAttributeType),
                NSAttributeDescription(name: "uuid", type: .UUIDAttributeType),
                NSAttributeDescription(name: "uri", type: .URIAttributeType),
            ])
    }

    /// alemar11/CoreDataPlus `SampleModel.xcdatamodel` (version '1'), built in code: Car ← SportCar ←
    /// ExpensiveSportCar, Person 1—n Car, transient attributes, uniqueness constraints.
    public static func coreDataPlusSampleModelV1() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, transient: Bool = false)
            -> NSAttributeDescription
        {
            let attribute = NSAttributeDescription(name: name, type: type, isOptional: optional)
            attribute.isTransient = transient
            return attribute
        }
        let car = NSEntityDescription(
            name: "Car",
            properties: [
                attribute("color", .transformableAttributeType),
                attribute("currentDrivingSpeed", .integer64AttributeType, transient: true),
                attribute("maker", .stringAttributeType), attribute("markedForDeletionAsOf", .dateAttributeType),
                attribute("model", .stringAttributeType),
                attribute("numberPlate", .stringAttributeType, optional: false),
            ])
        car.uniquenessConstraints = [["numberPlate"]]
        let sportCar = NSEntityDescription(name: "SportCar")
        let expensive = NSEntityDescription(
            name: "ExpensiveSportCar", properties: [attribute("isLimitedEdition", .booleanAttributeType)])
        let person = NSEntityDescription(
            name: "Person",
            properties: [
                attribute("firstName", .stringAttributeType), attribute("id", .UUIDAttributeType, optional: false),
                attribute("isDriving", .booleanAttributeType, optional: false, transient: true),
                attribute("lastName", .stringAttributeType),
                attribute("updatedAt", .dateAttributeType, optional: false),
            ])
        person.uniquenessConstraints = [["firstName", "lastName"]]
        let owner = NSRelationshipDescription(name: "owner", destination: person, toMany: false)
        let cars = NSRelationshipDescription(name: "cars", destination: car, toMany: true)
        owner.inverseRelationship = cars
        cars.inverseRelationship = owner
        car.properties += [owner]
        person.properties += [cars]
        sportCar.subentities = [expensive]
        car.subentities = [sportCar]
        let model = NSManagedObjectModel()
        model.entities = [car, expensive, person, sportCar]
        model.versionIdentifiers = ["1"]
        return model
    }

    /// contentful-persistence.swift `Test.xcdatamodel`, built in code: ordered to-many relationships,
    /// many-to-many pairs, one-to-many pairs with long generated inverse names.
    public static func contentfulTest() -> NSManagedObjectModel {
        func attributes(_ list: [(String, NSAttributeType)]) -> [NSPropertyDescription] {
            list.map { NSAttributeDescription(name: $0.0, type: $0.1) }
        }
        let asset = NSEntityDescription(
            name: "Asset",
            properties: attributes([
                ("assetDescription", .stringAttributeType), ("createdAt", .dateAttributeType),
                ("fileName", .stringAttributeType),
                ("fileType", .stringAttributeType), ("height", .doubleAttributeType), ("id", .stringAttributeType),
                ("localeCode", .stringAttributeType), ("size", .integer32AttributeType),
                ("title", .stringAttributeType),
                ("updatedAt", .dateAttributeType), ("urlString", .stringAttributeType), ("width", .doubleAttributeType),
            ]))
        let author = NSEntityDescription(
            name: "Author",
            properties: attributes([
                ("biography", .stringAttributeType), ("createdAt", .dateAttributeType), ("id", .stringAttributeType),
                ("localeCode", .stringAttributeType), ("name", .stringAttributeType), ("updatedAt", .dateAttributeType),
                ("website", .stringAttributeType),
            ]))
        let category = NSEntityDescription(
            name: "Category",
            properties: attributes([
                ("createdAt", .dateAttributeType), ("id", .stringAttributeType), ("localeCode", .stringAttributeType),
                ("title", .stringAttributeType), ("updatedAt", .dateAttributeType),
            ]))
        let post = NSEntityDescription(
            name: "Post",
            properties: attributes([
                ("body", .stringAttributeType), ("comments", .booleanAttributeType), ("createdAt", .dateAttributeType),
                ("date", .dateAttributeType), ("id", .stringAttributeType), ("localeCode", .stringAttributeType),
                ("slug", .stringAttributeType), ("tags", .binaryDataAttributeType), ("title", .stringAttributeType),
                ("updatedAt", .dateAttributeType),
            ]))
        let syncInfo = NSEntityDescription(
            name: "SyncInfo",
            properties: attributes([("dbVersion", .integer32AttributeType), ("syncToken", .stringAttributeType)]))
        func pair(
            _ a: NSEntityDescription, _ aName: String, toMany aMany: Bool, ordered aOrdered: Bool = false,
            _ b: NSEntityDescription, _ bName: String, toMany bMany: Bool, ordered bOrdered: Bool = false
        ) {
            let forward = NSRelationshipDescription(name: aName, destination: b, toMany: aMany, isOrdered: aOrdered)
            let backward = NSRelationshipDescription(name: bName, destination: a, toMany: bMany, isOrdered: bOrdered)
            forward.inverseRelationship = backward
            backward.inverseRelationship = forward
            a.properties += [forward]
            b.properties += [backward]
        }
        pair(
            asset, "featuredImage_2wKn6yEnZewu2SCCkus4as_Inverse", toMany: true, post, "theFeaturedImage", toMany: false
        )
        pair(asset, "icon_5KMiN6YPvi42icqAUQMCQe_Inverse", toMany: true, category, "icon", toMany: false)
        pair(asset, "profilePhoto_1kUEViTN4EmGiEaaeC6ouY_Inverse", toMany: true, author, "profilePhoto", toMany: false)
        pair(author, "createdEntries", toMany: true, ordered: true, post, "authors", toMany: true, ordered: true)
        pair(category, "categoryInverse", toMany: true, ordered: false, post, "category", toMany: true, ordered: true)
        let model = NSManagedObjectModel()
        model.entities = [asset, author, category, post, syncInfo]
        return model
    }

    /// Relationship shapes: `Playlist.songs` ordered to-many ↔ `Song.playlist`; `Library.favorite` a
    /// to-one without inverse to `Song`, which has the subentity `Remix`; `Library.tags` a to-many
    /// without inverse to `Tag`.
    public static func media() -> NSManagedObjectModel {
        let library = NSEntityDescription(
            name: "Library", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let playlist = NSEntityDescription(
            name: "Playlist", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let song = NSEntityDescription(
            name: "Song", properties: [NSAttributeDescription(name: "title", type: .stringAttributeType)])
        let remix = NSEntityDescription(
            name: "Remix", properties: [NSAttributeDescription(name: "artist", type: .stringAttributeType)])
        let tag = NSEntityDescription(
            name: "Tag", properties: [NSAttributeDescription(name: "label", type: .stringAttributeType)])
        let songs = NSRelationshipDescription(name: "songs", destination: song, toMany: true, isOrdered: true)
        let inPlaylist = NSRelationshipDescription(name: "playlist", destination: playlist, toMany: false)
        songs.inverseRelationship = inPlaylist
        inPlaylist.inverseRelationship = songs
        playlist.properties += [songs]
        song.properties += [inPlaylist]
        library.properties += [
            NSRelationshipDescription(name: "favorite", destination: song, toMany: false),
            NSRelationshipDescription(name: "tags", destination: tag, toMany: true),
        ]
        song.subentities = [remix]
        let model = NSManagedObjectModel()
        model.entities = [library, playlist, song, remix, tag]
        return model
    }

    /// A one-entity model: `User(name, petName)` (alemar11/CoreDataPlus SampleModel3 v1; `name` is required
    /// there, which its version hash records).
    public static func sampleModel3V1() -> NSManagedObjectModel {
        let user = NSEntityDescription(
            name: "User",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
                NSAttributeDescription(name: "petName", type: .stringAttributeType),
            ])
        let model = NSManagedObjectModel()
        model.entities = [user]
        model.versionIdentifiers = ["1"]
        return model
    }
}

// MARK: - Predicate building (Apple's AST initializers)

/// `key <op> value` as an `NSComparisonPredicate`.
public func comparison(
    _ key: String, _ op: NSComparisonPredicate.Operator, _ value: Any?,
    options: NSComparisonPredicate.Options = []
) -> NSPredicate {
    NSComparisonPredicate(
        leftExpression: NSExpression(forKeyPath: key), rightExpression: NSExpression(forConstantValue: value),
        modifier: .direct, type: op, options: options)
}

/// The conjunction of `predicates`.
public func and(_ predicates: NSPredicate...) -> NSPredicate {
    NSCompoundPredicate(type: .and, subpredicates: predicates)
}
/// The disjunction of `predicates`.
public func or(_ predicates: NSPredicate...) -> NSPredicate {
    NSCompoundPredicate(type: .or, subpredicates: predicates)
}
/// The negation of `predicate`.
public func not(_ predicate: NSPredicate) -> NSPredicate { NSCompoundPredicate(type: .not, subpredicates: [predicate]) }

/// One store of a given type with the company model, for tests that run against every store type.
/// A SQLite store lives in its own temporary directory, removed when the object goes away.
public final class TestStore {
    public let storeType: String
    public let model: NSManagedObjectModel
    public let directory: TemporaryDirectory?
    public private(set) var coordinator: NSPersistentStoreCoordinator

    public init(_ storeType: String, model: NSManagedObjectModel = TestModels.company()) throws {
        self.storeType = storeType
        self.model = model
        directory = storeType == NSSQLiteStoreType ? TemporaryDirectory() : nil
        coordinator = try StoreHarness.coordinator(model: model, storeType: storeType, directory: directory)
    }

    /// The store file (SQLite only).
    public var url: URL? { directory?.file("Store.sqlite") }

    /// A fresh context, so reads go to the store rather than to objects another context holds.
    public func newContext() -> NSManagedObjectContext { StoreHarness.context(coordinator) }

    /// A second coordinator on the same file (SQLite only).
    public func secondCoordinator() throws -> NSPersistentStoreCoordinator {
        try StoreHarness.coordinator(model: model, storeType: storeType, url: url)
    }

    /// Closes the store and opens the file again with a new coordinator (SQLite only).
    public func reopen() throws {
        StoreHarness.close(coordinator)
        coordinator = try StoreHarness.coordinator(model: model, storeType: storeType, url: url)
    }

    deinit {
        StoreHarness.close(coordinator)
        directory?.remove()
    }
}

/// Inserts an object of `entity` with `values` (set through KVC) into `context`.
@discardableResult
public func insertObject(_ entity: String, _ values: [String: Any], into context: NSManagedObjectContext)
    -> NSManagedObject
{
    let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
    for (key, value) in values { object.setValue(value, forKey: key) }
    return object
}

extension TestModels {
    /// A graph with every relationship shape and delete rule, for delete-rule and randomized tests.
    /// Every entity has `uid` (a stable id, required) and `value`.
    ///
    /// - `Owner.items` ↔ `Item.owner`: one-to-many, cascade / nullify
    /// - `Owner.list` ↔ `Item.listOwner`: ordered one-to-many, nullify / nullify
    /// - `Owner.tags` ↔ `Tag.owners`: many-to-many, nullify / no action
    /// - `Owner.guarded` ↔ `Item.guardian`: one-to-many, deny / nullify
    /// - `Owner.best` ↔ `Item.bestOf`: one-to-one, nullify / nullify
    /// - `Item.subitems` ↔ `Item.parent`: a tree, cascade / nullify
    public static func graph() -> NSManagedObjectModel {
        func entity(_ name: String) -> NSEntityDescription {
            NSEntityDescription(name: name, properties: [
                NSAttributeDescription(name: "uid", type: .integer64AttributeType, isOptional: false),
                NSAttributeDescription(name: "value", type: .integer32AttributeType),
            ])
        }
        let owner = entity("Owner"), item = entity("Item"), tag = entity("Tag")
        func pair(
            _ a: NSEntityDescription, _ aName: String, toMany aToMany: Bool, _ aRule: NSDeleteRule, ordered: Bool = false,
            _ b: NSEntityDescription, _ bName: String, toMany bToMany: Bool, _ bRule: NSDeleteRule
        ) {
            let forward = NSRelationshipDescription(name: aName, destination: b, toMany: aToMany, deleteRule: aRule, isOrdered: ordered)
            let back = NSRelationshipDescription(name: bName, destination: a, toMany: bToMany, deleteRule: bRule)
            forward.inverseRelationship = back
            back.inverseRelationship = forward
            a.properties += [forward]
            b.properties += [back]
        }
        pair(owner, "items", toMany: true, .cascadeDeleteRule, item, "owner", toMany: false, .nullifyDeleteRule)
        pair(owner, "list", toMany: true, .nullifyDeleteRule, ordered: true, item, "listOwner", toMany: false, .nullifyDeleteRule)
        pair(owner, "tags", toMany: true, .nullifyDeleteRule, tag, "owners", toMany: true, .noActionDeleteRule)
        pair(owner, "guarded", toMany: true, .denyDeleteRule, item, "guardian", toMany: false, .nullifyDeleteRule)
        pair(owner, "best", toMany: false, .nullifyDeleteRule, item, "bestOf", toMany: false, .nullifyDeleteRule)
        pair(item, "subitems", toMany: true, .cascadeDeleteRule, item, "parent", toMany: false, .nullifyDeleteRule)
        let model = NSManagedObjectModel()
        model.entities = [owner, item, tag]
        return model
    }
}
