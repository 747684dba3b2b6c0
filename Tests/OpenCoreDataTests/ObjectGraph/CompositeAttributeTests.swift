import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Seed 001's composite attributes: `Aircraft.colorScheme` (`primary`/`secondary`/`tertiary`), set as
/// a `[String: Any]`, saved, read back and fetched with the namespaced key path
/// `colorScheme.primary`. Every store test runs on both stores.
@Suite("Composite attributes")
struct CompositeAttributeTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    // MARK: The seed's classes (with `@ManagedProperty` for `@NSManaged`)

    enum PaintColor: String, CaseIterable, Identifiable {
        case none, white, blue, orange, red, gray, green, gold, yellow, black
        var id: Self { self }
    }

    final class Aircraft: NSManagedObject {}

    final class LogEntry: NSManagedObject {
        @ManagedProperty var date: Date?
        @ManagedProperty var aircraft: Aircraft?
    }

    /// The seed's colour scheme: three optional string elements, `primary` required.
    static func colorScheme() -> NSCompositeAttributeDescription {
        NSCompositeAttributeDescription(name: "colorScheme", elements: [
            NSAttributeDescription(name: "primary", type: .stringAttributeType, isOptional: false),
            NSAttributeDescription(name: "secondary", type: .stringAttributeType),
            NSAttributeDescription(name: "tertiary", type: .stringAttributeType),
        ])
    }

    static func model(extra: [NSPropertyDescription] = []) -> NSManagedObjectModel {
        let aircraft = NSEntityDescription(name: "Aircraft", properties: [
            NSAttributeDescription(name: "aircraftCategory", type: .stringAttributeType),
            NSAttributeDescription(name: "aircraftClass", type: .stringAttributeType),
            NSAttributeDescription(name: "aircraftType", type: .stringAttributeType),
            colorScheme(),
            NSAttributeDescription(name: "photo", type: .binaryDataAttributeType),
            NSAttributeDescription(name: "tailNumber", type: .stringAttributeType),
        ] + extra)
        aircraft.managedObjectClassName = String(reflecting: Aircraft.self)
        let logEntry = NSEntityDescription(name: "LogEntry", properties: [
            NSAttributeDescription(name: "date", type: .dateAttributeType)
        ])
        logEntry.managedObjectClassName = String(reflecting: LogEntry.self)
        let entries = NSRelationshipDescription(name: "logEntries", destination: logEntry, toMany: true)
        let owner = NSRelationshipDescription(name: "aircraft", destination: aircraft, toMany: false)
        entries.inverseRelationship = owner
        owner.inverseRelationship = entries
        aircraft.properties += [entries]
        logEntry.properties += [owner]
        let model = NSManagedObjectModel()
        model.entities = [aircraft, logEntry]
        return model
    }

    /// The seed's `addAircraft()`, with its view's state as arguments.
    static func addAircraft(
        _ viewContext: NSManagedObjectContext, tailNumber: String, aircraftType: String, primaryColor: PaintColor,
        secondaryColor: PaintColor, tertiaryColor: PaintColor
    ) throws {
        let aircraftClass = "Airplane", aircraftCategory = "Single-Engine Land"
        try viewContext.performAndWait {
            let newAircraft = Aircraft(context: viewContext)

            newAircraft.tailNumber = tailNumber
            newAircraft.aircraftType = aircraftType
            newAircraft.aircraftClass = aircraftClass
            newAircraft.aircraftCategory = aircraftCategory

            newAircraft.colorScheme = [
                "primary": primaryColor.rawValue,
                "secondary": secondaryColor.rawValue,
                "tertiary": tertiaryColor.rawValue,
            ]

            try viewContext.save()
        }
    }

    /// The seed's `findAircraft(with:)`, returning what it fetched.
    static func findAircraft(_ viewContext: NSManagedObjectContext, with color: String) throws -> [Aircraft] {
        try viewContext.performAndWait {
            let fetchRequest = Aircraft.fetchRequest()
            fetchRequest.predicate = NSPredicate(format: "colorScheme.primary == %@", color)

            var fetchedResults: [Aircraft]
            fetchedResults = try viewContext.fetch(fetchRequest)
            return fetchedResults
        }
    }

    // MARK: The seed's example

    @Test(arguments: storeTypes)
    func seedAircraftIsSavedReopenedAndFetchedByColorSchemePrimary(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let viewContext = store.newContext()
        try Self.addAircraft(viewContext, tailNumber: "N12345", aircraftType: "C172", primaryColor: .red,
                             secondaryColor: .white, tertiaryColor: .blue)
        try Self.addAircraft(viewContext, tailNumber: "N67890", aircraftType: "PA-28", primaryColor: .blue,
                             secondaryColor: .white, tertiaryColor: .none)

        // A fresh coordinator on the file (SQLite) or a fresh context (in memory) reads from the store.
        if storeType == NSSQLiteStoreType { try store.reopen() }
        let reader = store.newContext()
        let red = try Self.findAircraft(reader, with: PaintColor.red.rawValue)
        #expect(red.map(\.tailNumber) == ["N12345"])
        let plane = try #require(red.first)
        let scheme = try #require(plane.colorScheme)
        #expect(scheme.count == 3)
        #expect(scheme["primary"] as? String == "red")
        #expect(scheme["secondary"] as? String == "white")
        #expect(scheme["tertiary"] as? String == "blue")
        #expect(plane.aircraftType == "C172" && plane.aircraftCategory == "Single-Engine Land")
        #expect(try Self.findAircraft(reader, with: "blue").map(\.tailNumber) == ["N67890"])
        #expect(try Self.findAircraft(reader, with: "gold").isEmpty)

        if let url = store.url {
            // Flattened into the entity's table, one column per element.
            let rows = try RawDatabase(url).rows(
                "SELECT ZCOLORSCHEME_PRIMARY, ZCOLORSCHEME_SECONDARY, ZCOLORSCHEME_TERTIARY FROM ZAIRCRAFT ORDER BY ZTAILNUMBER")
            #expect(rows.map { $0.map { $0 as? String } } == [["red", "white", "blue"], ["blue", "white", "none"]])
        }
    }

    @Test(arguments: storeTypes)
    func namespacedKeyPathRunsInSQLAndAgreesWithMemory(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        var statements: [String] = []
        if storeType == NSSQLiteStoreType {
            try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        }
        let context = store.newContext()
        let colors: [(String, PaintColor, PaintColor?)] = [
            ("A", .red, .white), ("B", .blue, nil), ("C", .gold, .black), ("D", .blue, .orange),
        ]
        try context.performAndWait {
            for (tail, primary, secondary) in colors {
                let plane = Aircraft(context: context)
                plane.tailNumber = tail
                var scheme: [String: Any] = ["primary": primary.rawValue]
                if let secondary { scheme["secondary"] = secondary.rawValue }
                plane.colorScheme = scheme
            }
            try context.save()
        }
        let reader = store.newContext()
        func tails(_ format: String, _ arguments: [Any] = [], sort: [NSSortDescriptor] = [NSSortDescriptor(key: "tailNumber", ascending: true)]) throws -> [String] {
            try reader.performAndWait {
                let request = Aircraft.fetchRequest()
                request.predicate = NSPredicate(format: format, argumentArray: arguments)
                request.sortDescriptors = sort
                let fetched = try reader.fetch(request)
                // The same predicate evaluated in memory on the fetched objects' values.
                let all = try reader.fetch(Aircraft.fetchRequest())
                let evaluated = all.filter { request.predicate!.evaluate(with: $0) }
                #expect(Set(evaluated.map(\.objectID)) == Set(fetched.map(\.objectID)), "\(format)")
                return fetched.compactMap(\.tailNumber)
            }
        }
        #expect(try tails("colorScheme.primary == %@", ["blue"]) == ["B", "D"])
        #expect(try tails("colorScheme.primary IN %@", [["red", "gold"]]) == ["A", "C"])
        #expect(try tails("colorScheme.secondary == nil") == ["B"])
        #expect(try tails("colorScheme.secondary != nil AND colorScheme.primary BEGINSWITH[c] %@", ["B"]) == ["D"])
        #expect(try tails("colorScheme.primary > %@", ["c"]) == ["C", "A"].sorted())
        let bySecondary = [NSSortDescriptor(key: "colorScheme.secondary", ascending: false),
                           NSSortDescriptor(key: "tailNumber", ascending: true)]
        #expect(try tails("TRUEPREDICATE", sort: bySecondary) == ["A", "D", "C", "B"])

        // Through a to-one relationship: `aircraft.colorScheme.primary` from a log entry.
        try context.performAndWait {
            let entry = LogEntry(context: context)
            entry.aircraft = try context.fetch(Aircraft.fetchRequest()).first { $0.tailNumber == "D" }
            try context.save()
        }
        try reader.performAndWait {
            let request = NSFetchRequest<LogEntry>(entityName: "LogEntry")
            request.predicate = NSPredicate(format: "aircraft.colorScheme.primary == %@", "blue")
            let blue = try reader.fetch(request)
            #expect(blue.first?.aircraft?.tailNumber == "D")
            request.predicate = NSPredicate(format: "aircraft.colorScheme.primary == %@", "red")
            let red = try reader.fetch(request)
            #expect(red.isEmpty)
        }

        if storeType == NSSQLiteStoreType {
            let columns = "t0.Z_PK, 1, t0.ZPHOTO, t0.Z_OPT, t0.ZAIRCRAFTCATEGORY, t0.ZAIRCRAFTCLASS, t0.ZAIRCRAFTTYPE, "
                + "t0.ZCOLORSCHEME_PRIMARY, t0.ZCOLORSCHEME_SECONDARY, t0.ZCOLORSCHEME_TERTIARY, t0.ZTAILNUMBER"
            // The namespaced key path compiles to the element's column, in the predicate and the sort.
            #expect(statements.contains(
                "SELECT \(columns) FROM ZAIRCRAFT t0 WHERE t0.ZCOLORSCHEME_PRIMARY IS ? ORDER BY t0.ZTAILNUMBER ASC, t0.Z_PK"))
            #expect(statements.contains(
                "SELECT \(columns) FROM ZAIRCRAFT t0 WHERE 1 ORDER BY t0.ZCOLORSCHEME_SECONDARY DESC, t0.ZTAILNUMBER ASC, t0.Z_PK"))
            #expect(statements.contains { $0.hasPrefix("SELECT") && $0.contains("LEFT JOIN ZAIRCRAFT t1") && $0.contains("t1.ZCOLORSCHEME_PRIMARY IS ?") })
            let schema = try RawDatabase(try #require(store.url)).rows("SELECT sql FROM sqlite_master WHERE name = 'ZAIRCRAFT'")
            #expect(schema.first?.first as? String == "CREATE TABLE ZAIRCRAFT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
                + "ZAIRCRAFTCATEGORY VARCHAR, ZAIRCRAFTCLASS VARCHAR, ZAIRCRAFTTYPE VARCHAR, ZCOLORSCHEME_PRIMARY VARCHAR, "
                + "ZCOLORSCHEME_SECONDARY VARCHAR, ZCOLORSCHEME_TERTIARY VARCHAR, ZTAILNUMBER VARCHAR, ZPHOTO BLOB )")
        }
    }

    // MARK: Values, change tracking, KVC

    @Test(arguments: storeTypes)
    func valueIsOnePropertyForKVCAndChangeTracking(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        try context.performAndWait {
            let plane = Aircraft(context: context)
            plane.tailNumber = "N1"
            plane.setValue(["primary": "red"], forKey: "colorScheme")
            #expect((plane.value(forKey: "colorScheme") as? [String: Any])?["primary"] as? String == "red")
            #expect(plane.value(forKeyPath: "colorScheme.primary") as? String == "red")
            try context.save()

            plane.colorScheme = ["primary": "gold", "secondary": "black"]
            #expect(plane.hasChanges)
            #expect(Set(plane.changedValues().keys) == ["colorScheme"], "the composite changes as one property")
            let committed = plane.committedValues(forKeys: ["colorScheme"])["colorScheme"] as? [String: Any]
            #expect(committed?["primary"] as? String == "red")
            try context.save()

            // Element access by key path (Apple's docs: `quake.magnitude.richter = 4.6`).
            plane.setValue("orange", forKeyPath: "colorScheme.secondary")
            #expect(plane.colorScheme?["secondary"] as? String == "orange" && plane.colorScheme?["primary"] as? String == "gold")
            plane.setValue(nil, forKeyPath: "colorScheme.secondary")
            #expect(plane.colorScheme?.keys.sorted() == ["primary"])
            #expect(Set(plane.changedValues().keys) == ["colorScheme"])
            try context.save()

            plane.colorScheme = nil
            try context.save()
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let plane = try #require(try reader.fetch(Aircraft.fetchRequest()).first)
            #expect(plane.colorScheme == nil, "nil is stored as nil")
            plane.colorScheme = ["primary": "green"]
            try reader.save()
        }
        if storeType == NSSQLiteStoreType { try store.reopen() }
        let third = store.newContext()
        #expect(try Self.findAircraft(third, with: "green").count == 1)
        #expect(try Self.findAircraft(third, with: "gold").isEmpty)
    }

    // MARK: Nesting and element types

    /// `position` nests a composite in `placement`; elements of several types round-trip in their
    /// canonical Swift types (an `Int` set for an Integer 16 element reads back as `Int16`).
    static func nestedModel() -> NSManagedObjectModel {
        let position = NSCompositeAttributeDescription(name: "position", elements: [
            NSAttributeDescription(name: "x", type: .doubleAttributeType, isOptional: false),
            NSAttributeDescription(name: "y", type: .doubleAttributeType, isOptional: false),
        ])
        let placement = NSCompositeAttributeDescription(name: "placement", elements: [
            NSAttributeDescription(name: "hangar", type: .integer16AttributeType),
            NSAttributeDescription(name: "since", type: .dateAttributeType),
            NSAttributeDescription(name: "heated", type: .booleanAttributeType),
            NSAttributeDescription(name: "tag", type: .UUIDAttributeType),
            position,
        ])
        return model(extra: [placement])
    }

    @Test(arguments: storeTypes)
    func nestedCompositesRoundTripAndQuery(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.nestedModel())
        let context = store.newContext()
        let since = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let tag = UUID()
        try context.performAndWait {
            let plane = Aircraft(context: context)
            plane.tailNumber = "N1"
            plane.colorScheme = ["primary": "red"]
            plane.setValue(["hangar": 7, "since": since, "heated": true, "tag": tag,
                            "position": ["x": 1.5, "y": -2.0]], forKey: "placement")
            let other = Aircraft(context: context)
            other.tailNumber = "N2"
            other.colorScheme = ["primary": "blue"]
            other.setValue(["hangar": 3, "position": ["x": 9.0, "y": 0.0]], forKey: "placement")
            try context.save()
        }
        if storeType == NSSQLiteStoreType { try store.reopen() }
        let reader = store.newContext()
        try reader.performAndWait {
            let request = Aircraft.fetchRequest()
            request.predicate = NSPredicate(format: "placement.position.x < %@ AND placement.hangar == 7", NSNumber(value: 2))
            let found = try reader.fetch(request)
            #expect(found.map(\.tailNumber) == ["N1"])
            let placement = try #require(found.first?.value(forKey: "placement") as? [String: Any])
            #expect(placement["hangar"] as? Int16 == 7)
            #expect(placement["since"] as? Date == since)
            #expect(placement["heated"] as? Bool == true)
            #expect(placement["tag"] as? UUID == tag)
            let position = try #require(placement["position"] as? [String: Any])
            #expect(position["x"] as? Double == 1.5 && position["y"] as? Double == -2.0)

            let sorted = Aircraft.fetchRequest()
            sorted.sortDescriptors = [NSSortDescriptor(key: "placement.position.x", ascending: false)]
            #expect(try reader.fetch(sorted).map(\.tailNumber) == ["N2", "N1"])
        }
        if let url = store.url {
            let columns = try RawDatabase(url).rows("SELECT name FROM pragma_table_info('ZAIRCRAFT')").compactMap { $0[0] as? String }
            #expect(columns.contains("ZPLACEMENT_POSITION_X") && columns.contains("ZPLACEMENT_HANGAR"))
            #expect(!columns.contains("ZPLACEMENT") && !columns.contains("ZCOLORSCHEME"), "no column for the composite itself")
        }
    }

    // MARK: Validation at save

    @Test(arguments: storeTypes)
    func elementValuesAreValidatedAtSave(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.nestedModel())
        let context = store.newContext()
        func saveError(_ values: [String: Any], key: String = "colorScheme") throws -> OpenCoreDataError? {
            try context.performAndWait {
                context.rollback()
                let plane = Aircraft(context: context)
                plane.colorScheme = ["primary": "red"]
                plane.setValue(values, forKey: key)
                defer { context.rollback() }
                do {
                    try context.save()
                    return nil
                } catch let error as OpenCoreDataError {
                    return error
                }
            }
        }
        // A required element left out: NSValidationMissingMandatoryPropertyError (1570), keyed by
        // the namespaced key path. Apple's key for element errors is not documented; we name the element.
        let missing = try #require(try saveError(["secondary": "white"]))
        #expect(missing.code == .validationMissingMandatoryProperty)
        #expect(missing.key == "colorScheme.primary")
        // A value that does not fit the element's type: NSManagedObjectValidationError (1550).
        let wrongType = try #require(try saveError(["primary": "red", "secondary": Date()]))
        #expect(wrongType.code == .managedObjectValidation && wrongType.key == "colorScheme.secondary")
        // A key that names no element would be lost by the flattened store: refused, not dropped.
        let unknown = try #require(try saveError(["primary": "red", "livery": "stripes"]))
        #expect(unknown.code == .managedObjectValidation && unknown.key == "colorScheme.livery")
        // Required elements of a nested composite.
        let nested = try #require(try saveError(["hangar": 1, "position": ["x": 1.0]], key: "placement"))
        #expect(nested.code == .validationMissingMandatoryProperty && nested.key == "placement.position.y")
        // A value that is not a dictionary.
        let notDictionary = try #require(try saveError(["primary": ["red"]]))
        #expect(notDictionary.code == .managedObjectValidation)
        // Nothing was written by the failed saves.
        #expect(try Self.findAircraft(store.newContext(), with: "red").isEmpty)
        // The same values, corrected, save.
        #expect(try saveError(["primary": "red", "secondary": "white"]) == nil)
        // A nested composite is optional here: empty, it is nil (its required elements do not apply).
        #expect(try saveError(["hangar": 1, "position": [String: Any]()], key: "placement") == nil)
    }

    @Test(arguments: storeTypes)
    func elementValidationPredicatesUseCocoaCodes(storeType: String) throws {
        let hangar = NSAttributeDescription(name: "hangar", type: .integer16AttributeType)
        hangar.setValidationPredicates([NSPredicate(format: "SELF <= 20")], withValidationWarnings: ["too far"])
        let code = NSAttributeDescription(name: "code", type: .stringAttributeType)
        code.setValidationPredicates([NSPredicate(format: "length >= 3")], withValidationWarnings: [""])
        let spot = NSCompositeAttributeDescription(name: "spot", elements: [hangar, code], isOptional: false)
        let store = try TestStore(storeType, model: Self.model(extra: [spot]))
        let context = store.newContext()
        try context.performAndWait {
            let plane = Aircraft(context: context)
            plane.colorScheme = ["primary": "red"]
            plane.setValue(["hangar": 21, "code": "AB"], forKey: "spot")
            let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
            // Several failures are grouped as NSValidationMultipleErrorsError (1560).
            #expect(error.code == .validationMultipleErrors)
            let codes = Set(error.detailedErrors.map(\.code))
            #expect(codes == [.validationNumberTooLarge, .validationStringTooShort])

            // A required composite with no element set reads back as nil, so it is missing.
            plane.setValue([String: Any](), forKey: "spot")
            let empty = try #require(throws: OpenCoreDataError.self) { try context.save() }
            #expect(empty.code == .validationMissingMandatoryProperty && empty.key == "spot")

            plane.setValue(["hangar": 2, "code": "ABC"], forKey: "spot")
            try context.save()
        }
    }

    // MARK: Stores agree on empty values

    @Test(arguments: storeTypes)
    func emptyDictionaryReadsBackAsNilInBothStores(storeType: String) throws {
        // Apple's behaviour for an optional composite set to [:] is not documented; with flattened
        // columns it cannot differ from nil, and both our stores read it back as nil.
        let store = try TestStore(storeType, model: Self.nestedModel())
        let context = store.newContext()
        try context.performAndWait {
            let plane = Aircraft(context: context)
            plane.tailNumber = "N1"
            // `colorScheme.primary` is required, but an empty optional composite is validated as nil.
            plane.colorScheme = [:]
            plane.setValue([String: Any](), forKey: "placement")
            try context.save()
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let plane = try #require(try reader.fetch(Aircraft.fetchRequest()).first)
            #expect(plane.value(forKey: "placement") == nil && plane.colorScheme == nil)
            let request = Aircraft.fetchRequest()
            request.predicate = NSPredicate(format: "placement.hangar == nil")
            #expect(try reader.fetch(request).count == 1)
        }
    }

    // MARK: Model checks

    @Test func unknownElementInKeyPathThrowsUnknownKey() throws {
        let store = try TestStore(NSInMemoryStoreType, model: Self.model())
        let context = store.newContext()
        try context.performAndWait {
            let request = Aircraft.fetchRequest()
            request.predicate = NSPredicate(format: "colorScheme.livery == %@", "red")
            let error = try #require(throws: OpenCoreDataError.self) { try context.fetch(request) }
            #expect(error.code == .unknownKey && error.key == "livery")
        }
    }

    @Test func unsupportedElementTypesFailAddPersistentStore() throws {
        // Apple: composites support every attribute type except undefined, objectID and binary data
        // with external storage (NSAttributeType.compositeAttributeType's documentation).
        for element in [
            NSAttributeDescription(name: "id", type: .objectIDAttributeType),
            NSAttributeDescription(name: "x", type: .undefinedAttributeType),
        ] {
            let model = Self.model(extra: [NSCompositeAttributeDescription(name: "bad", elements: [element])])
            let error = try #require(throws: OpenCoreDataError.self) {
                _ = try StoreHarness.coordinator(model: model, storeType: NSInMemoryStoreType)
            }
            #expect(error.code == .persistentStoreIncompatibleSchema && error.entityName == "Aircraft")
        }
        let external = NSAttributeDescription(name: "blob", type: .binaryDataAttributeType)
        external.allowsExternalBinaryDataStorage = true
        let selfContaining = NSCompositeAttributeDescription(name: "loop", elements: [])
        selfContaining.elements = [selfContaining]
        let plain = NSAttributeDescription(name: "untyped", type: .compositeAttributeType)
        for bad in [NSCompositeAttributeDescription(name: "bad", elements: [external]), selfContaining, plain] {
            let model = Self.model(extra: [bad])
            #expect(throws: OpenCoreDataError.self) {
                _ = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, directory: TemporaryDirectory())
            }
            _ = model.entitiesByName["Aircraft"]!.versionHash  // a self-containing composite hashes without recursing forever
        }
        selfContaining.elements = []  // the cycle made above, broken so that it is not reported as a leak
    }

    @Test func versionHashChangesWithElements() throws {
        // FORMATS.md §2 does not specify how Apple hashes composites (no Apple-written store with one
        // was available), so these are not Apple's values: the hash only has to change when an
        // element does, so that a store opened with a changed composite is refused, not misread.
        func hash(_ elements: [NSAttributeDescription]) -> Data {
            let model = Self.model(extra: [NSCompositeAttributeDescription(name: "extra", elements: elements)])
            return model.entitiesByName["Aircraft"]!.versionHash
        }
        let base = hash([NSAttributeDescription(name: "a", type: .stringAttributeType)])
        #expect(base == hash([NSAttributeDescription(name: "a", type: .stringAttributeType)]))
        #expect(base != hash([NSAttributeDescription(name: "a", type: .integer32AttributeType)]))
        #expect(base != hash([NSAttributeDescription(name: "b", type: .stringAttributeType)]))
        #expect(base != hash([NSAttributeDescription(name: "a", type: .stringAttributeType, isOptional: false)]))
        #expect(base != hash([NSAttributeDescription(name: "a", type: .stringAttributeType),
                              NSAttributeDescription(name: "c", type: .stringAttributeType)]))
    }

    @Test func storeWithChangedCompositeIsRefusedNotMisread() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Store.sqlite")
        let first = try StoreHarness.coordinator(model: Self.model(), storeType: NSSQLiteStoreType, url: url)
        let context = StoreHarness.context(first)
        try Self.addAircraft(context, tailNumber: "N1", aircraftType: "C172", primaryColor: .red, secondaryColor: .white,
                             tertiaryColor: .blue)
        StoreHarness.close(first)
        let changed = Self.model()
        let scheme = changed.entitiesByName["Aircraft"]!.attributesByName["colorScheme"] as! NSCompositeAttributeDescription
        scheme.elements.append(NSAttributeDescription(name: "quaternary", type: .stringAttributeType))
        let error = try #require(throws: OpenCoreDataError.self) {
            _ = try StoreHarness.coordinator(model: changed, storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == .persistentStoreIncompatibleVersionHash)
    }
}

