import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

// Swift ports of the corpus projects' entity migration policies, which their mapping models name.
// The Objective-C/Swift originals are not in the corpus; these do what the projects' policies do
// (MWKCoreData: split `name`; BookMigration: authors from `authorName`, then files per user;
// CoreDataPlus: a `Maker` per `Car.maker`). Bare class names resolve because the test module
// ships resources (a SwiftPM `<Package>_<Target>.resources` bundle), as managed object classes do.

/// MWKCoreData V2 → V3: `name` ("Carla Jones") becomes the required `firstName` and `lastName`.
final class EmployeeToEmployeePolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        let employee = try #require(
            manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first)
        let parts = (sInstance.value(forKey: "name") as? String ?? "").split(separator: " ", maxSplits: 1).map(
            String.init)
        employee.setValue(parts.first ?? "", forKey: "firstName")
        employee.setValue(parts.count > 1 ? parts[1] : "", forKey: "lastName")
    }
}

/// BookMigration: version 2 gives each book an `Author` (one per `authorName`, shared through the
/// manager's `userInfo`); version 3 gives each book a `File` per user of the book.
final class MHWBookToBookPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        let version = (mapping.userInfo?["modelVersion"] as? String).flatMap { Int($0) }
        guard version == 2 || version == 3 else {
            return try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
        let context: NSManagedObjectContext = manager.destinationContext
        let book = NSEntityDescription.insertNewObject(forEntityName: mapping.destinationEntityName!, into: context)
        for key in book.entity.attributesByName.keys where sInstance.entity.attributesByName[key] != nil {
            if let value = sInstance.value(forKey: key) { book.setValue(value, forKey: key) }
        }
        if version == 2 {
            var authors = manager.userInfo?["authors"] as? [String: NSManagedObject] ?? [:]
            let name = sInstance.value(forKey: "authorName") as? String ?? ""
            let author = authors[name] ?? NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue(name, forKey: "name")
            authors[name] = author
            manager.userInfo = (manager.userInfo ?? [:]).merging(["authors": authors]) { $1 }
            book.setValue(Set([author]), forKey: "authors")
        } else {
            for user in sInstance.value(forKey: "users") as? Set<NSManagedObject> ?? [] {
                let file = NSEntityDescription.insertNewObject(forEntityName: "File", into: context)
                file.setValue(sInstance.value(forKey: "fileURL"), forKey: "fileURL")
                file.setValue(book, forKey: "book")
                let request = NSFetchRequest<NSManagedObject>(entityName: "User")
                request.predicate = NSPredicate(format: "userId = %@", user.value(forKey: "userId") as? NSNumber ?? 0)
                file.setValue(try context.fetch(request).last, forKey: "user")
            }
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: book, for: mapping)
    }
}

/// CoreDataPlus V2 → V3: the `maker` string of a car becomes a shared `Maker` (its `createdBy`).
final class V2to3MakerPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let makerName = sInstance.value(forKey: "maker") as? String else { return }
        let car = try #require(
            manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first)
        let context: NSManagedObjectContext = manager.destinationContext
        let request = NSFetchRequest<NSManagedObject>(entityName: "Maker")
        request.predicate = NSPredicate(format: "name == %@", makerName)
        let maker =
            try context.fetch(request).first
            ?? {
                let maker = NSEntityDescription.insertNewObject(forEntityName: "Maker", into: context)
                maker.setValue(makerName, forKey: "name")
                return maker
            }()
        car.setValue(maker, forKey: "createdBy")
    }
}

/// Migrations of the corpus's Apple-written stores through the projects' own mapping models,
/// every row checked with its values.
@Suite("Migration: corpus stores through their mapping models")
struct MappingModelMigrationTests {
    private typealias M = MigrationFixture

    private func copy(_ path: String, into directory: TemporaryDirectory, as name: String) throws -> URL {
        let url = directory.file(name)
        try FileManager.default.copyItem(at: try fixture(path), to: url)
        return url
    }

    private func model(_ path: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel.load(contentsOf: try fixture(path))
    }

