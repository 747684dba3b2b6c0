import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// `NSManagedObjectModel`, its entities and properties adopt `NSSecureCoding`, as on Apple: a model
/// archives with `NSKeyedArchiver(requiringSecureCoding: true)` and unarchives into an equal model;
/// the archive is a `.mom` that `NSManagedObjectModel(contentsOf:)` loads with the same version
/// hashes; and a `.momd` can be written (issue 39). Before the change the archiver ended the process
/// ("does not conform to NSCoding"), so every test here failed (by crashing) on the code before it.
struct ModelArchivingTests {
    // MARK: Comparing models

    /// Checks that `copy` says what `model` says: version hashes and checksum, and entity by entity
    /// the fields an archive carries. Properties, subentities and configuration members come back
    /// in order of name, as a compiled model lists them (an archive keeps them in dictionaries).
    static func expectEqual(_ copy: NSManagedObjectModel, _ model: NSManagedObjectModel, _ what: String) {
        #expect(copy.entityVersionHashesByName == model.entityVersionHashesByName, "\(what): entity version hashes")
        #expect(copy.versionChecksum == model.versionChecksum, "\(what): versionChecksum")
        #expect(copy.entities.map(\.name) == model.entities.map(\.name), "\(what): entities")
        #expect(copy.configurations == model.configurations, "\(what): configurations")
        for configuration in model.configurations {
            #expect(copy.entities(forConfigurationName: configuration)?.compactMap(\.name).sorted()
                == model.entities(forConfigurationName: configuration)?.compactMap(\.name).sorted())
        }
        #expect(copy.fetchRequestTemplatesByName.keys.sorted() == model.fetchRequestTemplatesByName.keys.sorted(), "\(what): templates")
        for (name, template) in model.fetchRequestTemplatesByName {
            let other = copy.fetchRequestTemplate(forName: name)
            #expect(other?.entity === copy.entitiesByName[template.entityName ?? ""], "\(what): template \(name) entity")
            #expect(other?.predicate?.predicateFormat == template.predicate?.predicateFormat, "\(what): template \(name) predicate")
        }
        for entity in model.entities {
            guard let other = copy.entitiesByName[entity.name ?? ""] else { continue }
            let place = "\(what): \(entity.name ?? "?")"
            #expect(other.versionHash == entity.versionHash, "\(place) versionHash")
            #expect(other.managedObjectClassName == entity.managedObjectClassName, "\(place) class")
            #expect(other.isAbstract == entity.isAbstract, "\(place) isAbstract")
            #expect(other.superentity?.name == entity.superentity?.name, "\(place) superentity")
            #expect(other.subentities.compactMap(\.name).sorted() == entity.subentities.compactMap(\.name).sorted(), "\(place) subentities")
            #expect(other.managedObjectModel === copy, "\(place) model")
            #expect(other.indexes.map(\.name) == entity.indexes.map(\.name), "\(place) indexes")
            #expect(other.indexes.map { $0.elements.map(\.propertyName) } == entity.indexes.map { $0.elements.map(\.propertyName) })
            #expect((other.userInfo ?? [:]).count == (entity.userInfo ?? [:]).count, "\(place) userInfo")
            #expect(other.properties.map(\.name).sorted() == entity.properties.map(\.name).sorted(), "\(place) properties")
            for property in entity.properties {
                guard let mine = other.propertiesByName[property.name] else { continue }
                let at = "\(place).\(property.name)"
                #expect(type(of: mine) == type(of: property), "\(at) class")
                #expect(mine.versionHash == property.versionHash, "\(at) versionHash")
                #expect(mine.isOptional == property.isOptional && mine.isTransient == property.isTransient, "\(at) flags")
                #expect(mine.validationPredicates.map(\.predicateFormat) == property.validationPredicates.map(\.predicateFormat), "\(at) validation")
                #expect((mine.userInfo ?? [:]).count == (property.userInfo ?? [:]).count, "\(at) userInfo")
                if let attribute = property as? NSAttributeDescription, let mine = mine as? NSAttributeDescription {
                    #expect(mine.attributeType == attribute.attributeType, "\(at) type")
                    #expect(mine.valueTransformerName == attribute.valueTransformerName, "\(at) transformer")
                    #expect(Self.text(of: mine.defaultValue) == Self.text(of: attribute.defaultValue), "\(at) default")
                }
                if let relationship = property as? NSRelationshipDescription, let mine = mine as? NSRelationshipDescription {
                    #expect(mine.destinationEntity === copy.entitiesByName[relationship.destinationEntity?.name ?? ""], "\(at) destination")
                    #expect(mine.inverseRelationship?.name == relationship.inverseRelationship?.name, "\(at) inverse")
                    #expect(mine.inverseRelationship?.entity === mine.destinationEntity, "\(at) inverse's entity")
                    #expect(mine.deleteRule == relationship.deleteRule && mine.minCount == relationship.minCount
                        && mine.maxCount == relationship.maxCount && mine.isOrdered == relationship.isOrdered, "\(at) shape")
                }
            }
        }
    }

    /// Archives `model` securely, unarchives it, writes it as a `.mom` and loads that: both equal `model`.
    static func expectRoundTrips(_ model: NSManagedObjectModel, _ what: String) throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: model, requiringSecureCoding: true)
        let copy = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSManagedObjectModel.self, from: data))
        expectEqual(copy, model, "\(what), unarchived")

        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("Archived.mom")
        try data.write(to: file)
        let loaded = try #require(NSManagedObjectModel(contentsOf: file))
        expectEqual(loaded, model, "\(what), loaded as a .mom")
        // The reader met no key it does not know.
        #expect(loaded._xcodeModelFile?.unrecognizedElements ?? [] == [], "\(what): keys the reader does not know")
    }

    // MARK: The corpus

    /// Every compiled model of the corpus: load, archive, unarchive, write as a `.mom`, load again.
    @Test(.enabled(if: Corpus.isPresent), arguments: CorpusCompiledModel.all)
    func corpusCompiledModelRoundTrips(_ item: CorpusCompiledModel) throws {
        let model = try NSManagedObjectModel.load(contentsOf: Corpus.repo(item.path))
        try Self.expectRoundTrips(model, item.path)
    }

    /// A model loaded from an Xcode model file (the corpus's SampleModel2: indexes, constraints,
    /// fetched properties, a derived attribute, configurations).
    @Test(.enabled(if: Corpus.isPresent))
    func xcodeModelFileRoundTrips() throws {
        let path = "\(CorpusCompiledModel.sampleModel)/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"
        let model = try NSManagedObjectModel.load(contentsOf: Corpus.repo(path))
        try Self.expectRoundTrips(model, path)
    }

    // MARK: A model built in code

    /// `Shape` (abstract) ← `Circle`; `Canvas` ↔ `Shape` (ordered to-many / to-one, cascade); every
    /// field an archive carries set at least once.
    static func builtInCode() -> NSManagedObjectModel {
        let title = NSAttributeDescription(name: "title", type: .stringAttributeType, isOptional: false, defaultValue: "Untitled")
        title.setValidationPredicates([NSPredicate(format: "length >= 3")], withValidationWarnings: ["too short"])
        title.userInfo = ["help": "the canvas's name"]
        title.versionHashModifier = "2"
        let width = NSAttributeDescription(name: "width", type: .integer16AttributeType, defaultValue: Int16(640))
        let created = NSAttributeDescription(name: "created", type: .dateAttributeType,
                                             defaultValue: Date(timeIntervalSinceReferenceDate: 1000))
        let thumbnail = NSAttributeDescription(name: "thumbnail", type: .binaryDataAttributeType)
        thumbnail.allowsExternalBinaryDataStorage = true
        let ratio = NSAttributeDescription(name: "ratio", type: .doubleAttributeType, defaultValue: 1.5)
        let price = NSAttributeDescription(name: "price", type: .decimalAttributeType, defaultValue: Decimal(string: "12.345"))
        let palette = NSAttributeDescription(name: "palette", type: .transformableAttributeType)
        palette.valueTransformerName = "PaletteTransformer"
        palette.attributeValueClassName = "Palette"
        let shapeCount = NSDerivedAttributeDescription()
        shapeCount.name = "shapeCount"
        shapeCount.attributeType = .integer64AttributeType
        shapeCount.derivationExpression = NSExpression(forKeyPath: "shapes.@count")
        let request = NSFetchRequest<any NSFetchRequestResult>(entityName: "Circle")
        request.predicate = NSPredicate(format: "radius > 10")
        let bigCircles = NSFetchedPropertyDescription(name: "bigCircles", fetchRequest: request)
        let origin = NSCompositeAttributeDescription(name: "origin", elements: [
            NSAttributeDescription(name: "x", type: .doubleAttributeType, defaultValue: 0.0),
            NSAttributeDescription(name: "y", type: .doubleAttributeType, defaultValue: 0.0),
        ])

        let canvas = NSEntityDescription(name: "Canvas", managedObjectClassName: "App.Canvas",
                                         properties: [title, width, created, thumbnail, ratio, price, palette, shapeCount, bigCircles, origin])
        canvas.uniquenessConstraints = [["title"]]
        canvas.userInfo = ["kind": "document"]
        canvas.indexes = [NSFetchIndexDescription(name: "byTitle", elements: [NSFetchIndexElementDescription(property: title, collationType: .binary)])]
        canvas.versionHashModifier = "canvas-1"

        let shape = NSEntityDescription(name: "Shape", properties: [NSAttributeDescription(name: "z", type: .integer32AttributeType)])
        shape.isAbstract = true
        let circle = NSEntityDescription(name: "Circle", properties: [NSAttributeDescription(name: "radius", type: .floatAttributeType)])
        shape.subentities = [circle]
        circle.indexes = [NSFetchIndexDescription(name: "byZ", elements: [
            NSFetchIndexElementDescription(property: shape.propertiesByName["z"]!, collationType: .binary),
        ])]

        let shapes = NSRelationshipDescription(name: "shapes", destination: shape, toMany: true, deleteRule: .cascadeDeleteRule, isOrdered: true)
        let owner = NSRelationshipDescription(name: "canvas", destination: canvas, toMany: false, isOptional: false)
        shapes.inverseRelationship = owner
        owner.inverseRelationship = shapes
        shapes.minCount = 1
        canvas.properties += [shapes]
        shape.properties += [owner]

        let model = NSManagedObjectModel()
        model.entities = [canvas, circle, shape]
        model.setEntities([canvas], forConfigurationName: "Documents")
        model.setEntities([shape, circle], forConfigurationName: "Drawings")
        let template = NSFetchRequest<any NSFetchRequestResult>(entityName: "Canvas")
        template.predicate = NSPredicate(format: "title BEGINSWITH $PREFIX")
        template.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
        template.fetchLimit = 5
        model.setFetchRequestTemplate(template, forName: "canvasesByPrefix")
        model.versionIdentifiers = ["2.1"]
        return model
    }

    @Test func modelBuiltInCodeRoundTrips() throws {
        let model = Self.builtInCode()
        try Self.expectRoundTrips(model, "built in code")

        let data = try NSKeyedArchiver.archivedData(withRootObject: model, requiringSecureCoding: true)
        let copy = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSManagedObjectModel.self, from: data))
        let canvas = try #require(copy.entitiesByName["Canvas"])
        let title = try #require(canvas.attributesByName["title"])
        #expect(title.defaultValue as? String == "Untitled")
        #expect(title.validationWarnings as? [String] == ["too short"])
        #expect(title.userInfo?["help"] as? String == "the canvas's name")
        #expect(canvas.attributesByName["width"]?.defaultValue as? Int16 == 640, "the attribute type's canonical value")
        #expect(canvas.attributesByName["created"]?.defaultValue as? Date == Date(timeIntervalSinceReferenceDate: 1000))
        #expect(canvas.attributesByName["thumbnail"]?.allowsExternalBinaryDataStorage == true)
        #expect(canvas.attributesByName["price"]?.defaultValue as? Decimal == Decimal(string: "12.345"))
        #expect(canvas.attributesByName["palette"]?.attributeValueClassName == "Palette")
        let derived = try #require(canvas.attributesByName["shapeCount"] as? NSDerivedAttributeDescription)
        #expect(derived.derivationExpression?.keyPath == "shapes.@count")
        let fetched = try #require(canvas.propertiesByName["bigCircles"] as? NSFetchedPropertyDescription)
        #expect(fetched.fetchRequest?.entityName == "Circle")
        #expect(fetched.fetchRequest?.predicate?.predicateFormat == "radius > 10")
        let origin = try #require(canvas.attributesByName["origin"] as? NSCompositeAttributeDescription)
        #expect(origin.elements.map(\.name) == ["x", "y"])
        #expect(canvas.uniquenessConstraints as? [[String]] == [["title"]])
        #expect(canvas.indexes.first?.elements.first?.property === title)
        #expect(copy.entitiesByName["Circle"]?.indexes.first?.elements.first?.property === copy.entitiesByName["Shape"]?.propertiesByName["z"],
                "an index on an inherited property")
        let template = try #require(copy.fetchRequestTemplate(forName: "canvasesByPrefix"))
        #expect(template.sortDescriptors?.first?.key == "title" && template.sortDescriptors?.first?.ascending == false)
        #expect(template.fetchLimit == 5)
        #expect(copy.versionIdentifiers == ["2.1"])

        // The unarchived model works: a store opens with it and saves an object.
        let context = try makeContext(model: copy)
        let object = NSEntityDescription.insertNewObject(forEntityName: "Canvas", into: context)
        object.setValue("First", forKey: "title")
        object.setValue(Data([1]), forKey: "thumbnail")
        let shape = NSEntityDescription.insertNewObject(forEntityName: "Circle", into: context)
        shape.setValue(object, forKey: "canvas")
        try context.save()
        #expect((object.value(forKey: "shapes") as? NSOrderedSet)?.count == 1)
    }

    /// An entity or a property archives on its own too.
    @Test func aPropertyArchivesOnItsOwn() throws {
        let attribute = NSAttributeDescription(name: "count", type: .integer64AttributeType, isOptional: false, defaultValue: Int64(7))
        let data = try NSKeyedArchiver.archivedData(withRootObject: attribute, requiringSecureCoding: true)
        let copy = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSAttributeDescription.self, from: data))
        #expect(copy.name == "count" && copy.attributeType == .integer64AttributeType && !copy.isOptional)
        #expect(copy.defaultValue as? Int64 == 7)
        #expect(copy.versionHash == attribute.versionHash)
    }

    /// Models whose archives cannot be read back: an entity with an empty name, a relationship
    /// whose destination is not in the model, an attribute type Core Data does not have.
    enum Corruption: String, CaseIterable, Sendable { case emptyEntityName, foreignDestination, unknownAttributeType }

    /// A model archive whose contents are wrong throws the unarchiver's error (Cocoa's
    /// `NSCoderReadCorruptError`, 4864), and loading it as a `.mom` throws too, instead of ending
    /// the process. (Apple's behaviour for these archives is unknown; they cannot come from Xcode.)
    @Test(arguments: Corruption.allCases)
    func aCorruptModelArchiveThrows(_ corruption: Corruption) throws {
        let model = NSManagedObjectModel()
        let count = NSAttributeDescription(name: "count", type: .integer32AttributeType)
        let item = NSEntityDescription(name: corruption == .emptyEntityName ? "" : "Item", properties: [count])
        if corruption == .foreignDestination {
            let ghost = NSEntityDescription(name: "Ghost")
            item.properties += [NSRelationshipDescription(name: "ghost", destination: ghost, toMany: false)]
        }
        model.entities = [item]
        var data = try NSKeyedArchiver.archivedData(withRootObject: model, requiringSecureCoding: true)
        if corruption == .unknownAttributeType {
            var plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
            var objects = try #require(plist["$objects"] as? [Any])
            let index = try #require(objects.firstIndex { ($0 as? [String: Any])?["NSAttributeType"] != nil })
            var object = try #require(objects[index] as? [String: Any])
            object["NSAttributeType"] = 12345
            objects[index] = object
            plist["$objects"] = objects
            data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        }
        #expect(throws: (any Error).self) { try NSKeyedUnarchiver.unarchivedObject(ofClass: NSManagedObjectModel.self, from: data) }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try data.write(to: directory.file("Corrupt.mom"))
        #expect(throws: (any Error).self) { try NSManagedObjectModel.load(contentsOf: directory.file("Corrupt.mom")) }
    }

    /// The model reader names classes as Apple's archives do: this module's without the module, a
    /// helper by its `$classhints`, an app's class with its module (a transformable's default value).
    @Test func archivedClassNamesAreReadAsApplesArchivesNameThem() {
        #expect(KeyedArchive.appleClassName(String(reflecting: NSEntityDescription.self), hints: []) == "NSEntityDescription")
        #expect(KeyedArchive.appleClassName("OpenCoreDataRuntime.ArchivedFetchRequest", hints: ["NSFetchRequest"]) == "NSFetchRequest")
        #expect(KeyedArchive.appleClassName("CoreDataPlus_Tests.Cover", hints: []) == "CoreDataPlus_Tests.Cover")
        #expect(KeyedArchive.appleClassName("NSManagedObjectModel", hints: []) == "NSManagedObjectModel")
    }

    // MARK: .momd

    /// `writeCompiledModelBundle` lays a `.momd` out as Xcode does: `NSManagedObjectModel(contentsOf:)`
    /// loads its current version, and `VersionInfo.plist` lists each version's hashes and checksum.
    @Test func aCompiledModelBundleIsWritten() throws {
        let v2 = Self.builtInCode()
        let v1 = NSManagedObjectModel()
        v1.entities = [NSEntityDescription(name: "Canvas", properties: [NSAttributeDescription(name: "title", type: .stringAttributeType)])]
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.file("Drawing.momd")
        try NSManagedObjectModel.writeCompiledModelBundle(["Drawing": v1, "Drawing 2": v2], currentVersionName: "Drawing 2", to: bundle)

        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: bundle.path)) == ["Drawing.mom", "Drawing 2.mom", "VersionInfo.plist"])
        let loaded = try #require(NSManagedObjectModel(contentsOf: bundle))
        Self.expectEqual(loaded, v2, "current version of the .momd")
        let info = try #require(try CompiledModelReader.versionInfo(ofBundle: bundle))
        #expect(info.currentVersionName == "Drawing 2")
        #expect(info.versionHashes["Drawing"] == v1.entityVersionHashesByName)
        #expect(info.versionHashes["Drawing 2"] == v2.entityVersionHashesByName)
        #expect(info.versionChecksums == ["Drawing": v1.versionChecksum, "Drawing 2": v2.versionChecksum])
        let first = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Drawing.mom")))
        #expect(first.entityVersionHashesByName == v1.entityVersionHashesByName)

        #expect(throws: CocoaError.self) {
            try NSManagedObjectModel.writeCompiledModelBundle(["Drawing": v1], currentVersionName: "Drawing 3", to: directory.file("Bad.momd"))
        }
    }

    /// A value's description with a dictionary's keys in order (a `Dictionary` prints in hash order,
    /// which differs from process to process).
    static func text(of value: Any?) -> String {
        guard let value else { return "nil" }
        if let dictionary = value as? [String: Any] {
            return "[" + dictionary.keys.sorted().map { "\($0): \(text(of: dictionary[$0]))" }.joined(separator: ", ") + "]"
        }
        return String(describing: value)
    }
}