extension CompositeAttributeTests.Aircraft {
    @nonobjc public class func fetchRequest() -> NSFetchRequest<CompositeAttributeTests.Aircraft> {
        return NSFetchRequest<CompositeAttributeTests.Aircraft>(entityName: "Aircraft")
    }

    @ManagedProperty public var aircraftCategory: String?
    @ManagedProperty public var aircraftClass: String?
    @ManagedProperty public var aircraftType: String?
    @ManagedProperty public var colorScheme: [String: Any]?
    @ManagedProperty public var photo: Data?
    @ManagedProperty public var tailNumber: String?
    @ManagedProperty public var logEntries: Set<CompositeAttributeTests.LogEntry>
}

extension CompositeAttributeTests {
    @Test(arguments: storeTypes)
    func dictionaryResultsCarryTheComposite(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        try Self.addAircraft(context, tailNumber: "N1", aircraftType: "C172", primaryColor: .red, secondaryColor: .white,
                             tertiaryColor: .blue)
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Aircraft")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["tailNumber", "colorScheme"]
            let rows = try reader.fetch(request)
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(row["tailNumber"] as? String == "N1")
            #expect((row["colorScheme"] as? [String: Any])?["secondary"] as? String == "white")
            #expect(row.count == 2)
        }
    }
}

