import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Equality lookups on indexed attributes use the index: `EXPLAIN QUERY PLAN` on the SQL the store runs.
@Suite("SQLite query plans")
struct SQLiteQueryPlanTests {
    /// `Country(code: Int16, indexed; iso: String, fetch index "byISO"; slug: unique; name: no index)`.
    static func model() -> NSManagedObjectModel {
        let code = NSAttributeDescription(name: "code", type: .integer16AttributeType)
        code.isIndexed = true
        let iso = NSAttributeDescription(name: "iso", type: .stringAttributeType)
        let country = NSEntityDescription(
            name: "Country",
            properties: [
                code, iso, NSAttributeDescription(name: "slug", type: .stringAttributeType),
                NSAttributeDescription(name: "name", type: .stringAttributeType),
            ])
        country.uniquenessConstraints = [["slug"]]
        country.indexes = [
            NSFetchIndexDescription(
                name: "byISO", elements: [NSFetchIndexElementDescription(property: iso, collationType: .binary)])
        ]
        let model = NSManagedObjectModel()
        model.entities = [country]
        return model
    }

    /// The plan of the fetch with `predicate`: its `detail` lines.
    static func plan(_ format: String, store: TestStore) throws -> [String] {
        var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Country")
        request.predicate = NSPredicate(format: format)
        _ = try store.newContext().fetch(request)
        let sql = try #require(statements.last { $0.hasPrefix("SELECT") })
        let raw = try RawDatabase(try #require(store.url))
        return try raw.rows("EXPLAIN QUERY PLAN " + sql).compactMap { $0.last as? String }
    }

    @Test func createsIndexesWithCoreDataNames() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let raw = try RawDatabase(try #require(store.url))
        let indexes = try raw.rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            .map { "\($0[0] as? String ?? ""): \($0[1] as? String ?? "")" }
        #expect(
            indexes == [
                "ZCOUNTRY_ZCODE_INDEX: CREATE INDEX ZCOUNTRY_ZCODE_INDEX ON ZCOUNTRY (ZCODE)",
                "Z_Country_UNIQUE_slug: CREATE UNIQUE INDEX Z_Country_UNIQUE_slug ON ZCOUNTRY (ZSLUG COLLATE BINARY ASC)",
                "Z_Country_byISO: CREATE INDEX Z_Country_byISO ON ZCOUNTRY (ZISO COLLATE BINARY ASC)",
            ])
    }

    @Test(arguments: [
        ("code == 616", "ZCOUNTRY_ZCODE_INDEX"),
        ("iso == 'PL'", "Z_Country_byISO"),
        ("slug == 'poland'", "Z_Country_UNIQUE_slug"),
        ("code IN {616, 250}", "ZCOUNTRY_ZCODE_INDEX"),
    ])
    func equalityOnAnIndexedAttributeSearchesTheIndex(format: String, index: String) throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let context = store.newContext()
        try context.performAndWait {
            for (code, iso, slug) in [(616, "PL", "poland"), (250, "FR", "france"), (276, "DE", "germany")] {
                insertObject("Country", ["code": code, "iso": iso, "slug": slug, "name": slug.capitalized], into: context)
            }
            try context.save()
        }
        let details = try Self.plan(format, store: store)
        #expect(details.contains { $0.hasPrefix("SEARCH t0 USING") && $0.contains("INDEX \(index) ") }, "\(details)")
        #expect(!details.contains { $0.hasPrefix("SCAN t0") }, "\(details)")
    }

    /// `<fetchIndex>` in a model file becomes an `NSFetchIndexDescription`, and the store creates it.
    @Test func fetchIndexesFromAModelFile() throws {
        let version = ModelFixtures.url(ModelFixtures.sampleModel).appendingPathComponent("SampleModel2.xcdatamodel")
        let model = try NSManagedObjectModel.load(contentsOf: version)
        let car = try #require(model.entitiesByName["Car"])
        let index = try #require(car.indexes.first)
        #expect(car.indexes.count == 1 && index.name == "byMakerAndNumberPlate" && index.entity === car)
        #expect(index.elements.map(\.propertyName) == ["maker", "numberPlate"])
        #expect(index.elements.allSatisfy { $0.collationType == .binary && $0.isAscending && $0.indexDescription === index })
        let store = try TestStore(NSSQLiteStoreType, model: model)
        let raw = try RawDatabase(try #require(store.url))
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'Z_Car_byMakerAndNumberPlate'") as? String
                == "CREATE INDEX Z_Car_byMakerAndNumberPlate ON ZCAR (ZMAKER COLLATE BINARY ASC, ZNUMBERPLATE COLLATE BINARY ASC)")
    }

    @Test func anUnindexedAttributeScans() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let details = try Self.plan("name == 'Poland'", store: store)
        #expect(details.contains { $0.hasPrefix("SCAN t0") }, "\(details)")
    }
}
