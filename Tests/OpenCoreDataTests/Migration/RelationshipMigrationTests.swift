import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// One side of the `Owner` ↔ `Pet` relationship pair used by these tests.
struct RelationshipMigrationSide {
    var name: String
    var toMany: Bool
    var ordered = false
    var renamedFrom: String?

    static func one(_ name: String, renamedFrom: String? = nil) -> Self {
        Self(name: name, toMany: false, renamedFrom: renamedFrom)
    }

    static func many(_ name: String, ordered: Bool = false, renamedFrom: String? = nil) -> Self {
        Self(name: name, toMany: true, ordered: ordered, renamedFrom: renamedFrom)
    }
}


/// Lightweight migrations that change how relationships are stored (to-one ↔ to-many ↔
/// many-to-many, ordered ↔ unordered) and where entities live (hierarchy changes, renumbered
/// Z_ENT), done in place in SQL by the SQLite store. Apple's "Lightweight Migration" guide lists
/// these as inferable: "changing a relationship from a to-one to a to-many, or a non-ordered to-many
/// to ordered (and vice versa)", "create a new parent or child entity", "move entities out of a
/// hierarchy"; it forbids merging hierarchies.
@Suite("Migration: relationship and hierarchy changes in place")
struct RelationshipMigrationTests {
    typealias Side = RelationshipMigrationSide
    /// `[object name: names of the related objects]` (sorted unless the relationship is ordered).
    typealias Links = [String: [String]]

    // MARK: Owner ↔ Pet

    private static let owners = ["o1", "o2", "o3", "o4"]
    private static let pets = ["p1", "p2", "p3", "p4", "p5", "p6"]

    /// `Owner(name).<owner side>` → `Pet(name)`, with `Pet.<pet side>` as inverse. Owner is Z_ENT 1, Pet 2.
    func pairModel(_ version: String, owner: Side, pet: Side?, uniquePetNames: Bool = false) -> NSManagedObjectModel {
        let ownerEntity = M.entity("Owner", [M.attribute("name")])
        let petEntity = M.entity("Pet", [M.attribute("name")])
        let forward = NSRelationshipDescription(name: owner.name, destination: petEntity, toMany: owner.toMany, isOrdered: owner.ordered)
        forward.renamingIdentifier = owner.renamedFrom
        ownerEntity.properties += [forward]
        if let pet {
            let back = NSRelationshipDescription(name: pet.name, destination: ownerEntity, toMany: pet.toMany, isOrdered: pet.ordered)
            back.renamingIdentifier = pet.renamedFrom
            forward.inverseRelationship = back
            back.inverseRelationship = forward
            petEntity.properties += [back]
        }
        if uniquePetNames { petEntity.uniquenessConstraints = [["name"]] }
        return M.model(version, [ownerEntity, petEntity])
    }

    /// A store of `model` with owners o1…o4 and pets p1…p6, linked from the owner side as `links` says.
    func pairStore(
        _ model: NSManagedObjectModel, owner: Side, links: Links, in directory: TemporaryDirectory, petNames: [String] = pets
    ) throws -> URL {
        try M.makeStore(model, in: directory) { context in
            var made: [String: NSManagedObject] = [:]
            for (i, name) in Self.pets.enumerated() {
                made[name] = insertObject("Pet", ["name": petNames[i]], into: context)
            }
            for name in Self.owners {
                let list = (links[name] ?? []).compactMap { made[$0] }
                var values: [String: Any] = ["name": name]
                if owner.toMany {
                    values[owner.name] = owner.ordered ? NSOrderedSet(array: list) : Set(list)
                } else if let first = list.first {
                    values[owner.name] = first
                }
                insertObject("Owner", values, into: context)
            }
        }
    }

