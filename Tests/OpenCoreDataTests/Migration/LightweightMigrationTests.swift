import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// Lightweight migration of SQLite stores in place: one test per change type, each reading the rows
/// back after migration, plus the SQL each change runs.
@Suite("Lightweight migration: SQLite in place")
struct LightweightMigrationTests {
    /// v1 of the running example: `Person(name required, age, city)` with three rows.
    private func personV1() -> NSManagedObjectModel {
        M.model(
            "1",
            [
                M.entity(
                    "Person",
                    [M.attribute("name", optional: false), M.attribute("age", .integer32AttributeType), M.attribute("city")])
            ])
    }

    private func seedPeople(_ context: NSManagedObjectContext) {
        insertObject("Person", ["name": "Ann", "age": 30, "city": "Oslo"], into: context)
        insertObject("Person", ["name": "Bob", "age": 40], into: context)
        insertObject("Person", ["name": "Cid", "city": "Rome"], into: context)
    }

    private func store(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(personV1(), in: directory) { seedPeople($0) }
    }

    @Test func addedAttributesAreAddedColumnsWithoutRewritingRows() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let v2 = M.model(
            "2",
            [
                M.entity(
                    "Person",
                    [
                        M.attribute("name", optional: false), M.attribute("age", .integer32AttributeType), M.attribute("city"),
                        M.attribute("email"),
                        M.attribute("score", .doubleAttributeType, optional: false, defaultValue: 1.5),
                    ])
            ])
        let coordinator = try M.open(url, with: v2, sources: [personV1()])
        defer { StoreHarness.close(coordinator) }
        // Two ALTER TABLE … ADD COLUMN and no UPDATE/INSERT of ZPERSON rows: existing rows are not rewritten.
        let statements = try sqliteStore(coordinator).migrationStatements
        #expect(statements.filter { $0.contains("ZPERSON") } == [
            "ALTER TABLE ZPERSON ADD COLUMN ZEMAIL VARCHAR",
            "ALTER TABLE ZPERSON ADD COLUMN ZSCORE FLOAT DEFAULT 1.5",
        ])
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid"])
        #expect(rows.map { $0["age"] as? Int32 } == [30, 40, nil])
        #expect(rows.map { $0["city"] as? String } == ["Oslo", nil, "Rome"])
        #expect(rows.map { $0["score"] as? Double } == [1.5, 1.5, 1.5])
        #expect(rows.allSatisfy { $0["email"] == nil })
        // The metadata now describes v2, written in the same transaction.
        let metadata = coordinator.metadata(for: coordinator.persistentStores[0])
        #expect(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["2"])
        #expect(metadata[NSStoreModelVersionChecksumKey] as? String == v2.versionChecksum)
        // New objects save and read back with the new attributes.
        let context = StoreHarness.context(coordinator)
        insertObject("Person", ["name": "Dee", "email": "dee@example.com", "score": 9.0], into: context)
        try context.save()
        let dee = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")[3]
        #expect(dee["email"] as? String == "dee@example.com" && dee["score"] as? Double == 9.0)
    }

    @Test func removedAttributeRebuildsTheTableKeepingEveryRow() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let before = try RawDatabase(url).rows("SELECT Z_PK, ZNAME FROM ZPERSON ORDER BY Z_PK").map { "\($0[0]!) \($0[1]!)" }
        let v2 = M.model("2", [M.entity("Person", [M.attribute("name", optional: false), M.attribute("city")])])
        let coordinator = try M.open(url, with: v2, sources: [personV1()])
        defer { StoreHarness.close(coordinator) }
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid"])
        #expect(rows.map { $0["city"] as? String } == ["Oslo", nil, "Rome"])
        #expect(try M.columns("ZPERSON", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZCITY", "ZNAME"])
        // Primary keys (and so object IDs) survive the rebuild.
        let after = try RawDatabase(url).rows("SELECT Z_PK, ZNAME FROM ZPERSON ORDER BY Z_PK").map { "\($0[0]!) \($0[1]!)" }
        #expect(after == before)
    }

    @Test func renamedAttributeIsARenamedColumn() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let v2 = M.model(
            "2",
            [
                M.entity(
                    "Person",
                    [
                        M.attribute("fullName", optional: false, renamedFrom: "name"),
                        M.attribute("age", .integer32AttributeType), M.attribute("town", renamedFrom: "city"),
                    ])
            ])
        let coordinator = try M.open(url, with: v2, sources: [personV1()])
        defer { StoreHarness.close(coordinator) }
        let statements = try sqliteStore(coordinator).migrationStatements.filter { $0.contains("ZPERSON") }
        #expect(statements.contains("ALTER TABLE ZPERSON RENAME COLUMN ZNAME TO ZFULLNAME"))
        #expect(statements.contains("ALTER TABLE ZPERSON RENAME COLUMN ZCITY TO ZTOWN"))
        #expect(!statements.contains { $0.hasPrefix("INSERT") || $0.hasPrefix("UPDATE") })
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "fullName")
        #expect(rows.map { $0["fullName"] as? String } == ["Ann", "Bob", "Cid"])
        #expect(rows.map { $0["town"] as? String } == ["Oslo", nil, "Rome"])
        #expect(rows.map { $0["age"] as? Int32 } == [30, 40, nil])
    }

    @Test func renamesFollowTheCanonicalNameAcrossSeveralVersions() throws {
        // Apple: a renaming identifier names the element in the source model, so v1 → v3 works
        // when v2 renamed `city` to `town` and v3 renamed it again to `place` (both say "city").
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let v3 = M.model(
            "3",
            [
                M.entity(
                    "Human",
                    [
                        M.attribute("name", optional: false), M.attribute("age", .integer32AttributeType),
                        M.attribute("place", renamedFrom: "city"),
                    ], renamedFrom: "Person")
            ])
        let coordinator = try M.open(url, with: v3, sources: [personV1()])
        defer { StoreHarness.close(coordinator) }
        #expect(try sqliteStore(coordinator).migrationStatements.contains("ALTER TABLE ZPERSON RENAME TO ZHUMAN"))
        let rows = try M.rows("Human", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["place"] as? String } == ["Oslo", nil, "Rome"])
        let names = try RawDatabase(url).rows("SELECT Z_NAME FROM Z_PRIMARYKEY").compactMap { $0[0] as? String }
        // Z_NAME keeps the canonical (first) name, as in Apple-migrated stores (SampleModel_V2.sqlite).
        #expect(names == ["Person"])
        StoreHarness.close(coordinator)
        let reopened = try StoreHarness.coordinator(model: v3, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(reopened) }
        #expect(try M.rows("Human", StoreHarness.context(reopened), sortedBy: "name").count == 3)
    }

    @Test func optionalAttributeBecomingRequiredGetsItsDefaultWhereItWasNil() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let v2 = M.model(
            "2",
            [
                M.entity(
                    "Person",
                    [
                        M.attribute("name", optional: false),
                        M.attribute("age", .integer32AttributeType, optional: false, defaultValue: Int32(18)),
                        M.attribute("city", optional: false, defaultValue: "Nowhere"),
                    ])
            ])
        let coordinator = try M.open(url, with: v2, sources: [personV1()])
        defer { StoreHarness.close(coordinator) }
        let rows = try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["age"] as? Int32 } == [30, 40, 18])
        #expect(rows.map { $0["city"] as? String } == ["Oslo", "Nowhere", "Rome"])
        // Only the rows that were NULL are written.
        let statements = try sqliteStore(coordinator).migrationStatements.filter { $0.contains("ZPERSON") }
        #expect(statements.contains { $0.hasPrefix("UPDATE ZPERSON SET ZCITY = 'Nowhere' WHERE ZCITY IS NULL") })
        #expect(!statements.contains { $0.hasPrefix("CREATE TABLE") })
        // A required attribute that was optional still validates on the next save.
        let context = StoreHarness.context(coordinator)
        insertObject("Person", ["name": "Eve"], into: context)
        try context.save()
    }

    @Test func addedEntityWithARelationshipGetsATableAndAnEntityNumber() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let person = M.entity(
            "Person",
            [M.attribute("name", optional: false), M.attribute("age", .integer32AttributeType), M.attribute("city")])
        let pet = M.entity("Pet", [M.attribute("name")])
        let pets = NSRelationshipDescription(name: "pets", destination: pet, toMany: true)
        let owner = NSRelationshipDescription(name: "owner", destination: person, toMany: false)
        pets.inverseRelationship = owner
        owner.inverseRelationship = pets
        person.properties += [pets]
        pet.properties += [owner]
        let v2 = M.model("2", [person, pet])
        let coordinator = try M.open(url, with: v2, sources: [personV1()])
        let context = StoreHarness.context(coordinator)
        let ann = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first {
            $0.value(forKey: "name") as? String == "Ann"
        })
        insertObject("Pet", ["name": "Rex", "owner": ann], into: context)
        insertObject("Pet", ["name": "Tom", "owner": ann], into: context)
        try context.save()
        StoreHarness.close(coordinator)

        let keys = try RawDatabase(url).rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            .map { "\($0[0]!) \($0[1]!) \($0[2]!) \($0[3]!)" }
        #expect(keys == ["1 Person 0 3", "2 Pet 0 2"])
        // Reopens without migration and follows the relationship from an old row to new ones.
        let reopened = try StoreHarness.coordinator(model: v2, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(reopened) }
        let reader = StoreHarness.context(reopened)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "name == %@", "Ann")
        let found = try #require(try reader.fetch(request).first)
        let names = (found.value(forKey: "pets") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "name") as? String }
        #expect(names.map(Set.init) == ["Rex", "Tom"])
        #expect(try M.rows("Person", reader, sortedBy: "name").count == 3)
    }

    @Test func removedEntityDropsItsTableAndKeyRow() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func v1() -> NSManagedObjectModel {
            M.model("1", [M.entity("Note", [M.attribute("text")]), M.entity("Person", [M.attribute("name")])])
        }
        let url = try M.makeStore(v1(), in: directory) { context in
            insertObject("Note", ["text": "hello"], into: context)
            insertObject("Person", ["name": "Ann"], into: context)
        }
        let v2 = M.model("2", [M.entity("Person", [M.attribute("name")])])
        let coordinator = try M.open(url, with: v2, sources: [v1()])
        defer { StoreHarness.close(coordinator) }
        #expect(try M.rows("Person", StoreHarness.context(coordinator), sortedBy: "name").map { $0["name"] as? String } == ["Ann"])
        let tables = try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .compactMap { $0[0] as? String }
        #expect(!tables.contains("ZNOTE") && tables.contains("ZPERSON"))
        let keys = try RawDatabase(url).rows("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY").map { "\($0[0]!) \($0[1]!)" }
        #expect(keys == ["2 Person"])
    }

    /// `Person.tags` ↔ `Tag.people`, many-to-many, plus `Person.home` → `Place` (to-one, inverse `residents`).
    private func graphV1() -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("name")])
        let tag = M.entity("Tag", [M.attribute("label")])
        let place = M.entity("Place", [M.attribute("title")])
        let tags = NSRelationshipDescription(name: "tags", destination: tag, toMany: true)
        let people = NSRelationshipDescription(name: "people", destination: person, toMany: true)
        tags.inverseRelationship = people
        people.inverseRelationship = tags
        let home = NSRelationshipDescription(name: "home", destination: place, toMany: false)
        let residents = NSRelationshipDescription(name: "residents", destination: person, toMany: true)
        home.inverseRelationship = residents
        residents.inverseRelationship = home
        person.properties += [tags, home]
        tag.properties += [people]
        place.properties += [residents]
        return M.model("1", [person, place, tag])
    }

    private func graphStore(_ directory: TemporaryDirectory) throws -> URL {
        try M.makeStore(graphV1(), in: directory) { context in
            let red = insertObject("Tag", ["label": "red"], into: context)
            let blue = insertObject("Tag", ["label": "blue"], into: context)
            let oslo = insertObject("Place", ["title": "Oslo"], into: context)
            insertObject("Person", ["name": "Ann", "tags": Set([red, blue]), "home": oslo], into: context)
            insertObject("Person", ["name": "Bob", "tags": Set([blue])], into: context)
        }
    }

    @Test func renamedManyToManyRelationshipCopiesItsJoinTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try graphStore(directory)
        let person = M.entity("Person", [M.attribute("name")])
        let tag = M.entity("Tag", [M.attribute("label")])
        let place = M.entity("Place", [M.attribute("title")])
        let labels = NSRelationshipDescription(name: "labels", destination: tag, toMany: true)
        labels.renamingIdentifier = "tags"
        let people = NSRelationshipDescription(name: "people", destination: person, toMany: true)
        labels.inverseRelationship = people
        people.inverseRelationship = labels
        let home = NSRelationshipDescription(name: "home", destination: place, toMany: false)
        let residents = NSRelationshipDescription(name: "residents", destination: person, toMany: true)
        home.inverseRelationship = residents
        residents.inverseRelationship = home
        person.properties += [labels, home]
        tag.properties += [people]
        place.properties += [residents]
        let v2 = M.model("2", [person, place, tag])
        let coordinator = try M.open(url, with: v2, sources: [graphV1()])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let found = try context.fetch(request)
        func labelsOf(_ object: NSManagedObject) -> Set<String> {
            Set((object.value(forKey: "labels") as? Set<NSManagedObject> ?? []).compactMap { $0.value(forKey: "label") as? String })
        }
        #expect(found.map(labelsOf) == [["red", "blue"], ["blue"]])
        #expect((found[0].value(forKey: "home") as? NSManagedObject)?.value(forKey: "title") as? String == "Oslo")
        let tables = try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] as? String }
        #expect(tables.contains("Z_1LABELS") && !tables.contains("Z_1TAGS"))
    }

    @Test func removedRelationshipsDropTheirColumnAndJoinTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try graphStore(directory)
        let v2 = M.model(
            "2",
            [M.entity("Person", [M.attribute("name")]), M.entity("Place", [M.attribute("title")]), M.entity("Tag", [M.attribute("label")])])
        let coordinator = try M.open(url, with: v2, sources: [graphV1()])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try M.rows("Person", context, sortedBy: "name").map { $0["name"] as? String } == ["Ann", "Bob"])
        #expect(try M.rows("Tag", context, sortedBy: "label").map { $0["label"] as? String } == ["blue", "red"])
        #expect(try M.columns("ZPERSON", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        let tables = try RawDatabase(url).rows("SELECT name FROM sqlite_master").compactMap { $0[0] as? String }
        #expect(!tables.contains { $0.hasPrefix("Z_1TAGS") || $0.contains("ZHOME") })
    }

    @Test func attributeAddedToASubentityFillsOnlyThatEntitysRows() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func v(_ version: String, level: Bool) -> NSManagedObjectModel {
            let employee = M.entity("Employee", [M.attribute("name")])
            let manager = M.entity(
                "Manager", level ? [M.attribute("level", .integer16AttributeType, optional: false, defaultValue: Int16(1))] : [])
            employee.subentities = [manager]
            return M.model(version, [employee, manager])
        }
        let url = try M.makeStore(v("1", level: false), in: directory) { context in
            insertObject("Employee", ["name": "Ann"], into: context)
            insertObject("Manager", ["name": "Bob"], into: context)
        }
        let coordinator = try M.open(url, with: v("2", level: true), sources: [v("1", level: false)])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try M.rows("Manager", context, sortedBy: "name").map { $0["level"] as? Int16 } == [1])
        #expect(try M.rows("Employee", context, sortedBy: "name").map { $0["name"] as? String } == ["Ann"])
        let raw = try RawDatabase(url).rows("SELECT ZNAME, ZLEVEL FROM ZEMPLOYEE ORDER BY ZNAME").map { "\($0[0]!) \($0[1] ?? "nil")" }
        #expect(raw == ["Ann nil", "Bob 1"])
    }

    @Test func removedSubentityDeletesItsRowsAndReferencesToThem() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func v1() -> NSManagedObjectModel {
            let employee = M.entity("Employee", [M.attribute("name")])
            let manager = M.entity("Manager", [])
            employee.subentities = [manager]
            let boss = NSRelationshipDescription(name: "boss", destination: employee, toMany: false)
            let team = NSRelationshipDescription(name: "team", destination: employee, toMany: true)
            boss.inverseRelationship = team
            team.inverseRelationship = boss
            employee.properties += [boss, team]
            return M.model("1", [employee, manager])
        }
        let url = try M.makeStore(v1(), in: directory) { context in
            let bob = insertObject("Manager", ["name": "Bob"], into: context)
            insertObject("Employee", ["name": "Ann", "boss": bob], into: context)
        }
        let employee = M.entity("Employee", [M.attribute("name")])
        let boss = NSRelationshipDescription(name: "boss", destination: employee, toMany: false)
        let team = NSRelationshipDescription(name: "team", destination: employee, toMany: true)
        boss.inverseRelationship = team
        team.inverseRelationship = boss
        employee.properties += [boss, team]
        let v2 = M.model("2", [employee])
        let coordinator = try M.open(url, with: v2, sources: [v1()])
        defer { StoreHarness.close(coordinator) }
        let found = try StoreHarness.context(coordinator).fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(found.map { $0.value(forKey: "name") as? String } == ["Ann"])
        #expect(found.first?.value(forKey: "boss") == nil)
    }

    @Test func rebuildAlsoRenamesTheTableAndFillsDefaults() throws {
        // Several changes to one entity at once: renamed entity, removed attribute (so a rebuild),
        // optional → required with a default.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try store(directory)
        let v2 = M.model(
            "2",
            [
                M.entity(
                    "Human", [M.attribute("name", optional: false), M.attribute("city", optional: false, defaultValue: "Nowhere")],
                    renamedFrom: "Person")
            ])
        let coordinator = try M.open(url, with: v2, sources: [personV1()])
        defer { StoreHarness.close(coordinator) }
        let statements = try sqliteStore(coordinator).migrationStatements
        #expect(statements.contains("ALTER TABLE Z_OCDMIGRATION_ZHUMAN RENAME TO ZHUMAN"))
        let rows = try M.rows("Human", StoreHarness.context(coordinator), sortedBy: "name")
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid"])
        #expect(rows.map { $0["city"] as? String } == ["Oslo", "Nowhere", "Rome"])
        let tables = try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] as? String }
        #expect(tables.contains("ZHUMAN") && !tables.contains("ZPERSON") && !tables.contains { $0.hasPrefix("Z_OCD") })
    }

    @Test func seed000MoodsGainCountriesContinentsAndLocation() throws {
        // Seed 000: the shipped app has only `Mood`; the next version adds `Country` and `Continent`,
        // a Mood → Country relationship and optional `latitude`/`longitude`. Existing moods must survive.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func v1() -> NSManagedObjectModel {
            M.model(
                "1",
                [
                    M.entity(
                        "Mood",
                        [M.attribute("date", .dateAttributeType, optional: false), M.attribute("colors", .binaryDataAttributeType)])
                ])
        }
        let dates = (0..<3).map { Date(timeIntervalSinceReferenceDate: Double($0) * 86_400) }
        let url = try M.makeStore(v1(), in: directory) { context in
            for (i, date) in dates.enumerated() { insertObject("Mood", ["date": date, "colors": Data([UInt8(i), 9])], into: context) }
        }
        let v2 = MoodsModel.make()
        let coordinator = try M.open(url, with: v2, sources: [v1()])
        let context = StoreHarness.context(coordinator)
        let moods = try M.rows("Mood", context, sortedBy: "date")
        #expect(moods.map { $0["date"] as? Date } == dates)
        #expect(moods.map { $0["colors"] as? Data } == [Data([0, 9]), Data([1, 9]), Data([2, 9])])
        #expect(moods.allSatisfy { $0["latitude"] == nil && $0["longitude"] == nil })
        let request = NSFetchRequest<NSManagedObject>(entityName: "Mood")
        request.sortDescriptors = [NSSortDescriptor(key: "date", ascending: true)]
        let first = try #require(try context.fetch(request).first)
        let europe = insertObject("Continent", ["numericISO3166Code": Int16(150), "updatedAt": Date()], into: context)
        let poland = insertObject("Country", ["numericISO3166Code": Int16(616), "updatedAt": Date(), "continent": europe], into: context)
        first.setValue(poland, forKey: "country")
        first.setValue(52.2, forKey: "latitude")
        try context.save()
        StoreHarness.close(coordinator)

        let reopened = try StoreHarness.coordinator(model: MoodsModel.make(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(reopened) }
        let reader = StoreHarness.context(reopened)
        let again = try #require(try reader.fetch(request).first)
        #expect((again.value(forKey: "country") as? NSManagedObject)?.value(forKey: "numericISO3166Code") as? Int16 == 616)
        #expect(again.value(forKey: "latitude") as? Double == 52.2)
    }

    @Test func compositeElementsKeepTheirValuesWhenElementsComeAndGo() throws {
        // Seed 001's `Aircraft.colorScheme`: v2 adds a `tertiary` element (ADD COLUMN), v3 drops
        // `secondary` (a rebuild); the other elements keep their values throughout.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func model(_ version: String, _ elements: [String]) -> NSManagedObjectModel {
            M.model(
                version,
                [
                    M.entity(
                        "Aircraft",
                        [
                            M.attribute("tailNumber"),
                            NSCompositeAttributeDescription(name: "colorScheme", elements: elements.map { M.attribute($0) }),
                        ])
                ])
        }
        let v1 = { model("1", ["primary", "secondary"]) }
        let v2 = { model("2", ["primary", "secondary", "tertiary"]) }
        let v3 = { model("3", ["primary", "tertiary"]) }
        let url = try M.makeStore(v1(), in: directory) { context in
            insertObject("Aircraft", ["tailNumber": "N1", "colorScheme": ["primary": "white", "secondary": "blue"]], into: context)
            insertObject("Aircraft", ["tailNumber": "N2", "colorScheme": ["primary": "red"]], into: context)
        }
        func schemes(_ coordinator: NSPersistentStoreCoordinator) throws -> [[String: String]] {
            try M.rows("Aircraft", StoreHarness.context(coordinator), sortedBy: "tailNumber").map {
                ($0["colorScheme"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
            }
        }
        let second = try M.open(url, with: v2(), sources: [v1()])
        #expect(try sqliteStore(second).migrationStatements.contains("ALTER TABLE ZAIRCRAFT ADD COLUMN ZCOLORSCHEME_TERTIARY VARCHAR"))
        #expect(try schemes(second) == [["primary": "white", "secondary": "blue"], ["primary": "red"]])
        let context = StoreHarness.context(second)
        insertObject("Aircraft", ["tailNumber": "N3", "colorScheme": ["primary": "gold", "tertiary": "black"]], into: context)
        try context.save()
        StoreHarness.close(second)
        let third = try M.open(url, with: v3(), sources: [v1(), v2()])
        defer { StoreHarness.close(third) }
        #expect(try schemes(third) == [["primary": "white"], ["primary": "red"], ["primary": "gold", "tertiary": "black"]])
    }
}
