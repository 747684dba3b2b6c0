import Foundation
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Composite attributes in Xcode model files (Xcode 15): `<attribute … attributeType="Composite"
/// composite="Name"/>` plus a top-level `<composite name="Name">` holding the element attributes
/// (FORMATS.md §3; the only example is phimage/MomXML's test model).
@Suite("Composite attributes in model files")
struct CompositeModelFileTests {
    @Test func momXMLCompositeBecomesNSCompositeAttributeDescriptionWithNestedElements() throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momXML))
        let attribute = try #require(model.entitiesByName["Produit"]?.attributesByName["attribute1"])
        let composite = try #require(attribute as? NSCompositeAttributeDescription)
        #expect(composite.attributeType == .compositeAttributeType && composite.type == .composite)
        #expect(composite.elements.map(\.name) == ["one", "two", "three"])
        #expect(composite.elements.map(\.attributeType) == [.integer16AttributeType, .stringAttributeType, .compositeAttributeType])
        #expect(composite.elements[0].defaultValue as? Int16 == 0)
        // `three` is the (empty) composite `Composite1`, nested.
        let nested = try #require(composite.elements[2] as? NSCompositeAttributeDescription)
        #expect(nested.elements.isEmpty)
        // Apple's handling of element defaults is not documented: we start new objects with a
        // dictionary of the elements' defaults, as each flattened column would have its default.
        #expect((composite.defaultValue as? [String: Any])?["one"] as? Int16 == 0)
        #expect((composite.defaultValue as? [String: Any])?.count == 1)
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func momXMLCompositeIsStoredAndQueried(storeType: String) throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momXML))
        let store = try TestStore(storeType, model: model)
        let context = store.newContext()
        try context.performAndWait {
            let first = NSManagedObject(entity: model.entitiesByName["Produit"]!, insertInto: context)
            #expect((first.value(forKey: "attribute1") as? [String: Any])?["one"] as? Int16 == 0, "element defaults")
            first.setValue(["one": 5, "two": "deux"], forKey: "attribute1")
            first.setValue("A", forKey: "reference")
            let second = NSManagedObject(entity: model.entitiesByName["Produit"]!, insertInto: context)
            second.setValue("B", forKey: "reference")
            try context.save()
        }
        if storeType == NSSQLiteStoreType { try store.reopen() }
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Produit")
            request.predicate = NSPredicate(format: "attribute1.two == %@ AND attribute1.one > 4", "deux")
            let found = try reader.fetch(request)
            #expect(found.map { $0.value(forKey: "reference") as? String } == ["A"])
            let value = try #require(found.first?.value(forKey: "attribute1") as? [String: Any])
            #expect(value["one"] as? Int16 == 5 && value["two"] as? String == "deux" && value.count == 2)
        }
        if let url = store.url {
            let columns = try RawDatabase(url).rows("SELECT name, type FROM pragma_table_info('ZPRODUIT')")
                .compactMap { row in (row[0] as? String).map { ($0, row[1] as? String ?? "") } }
            #expect(columns.contains { $0 == ("ZATTRIBUTE1_ONE", "INTEGER") })
            #expect(columns.contains { $0 == ("ZATTRIBUTE1_TWO", "VARCHAR") })
            #expect(!columns.contains { $0.0.hasPrefix("ZATTRIBUTE1_THREE") }, "an empty composite has no column")
        }
    }

    // MARK: Errors name the file and line

    private func loadError(_ body: String) throws -> OpenCoreDataError {
        let scratch = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("Composite.xcdatamodel/contents")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            \(body)
            </model>
            """
        try Data(xml.utf8).write(to: file)
        return try #require(throws: OpenCoreDataError.self) {
            _ = try NSManagedObjectModel.load(contentsOf: file.deletingLastPathComponent())
        }
    }

    @Test func compositeWithoutNameFails() throws {
        let error = try loadError("""
            <entity name="Aircraft">
                <attribute name="colorScheme" optional="YES" attributeType="Composite"/>
            </entity>
            """)
        #expect(error.message.contains("Composite.xcdatamodel/contents:4:"))
        #expect(error.message.contains("colorScheme") && error.entityName == "Aircraft")
    }

    @Test func undefinedCompositeFails() throws {
        let error = try loadError("""
            <entity name="Aircraft">
                <attribute name="colorScheme" optional="YES" attributeType="Composite" composite="ColorScheme"/>
            </entity>
            """)
        #expect(error.message.contains("contents:4:"))
        #expect(error.message.contains("composite ColorScheme is not defined"))
    }

    @Test func compositesContainingEachOtherFail() throws {
        let error = try loadError("""
            <entity name="Aircraft">
                <attribute name="a" optional="YES" attributeType="Composite" composite="A"/>
            </entity>
            <composite name="A">
                <attribute name="b" optional="YES" attributeType="Composite" composite="B"/>
            </composite>
            <composite name="B">
                <attribute name="a" optional="YES" attributeType="Composite" composite="A"/>
            </composite>
            """)
        #expect(error.message.contains("composite A contains itself (A → B → A)"))
    }
}
