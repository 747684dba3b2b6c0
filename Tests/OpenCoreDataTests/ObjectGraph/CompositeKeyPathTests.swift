import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Namespaced key paths to composite elements (`colorScheme.primary`) beyond predicates and sorts:
/// in `propertiesToFetch`, in uniqueness constraints and in fetch indexes. Apple's documentation
/// says composites can be queried, indexed and constrained ("query, index, and apply constraints to
/// those types", NSCompositeAttributeDescription) but not how each names an element; where it is
/// silent, the choice made here is said at the test. Every store test runs on both stores.
@Suite("Composite attributes: key paths in fetches, constraints and indexes")
struct CompositeKeyPathTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// Seed 001's model, with `colorScheme.primary` unique if asked.
    static func model(uniquePrimary: Bool = false, index: Bool = false) -> NSManagedObjectModel {
        let model = CompositeAttributeTests.model()
        let aircraft = model.entitiesByName["Aircraft"]!
        if uniquePrimary { aircraft.uniquenessConstraints = [["colorScheme.primary"]] }
        if index, let colorScheme = aircraft.attributesByName["colorScheme"] as? NSCompositeAttributeDescription {
            aircraft.indexes = [NSFetchIndexDescription(name: "byPrimary", elements: [
                NSFetchIndexElementDescription(property: colorScheme.elements[0], collationType: .binary)
            ])]
        }
        return model
    }

    static func add(_ tail: String, primary: String, secondary: String = "white", to context: NSManagedObjectContext) {
        insertObject("Aircraft", ["tailNumber": tail, "colorScheme": ["primary": primary, "secondary": secondary]], into: context)
    }

    // MARK: propertiesToFetch

    @Test(arguments: storeTypes)
    func namespacedKeyPathsInPropertiesToFetch(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        try context.performAndWait {
            Self.add("N1", primary: "red", to: context)
            Self.add("N2", primary: "blue", to: context)
            Self.add("N3", primary: "red", secondary: "gold", to: context)
            try context.save()
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Aircraft")
            request.resultType = .dictionaryResultType
            // Apple's key for a key path in a dictionary result is the key path itself, as for
            // `department.name`; that it is the same for a composite element is our assumption.
            request.propertiesToFetch = ["tailNumber", "colorScheme.primary"]
            request.sortDescriptors = [NSSortDescriptor(key: "tailNumber", ascending: true)]
            let rows = try reader.fetch(request).map { $0 as! [String: Any] }
            #expect(rows.map { $0["tailNumber"] as? String } == ["N1", "N2", "N3"])
            #expect(rows.map { $0["colorScheme.primary"] as? String } == ["red", "blue", "red"])
            #expect(rows.allSatisfy { $0.count == 2 })

            // Distinct element values (computed in SQL by the SQLite store).
            let distinct = NSFetchRequest<NSDictionary>(entityName: "Aircraft")
            distinct.resultType = .dictionaryResultType
            distinct.propertiesToFetch = ["colorScheme.primary"]
            distinct.returnsDistinctResults = true
            distinct.sortDescriptors = [NSSortDescriptor(key: "colorScheme.primary", ascending: true)]
            #expect(try reader.fetch(distinct).map { ($0 as! [String: Any])["colorScheme.primary"] as? String } == ["blue", "red"])

            // A key path that names no element is refused, as for any unknown key.
            let unknown = NSFetchRequest<NSDictionary>(entityName: "Aircraft")
            unknown.resultType = .dictionaryResultType
            unknown.propertiesToFetch = ["colorScheme.purple"]
            #expect(throws: OpenCoreDataError.self) { try reader.fetch(unknown) }
        }
    }

    // MARK: Uniqueness constraints

    @Test(arguments: storeTypes)
    func aConstraintOnACompositeElementConflictsWithCocoasCode(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model(uniquePrimary: true))
        let context = store.newContext()
        try context.performAndWait {
            Self.add("N1", primary: "red", to: context)
            Self.add("N2", primary: "blue", secondary: "red", to: context)  // another element may repeat it
            try context.save()

            // Two new objects with one primary colour: a conflict among them.
            Self.add("N3", primary: "green", to: context)
            Self.add("N4", primary: "green", secondary: "gold", to: context)
            let among = try #require(throws: OpenCoreDataError.self) { try context.save() }
            #expect(among.code == .managedObjectConstraintMerge)
            #expect((among.conflictList.first as? NSConstraintConflict)?.constraint == ["colorScheme.primary"])
            context.rollback()

            // A new object with a stored object's primary colour: a conflict with the store.
            Self.add("N5", primary: "red", secondary: "black", to: context)
            let stored = try #require(throws: OpenCoreDataError.self) { try context.save() }
            #expect(stored.code == .managedObjectConstraintMerge)
            #expect((stored.conflictList.first as? NSConstraintConflict)?.databaseObject?.value(forKey: "tailNumber") as? String == "N1")
            context.rollback()
        }
        // The failed saves wrote nothing.
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Aircraft")
            request.sortDescriptors = [NSSortDescriptor(key: "tailNumber", ascending: true)]
            let planes = try reader.fetch(request)
            #expect(planes.map { $0.value(forKey: "tailNumber") as? String } == ["N1", "N2"])
        }
    }

    @Test(arguments: storeTypes)
    func objectsMaySwapAConstrainedElementInOneSave(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model(uniquePrimary: true))
        let context = store.newContext()
        try context.performAndWait {
            Self.add("N1", primary: "red", to: context)
            Self.add("N2", primary: "blue", to: context)
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Aircraft")
            request.sortDescriptors = [NSSortDescriptor(key: "tailNumber", ascending: true)]
            let planes = try context.fetch(request)
            planes[0].setValue("blue", forKeyPath: "colorScheme.primary")
            planes[1].setValue("red", forKeyPath: "colorScheme.primary")
            try context.save()  // the final values are unique: no conflict, and no SQLite index error midway
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Aircraft")
            request.predicate = NSPredicate(format: "colorScheme.primary == %@", "red")
            let red = try reader.fetch(request)
            #expect(red.map { $0.value(forKey: "tailNumber") as? String } == ["N2"])
        }
    }

    @Test func theSQLiteStoreIndexesConstrainedAndIndexedElements() throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model(uniquePrimary: true, index: true))
        let url = try #require(store.url)
        let indexes = try RawDatabase(url).rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZAIRCRAFT'")
        let sql = Dictionary(uniqueKeysWithValues: indexes.compactMap { row in (row[0] as? String).map { ($0, row[1] as? String ?? "") } })
        // Apple's index names for composite elements are not documented; ours follow FORMATS §1.8
        // with the key path's dot as `_`.
        #expect(sql["Z_Aircraft_UNIQUE_colorScheme_primary"]?.contains("UNIQUE INDEX") == true)
        #expect(sql["Z_Aircraft_UNIQUE_colorScheme_primary"]?.contains("(ZCOLORSCHEME_PRIMARY COLLATE BINARY ASC)") == true)
        #expect(sql["Z_Aircraft_byPrimary"]?.contains("(ZCOLORSCHEME_PRIMARY COLLATE BINARY ASC)") == true)
        // The database itself refuses a duplicate that bypasses the context.
        let raw = try RawDatabase(url, readOnly: false)
        try raw.execute("INSERT INTO ZAIRCRAFT (Z_PK, Z_ENT, Z_OPT, ZCOLORSCHEME_PRIMARY) VALUES (100, 1, 1, 'red')")
        #expect(throws: (any Error).self) {
            try raw.execute("INSERT INTO ZAIRCRAFT (Z_PK, Z_ENT, Z_OPT, ZCOLORSCHEME_PRIMARY) VALUES (101, 1, 1, 'red')")
        }
    }

    @Test func aModelFileFetchIndexMayNameACompositeElement() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("Aircraft.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // How Xcode writes an index on a composite element is not documented; a namespaced key path
        // in `property` is what this reader accepts.
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="Aircraft" representedClassName="Aircraft" syncable="YES">
                    <attribute name="colorScheme" optional="YES" attributeType="Composite" composite="ColorScheme"/>
                    <attribute name="tailNumber" optional="YES" attributeType="String"/>
                    <fetchIndex name="byPrimary">
                        <fetchIndexElement property="colorScheme.primary" type="Binary" order="descending"/>
                    </fetchIndex>
                    <uniquenessConstraints>
                        <uniquenessConstraint>
                            <constraint value="colorScheme.primary"/>
                        </uniquenessConstraint>
                    </uniquenessConstraints>
                </entity>
                <composite name="ColorScheme">
                    <attribute name="primary" optional="YES" attributeType="String"/>
                    <attribute name="secondary" optional="YES" attributeType="String"/>
                </composite>
            </model>
            """.write(to: url.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let model = try NSManagedObjectModel.load(contentsOf: url)
        let element = try #require(model.entitiesByName["Aircraft"]?.indexes.first?.elements.first)
        #expect(element.property?.name == "primary" && !element.isAscending)
        let store = try TestStore(NSSQLiteStoreType, model: model)
        let indexSQL = try RawDatabase(try #require(store.url)).value("SELECT sql FROM sqlite_master WHERE name = 'Z_Aircraft_byPrimary'")
        #expect((indexSQL as? String)?.contains("ZCOLORSCHEME_PRIMARY COLLATE BINARY DESC") == true)
    }
}
