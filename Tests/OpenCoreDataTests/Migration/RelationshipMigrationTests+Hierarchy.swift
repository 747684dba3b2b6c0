import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// Entity hierarchy changes (entities moving between tables, renumbered Z_ENT) and relationships
/// to entities with subentities; helpers are in `RelationshipMigrationTests.swift`.
extension RelationshipMigrationTests {
    // MARK: Entity hierarchy

    /// Person(name).car → Car ↔ Car.drivers; v1: Vehicle(name){Car(seats), Truck(load)}, v2 as `carIsRoot` says.
    /// Person.favorite → Vehicle (to-one, no inverse).
    func garageModel(_ version: String, carIsRoot: Bool) -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("name")])
        let vehicle = M.entity("Vehicle", [M.attribute("name")])
        let car = M.entity("Car", carIsRoot ? [M.attribute("name"), M.attribute("seats", .integer16AttributeType)] : [M.attribute("seats", .integer16AttributeType)])
        let truck = M.entity("Truck", [M.attribute("load", .doubleAttributeType)])
        vehicle.subentities = carIsRoot ? [truck] : [car, truck]
        let drives = NSRelationshipDescription(name: "car", destination: car, toMany: false)
        let drivers = NSRelationshipDescription(name: "drivers", destination: person, toMany: true)
        drives.inverseRelationship = drivers
        drivers.inverseRelationship = drives
        let favorite = NSRelationshipDescription(name: "favorite", destination: vehicle, toMany: false)
        person.properties += [drives, favorite]
        car.properties += [drivers]
        return M.model(version, [person, vehicle, car, truck])
    }

    @Test func subentityMovingOutOfItsHierarchyGetsItsOwnTable() throws {
        // v1 numbers: Person 1, Vehicle 2, Car 3, Truck 4 (all vehicles in ZVEHICLE). In v2 Car is a
        // root: kept numbers would leave Vehicle{Truck} as {2, 4}, not contiguous, so every entity
        // is numbered afresh (FORMATS.md §1.4): Car 1, Person 2, Vehicle 3, Truck 4. Cars keep their
        // Z_PK in ZCAR, so Person.car still points at them. Person.favorite (to Vehicle) pointed at a
        // car, which is no longer a Vehicle: it becomes nil (Apple's behaviour here is not documented).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = garageModel("1", carIsRoot: false)
        let url = try M.makeStore(v1, in: directory) { context in
            let beetle = insertObject("Car", ["name": "beetle", "seats": Int16(4)], into: context)
            let mini = insertObject("Car", ["name": "mini", "seats": Int16(2)], into: context)
            let van = insertObject("Truck", ["name": "van", "load": 1.5], into: context)
            insertObject("Vehicle", ["name": "cart"], into: context)
            insertObject("Person", ["name": "Ann", "car": beetle, "favorite": van], into: context)
            insertObject("Person", ["name": "Bob", "car": beetle, "favorite": mini], into: context)
            insertObject("Person", ["name": "Cid", "car": mini], into: context)
            insertObject("Person", ["name": "Dan"], into: context)
        }
        let vehicleKeys = try keys("ZVEHICLE", at: url)
        let vehicleMax = try RawDatabase(url).rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Vehicle'").first?.first as? Int64
        let v2 = garageModel("2", carIsRoot: true)
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Person", "car") == ["Ann": ["beetle"], "Bob": ["beetle"], "Cid": ["mini"], "Dan": []])
        #expect(try self.links(context, "Person", "favorite") == ["Ann": ["van"], "Bob": [], "Cid": [], "Dan": []])
        #expect(try self.links(context, "Car", "drivers") == ["beetle": ["Ann", "Bob"], "mini": ["Cid"]])
        #expect(try M.rows("Car", context, sortedBy: "name").map { "\($0["name"]!) \($0["seats"]!)" } == ["beetle 4", "mini 2"])
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Vehicle")).compactMap { $0.value(forKey: "name") as? String }.sorted() == ["cart", "van"])
        #expect(try M.rows("Truck", context, sortedBy: "name").map { $0["load"] as? Double } == [1.5])
        // Raw layout: ZCAR with the cars under their old keys, ZVEHICLE without them, renumbered Z_ENT.
        #expect(try M.columns("ZCAR", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZSEATS", "ZNAME"])
        #expect(try keys("ZCAR", at: url) == vehicleKeys.filter { ["beetle", "mini"].contains($0.key) })
        #expect(try RawDatabase(url).rows("SELECT DISTINCT Z_ENT FROM ZCAR").map { $0[0] as? Int64 } == [1])
        #expect(try RawDatabase(url).rows("SELECT ZNAME, Z_ENT FROM ZVEHICLE ORDER BY ZNAME").map { "\($0[0]!) \($0[1]!)" } == ["cart 3", "van 4"])
        #expect(try RawDatabase(url).rows("SELECT DISTINCT Z_ENT FROM ZPERSON").map { $0[0] as? Int64 } == [2])
        #expect(try M.columns("ZPERSON", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZCAR", "ZFAVORITE", "Z3_FAVORITE", "ZNAME"])
        #expect(try RawDatabase(url).rows("SELECT Z3_FAVORITE FROM ZPERSON WHERE ZNAME = 'Ann'").first?.first as? Int64 == 4)
        let pk = try primaryKeyRows(url)
        #expect(pk.count == 4)
        #expect(pk[0] == "1 Car 0 \(vehicleMax!)")
        #expect(pk[1].hasPrefix("2 Person 0 ") && pk[2] == "3 Vehicle 0 \(vehicleMax!)" && pk[3] == "4 Truck 3 0")
        try expectInsertsWork(coordinator, url: url, [("Car", "ZCAR"), ("Truck", "ZVEHICLE"), ("Person", "ZPERSON")])
    }

    @Test func hierarchySplitWhenItsRootIsRemovedKeepsEveryRowAndLink() throws {
        // v1 Vehicle{Car, Truck} with Person.car → Car; v2 removes Vehicle: Car and Truck are roots.
        // Neither continues ZVEHICLE (its root is gone and two tables draw from it), so both are new
        // tables with their rows copied, and ZVEHICLE is dropped; deferred, it stays until finish.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = garageModel("1", carIsRoot: false)
        let url = try M.makeStore(v1, in: directory) { context in
            let beetle = insertObject("Car", ["name": "beetle", "seats": Int16(4)], into: context)
            insertObject("Truck", ["name": "van", "load": 1.5], into: context)
            insertObject("Vehicle", ["name": "cart"], into: context)
            insertObject("Person", ["name": "Ann", "car": beetle], into: context)
            insertObject("Person", ["name": "Bob"], into: context)
        }
        let person = M.entity("Person", [M.attribute("name")])
        let car = M.entity("Car", [M.attribute("name"), M.attribute("seats", .integer16AttributeType)])
        let truck = M.entity("Truck", [M.attribute("name"), M.attribute("load", .doubleAttributeType)])
        let drives = NSRelationshipDescription(name: "car", destination: car, toMany: false)
        let drivers = NSRelationshipDescription(name: "drivers", destination: person, toMany: true)
        drives.inverseRelationship = drivers
        drivers.inverseRelationship = drives
        person.properties += [drives]
        car.properties += [drivers]
        let v2 = M.model("2", [person, car, truck])
        var options = M.options([v1])
        options[NSPersistentStoreDeferredLightweightMigrationOptionKey] = true
        let coordinator = try M.open(url, with: v2, sources: [v1], options: options)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Person", "car") == ["Ann": ["beetle"], "Bob": []])
        #expect(try M.rows("Truck", context, sortedBy: "name").map { "\($0["name"]!) \($0["load"]!)" } == ["van 1.5"])
        #expect(try M.rows("Car", context, sortedBy: "name").map { "\($0["name"]!) \($0["seats"]!)" } == ["beetle 4"])
        #expect(try tables(url).isSuperset(of: ["ZCAR", "ZTRUCK", "ZVEHICLE"]))
        #expect(try primaryKeyRows(url).map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == ["1 Person 0", "3 Car 0", "4 Truck 0"])  // numbers kept: each hierarchy is contiguous
        try expectInsertsWork(coordinator, url: url, [("Car", "ZCAR"), ("Truck", "ZTRUCK")])
        try coordinator.finishDeferredLightweightMigration()
        #expect(!(try tables(url)).contains("ZVEHICLE"))
        #expect(try M.rows("Car", StoreHarness.context(coordinator), sortedBy: "name").count == 2)
    }

    @Test func rootEntityGainingANewParentMovesIntoTheParentsTable() throws {
        // v1: Car(name) and Driver(name) roots, Driver.car ↔ Car.drivers. v2 adds Vehicle(wheels,
        // required, default 4) as Car's parent: ZCAR becomes ZVEHICLE in place (renamed, a column
        // added), and the numbers are Driver 1, Vehicle 2, Car 3.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func model(_ version: String, parent: Bool) -> NSManagedObjectModel {
            let car = M.entity("Car", [M.attribute("name")])
            let driver = M.entity("Driver", [M.attribute("name")])
            let drives = NSRelationshipDescription(name: "car", destination: car, toMany: false)
            let drivers = NSRelationshipDescription(name: "drivers", destination: driver, toMany: true)
            drives.inverseRelationship = drivers
            drivers.inverseRelationship = drives
            driver.properties += [drives]
            car.properties += [drivers]
            guard parent else { return M.model(version, [car, driver]) }
            let vehicle = M.entity("Vehicle", [M.attribute("wheels", .integer16AttributeType, optional: false, defaultValue: Int16(4))])
            vehicle.subentities = [car]
            return M.model(version, [car, driver, vehicle])
        }
        let v1 = model("1", parent: false)
        let url = try M.makeStore(v1, in: directory) { context in
            let beetle = insertObject("Car", ["name": "beetle"], into: context)
            let mini = insertObject("Car", ["name": "mini"], into: context)
            insertObject("Car", ["name": "spare"], into: context)
            insertObject("Driver", ["name": "Ann", "car": beetle], into: context)
            insertObject("Driver", ["name": "Bob", "car": mini], into: context)
            insertObject("Driver", ["name": "Cid"], into: context)
        }
        let carKeys = try keys("ZCAR", at: url)
        let v2 = model("2", parent: true)
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Driver", "car") == ["Ann": ["beetle"], "Bob": ["mini"], "Cid": []])
        #expect(try self.links(context, "Car", "drivers") == ["beetle": ["Ann"], "mini": ["Bob"], "spare": []])
        let vehicles = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Vehicle"))
        #expect(vehicles.count == 3 && vehicles.allSatisfy { $0.entity.name == "Car" && $0.value(forKey: "wheels") as? Int16 == 4 })
        #expect(!(try tables(url)).contains("ZCAR"))
        #expect(try M.columns("ZVEHICLE", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZWHEELS"])
        #expect(try keys("ZVEHICLE", at: url) == carKeys)
        #expect(try RawDatabase(url).rows("SELECT DISTINCT Z_ENT FROM ZVEHICLE").map { $0[0] as? Int64 } == [3])
        #expect(try RawDatabase(url).rows("SELECT DISTINCT Z_ENT FROM ZDRIVER").map { $0[0] as? Int64 } == [1])
        let pk = try primaryKeyRows(url)
        #expect(pk == ["1 Driver 0 3", "2 Vehicle 0 3", "3 Car 2 0"])
        try expectInsertsWork(coordinator, url: url, [("Car", "ZVEHICLE"), ("Driver", "ZDRIVER")])
    }

    /// Animal(name){Dog(breed)[, Cat(lives)]}, Keeper(name).favorite → Animal ↔ Animal.fans,
    /// Zoo(name).animals ↔ Animal.zoos (many-to-many).
    func zooModel(_ version: String, cats: Bool) -> NSManagedObjectModel {
        let animal = M.entity("Animal", [M.attribute("name")])
        let dog = M.entity("Dog", [M.attribute("breed")])
        let cat = M.entity("Cat", [M.attribute("lives", .integer16AttributeType, optional: false, defaultValue: Int16(9))])
        animal.subentities = cats ? [dog, cat] : [dog]
        let keeper = M.entity("Keeper", [M.attribute("name")])
        let zoo = M.entity("Zoo", [M.attribute("name")])
        let favorite = NSRelationshipDescription(name: "favorite", destination: animal, toMany: false)
        let fans = NSRelationshipDescription(name: "fans", destination: keeper, toMany: true)
        favorite.inverseRelationship = fans
        fans.inverseRelationship = favorite
        let animals = NSRelationshipDescription(name: "animals", destination: animal, toMany: true)
        let zoos = NSRelationshipDescription(name: "zoos", destination: zoo, toMany: true)
        animals.inverseRelationship = zoos
        zoos.inverseRelationship = animals
        keeper.properties += [favorite]
        zoo.properties += [animals]
        animal.properties += [fans, zoos]
        return M.model(version, [animal, dog, keeper, zoo] + (cats ? [cat] : []))
    }

    @Test func subentityAddedToAnExistingHierarchyRenumbersEveryEntity() throws {
        // v1: Animal 1, Dog 2, Keeper 3, Zoo 4. Cat would be 5, not next to Animal's 1–2, so the
        // store is renumbered as a new v2 store would be: Animal 1, Cat 2, Dog 3, Keeper 4, Zoo 5.
        // Z_ENT values, the destination-entity column Z1_FAVORITE, the join table's column named
        // after Zoo's number (Z_4ZOOS → Z_5ZOOS) and Z_PRIMARYKEY all follow.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = zooModel("1", cats: false)
        let url = try M.makeStore(v1, in: directory) { context in
            let rex = insertObject("Dog", ["name": "rex", "breed": "collie"], into: context)
            let generic = insertObject("Animal", ["name": "blob"], into: context)
            let fido = insertObject("Dog", ["name": "fido", "breed": "pug"], into: context)
            insertObject("Keeper", ["name": "Ann", "favorite": rex], into: context)
            insertObject("Keeper", ["name": "Bob", "favorite": generic], into: context)
            insertObject("Keeper", ["name": "Cid"], into: context)
            insertObject("Zoo", ["name": "north", "animals": Set([rex, generic])], into: context)
            insertObject("Zoo", ["name": "south", "animals": Set([rex, fido])], into: context)
        }
        #expect(try M.columns("Z_1ZOOS", at: url) == ["Z_1ANIMALS", "Z_4ZOOS"])
        let v2 = zooModel("2", cats: true)
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Keeper", "favorite") == ["Ann": ["rex"], "Bob": ["blob"], "Cid": []])
        #expect(try self.links(context, "Zoo", "animals") == ["north": ["blob", "rex"], "south": ["fido", "rex"]])
        #expect(try self.links(context, "Animal", "zoos") == ["blob": ["north"], "rex": ["north", "south"], "fido": ["south"]])
        #expect(try M.rows("Dog", context, sortedBy: "name").map { $0["breed"] as? String } == ["pug", "collie"])
        #expect(try RawDatabase(url).rows("SELECT ZNAME, Z_ENT FROM ZANIMAL ORDER BY ZNAME").map { "\($0[0]!) \($0[1]!)" } == ["blob 1", "fido 3", "rex 3"])
        #expect(try RawDatabase(url).rows("SELECT ZNAME, Z1_FAVORITE FROM ZKEEPER ORDER BY ZNAME").map { "\($0[0]!) \($0[1] ?? "nil")" } == ["Ann 3", "Bob 1", "Cid nil"])
        #expect(try RawDatabase(url).rows("SELECT DISTINCT Z_ENT FROM ZKEEPER").map { $0[0] as? Int64 } == [4])
        #expect(try RawDatabase(url).rows("SELECT DISTINCT Z_ENT FROM ZZOO").map { $0[0] as? Int64 } == [5])
        #expect(try M.columns("Z_1ZOOS", at: url) == ["Z_1ANIMALS", "Z_5ZOOS"])
        let pk = try primaryKeyRows(url)
        #expect(pk == ["1 Animal 0 3", "2 Cat 1 0", "3 Dog 1 0", "4 Keeper 0 3", "5 Zoo 0 2"])
        let indexes = try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'index'").compactMap { $0[0] as? String }
        #expect(indexes.contains("Z_1ZOOS_Z_5ZOOS_INDEX") && !indexes.contains("Z_1ZOOS_Z_4ZOOS_INDEX"))
        // A new cat, saved and fetched through the renumbered hierarchy.
        let cat = insertObject("Cat", ["name": "tom"], into: context)
        let keeper = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Keeper")).first { $0.value(forKey: "name") as? String == "Cid" })
        keeper.setValue(cat, forKey: "favorite")
        try context.save()
        let fresh = StoreHarness.context(coordinator)
        #expect(try M.rows("Cat", fresh, sortedBy: "name").map { "\($0["name"]!) \($0["lives"]!)" } == ["tom 9"])
        #expect(try self.links(fresh, "Keeper", "favorite")["Cid"] == ["tom"])
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Animal")).count == 4)
        #expect(try RawDatabase(url).rows("SELECT Z_PK, Z_ENT FROM ZANIMAL WHERE ZNAME = 'tom'").first.map { "\($0[0]!) \($0[1]!)" } == "4 2")
    }

    @Test func manyToManyBecomingToOneFillsTheDestinationEntityColumn() throws {
        // Zoo.animals ↔ Animal.zoos (many-to-many) becomes Zoo.star (to-one) ↔ Animal.zoos (to-many).
        // Animal has subentities, so ZZOO gets ZSTAR and Z1_STAR (the star's Z_ENT), FORMATS.md §1.3.
        // Each zoo keeps the animal with the lowest Z_PK (OpenCoreData's rule, see above).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = zooModel("1", cats: false)
        let url = try M.makeStore(v1, in: directory) { context in
            let blob = insertObject("Animal", ["name": "blob"], into: context)
            let rex = insertObject("Dog", ["name": "rex"], into: context)
            insertObject("Zoo", ["name": "north", "animals": Set([rex])], into: context)
            insertObject("Zoo", ["name": "south", "animals": Set([rex, blob])], into: context)
            insertObject("Zoo", ["name": "west"], into: context)
        }
        let pk = try keys("ZANIMAL", at: url)
        let southStar = pk["blob"]! < pk["rex"]! ? "blob" : "rex"
        let v2 = zooModel("2", cats: false)
        let zoo = v2.entitiesByName["Zoo"]!
        let animals = zoo.relationshipsByName["animals"]!
        animals.name = "star"
        animals.renamingIdentifier = "animals"
        animals.maxCount = 1
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Zoo", "star") == ["north": ["rex"], "south": [southStar], "west": []])
        #expect(try M.columns("ZZOO", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZSTAR", "Z1_STAR"])
        let stars = try RawDatabase(url).rows("SELECT z.ZNAME, z.Z1_STAR, a.Z_ENT FROM ZZOO z LEFT JOIN ZANIMAL a ON a.Z_PK = z.ZSTAR ORDER BY z.ZNAME")
        #expect(stars.map { "\($0[0]!) \($0[1] ?? "nil") \($0[2] ?? "nil")" } == ["north 2 2", "south \(southStar == "rex" ? 2 : 1) \(southStar == "rex" ? 2 : 1)", "west nil nil"])
        #expect(!(try tables(url)).contains("Z_1ZOOS"))
    }

    @Test func entityMovingToAnotherParentInItsHierarchyKeepsItsRows() throws {
        // v1: Animal{Dog, Mammal}; v2: Animal{Mammal{Dog}}. Numbers stay contiguous (Animal 1,
        // Dog 2, Mammal 3), so no row changes: Z_PRIMARYKEY gets Dog's new parent, and a Mammal
        // fetch now includes dogs.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func model(_ version: String, nested: Bool) -> NSManagedObjectModel {
            let animal = M.entity("Animal", [M.attribute("name")])
            let dog = M.entity("Dog", [M.attribute("breed")])
            let mammal = M.entity("Mammal", [M.attribute("fur", .booleanAttributeType)])
            if nested {
                mammal.subentities = [dog]
                animal.subentities = [mammal]
            } else {
                animal.subentities = [dog, mammal]
            }
            return M.model(version, [animal, dog, mammal])
        }
        let v1 = model("1", nested: false)
        let url = try M.makeStore(v1, in: directory) { context in
            insertObject("Dog", ["name": "rex", "breed": "pug"], into: context)
            insertObject("Mammal", ["name": "cow", "fur": true], into: context)
            insertObject("Animal", ["name": "blob"], into: context)
        }
        let coordinator = try M.open(url, with: model("2", nested: true), sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        let mammals = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Mammal"))
        #expect(mammals.compactMap { $0.value(forKey: "name") as? String }.sorted() == ["cow", "rex"])
        #expect(try M.rows("Dog", context, sortedBy: "name").map { $0["breed"] as? String } == ["pug"])
        #expect(try primaryKeyRows(url) == ["1 Animal 0 3", "2 Dog 3 0", "3 Mammal 1 0"])
        try expectInsertsWork(coordinator, url: url, [("Dog", "ZANIMAL")])
    }

    @Test func attributeMovedUpToANewParentKeepsItsValues() throws {
        // Apple: "create a new parent or child entity and move properties up and down the entity
        // hierarchy". v1 Car(name, seats) root; v2 Vehicle(seats){Car(name)}: seats now belongs to
        // Vehicle and keeps every car's value.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = M.model("1", [M.entity("Car", [M.attribute("name"), M.attribute("seats", .integer16AttributeType)])])
        let url = try M.makeStore(v1, in: directory) { context in
            insertObject("Car", ["name": "beetle", "seats": Int16(4)], into: context)
            insertObject("Car", ["name": "mini", "seats": Int16(2)], into: context)
        }
        let vehicle = M.entity("Vehicle", [M.attribute("seats", .integer16AttributeType)])
        let car = M.entity("Car", [M.attribute("name")])
        vehicle.subentities = [car]
        let coordinator = try M.open(url, with: M.model("2", [car, vehicle]), sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try M.rows("Car", context, sortedBy: "name").map { "\($0["name"]!) \($0["seats"]!)" } == ["beetle 4", "mini 2"])
        // ZCAR became ZVEHICLE in place: same columns, nothing rewritten.
        #expect(try M.columns("ZVEHICLE", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZSEATS", "ZNAME"])
    }
}