    /// Every object of `entity` (without subentities) as a description of `keys`' values, sorted.
    private func rows(_ entity: String, _ keys: [String], _ context: NSManagedObjectContext) throws -> [String] {
        func describe(_ value: Any?) -> String {
            switch value {
            case nil: "nil"
            case let object as NSManagedObject:
                object.entity.attributesByName.keys.sorted().map { "\(object.value(forKey: $0) ?? "nil")" }.joined(
                    separator: "/")
            case let set as Set<NSManagedObject>: "[" + set.map { describe($0) }.sorted().joined(separator: ", ") + "]"
            case let value?: "\(value)"
            }
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.includesSubentities = false
        return try context.fetch(request).map { object in
            keys.map { "\($0)=\(describe(object.value(forKey: $0)))" }.joined(separator: " ")
        }
        .sorted()
    }

    // MARK: MWKCoreData

    private static let mwk = "mwkirk+MWKCoreData/Tests/"
    private static let mwkEmployees = [
        "firstName=Adam lastName=Smith dept=Marketing", "firstName=Bob lastName=Johnson dept=Shipping",
        "firstName=Carla lastName=Jones dept=Engineering",
    ]

    @Test func mwkVersion2StoreReachesVersion3ThroughTheMappingBesideTheModel() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try copy(Self.mwk + "Stores/MWKCoreDataTests2.sqlite", into: directory, as: "Store.sqlite")
        // addPersistentStore finds MappingModels/MWKCoreDataTestsV2ToV3.xcmappingmodel next to the
        // model's .xcdatamodeld before trying inference (which cannot split `name`).
        let v3 = try model(Self.mwk + "Model/MWKCoreDataTests.xcdatamodeld/MWKCoreDataTests3.xcdatamodel")
        let coordinator = try StoreHarness.coordinator(
            model: v3, storeType: NSSQLiteStoreType, url: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try rows("Employee", ["firstName", "lastName", "dept"], context) == Self.mwkEmployees)
        #expect(try rows("Dept", ["name"], context) == ["name=Engineering", "name=Marketing", "name=Shipping"])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(v3.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!FileManager.default.fileExists(atPath: url.path + ".mapped"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }.isEmpty
        )
    }

    @Test func mwkVersion1StoreReachesVersion3InferredThenMapped() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bundle = Self.mwk + "Model/MWKCoreDataTests.xcdatamodeld/"
        let v1 = try model(bundle + "MWKCoreDataTests.xcdatamodel")
        let v2 = try model(bundle + "MWKCoreDataTests2.xcdatamodel")
        let v3 = try model(bundle + "MWKCoreDataTests3.xcdatamodel")
        let source = try copy(Self.mwk + "Stores/MWKCoreDataTests.sqlite", into: directory, as: "V1.sqlite")
        let before = try M.bytes(source)
        let middle = directory.file("V2.sqlite")
        let final = directory.file("V3.sqlite")
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(
            from: source, type: NSSQLiteStoreType,
            mapping: try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2),
            to: middle, type: NSSQLiteStoreType)
        let mapping = try #require(
            NSMappingModel(
                contentsOf: try fixture(Self.mwk + "Model/MappingModels/MWKCoreDataTestsV2ToV3.xcmappingmodel")))
        let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
        try manager.migrateStore(
            from: middle, type: NSSQLiteStoreType, mapping: mapping, to: final, type: NSSQLiteStoreType)
        #expect(manager.migrationProgress == 1)
        #expect(
            manager.sourceInstances(forEntityMappingName: "EmployeeToEmployee", destinationInstances: nil).count == 3)
        let coordinator = try StoreHarness.coordinator(model: v3, storeType: NSSQLiteStoreType, url: final)
        defer { StoreHarness.close(coordinator) }
        #expect(
            try rows("Employee", ["firstName", "lastName", "dept"], StoreHarness.context(coordinator)) == [
                "firstName=Adam lastName=Smith dept=nil", "firstName=Bob lastName=Johnson dept=nil",
                "firstName=Carla lastName=Jones dept=nil",
            ])
        #expect(try M.bytes(source) == before)
    }

    @Test(arguments: ["MWKCoreDataTests.sqlite", "MWKCoreDataTests2.sqlite"])
    func mwkStoresCannotReachVersion3ByInferenceAlone(_ name: String) throws {
        // MWKCoreData's version 3 splits `name` into required `firstName` and `lastName` without
        // defaults: lightweight migration cannot fill them. Without the mapping model (the bundle
        // copied alone), the store stays as it is.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.file("MWKCoreDataTests.xcdatamodeld")
        try FileManager.default.copyItem(at: try fixture(Self.mwk + "Model/MWKCoreDataTests.xcdatamodeld"), to: bundle)
        let url = try copy(Self.mwk + "Stores/" + name, into: directory, as: name)
        let before = try Data(contentsOf: url)
        let v3 = try NSManagedObjectModel.load(
            contentsOf: bundle.appendingPathComponent("MWKCoreDataTests3.xcdatamodel"))
        let error = #expect(throws: OpenCoreDataError.self) {
            _ = try StoreHarness.coordinator(
                model: v3, storeType: NSSQLiteStoreType, url: url,
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
        }
        #expect(error?.code == .inferredMappingModel && error?.entityName == "Employee")
        #expect(try Data(contentsOf: url) == before)
    }

    // MARK: BookMigration

    @Test func bookMigrationModel1ReachesModel3ThroughItsMappingModels() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let root = "hwaxxer+BookMigration/BookMigration/"
        let m1 = try model(root + "Model.xcdatamodeld/Model1.xcdatamodel")
        let m2 = try model(root + "Model.xcdatamodeld/Model2.xcdatamodel")
        let m3 = try model(root + "Model.xcdatamodeld/Model3.xcdatamodel")
        func mapping(_ name: String) throws -> NSMappingModel {
            try #require(NSMappingModel(contentsOf: try fixture(root + name + ".xcmappingmodel")))
        }
        let source = try copy(root + "Model1.sqlite", into: directory, as: "Model1.sqlite")
        let reader = try StoreHarness.coordinator(model: m1, storeType: NSSQLiteStoreType, url: source)
        let books = try rows("Book", ["title", "authorName", "fileURL"], StoreHarness.context(reader))
        StoreHarness.close(reader)
        let before = try M.bytes(source)
        #expect(books.count == 4 && !books.contains { $0.contains("=nil") })

        // Model 1 → 2: one Author per author name, linked to its books; users keep their books.
        let v2 = directory.file("Model2.sqlite")
        try NSMigrationManager(sourceModel: m1, destinationModel: m2).migrateStore(
            from: source, type: NSSQLiteStoreType, mapping: try mapping("Model1_to_Model2"), to: v2,
            type: NSSQLiteStoreType)
        var coordinator = try StoreHarness.coordinator(model: m2, storeType: NSSQLiteStoreType, url: v2)
        var context = StoreHarness.context(coordinator)
        let withAuthors = try rows("Book", ["title", "authors", "fileURL"], context)
        #expect(
            withAuthors
                == books.map { row in
                    // "title=T authorName=A fileURL=F" → "title=T authors=[A] fileURL=F"
                    row.replacingOccurrences(
                        of: #"authorName=(.*) fileURL="#, with: "authors=[$1] fileURL=", options: .regularExpression)
                })
        #expect(
            try rows("Author", ["name"], context) == [
                "name=Franz Kafka", "name=Thomas Bernhard", "name=Witold Gombrowicz",
            ])
        let kafka = try rows("Author", ["name", "books"], context).first { $0.hasPrefix("name=Franz Kafka") }
        #expect(kafka?.contains("Metamorphosis") == true && kafka?.contains("The Trial") == true)
        // The three users (userId 1 each, as Apple's store has them); one owns all four books.
        #expect(try rows("User", ["userId"], context) == ["userId=1", "userId=1", "userId=1"])
        let bookCounts = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User")).map {
            ($0.value(forKey: "books") as? Set<NSManagedObject>)?.count ?? 0
        }
        #expect(bookCounts.sorted() == [0, 0, 4])
        StoreHarness.close(coordinator)

        // Model 2 → 3 in two passes into the same destination (Apple's "multiple passes"): users
        // first, then books, authors and one File per book and user.
        let v3 = directory.file("Model3.sqlite")
        let manager = NSMigrationManager(sourceModel: m2, destinationModel: m3)
        try manager.migrateStore(
            from: v2, type: NSSQLiteStoreType, mapping: try mapping("Model2_to_Model3_User"), to: v3,
            type: NSSQLiteStoreType)
        manager.reset()
        try manager.migrateStore(
            from: v2, type: NSSQLiteStoreType, mapping: try mapping("Model2_to_Model3"), to: v3, type: NSSQLiteStoreType
        )
        coordinator = try StoreHarness.coordinator(model: m3, storeType: NSSQLiteStoreType, url: v3)
        defer { StoreHarness.close(coordinator) }
        context = StoreHarness.context(coordinator)
        #expect(try rows("User", ["userId"], context) == ["userId=1", "userId=1", "userId=1"])
        #expect(
            try rows("Book", ["title", "authors"], context)
                == withAuthors.map {
                    $0.replacingOccurrences(of: #" fileURL=.*"#, with: "", options: .regularExpression)
                })
        #expect(
            try rows("Author", ["name"], context) == [
                "name=Franz Kafka", "name=Thomas Bernhard", "name=Witold Gombrowicz",
            ])
        let files = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "File"))
        #expect(files.count == 4)
        for file in files {
            let book = try #require(file.value(forKey: "book") as? NSManagedObject)
            let original = books.first { $0.hasPrefix("title=\(book.value(forKey: "title") as? String ?? "?") ") }
            #expect(original?.hasSuffix("fileURL=\(file.value(forKey: "fileURL") ?? "nil")") == true)
            #expect(((file.value(forKey: "user") as? NSManagedObject)?.value(forKey: "userId")).map { "\($0)" } == "1")
        }
        #expect(try M.bytes(source) == before)
    }

    // MARK: CoreDataPlus

    @Test(arguments: ["MappingModels/V2toV3.xcmappingmodel", "Fixtures/V2toV3.cdm"])
    func coreDataPlusVersion2ReachesVersion3WithMakers(_ mappingFile: String) throws {
        // The .cdm (what Xcode compiled from the .xcmappingmodel) is read from the corpus itself.
        guard mappingFile.hasSuffix("xcmappingmodel") || Corpus.isPresent else { return }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let root = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/"
        let v2 = try model(root + "SampleModel.xcdatamodeld/SampleModel2.xcdatamodel")
        let v3 = try model(root + "SampleModel.xcdatamodeld/SampleModel3.xcdatamodel")
        let mappingURL =
            mappingFile.hasSuffix("cdm") ? Corpus.repo(root + mappingFile) : try fixture(root + mappingFile)
        let mapping = try #require(NSMappingModel(contentsOf: mappingURL))
        // CoreDataPlus puts its module name in at run time, as on Apple.
        for entityMapping in mapping.entityMappings {
            entityMapping.entityMigrationPolicyClassName = entityMapping.entityMigrationPolicyClassName?
                .replacingOccurrences(of: "REPLACE_AT_RUNTIME", with: "OpenCoreDataTests")
        }
        let source = try copy(root + "Fixtures/SampleModel_V2.sqlite", into: directory, as: "V2.sqlite")
        let reader = try StoreHarness.coordinator(model: v2, storeType: NSSQLiteStoreType, url: source)
        var context = StoreHarness.context(reader)
        let people = try rows("Person", ["firstName", "lastName", "updatedAt"], context)
        var cars: [String: [String]] = [:]
        for entity in ["Car", "SportCar", "LuxuryCar"] {
            let extra = entity == "LuxuryCar" ? ["isLimitedEdition"] : []
            cars[entity] = try rows(
                entity, ["numberPlate", "model", "markedForDeletionAsOf", "maker", "owner"] + extra, context)
        }
        let makers = Set(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap {
                $0.value(forKey: "maker") as? String
            })
        StoreHarness.close(reader)
        let before = try M.bytes(source)
        #expect(people.count == 20 && cars.values.map(\.count).reduce(0, +) == 125)
        #expect(!makers.isEmpty && cars.values.joined().allSatisfy { !$0.contains("maker=nil") })

        let destination = directory.file("V3.sqlite")
        let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
        try manager.migrateStore(
            from: source, type: NSSQLiteStoreType, mapping: mapping, to: destination, type: NSSQLiteStoreType)
        let coordinator = try StoreHarness.coordinator(model: v3, storeType: NSSQLiteStoreType, url: destination)
        defer { StoreHarness.close(coordinator) }
        context = StoreHarness.context(coordinator)
        #expect(try rows("Person", ["firstName", "lastName", "updatedAt"], context) == people)
        for (entity, expected) in cars {
            let extra = entity == "LuxuryCar" ? ["isLimitedEdition"] : []
            let migrated = try rows(
                entity, ["numberPlate", "model", "markedForDeletionAsOf", "createdBy", "owner"] + extra, context)
            // `maker=FIAT` became `createdBy=FIAT` (the Maker's one attribute, its name).
            #expect(
                migrated == expected.map { $0.replacingOccurrences(of: " maker=", with: " createdBy=") }.sorted(),
                "\(entity)")
        }
        #expect(try rows("Maker", ["name"], context) == makers.sorted().map { "name=\($0)" })
        // previousOwners is `[owner]` and Person.previousCars its inverse, as the mapping says.
        for car in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")) {
            let owner = car.value(forKey: "owner") as? NSManagedObject
            #expect((car.value(forKey: "previousOwners") as? Set<NSManagedObject>) == Set([owner].compactMap { $0 }))
        }
        #expect(try M.bytes(source) == before)
    }

    @Test func automaticMigrationThatFailsLeavesTheStoreAsItWas() throws {
        // CoreDataPlus's mapping beside its model names `REPLACE_AT_RUNTIME.V2to3MakerPolicy`, which
        // the app rewrites at run time; opened as it is, the mapping is found first (as on Apple)
        // and its policy class cannot be: the error names it and the mapping, the file is untouched.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let root = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/"
        let url = try copy(root + "Fixtures/SampleModel_V2.sqlite", into: directory, as: "Store.sqlite")
        let before = try M.bytes(url)
        let v3 = try model(root + "SampleModel.xcdatamodeld/SampleModel3.xcdatamodel")
        let error = #expect(throws: OpenCoreDataError.self) {
            _ = try StoreHarness.coordinator(
                model: v3, storeType: NSSQLiteStoreType, url: url,
                options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        }
        #expect(error?.code == .migration)
        #expect(error?.message.contains(#"entity mapping "CarToCar""#) == true)
        #expect(error?.message.contains("REPLACE_AT_RUNTIME.V2to3MakerPolicy") == true)
        #expect(error?.message.contains("V2toV3.xcmappingmodel") == true)
        #expect(try M.bytes(url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Store.sqlite"])
    }
}