    /// What every object of `entity` holds in `key`, read through a context.
    func links(_ context: NSManagedObjectContext, _ entity: String, _ key: String) throws -> Links {
        var result: Links = [:]
        for object in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)) {
            let name = object.value(forKey: "name") as? String ?? "?"
            switch object.value(forKey: key) {
            case let one as NSManagedObject: result[name] = [one.value(forKey: "name") as? String ?? "?"]
            case let ordered as NSOrderedSet:
                result[name] = ordered.array.map { ($0 as? NSManagedObject)?.value(forKey: "name") as? String ?? "?" }
            case let set as Set<NSManagedObject>: result[name] = set.map { $0.value(forKey: "name") as? String ?? "?" }.sorted()
            case let set as NSSet:
                result[name] = set.allObjects.map { ($0 as? NSManagedObject)?.value(forKey: "name") as? String ?? "?" }.sorted()
            default: result[name] = []
            }
        }
        return result
    }

    /// Z_PK of each object of `table`, by `ZNAME`, read straight from the file.
    func keys(_ table: String, at url: URL) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for row in try RawDatabase(url).rows("SELECT ZNAME, Z_PK FROM \(table)") {
            if let name = row[0] as? String, let key = row[1] as? Int64 { result[name] = key }
        }
        return result
    }

    func tables(_ url: URL) throws -> Set<String> {
        Set(try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] as? String })
    }

    func primaryKeyRows(_ url: URL) throws -> [String] {
        try RawDatabase(url).rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { row in
            row.map { "\($0 ?? "nil")" }.joined(separator: " ")
        }
    }

    /// Inserts one more object of each of `entities` (with `name`), saves, and checks the new keys
    /// come after every existing one and Z_MAX of each root follows (FORMATS.md §1.4).
    func expectInsertsWork(_ coordinator: NSPersistentStoreCoordinator, url: URL, _ entities: [(entity: String, table: String)]) throws {
        let before = try entities.map { try keys($0.table, at: url).values.max() ?? 0 }
        let context = StoreHarness.context(coordinator)
        for (entity, _) in entities { insertObject(entity, ["name": "new \(entity)"], into: context) }
        try context.save()
        for (i, (entity, table)) in entities.enumerated() {
            let key = try #require(try keys(table, at: url)["new \(entity)"])
            #expect(key > before[i], "the new \(entity) reuses a key")
            let highest = try RawDatabase(url).rows("SELECT MAX(Z_PK) FROM \(table)").first?.first as? Int64
            let counters = try RawDatabase(url).rows("SELECT MAX(Z_MAX) FROM Z_PRIMARYKEY").first?.first as? Int64
            #expect(highest == key)
            #expect((counters ?? 0) >= key)
        }
    }

    // MARK: to-one → to-many

    @Test func toOneBecomingToManyWithAToManyInverseBecomesAJoinTable() throws {
        // Owner.pet (to-one) ↔ Pet.owners (to-many): a foreign key ZOWNER.ZPET. Owner.pets becomes
        // to-many, so the pair is many-to-many: join table Z_1PETS (Z_1OWNERS, Z_2PETS), FORMATS.md §1.3.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .one("pet"), pet: .many("owners"))
        let links: Links = ["o1": ["p1"], "o2": ["p1"], "o3": ["p2"], "o4": []]
        let url = try pairStore(v1, owner: .one("pet"), links: links, in: directory)
        let v2 = pairModel("2", owner: .many("pets", renamedFrom: "pet"), pet: .many("owners"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Owner", "pets") == links)
        #expect(
            try self.links(context, "Pet", "owners")
                == ["p1": ["o1", "o2"], "p2": ["o3"], "p3": [], "p4": [], "p5": [], "p6": []])
        #expect(try M.columns("ZOWNER", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        #expect(try M.columns("Z_1PETS", at: url) == ["Z_1OWNERS", "Z_2PETS"])
        let (owners, pets) = (try keys("ZOWNER", at: url), try keys("ZPET", at: url))
        let joined = try RawDatabase(url).rows("SELECT Z_1OWNERS, Z_2PETS FROM Z_1PETS ORDER BY Z_1OWNERS").map { "\($0[0]!)-\($0[1]!)" }
        #expect(joined == [("o1", "p1"), ("o2", "p1"), ("o3", "p2")].map { "\(owners[$0]!)-\(pets[$1]!)" })
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    @Test func oneToOneBecomingOneToManyKeepsOnlyTheToOneSidesForeignKey() throws {
        // One-to-one stores a foreign key on both sides (FORMATS.md §1.3); one-to-many only on the Pet side.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .one("pet"), pet: .one("owner"))
        let links: Links = ["o1": ["p1"], "o2": ["p2"], "o3": [], "o4": ["p3"]]
        let url = try pairStore(v1, owner: .one("pet"), links: links, in: directory)
        let v2 = pairModel("2", owner: .many("pets", renamedFrom: "pet"), pet: .one("owner"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Owner", "pets") == links)
        #expect(try self.links(context, "Pet", "owner") == ["p1": ["o1"], "p2": ["o2"], "p3": ["o4"], "p4": [], "p5": [], "p6": []])
        #expect(try M.columns("ZOWNER", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZOWNER", "ZNAME"])
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    @Test func foreignKeyMovesToTheOtherTableWhenBothSidesFlip() throws {
        // Owner.pet to-one ↔ Pet.owners to-many (key in ZOWNER) becomes Owner.pets to-many ↔ Pet.owner
        // to-one (key in ZPET). p1 had two owners and keeps one: the one with the lowest Z_PK.
        // Apple does not document which object a to-many becoming to-one keeps; this is
        // OpenCoreData's rule (docs/linux-differences.md).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .one("pet"), pet: .many("owners"))
        let url = try pairStore(v1, owner: .one("pet"), links: ["o1": ["p1"], "o2": ["p1"], "o3": ["p2"]], in: directory)
        let before = try keys("ZOWNER", at: url)
        let keeper = before["o1"]! < before["o2"]! ? "o1" : "o2"
        let v2 = pairModel("2", owner: .many("pets", renamedFrom: "pet"), pet: .one("owner", renamedFrom: "owners"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        var expected: Links = ["o1": [], "o2": [], "o3": ["p2"], "o4": []]
        expected[keeper] = ["p1"]
        #expect(try self.links(context, "Owner", "pets") == expected)
        #expect(try self.links(context, "Pet", "owner") == ["p1": [keeper], "p2": ["o3"], "p3": [], "p4": [], "p5": [], "p6": []])
        #expect(!(try M.columns("ZOWNER", at: url)).contains("ZPET"))
        #expect(try M.columns("ZPET", at: url).contains("ZOWNER"))
        let indexes = try RawDatabase(url).rows("SELECT name FROM sqlite_master WHERE type = 'index'").compactMap { $0[0] as? String }
        #expect(indexes.contains("ZPET_ZOWNER_INDEX") && !indexes.contains("ZOWNER_ZPET_INDEX"))
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    // MARK: to-many → to-one

    @Test(arguments: [false, true])
    func toManyBecomingToOneKeepsOneObjectPerOwner(ordered: Bool) throws {
        // Owner.pets to-many ↔ Pet.owner becomes one-to-one. Each owner keeps the first pet in the
        // relationship's order when it was ordered, else the pet with the lowest Z_PK (the earliest
        // saved); the other pets lose their owner. Apple's rule is not documented (see above).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let side = Side.many("pets", ordered: ordered)
        let v1 = pairModel("1", owner: side, pet: .one("owner"))
        let links: Links = ["o1": ["p3", "p1", "p2"], "o2": ["p4"], "o3": [], "o4": ["p6", "p5"]]
        let url = try pairStore(v1, owner: side, links: links, in: directory)
        let pk = try keys("ZPET", at: url)
        func first(_ names: [String]) -> [String] {
            guard !names.isEmpty else { return [] }
            return [ordered ? names[0] : names.min { pk[$0]! < pk[$1]! }!]
        }
        let v2 = pairModel("2", owner: .one("pet", renamedFrom: "pets"), pet: .one("owner"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        let kept = links.mapValues(first)
        #expect(try self.links(context, "Owner", "pet") == kept)
        var petSide: Links = Dictionary(uniqueKeysWithValues: Self.pets.map { ($0, []) })
        for (owner, pets) in kept { for pet in pets { petSide[pet] = [owner] } }
        #expect(try self.links(context, "Pet", "owner") == petSide)
        // ZPET is added with ALTER TABLE (rows are not rewritten), so it comes last.
        #expect(try M.columns("ZOWNER", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZPET"])
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZOWNER", "ZNAME"])
        // Both keys agree, row by row.
        let mismatched = try RawDatabase(url).rows(
            "SELECT COUNT(*) FROM ZOWNER o JOIN ZPET p ON o.ZPET = p.Z_PK WHERE p.ZOWNER IS NOT o.Z_PK")
        #expect(mismatched.first?.first as? Int64 == 0)
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    // MARK: to-many ↔ many-to-many

    @Test func oneToManyBecomingManyToManyFillsAJoinTableFromTheForeignKey() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .one("owner"))
        let links: Links = ["o1": ["p1", "p2", "p3"], "o2": ["p4"], "o3": [], "o4": ["p5"]]
        let url = try pairStore(v1, owner: .many("pets"), links: links, in: directory)
        let v2 = pairModel("2", owner: .many("pets"), pet: .many("owners", renamedFrom: "owner"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Owner", "pets") == links)
        #expect(
            try self.links(context, "Pet", "owners")
                == ["p1": ["o1"], "p2": ["o1"], "p3": ["o1"], "p4": ["o2"], "p5": ["o4"], "p6": []])
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        #expect(try M.columns("Z_1PETS", at: url) == ["Z_1OWNERS", "Z_2PETS"])
        #expect(try RawDatabase(url).rows("SELECT COUNT(*) FROM Z_1PETS").first?.first as? Int64 == 5)
        // The new relationship works both ways after the migration.
        let o3 = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).first { $0.value(forKey: "name") as? String == "o3" })
        let p1 = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Pet")).first { $0.value(forKey: "name") as? String == "p1" })
        o3.mutableSetValue(forKey: "pets").add(p1)
        try context.save()
        #expect(try self.links(StoreHarness.context(coordinator), "Pet", "owners")["p1"] == ["o1", "o3"])
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    @Test func manyToManyBecomingOneToManyFillsTheForeignKeyFromTheJoinTable() throws {
        // p2 had two owners; as a to-one it keeps the owner with the lowest Z_PK (see above).
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .many("owners"))
        let url = try pairStore(v1, owner: .many("pets"), links: ["o1": ["p1", "p2"], "o2": ["p2", "p3"], "o4": ["p4"]], in: directory)
        let pk = try keys("ZOWNER", at: url)
        let keeper = pk["o1"]! < pk["o2"]! ? "o1" : "o2"
        let other = keeper == "o1" ? "o2" : "o1"
        let v2 = pairModel("2", owner: .many("pets"), pet: .one("owner", renamedFrom: "owners"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Pet", "owner") == ["p1": ["o1"], "p2": [keeper], "p3": ["o2"], "p4": ["o4"], "p5": [], "p6": []])
        var expected: Links = ["o1": ["p1", "p2"], "o2": ["p2", "p3"], "o3": [], "o4": ["p4"]]
        expected[other]!.removeAll { $0 == "p2" }
        #expect(try self.links(context, "Owner", "pets") == expected)
        #expect(!(try tables(url)).contains("Z_1PETS"))
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZOWNER"])
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    // MARK: ordered ↔ unordered

    @Test func unorderedToManyBecomingOrderedGetsOrderingKeys() throws {
        // The new order is by primary key (the order objects were first saved in); Apple does not
        // document the order it gives, so this is OpenCoreData's rule.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .one("owner"))
        let links: Links = ["o1": ["p1", "p2", "p3"], "o2": ["p4"], "o3": [], "o4": ["p5", "p6"]]
        let url = try pairStore(v1, owner: .many("pets"), links: links, in: directory)
        let pk = try keys("ZPET", at: url)
        let v2 = pairModel("2", owner: .many("pets", ordered: true), pet: .one("owner"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Owner", "pets") == links.mapValues { $0.sorted { pk[$0]! < pk[$1]! } })
        #expect(try M.columns("ZPET", at: url).contains("Z_FOK_OWNER"))
        let positions = try RawDatabase(url).rows("SELECT ZOWNER, Z_FOK_OWNER FROM ZPET WHERE ZOWNER IS NOT NULL ORDER BY ZOWNER, Z_FOK_OWNER")
        var byOwner: [Int64: [Int64]] = [:]
        for row in positions { byOwner[row[0] as! Int64, default: []].append(row[1] as! Int64) }
        #expect(byOwner.values.allSatisfy { $0 == Array(1...Int64($0.count)) })
        // Reordering after the migration is saved.
        let o1 = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).first { $0.value(forKey: "name") as? String == "o1" })
        let list = o1.mutableOrderedSetValue(forKey: "pets")
        let last = list.lastObject!
        list.remove(last)
        list.insert(last, at: 0)
        try context.save()
        let reordered = try self.links(StoreHarness.context(coordinator), "Owner", "pets")["o1"]
        #expect(reordered?.first == links["o1"]!.sorted { pk[$0]! < pk[$1]! }.last)
    }

    @Test func orderedToManyBecomingUnorderedDropsItsOrderingColumn() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets", ordered: true), pet: .one("owner"))
        let links: Links = ["o1": ["p3", "p1", "p2"], "o2": ["p4"], "o4": ["p6", "p5"]]
        let url = try pairStore(v1, owner: .many("pets", ordered: true), links: links, in: directory)
        #expect(try M.columns("ZPET", at: url).contains("Z_FOK_OWNER"))
        let v2 = pairModel("2", owner: .many("pets"), pet: .one("owner"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let expected = links.mapValues { $0.sorted() }.merging(["o3": []]) { a, _ in a }
        #expect(try self.links(StoreHarness.context(coordinator), "Owner", "pets") == expected)
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZOWNER", "ZNAME"])
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER"), ("Pet", "ZPET")])
    }

    @Test func manyToManyBecomingOrderedGetsAJoinTableOrderColumn() throws {
        // Join table → join table: the ordering column Z_FOK_2PETS (FORMATS.md §1.3) is added,
        // ordered by primary key; back to unordered, it goes again.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .many("owners"))
        let links: Links = ["o1": ["p1", "p2", "p3"], "o2": ["p2"], "o3": [], "o4": ["p4", "p5"]]
        let url = try pairStore(v1, owner: .many("pets"), links: links, in: directory)
        let pk = try keys("ZPET", at: url)
        let v2 = pairModel("2", owner: .many("pets", ordered: true), pet: .many("owners"))
        do {
            let coordinator = try M.open(url, with: v2, sources: [v1])
            defer { StoreHarness.close(coordinator) }
            #expect(try self.links(StoreHarness.context(coordinator), "Owner", "pets") == links.mapValues { $0.sorted { pk[$0]! < pk[$1]! } })
            #expect(try M.columns("Z_1PETS", at: url) == ["Z_1OWNERS", "Z_2PETS", "Z_FOK_2PETS"])
        }
        let v3 = pairModel("3", owner: .many("pets"), pet: .many("owners"))
        let coordinator = try M.open(url, with: v3, sources: [v1, v2])
        defer { StoreHarness.close(coordinator) }
        #expect(try self.links(StoreHarness.context(coordinator), "Owner", "pets") == links)
        #expect(try M.columns("Z_1PETS", at: url) == ["Z_1OWNERS", "Z_2PETS"])
    }

    @Test func orderedOneToManyBecomingManyToManyKeepsItsOrderInTheJoinTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets", ordered: true), pet: .one("owner"))
        let links: Links = ["o1": ["p3", "p1", "p2"], "o2": ["p4"], "o3": [], "o4": ["p6", "p5"]]
        let url = try pairStore(v1, owner: .many("pets", ordered: true), links: links, in: directory)
        let v2 = pairModel("2", owner: .many("pets", ordered: true), pet: .many("owners", renamedFrom: "owner"))
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        #expect(try self.links(StoreHarness.context(coordinator), "Owner", "pets") == links)
        #expect(try M.columns("Z_1PETS", at: url) == ["Z_1OWNERS", "Z_2PETS", "Z_FOK_2PETS"])
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
    }

    @Test func inverseLessToOneBecomingToManyUsesAJoinTable() throws {
        // A to-many without an inverse is stored like a many-to-many pair (SQLiteSchema's documented
        // choice): Z_1PETS (Z_1PETSINVERSE, Z_2PETS) here.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .one("pet"), pet: nil)
        let links: Links = ["o1": ["p1"], "o2": ["p1"], "o3": [], "o4": ["p2"]]
        let url = try pairStore(v1, owner: .one("pet"), links: links, in: directory)
        let v2 = pairModel("2", owner: .many("pets", renamedFrom: "pet"), pet: nil)
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        #expect(try self.links(StoreHarness.context(coordinator), "Owner", "pets") == links)
        #expect(try M.columns("Z_1PETS", at: url) == ["Z_1PETSINVERSE", "Z_2PETS"])
        #expect(try M.columns("ZOWNER", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        try expectInsertsWork(coordinator, url: url, [("Owner", "ZOWNER")])
    }

    @Test func selfReferentialOneToManyBecomingManyToMany() throws {
        // Person.boss ↔ Person.team becomes Person.bosses ↔ Person.team, both to-many. For a
        // self-referential pair the side whose name sorts first names the join table: Z_1BOSSES.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        func model(_ version: String, bosses: Bool) -> NSManagedObjectModel {
            let person = M.entity("Person", [M.attribute("name")])
            let boss = NSRelationshipDescription(name: bosses ? "bosses" : "boss", destination: person, toMany: bosses)
            boss.renamingIdentifier = bosses ? "boss" : nil
            let team = NSRelationshipDescription(name: "team", destination: person, toMany: true)
            boss.inverseRelationship = team
            team.inverseRelationship = boss
            person.properties += [boss, team]
            return M.model(version, [person])
        }
        let v1 = model("1", bosses: false)
        let url = try M.makeStore(v1, in: directory) { context in
            let ann = insertObject("Person", ["name": "Ann"], into: context)
            let bob = insertObject("Person", ["name": "Bob", "boss": ann], into: context)
            insertObject("Person", ["name": "Cid", "boss": bob], into: context)
            insertObject("Person", ["name": "Dan", "boss": ann], into: context)
        }
        let v2 = model("2", bosses: true)
        let coordinator = try M.open(url, with: v2, sources: [v1])
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Person", "bosses") == ["Ann": [], "Bob": ["Ann"], "Cid": ["Bob"], "Dan": ["Ann"]])
        #expect(try self.links(context, "Person", "team") == ["Ann": ["Bob", "Dan"], "Bob": ["Cid"], "Cid": [], "Dan": []])
        #expect(try M.columns("ZPERSON", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        #expect(try tables(url).contains("Z_1BOSSES"))
        try expectInsertsWork(coordinator, url: url, [("Person", "ZPERSON")])
    }

    // MARK: Failure safety and deferred clean-up

    @Test func failureAfterRelationshipAndHierarchyStepsLeavesTheStoreUntouched() throws {
        // v2 makes Owner.pets many-to-many *and* adds a uniqueness constraint on Pet.name that the
        // data violates: the index is created after every relationship step, and fails.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .one("owner"))
        let links: Links = ["o1": ["p1", "p2"], "o2": ["p3"]]
        let url = try pairStore(v1, owner: .many("pets"), links: links, in: directory, petNames: ["p1", "p2", "p3", "p4", "p5", "p1"])
        let before = try M.bytes(url)
        let bad = pairModel("2", owner: .many("pets"), pet: .many("owners", renamedFrom: "owner"), uniquePetNames: true)
        do {
            _ = try M.open(url, with: bad, sources: [v1])
            Issue.record("the migration should fail on the duplicate pet names")
        } catch let error as OpenCoreDataError {
            #expect(error.code == .migration)
            #expect(error.message.contains("updating indexes"))
        }
        #expect(try M.bytes(url) == before)
        // Hierarchy renumbering that fails the same way (a unique index over the renumbered table).
        let zoo = try M.makeStore(zooModel("1", cats: false), in: directory, name: "Zoo.sqlite") { context in
            insertObject("Dog", ["name": "rex"], into: context)
            insertObject("Dog", ["name": "rex"], into: context)
        }
        let zooBefore = try M.bytes(zoo)
        let badZoo = zooModel("2", cats: true)
        badZoo.entitiesByName["Animal"]!.uniquenessConstraints = [["name"]]
        #expect(throws: OpenCoreDataError.self) { _ = try M.open(zoo, with: badZoo, sources: [zooModel("1", cats: false)]) }
        #expect(try M.bytes(zoo) == zooBefore)
        #expect(try RawDatabase(zoo).rows("SELECT DISTINCT Z_ENT FROM ZANIMAL").map { $0[0] as? Int64 } == [2])

        // Both still open with the old model, with every row and relationship.
        let coordinator = try StoreHarness.coordinator(model: v1, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let reopened = try self.links(StoreHarness.context(coordinator), "Owner", "pets")
        #expect(reopened == ["o1": ["p1", "p2"], "o2": ["p3"], "o3": [], "o4": []])
        #expect(!(try tables(url)).contains("Z_1PETS"))
        let zooCoordinator = try StoreHarness.coordinator(model: zooModel("1", cats: false), storeType: NSSQLiteStoreType, url: zoo)
        defer { StoreHarness.close(zooCoordinator) }
        #expect(try M.rows("Dog", StoreHarness.context(zooCoordinator), sortedBy: "name").count == 2)
    }

    @Test func joinTableLeftByADeferredMigrationIsNotResurrected() throws {
        // many-to-many → one-to-many, deferred (Z_1PETS stays until finish), then back to
        // many-to-many before finishing: the join table is made afresh from the foreign key.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .many("owners"))
        let url = try pairStore(v1, owner: .many("pets"), links: ["o1": ["p1", "p2"], "o2": ["p3"]], in: directory)
        let v2 = pairModel("2", owner: .many("pets"), pet: .one("owner", renamedFrom: "owners"))
        var options = M.options([v1])
        options[NSPersistentStoreDeferredLightweightMigrationOptionKey] = true
        do {
            let coordinator = try M.open(url, with: v2, sources: [v1], options: options)
            defer { StoreHarness.close(coordinator) }
            #expect(try tables(url).contains("Z_1PETS"))
            // Changed meanwhile: p1 moves to o2.
            let context = StoreHarness.context(coordinator)
            let p1 = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Pet")).first { $0.value(forKey: "name") as? String == "p1" })
            let o2 = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).first { $0.value(forKey: "name") as? String == "o2" })
            p1.setValue(o2, forKey: "owner")
            try context.save()
        }
        let v3 = pairModel("3", owner: .many("pets"), pet: .many("owners", renamedFrom: "owner"))
        options[OpenCoreDataMigrationSourceModelsOption] = [v1, v2]
        let coordinator = try M.open(url, with: v3, sources: [v1, v2], options: options)
        defer { StoreHarness.close(coordinator) }
        #expect(try self.links(StoreHarness.context(coordinator), "Owner", "pets") == ["o1": ["p2"], "o2": ["p1", "p3"], "o3": [], "o4": []])
        #expect(try RawDatabase(url).rows("SELECT COUNT(*) FROM Z_1PETS").first?.first as? Int64 == 3)
    }

    @Test func deferredMigrationKeepsOldColumnsUntilFinishAndWorksMeanwhile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v1 = pairModel("1", owner: .many("pets"), pet: .one("owner"))
        let links: Links = ["o1": ["p1", "p2"], "o2": ["p3"], "o3": [], "o4": ["p4"]]
        let url = try pairStore(v1, owner: .many("pets"), links: links, in: directory)
        let v2 = pairModel("2", owner: .many("pets"), pet: .many("owners", renamedFrom: "owner"))
        var options = M.options([v1])
        options[NSPersistentStoreDeferredLightweightMigrationOptionKey] = true
        let coordinator = try M.open(url, with: v2, sources: [v1], options: options)
        defer { StoreHarness.close(coordinator) }
        let statements = try sqliteStore(coordinator).migrationStatements
        #expect(!statements.contains { $0.hasPrefix("DROP TABLE Z") || $0.hasPrefix("DROP TABLE IF EXISTS Z") || $0.hasPrefix("DROP INDEX") })
        #expect(coordinator.metadata(for: coordinator.persistentStores[0])[NSPersistentStoreDeferredLightweightMigrationOptionKey] as? Bool == true)
        #expect(try M.columns("ZPET", at: url).contains("ZOWNER"))

        // Usable before the clean-up: read, change, insert.
        let context = StoreHarness.context(coordinator)
        #expect(try self.links(context, "Owner", "pets") == links)
        let pets = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Pet"))
        let o3 = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).first { $0.value(forKey: "name") as? String == "o3" })
        o3.mutableSetValue(forKey: "pets").add(pets.first { $0.value(forKey: "name") as? String == "p1" }!)
        insertObject("Pet", ["name": "p7", "owners": Set([o3])], into: context)
        try context.save()
        let during = try self.links(StoreHarness.context(coordinator), "Pet", "owners")
        #expect(during["p1"] == ["o1", "o3"] && during["p7"] == ["o3"])

        try coordinator.finishDeferredLightweightMigration()
        #expect(try M.columns("ZPET", at: url) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"])
        let after = try self.links(StoreHarness.context(coordinator), "Owner", "pets")
        #expect(after == ["o1": ["p1", "p2"], "o2": ["p3"], "o3": ["p1", "p7"], "o4": ["p4"]])
    }
}
