import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The Linux stand-in for `UIColor` in seed 002's transformer: an `NSSecureCoding` class with
/// red/green/blue/alpha. Top level, so `NSKeyedUnarchiver` finds it by its archived class name.
final class RGBAColor: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { return true }
    let red: Double, green: Double, blue: Double, alpha: Double

    init(red: Double, green: Double, blue: Double, alpha: Double) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }
    static var systemBlue: RGBAColor { RGBAColor(red: 0, green: 0.478, blue: 1, alpha: 1) }

    func encode(with coder: NSCoder) {
        coder.encode(red, forKey: "red")
        coder.encode(green, forKey: "green")
        coder.encode(blue, forKey: "blue")
        coder.encode(alpha, forKey: "alpha")
    }
    required init?(coder: NSCoder) {
        red = coder.decodeDouble(forKey: "red")
        green = coder.decodeDouble(forKey: "green")
        blue = coder.decodeDouble(forKey: "blue")
        alpha = coder.decodeDouble(forKey: "alpha")
    }
    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? RGBAColor else { return false }
        return (red, green, blue, alpha) == (other.red, other.green, other.blue, other.alpha)
    }
}

/// Seed 002's "Transformables": the `ColorTransformer`, written as the seed writes it with a Linux
/// color class in place of `UIColor`, registered by name and used by a transformable `color`
/// attribute; the secure-unarchive default; `CodableValueTransformer`; and the error paths. Every
/// store test runs on both stores.
@Suite("Transformable attributes")
struct TransformableAttributeTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// The seed's transformer, `UIColor` → `RGBAColor`, `print` kept.
    final class ColorTransformer: ValueTransformer {
        override class func transformedValueClass() -> AnyClass {
            return NSData.self
        }

        override class func allowsReverseTransformation() -> Bool {
            return true
        }

        override func transformedValue(_ value: Any?) -> Any? {
            guard let color = value as? RGBAColor else { return nil }

            do {
                let data = try NSKeyedArchiver.archivedData(
                    withRootObject: color,
                    requiringSecureCoding: true
                )
                return data
            } catch {
                print("Failed to transform color: \(error)")
                return nil
            }
        }

        override func reverseTransformedValue(_ value: Any?) -> Any? {
            guard let data = value as? Data else { return nil }

            do {
                let color = try NSKeyedUnarchiver.unarchivedObject(
                    ofClass: RGBAColor.self,
                    from: data
                )
                return color
            } catch {
                print("Failed to reverse transform color: \(error)")
                return nil
            }
        }
    }

    /// A transformer that stores anything as "x" and reads nothing back.
    final class ForgetfulTransformer: ValueTransformer {
        override class func transformedValueClass() -> AnyClass { NSData.self }
        override func transformedValue(_ value: Any?) -> Any? { Data("x".utf8) }
        override func reverseTransformedValue(_ value: Any?) -> Any? { nil }
    }

    struct Swatch: Codable, Equatable {
        var red, green, blue, alpha: Double
    }

    /// `Article(name, color: transformable with `transformer`, swatch: Codable, tags: default transformer)`.
    /// Transformer names are unique per test: the registry is process-wide and tests run in parallel.
    static func model(transformer: String, swatchTransformer: String = "SwatchTransformer") -> NSManagedObjectModel {
        let color = NSAttributeDescription(name: "color", type: .transformableAttributeType)
        color.valueTransformerName = transformer
        color.attributeValueClassName = "RGBAColor"
        let swatch = NSAttributeDescription(name: "swatch", type: .transformableAttributeType)
        swatch.valueTransformerName = swatchTransformer
        let article = NSEntityDescription(name: "Article", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType), color, swatch,
            NSAttributeDescription(name: "tags", type: .transformableAttributeType),
        ])
        let model = NSManagedObjectModel()
        model.entities = [article]
        return model
    }

    private func articles(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Article")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request)
    }

    /// Every row of every table of a SQLite store, to compare before and after a failed save.
    private func dump(_ store: TestStore) throws -> String {
        guard let url = store.url else { return "" }
        let raw = try RawDatabase(url)
        let tables = try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0[0] as? String }
        return try tables.map { table in "\(table): \(try raw.rows("SELECT * FROM \(table)"))" }.joined(separator: "\n")
    }

    // MARK: Round trips

    @Test(arguments: storeTypes)
    func colorTransformerRoundTripsAcrossAFreshCoordinator(storeType: String) throws {
        let name = "ColorTransformer-\(UUID().uuidString)"
        // "In your stack setup, before loading stores"
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: NSValueTransformerName(name))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name)) }
        let store = try TestStore(storeType, model: Self.model(transformer: name))
        let context = store.newContext()
        let article = NSEntityDescription.insertNewObject(forEntityName: "Article", into: context)
        article.setValue("Blue", forKey: "name")
        // article.color = .systemBlue
        article.setValue(RGBAColor.systemBlue, forKey: "color")
        try context.save()
        #expect(article.value(forKey: "color") as? RGBAColor == RGBAColor.systemBlue, "the object keeps its value after the save")

        if storeType == NSSQLiteStoreType {
            try store.reopen()
            let raw = try RawDatabase(try #require(store.url))
            let type = try raw.value("SELECT typeof(ZCOLOR) FROM ZARTICLE") as? String
            #expect(type == "blob", "FORMATS.md: Transformable (1800) BLOB, the output of the value transformer")
            let bytes = try #require(try raw.value("SELECT ZCOLOR FROM ZARTICLE") as? Data)
            #expect(ColorTransformer().reverseTransformedValue(bytes) as? RGBAColor == RGBAColor.systemBlue)
        }
        let reader = store.newContext()
        let again = try #require(try articles(reader).first)
        // let color = article.color // UIColor
        let color = try #require(again.value(forKey: "color") as? RGBAColor)
        #expect(color == RGBAColor.systemBlue)
        #expect(color !== article.value(forKey: "color") as? RGBAColor, "each fetch reads its own copy back")
        // A predicate on the attribute compares values, not stored bytes (in memory on both stores).
        let request = NSFetchRequest<NSManagedObject>(entityName: "Article")
        request.predicate = NSPredicate(format: "color == %@", RGBAColor.systemBlue)
        #expect(try reader.fetch(request).count == 1)
        request.predicate = NSPredicate(format: "color == %@", RGBAColor(red: 1, green: 0, blue: 0, alpha: 1))
        #expect(try reader.fetch(request).isEmpty)
    }

    @Test(arguments: storeTypes)
    func codableAndDefaultTransformersRoundTrip(storeType: String) throws {
        let swatchName = "Swatch-\(UUID().uuidString)"
        CodableValueTransformer<Swatch>.register(forName: NSValueTransformerName(swatchName))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(swatchName)) }
        let store = try TestStore(storeType, model: Self.model(transformer: "unused", swatchTransformer: swatchName))
        let context = store.newContext()
        let article = NSEntityDescription.insertNewObject(forEntityName: "Article", into: context)
        article.setValue("Swatches", forKey: "name")
        article.setValue(Swatch(red: 1, green: 0.5, blue: 0, alpha: 1), forKey: "swatch")
        // No valueTransformerName: NSSecureUnarchiveFromDataTransformer, property-list values.
        article.setValue(Set(["swift", "linux"]), forKey: "tags")
        try context.save()

        if storeType == NSSQLiteStoreType {
            try store.reopen()
            let raw = try RawDatabase(try #require(store.url))
            let json = try #require(try raw.value("SELECT ZSWATCH FROM ZARTICLE") as? Data)
            #expect(String(decoding: json, as: UTF8.self) == #"{"alpha":1,"blue":0,"green":0.5,"red":1}"#)
            let archive = try #require(try raw.value("SELECT ZTAGS FROM ZARTICLE") as? Data)
            #expect(archive.starts(with: Data("bplist00".utf8)), "a keyed archive")
        }
        let again = try #require(try articles(store.newContext()).first)
        #expect(again.value(forKey: "swatch") as? Swatch == Swatch(red: 1, green: 0.5, blue: 0, alpha: 1))
        #expect(again.value(forKey: "tags") as? Set<String> == ["swift", "linux"])
        #expect(again.value(forKey: "color") == nil)
    }

    @Test func secureUnarchiveTransformerAndRegistry() throws {
        let transformer = try #require(ValueTransformer(forName: .secureUnarchiveFromDataTransformerName))
        #expect(ValueTransformer.valueTransformerNames().contains(.secureUnarchiveFromDataTransformerName))
        #expect(NSSecureUnarchiveFromDataTransformer.allowsReverseTransformation())
        // Apple's direction: forward unarchives, reverse archives.
        for value in ["text", 42, Date(timeIntervalSinceReferenceDate: 5), ["a", "b"], ["k": 1],
                      UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, URL(string: "https://example.com")!] as [Any] {
            let data = try #require(transformer.reverseTransformedValue(value) as? Data)
            let back = transformer.transformedValue(data)
            #expect(PredicateValues.equal(back, value) || "\(back!)" == "\(value)", "\(value) round-trips")
        }
        // Values Foundation on Linux would trap on are refused instead: a class outside
        // allowedTopLevelClasses, a Swift value that is not a property-list type.
        #expect(transformer.reverseTransformedValue(RGBAColor.systemBlue) == nil)
        #expect(transformer.reverseTransformedValue(Swatch(red: 0, green: 0, blue: 0, alpha: 0)) == nil)
        let colorArchive = try NSKeyedArchiver.archivedData(withRootObject: RGBAColor.systemBlue, requiringSecureCoding: true)
        #expect(transformer.transformedValue(colorArchive) == nil, "an archive of a class that is not allowed")
        #expect(transformer.transformedValue(Data([1, 2, 3])) == nil, "not an archive")
        // A subclass that allows the class reads it.
        final class ColorArchiver: NSSecureUnarchiveFromDataTransformer {
            override class var allowedTopLevelClasses: [AnyClass] { [RGBAColor.self] }
        }
        #expect(ColorArchiver().transformedValue(colorArchive) as? RGBAColor == RGBAColor.systemBlue)
        #expect(ColorArchiver().reverseTransformedValue(RGBAColor.systemBlue) is Data)
        // init?(forName:) of an unknown name, and one that forwards to the registered transformer.
        #expect(ValueTransformer(forName: NSValueTransformerName("NoSuchTransformer-\(UUID())")) == nil)
        let name = NSValueTransformerName("Color-\(UUID().uuidString)")
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: name)
        defer { ValueTransformer.setValueTransformer(nil, forName: name) }
        let forwarded = try #require(ValueTransformer(forName: name))
        #expect(forwarded.reverseTransformedValue(forwarded.transformedValue(RGBAColor.systemBlue)) as? RGBAColor == RGBAColor.systemBlue)
        let negate = try #require(ValueTransformer(forName: .negateBooleanTransformerName))
        #expect(negate.transformedValue(true) as? Bool == false)
        #expect(ValueTransformer(forName: .isNilTransformerName)?.transformedValue(nil) as? Bool == true)
    }

    // MARK: Error paths

    @Test(arguments: storeTypes)
    func unregisteredTransformerFailsTheSaveAndWritesNothing(storeType: String) throws {
        let name = "Unregistered-\(UUID().uuidString)"
        let store = try TestStore(storeType, model: Self.model(transformer: name))
        let context = store.newContext()
        let kept = NSEntityDescription.insertNewObject(forEntityName: "Article", into: context)
        kept.setValue("Kept", forKey: "name")
        try context.save()
        let before = try dump(store)

        let article = NSEntityDescription.insertNewObject(forEntityName: "Article", into: context)
        article.setValue("Blue", forKey: "name")
        article.setValue(RGBAColor.systemBlue, forKey: "color")
        kept.setValue("Kept, renamed", forKey: "name")
        #expect {
            try context.save()
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.code == .persistentStoreSave && e?.entityName == "Article" && e?.key == "color"
                && e?.objectID == article.objectID && e!.message.contains(name)
                && e!.message.contains("ValueTransformer.setValueTransformer")
        }
        #expect(try dump(store) == before, "the store on disk is unchanged")
        #expect(try articles(store.newContext()).map { $0.value(forKey: "name") as? String } == ["Kept"])
        #expect(context.insertedObjects == [article] && kept.isUpdated, "the context keeps its changes")

        // Registering the transformer lets the same save through.
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: NSValueTransformerName(name))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name)) }
        try context.save()
        #expect(try articles(store.newContext()).compactMap { $0.value(forKey: "color") as? RGBAColor } == [RGBAColor.systemBlue])
    }

    @Test(arguments: storeTypes)
    func valueTheTransformerRejectsFailsTheSave(storeType: String) throws {
        let name = "ColorTransformer-\(UUID().uuidString)"
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: NSValueTransformerName(name))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name)) }
        let store = try TestStore(storeType, model: Self.model(transformer: name))
        let context = store.newContext()
        let before = try dump(store)
        let article = NSEntityDescription.insertNewObject(forEntityName: "Article", into: context)
        article.setValue("not a color", forKey: "color")
        #expect {
            try context.save()
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.code == .persistentStoreSave && e?.key == "color" && e!.message.contains("did not turn the value")
        }
        // The default transformer refuses a value it could not archive securely, without trapping.
        article.setValue(RGBAColor.systemBlue, forKey: "color")
        article.setValue(Swatch(red: 0, green: 0, blue: 0, alpha: 0), forKey: "tags")
        #expect(throws: OpenCoreDataError.self) { try context.save() }
        #expect(try dump(store) == before)
        #expect(try articles(store.newContext()).isEmpty)
    }

    @Test(arguments: storeTypes)
    func undecodableDataFailsTheFetchAndIsNeverLost(storeType: String) throws {
        let name = NSValueTransformerName("Flaky-\(UUID().uuidString)")
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: name)
        defer { ValueTransformer.setValueTransformer(nil, forName: name) }
        let store = try TestStore(storeType, model: Self.model(transformer: name.rawValue))
        let writer = store.newContext()
        let article = NSEntityDescription.insertNewObject(forEntityName: "Article", into: writer)
        article.setValue("Blue", forKey: "name")
        article.setValue(RGBAColor.systemBlue, forKey: "color")
        try writer.save()
        let id = article.objectID

        // The transformer now under that name cannot read the bytes back.
        ValueTransformer.setValueTransformer(ForgetfulTransformer(), forName: name)
        #expect {
            _ = try articles(store.newContext())
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.code == .persistentStoreOperation && e?.entityName == "Article" && e?.key == "color"
                && e?.objectID == id && e!.message.contains("could not read")
        }
        // A fault fires without crashing: the attribute reads as nil, checkedValue(forKey:) throws.
        let context = store.newContext()
        let fault = try context.existingObject(with: id)
        #expect(fault.value(forKey: "name") as? String == "Blue")
        #expect((fault.value(forKey: "color") as? RGBAColor) == nil)
        #expect(throws: OpenCoreDataError.self) { try fault.checkedValue(forKey: "color") }
        // Saving another change writes the undecodable bytes back as they were: nothing is lost.
        fault.setValue("Still blue", forKey: "name")
        try context.save()

        // Unregistering the name fails the fetch the same way.
        ValueTransformer.setValueTransformer(nil, forName: name)
        #expect {
            _ = try articles(store.newContext())
        } throws: { error in
            (error as? OpenCoreDataError)?.message.contains("no value transformer is registered") == true
        }
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: name)
        let again = try #require(try articles(store.newContext()).first)
        #expect(again.value(forKey: "name") as? String == "Still blue")
        #expect(again.value(forKey: "color") as? RGBAColor == RGBAColor.systemBlue)
    }

    @Test func garbageBytesInTheStoreFailTheFetch() throws {
        let name = NSValueTransformerName("ColorTransformer-\(UUID().uuidString)")
        ValueTransformer.setValueTransformer(ColorTransformer(), forName: name)
        defer { ValueTransformer.setValueTransformer(nil, forName: name) }
        let store = try TestStore(NSSQLiteStoreType, model: Self.model(transformer: name.rawValue))
        let context = store.newContext()
        NSEntityDescription.insertNewObject(forEntityName: "Article", into: context).setValue("Blue", forKey: "name")
        try context.save()
        // Another program wrote bytes no transformer reads: for the color, and for the default
        // transformer's tags (an archive of a class it does not allow, which Foundation would trap on).
        let raw = try RawDatabase(try #require(store.url), readOnly: false)
        try raw.execute("UPDATE ZARTICLE SET ZCOLOR = X'00010203'")
        #expect(throws: OpenCoreDataError.self) { _ = try articles(store.newContext()) }
        let archive = try NSKeyedArchiver.archivedData(withRootObject: RGBAColor.systemBlue, requiringSecureCoding: true)
        try raw.execute("UPDATE ZARTICLE SET ZCOLOR = NULL, ZTAGS = X'\(archive.map { String(format: "%02X", $0) }.joined())'")
        #expect {
            _ = try articles(store.newContext())
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.key == "tags" && e!.message.contains("NSSecureUnarchiveFromData")
        }
    }
}