extension CompositeAttributeTests {
    /// A composite merges as one property: a conflict resolved by property keeps our new colour
    /// scheme and takes the other context's tail number (Apple: the policies merge "by property").
    @Test(arguments: storeTypes, [NSMergePolicyType.mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType])
    func optimisticLockingMergesTheCompositeAsOneProperty(storeType: String, policy: NSMergePolicyType) throws {
        let store = try TestStore(storeType, model: Self.model())
        try Self.addAircraft(store.newContext(), tailNumber: "N1", aircraftType: "C172", primaryColor: .red,
                             secondaryColor: .white, tertiaryColor: .blue)
        let contextA = store.newContext()
        let contextB = store.newContext()
        contextA.mergePolicy = NSMergePolicy(merge: policy)
        try contextA.performAndWait {
            let a = try #require(try contextA.fetch(Aircraft.fetchRequest()).first)
            try contextB.performAndWait {
                let b = try #require(try contextB.fetch(Aircraft.fetchRequest()).first)
                b.tailNumber = "N2"
                try contextB.save()
            }
            a.colorScheme = ["primary": "gold"]
            try contextA.save()
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let plane = try #require(try reader.fetch(Aircraft.fetchRequest()).first)
            #expect(plane.tailNumber == "N2")
            #expect(plane.colorScheme?["primary"] as? String == "gold" && plane.colorScheme?.count == 1)
        }
    }
}

