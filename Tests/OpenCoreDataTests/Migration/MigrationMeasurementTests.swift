import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// Lightweight migration of a 1,000,001-row store: add, rename and remove an attribute, add an entity
/// with a relationship. A manual measurement (debug build), off unless `OCD_MIGRATION_BENCH` is set:
/// `OCD_MIGRATION_BENCH=1 swift test --skip-build --filter MigrationMeasurement`. It prints times and
/// file sizes; adding or renaming an attribute must not rewrite rows (the file does not grow).
@Suite("Migration: 1M-row measurement")
struct MigrationMeasurement {
    func v1() -> NSManagedObjectModel {
        M.model("1", [M.entity("Person", [M.attribute("name"), M.attribute("age", .integer32AttributeType), M.attribute("city")])])
    }
    @Test(.enabled(if: ProcessInfo.processInfo.environment["OCD_MIGRATION_BENCH"] != nil))
    func measure() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let base = try M.makeStore(v1(), in: directory, name: "Base.sqlite") { insertObject("Person", ["name": "Ann"], into: $0) }
        let raw = try RawDatabase(base, readOnly: false)
        _ = try raw.rows("WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i <= 1000000) INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE, ZCITY) SELECT i, 1, 1, 'name' || i, i % 90, 'city' || (i % 1000) FROM n")
        _ = try raw.rows("UPDATE Z_PRIMARYKEY SET Z_MAX = 1000001")
        _ = try raw.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        let size = (try FileManager.default.attributesOfItem(atPath: base.path)[.size] as? Int) ?? 0
        print("MEASURE rows \(try raw.rows("SELECT COUNT(*) FROM ZPERSON")[0][0]!) size \(size)")
        let person2 = { (extra: [NSPropertyDescription], rename: Bool) -> NSEntityDescription in
            M.entity("Person", [M.attribute("name"), M.attribute("age", .integer32AttributeType), M.attribute(rename ? "town" : "city", renamedFrom: rename ? "city" : nil)] + extra)
        }
        let addAttribute = M.model("2", [person2([M.attribute("email")], false)])
        let renameAttribute = M.model("2", [person2([], true)])
        let person = person2([], false)
        let pet = M.entity("Pet", [M.attribute("name")])
        let pets = NSRelationshipDescription(name: "pets", destination: pet, toMany: true)
        let owner = NSRelationshipDescription(name: "owner", destination: person, toMany: false)
        pets.inverseRelationship = owner
        owner.inverseRelationship = pets
        person.properties += [pets]
        pet.properties += [owner]
        let addEntity = M.model("2", [person, pet])
        let removeAttribute = M.model("2", [M.entity("Person", [M.attribute("name"), M.attribute("city")])])
        for (label, model) in [("add attribute", addAttribute), ("rename attribute", renameAttribute), ("add entity+relationship", addEntity), ("remove attribute (rebuild)", removeAttribute)] {
            let url = directory.file(label.replacingOccurrences(of: " ", with: "_") + ".sqlite")
            try FileManager.default.copyItem(at: base, to: url)
            let start = Date()
            let coordinator = try M.open(url, with: model, sources: [v1()])
            let elapsed = Date().timeIntervalSince(start)
            StoreHarness.close(coordinator)
            let after = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            print("MEASURE \(label): \(String(format: "%.3f", elapsed)) s, file \(size) -> \(after) bytes")
            if label.hasPrefix("add attribute") || label.hasPrefix("rename") { #expect(after == size) }
        }
    }
}