/// Relationship storage changes on a large store. A manual measurement (debug build), off unless
/// `OCD_MIGRATION_BENCH` is set: `OCD_MIGRATION_BENCH=1 swift test --skip-build --filter RelationshipMigrationMeasurement`.
@Suite("Migration: relationship changes, measured")
struct RelationshipMigrationMeasurement {
    private func model(_ version: String, manyToMany: Bool, toOne: Bool = false) -> NSManagedObjectModel {
        let owner = M.entity("Owner", [M.attribute("name")])
        let pet = M.entity("Pet", [M.attribute("name")])
        let pets = NSRelationshipDescription(name: toOne ? "pet" : "pets", destination: pet, toMany: !toOne)
        pets.renamingIdentifier = toOne ? "pets" : nil
        let back = NSRelationshipDescription(name: manyToMany ? "owners" : "owner", destination: owner, toMany: manyToMany)
        back.renamingIdentifier = manyToMany ? "owner" : nil
        pets.inverseRelationship = back
        back.inverseRelationship = pets
        owner.properties += [pets]
        pet.properties += [back]
        return M.model(version, [owner, pet])
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["OCD_MIGRATION_BENCH"] != nil))
    func measure() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = model("1", manyToMany: false)
        let base = try M.makeStore(v1, in: directory, name: "Base.sqlite") { _ in }
        let raw = try RawDatabase(base, readOnly: false)
        let (owners, pets) = (200_000, 600_000)
        _ = try raw.rows("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(owners)) INSERT INTO ZOWNER (Z_PK, Z_ENT, Z_OPT, ZNAME) SELECT i, 1, 1, 'o' || i FROM n")
        _ = try raw.rows("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(pets)) INSERT INTO ZPET (Z_PK, Z_ENT, Z_OPT, ZNAME, ZOWNER) SELECT i, 2, 1, 'p' || i, CASE WHEN i % 7 = 0 THEN NULL ELSE 1 + i % \(owners) END FROM n")
        _ = try raw.rows("UPDATE Z_PRIMARYKEY SET Z_MAX = CASE Z_ENT WHEN 1 THEN \(owners) ELSE \(pets) END")
        _ = try raw.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        let linked = try raw.rows("SELECT COUNT(*) FROM ZPET WHERE ZOWNER IS NOT NULL")[0][0] as? Int64
        print("MEASURE \(owners) owners, \(pets) pets, \(linked ?? 0) links")
        for (label, v2, joinRows) in [
            ("one-to-many -> many-to-many", model("2", manyToMany: true), linked),
            ("one-to-many -> one-to-one", model("2", manyToMany: false, toOne: true), nil),
        ] {
            let url = directory.file(label.replacingOccurrences(of: " ", with: "_") + ".sqlite")
            try FileManager.default.copyItem(at: base, to: url)
            let start = Date()
            let coordinator = try M.open(url, with: v2, sources: [v1])
            let elapsed = Date().timeIntervalSince(start)
            StoreHarness.close(coordinator)
            print("MEASURE \(label): \(String(format: "%.3f", elapsed)) s")
            if let joinRows { #expect(try RawDatabase(url).rows("SELECT COUNT(*) FROM Z_1PETS")[0][0] as? Int64 == joinRows) }
        }
    }
}