extension CompositeAttributeTests {
    /// A subentity inherits the composite: its rows share the root's table and columns, and a fetch of
    /// the superentity by `colorScheme.primary` finds them.
    @Test(arguments: storeTypes)
    func subentitiesInheritTheComposite(storeType: String) throws {
        let model = Self.model()
        let aircraft = model.entitiesByName["Aircraft"]!
        let glider = NSEntityDescription(name: "Glider", properties: [
            NSAttributeDescription(name: "wingspan", type: .doubleAttributeType)
        ])
        aircraft.subentities = [glider]
        model.entities += [glider]
        let store = try TestStore(storeType, model: model)
        let context = store.newContext()
        try context.performAndWait {
            let plane = NSManagedObject(entity: glider, insertInto: context)
            plane.setValue("G1", forKey: "tailNumber")
            plane.setValue(15.0, forKey: "wingspan")
            plane.setValue(["primary": "white", "secondary": "red"], forKey: "colorScheme")
            try context.save()
        }
        if storeType == NSSQLiteStoreType { try store.reopen() }
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Aircraft")
            request.predicate = NSPredicate(format: "colorScheme.secondary == %@", "red")
            let found = try reader.fetch(request)
            #expect(found.map(\.entity.name) == ["Glider"])
            #expect((found.first?.value(forKey: "colorScheme") as? [String: Any])?["primary"] as? String == "white")
            let gliders = NSFetchRequest<NSManagedObject>(entityName: "Glider")
            gliders.predicate = NSPredicate(format: "colorScheme.primary == %@ AND wingspan > 10", "white")
            let fetchedGliders = try reader.fetch(gliders)
            #expect(fetchedGliders.count == 1)
        }
    }
}
