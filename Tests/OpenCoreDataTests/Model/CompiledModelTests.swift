import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A compiled model in the corpus, the `.momd` version it is (if any), and the Xcode model file it
/// was compiled from (if the corpus has it).
struct CorpusCompiledModel: Sendable, CustomTestStringConvertible {
    let path: String
    let xml: String?
    var testDescription: String { path }

    static let sampleModel = "alemar11+CoreDataPlus/Tests/Resources/SampleModel"
    static let sampleModel3 = "alemar11+CoreDataPlus/Tests/Resources/SampleModel3"
    static let all: [CorpusCompiledModel] = [
        .init(path: "\(sampleModel)/Fixtures/SampleModel.momd", xml: "\(sampleModel)/SampleModel.xcdatamodeld"),
        .init(path: "\(sampleModel)/Fixtures/SampleModel.momd/SampleModel.mom", xml: "\(sampleModel)/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"),
        .init(path: "\(sampleModel)/Fixtures/SampleModel.momd/SampleModel2.mom", xml: "\(sampleModel)/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"),
        .init(path: "\(sampleModel)/Fixtures/SampleModel.momd/SampleModel3.mom", xml: "\(sampleModel)/SampleModel.xcdatamodeld/SampleModel3.xcdatamodel"),
        .init(path: "\(sampleModel3)/Fixtures/SampleModel3.momd", xml: "\(sampleModel3)/SampleModel3.xcdatamodeld"),
        .init(path: "\(sampleModel3)/Fixtures/SampleModel3.momd/SampleModel3.mom", xml: "\(sampleModel3)/SampleModel3.xcdatamodeld/SampleModel3.xcdatamodel"),
        .init(path: "\(sampleModel3)/Fixtures/SampleModel3.momd/SampleModel3_v2.mom", xml: "\(sampleModel3)/SampleModel3.xcdatamodeld/SampleModel3_v2.xcdatamodel"),
        .init(path: "\(sampleModel3)/Fixtures/SampleModel3.momd/SampleModel3_v3.mom", xml: "\(sampleModel3)/SampleModel3.xcdatamodeld/SampleModel3_v3.xcdatamodel"),
        // An XML-format keyed archive (written by FreeCoreData's tools, not Xcode), with an
        // old-style text VersionInfo.plist that names the current version but lists no hashes.
        .init(path: "ashalkhakov+FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.momd",
              xml: "ashalkhakov+FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.xcdatamodeld"),
        .init(path: "ashalkhakov+FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.momd/EmployeeDirectory.mom",
              xml: "ashalkhakov+FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.xcdatamodeld/EmployeeDirectory.xcdatamodel"),
        .init(path: "ZeeQL+ZeeQL3/data/Contacts.mom", xml: "ZeeQL+ZeeQL3/data/Contacts.xcdatamodel"),
    ]

    /// The `.momd` this `.mom` sits in and its version name, or the `.momd` itself and its current version.
    var bundleAndVersion: (bundle: URL, version: String?)? {
        let url = Corpus.repo(path)
        if url.pathExtension == "momd" { return (url, nil) }
        let parent = url.deletingLastPathComponent()
        guard parent.pathExtension == "momd" else { return nil }
        return (parent, url.deletingPathExtension().lastPathComponent)
    }
}

/// Compiled models (`.momd`, `.mom`) and the model Apple's Core Data caches in a store
/// (`Z_MODELCACHE`), read from the corpus and compared with what Apple's tools computed for them.
@Suite("Compiled models and model caches", .enabled(if: Corpus.isPresent))
struct CompiledModelTests {
    @Test func everyCorpusCompiledModelIsListed() throws {
        let root = Corpus.root!.appendingPathComponent("repos")
        let found = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { ["mom", "momd"].contains($0.pathExtension) }
            .map { String($0.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)) }
        #expect(Set(found) == Set(CorpusCompiledModel.all.map(\.path)))
    }

    /// Each compiled model loads; its entity version hashes equal the ones Xcode's model compiler
    /// wrote into the `.momd`'s VersionInfo.plist, and the ones computed from the Xcode model file
    /// it was compiled from; and entity by entity it says what that model file says.
    @Test(arguments: CorpusCompiledModel.all)
    func compiledModelMatchesVersionInfoAndModelFile(_ item: CorpusCompiledModel) throws {
        let model = try NSManagedObjectModel.load(contentsOf: Corpus.repo(item.path))
        #expect(!model.entities.isEmpty)
        #expect(NSManagedObjectModel(contentsOf: Corpus.repo(item.path)) != nil)
        let ours = model.entityVersionHashesByName

        if let (bundle, version) = item.bundleAndVersion, let info = try CompiledModelReader.versionInfo(ofBundle: bundle) {
            let name = version ?? info.currentVersionName
            if let name, let expected = info.versionHashes[name] {
                #expect(ours == expected, "VersionInfo.plist hashes of \(name)")
                if let checksum = info.versionChecksums[name] {  // newer tools only (not SampleModel.momd)
                    #expect(checksum == model.versionChecksum, "VersionInfo.plist checksum of \(name)")
                }
            } else {
                // FreeCoreData's VersionInfo.plist has no NSManagedObjectModel_VersionHashes.
                #expect(item.path.hasPrefix("ashalkhakov+FreeCoreData"))
            }
        }
        if let xml = item.xml {
            let source = try NSManagedObjectModel.load(contentsOf: Corpus.repo(xml))
            #expect(ours == source.entityVersionHashesByName)
            #expect(model.versionChecksum == source.versionChecksum)
            // FreeCoreData's archive says Nullify (1) where its model file says No Action: the
            // archive was not written by Xcode, and the delete rule is no input of the hashes.
            Self.expectSameModel(model, source, compareDeleteRules: !item.path.hasPrefix("ashalkhakov+FreeCoreData"))
        }
    }

    /// What a compiled model and its Xcode source must agree on beyond version hashes.
    static func expectSameModel(_ compiled: NSManagedObjectModel, _ source: NSManagedObjectModel, compareDeleteRules: Bool = true) {
        #expect(compiled.entities.compactMap(\.name) == source.entities.compactMap(\.name))
        #expect(Set(compiled.versionIdentifiers.map { "\($0)" }.filter { !$0.isEmpty })
            == Set(source.versionIdentifiers.map { "\($0)" }.filter { !$0.isEmpty }))
        #expect(compiled.configurations == source.configurations)
        for name in source.configurations {
            #expect(compiled.entities(forConfigurationName: name)?.compactMap(\.name).sorted()
                == source.entities(forConfigurationName: name)?.compactMap(\.name).sorted())
        }
        #expect(compiled.fetchRequestTemplatesByName.keys.sorted() == source.fetchRequestTemplatesByName.keys.sorted())
        for (name, template) in source.fetchRequestTemplatesByName {
            let ours = compiled.fetchRequestTemplatesByName[name]
            #expect(ours?.entityName == template.entityName)
            #expect(ours?.predicate?.predicateFormat == template.predicate?.predicateFormat, "template \(name)")
        }
        for entity in source.entities {
            guard let ours = compiled.entitiesByName[entity.name!] else { continue }
            let label = entity.name!
            #expect(ours.managedObjectClassName == entity.managedObjectClassName, "\(label)")
            #expect(ours.isAbstract == entity.isAbstract, "\(label)")
            #expect(ours.superentity?.name == entity.superentity?.name, "\(label)")
            #expect(ours.subentities.compactMap(\.name).sorted() == entity.subentities.compactMap(\.name).sorted(), "\(label)")
            #expect(ours.renamingIdentifier ?? label == entity.renamingIdentifier ?? label, "\(label)")
            #expect(ours.uniquenessConstraints.map { $0.map { "\($0)" } } == entity.uniquenessConstraints.map { $0.map { "\($0)" } })
            #expect(ours.indexes.map(\.name) == entity.indexes.map(\.name), "\(label)")
            #expect(ours.indexes.map { $0.elements.compactMap(\.propertyName) } == entity.indexes.map { $0.elements.compactMap(\.propertyName) })
            #expect(ours.ownProperties.map(\.name).sorted() == entity.ownProperties.map(\.name).sorted(), "\(label)")
            for property in entity.ownProperties {
                guard let mine = ours.propertiesByName[property.name] else { continue }
                let where_ = "\(label).\(property.name)"
                #expect(mine.isOptional == property.isOptional, "\(where_)")
                #expect(mine.isTransient == property.isTransient, "\(where_)")
                #expect(Set((mine.userInfo ?? [:]).keys.map { "\($0)" }) == Set((property.userInfo ?? [:]).keys.map { "\($0)" }), "\(where_)")
                #expect(mine.validationPredicates.count == property.validationPredicates.count, "\(where_)")
                if let attribute = property as? NSAttributeDescription, let mine = mine as? NSAttributeDescription {
                    #expect(mine.attributeType == attribute.attributeType, "\(where_)")
                    #expect(mine.valueTransformerName == attribute.valueTransformerName, "\(where_)")
                    #expect(mine.preservesValueInHistoryOnDeletion == attribute.preservesValueInHistoryOnDeletion, "\(where_)")
                    #expect(mine.defaultValue.map { "\($0)" } == attribute.defaultValue.map { "\($0)" }, "\(where_)")
                } else if let relationship = property as? NSRelationshipDescription, let mine = mine as? NSRelationshipDescription {
                    #expect(mine.destinationEntity?.name == relationship.destinationEntity?.name, "\(where_)")
                    #expect(mine.inverseRelationship?.name == relationship.inverseRelationship?.name, "\(where_)")
                    #expect(mine.inverseRelationship?.inverseRelationship === mine || mine.inverseRelationship == nil, "\(where_)")
                    #expect(mine.minCount == relationship.minCount && mine.maxCount == relationship.maxCount, "\(where_)")
                    #expect(mine.deleteRule == relationship.deleteRule || !compareDeleteRules, "\(where_)")
                    #expect(mine.isOrdered == relationship.isOrdered, "\(where_)")
                } else {
                    Issue.record("\(where_): not the same kind of property")
                }
            }
        }
    }

    /// A `.momd` loads its current version (VersionInfo.plist), not another `.mom` beside it.
    @Test func momdLoadsItsCurrentVersion() throws {
        let bundle = Corpus.repo("\(CorpusCompiledModel.sampleModel3)/Fixtures/SampleModel3.momd")
        let info = try #require(try CompiledModelReader.versionInfo(ofBundle: bundle))
        #expect(info.currentVersionName == "SampleModel3")  // the first of three versions
        #expect(Set(info.versionHashes.keys) == ["SampleModel3", "SampleModel3_v2", "SampleModel3_v3"])
        let model = try NSManagedObjectModel.load(contentsOf: bundle)
        #expect(model.versionIdentifiers == ["1"])
        #expect(model.entitiesByName["User"]?.attributesByName["petName"] != nil)  // v3 drops it
        #expect(model.entitiesByName["Pet"] == nil)  // v2 adds it
        #expect(model.entityVersionHashesByName == info.versionHashes["SampleModel3"])
    }

    /// `NSPersistentContainer(name:)` finds `<name>.momd` in a SwiftPM resource bundle beside the
    /// executable (Linux's `Bundle.module` layout), as Apple's finds the compiled model in the app.
    @Test func persistentContainerFindsACompiledModel() throws {
        let executableDirectory = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        let name = "CompiledLookup\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        let resources = executableDirectory.appendingPathComponent("\(name).resources")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: resources) }
        let source = Corpus.repo("\(CorpusCompiledModel.sampleModel3)/Fixtures/SampleModel3.momd")
        try FileManager.default.copyItem(at: source, to: resources.appendingPathComponent("\(name).momd"))
        let container = NSPersistentContainer(name: name)
        #expect(container.managedObjectModel.entities.compactMap(\.name) == ["User"])
        #expect(container.managedObjectModel.entityVersionHashesByName
            == (try CompiledModelReader.versionInfo(ofBundle: source))?.versionHashes["SampleModel3"])
    }

    /// Validation predicates, fetch request templates (with their predicates) and fetch indexes
    /// come out of the archive as objects that work.
    @Test func archivedPredicatesAndTemplatesWork() throws {
        let contacts = try NSManagedObjectModel.load(contentsOf: Corpus.repo("ZeeQL+ZeeQL3/data/Contacts.mom"))
        let template = try #require(contacts.fetchRequestTemplate(forName: "fetchTheDucks"))
        #expect(template.entityName == "Person")
        #expect(template.predicate?.predicateFormat == "lastName LIKE \"Duck*\"")
        #expect(template.predicate?.evaluate(with: ["lastName": "Duckworth"]) == true)
        #expect(contacts.entitiesByName["Person"]?.relationshipsByName["addresses"]?.isOrdered == true)
        #expect(contacts.entitiesByName["Person"]?.relationshipsByName["addresses"]?.maxCount == 20)
        #expect(contacts.entitiesByName["Address"]?.attributesByName["street"]?.userInfo?["columnName"] as? String == "street")

        let employees = try NSManagedObjectModel.load(
            contentsOf: Corpus.repo("ashalkhakov+FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.momd"))
        let salary = try #require(employees.entitiesByName["Employee"]?.attributesByName["salary"])
        #expect(salary.validationPredicates.map(\.predicateFormat) == ["NOT SELF < 0"])
        #expect(salary._failedValidationPredicates(for: -1).count == 1)
        #expect(salary._failedValidationPredicates(for: 10).isEmpty)

        let sample2 = try NSManagedObjectModel.load(
            contentsOf: Corpus.repo("\(CorpusCompiledModel.sampleModel)/Fixtures/SampleModel.momd/SampleModel2.mom"))
        let car = try #require(sample2.entitiesByName["Car"])
        #expect(car.indexes.map(\.name) == ["byMakerAndNumberPlate"])
        #expect(car.indexes.first?.elements.compactMap(\.propertyName) == ["maker", "numberPlate"])
        #expect(sample2._xcodeModelFile?.compoundIndexesByEntity["Car"] == [["maker", "numberPlate"]])
        #expect(sample2.entitiesByName["LuxuryCar"]?.renamingIdentifier == "ExpensiveSportCar")
    }

    // MARK: Z_MODELCACHE

    /// The corpus stores that have a `Z_MODELCACHE` table.
    static var storesWithCache: [CorpusStore] {
        guard Corpus.isPresent else { return [] }
        return CorpusStore.all.filter { (try? Corpus.report($0.store).rowCounts["Z_MODELCACHE"]) != nil }
    }

    /// The entities whose version hash computed from the cache differs from the store's: the
    /// derived attribute `pagesCount` (`count:(pages)`) of SampleModel2's Book (and so of its
    /// subentity GraphicNovel). How Core Data hashes a derived attribute is only partly known
    /// (FORMATS §2 step 3): expression formats `count:(pages)`, `pages.@count` and others, with
    /// and without filtering-predicate tails and read-only flag variants, were tried without a match.
    static let knownHashMismatches: [String: Set<String>] = [
        "alemar11+CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite": ["Book", "GraphicNovel"],
        "alemar11+CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite": ["Book", "GraphicNovel"],
    ]

    /// Every store's cached model: it inflates and decodes; its entity version hashes equal the
    /// `NSStoreModelVersionHashes` Apple stored in the same file (all but the known derived-attribute
    /// hashes above); and it opens the store (a copy) and reads every entity's rows, as many as SQL
    /// counts (stores with a known mismatch are refused with 134100, as they must be).
    @Test(arguments: storesWithCache)
    func cachedModelOpensItsStore(_ item: CorpusStore) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(item.store, to: directory.url)
        let before = try Data(contentsOf: url)
        let report = try Corpus.report(item.store)
        let model = try #require(try NSManagedObjectModel.cachedModel(ofStoreAt: url))
        let hashes = model.entityVersionHashesByName.mapValues { $0.base64EncodedString() }
        #expect(Set(hashes.keys) == Set(report.versionHashes.keys))
        let differing = Set(hashes.keys.filter { hashes[$0] != report.versionHashes[$0] })
        #expect(differing == Self.knownHashMismatches[item.store] ?? [])
        #expect(try Data(contentsOf: url) == before)

        // Transformable attributes name the app's transformers; reading needs one registered
        // (a pass-through one here, unregistered afterwards).
        let registered = Corpus.registerPassThroughTransformers(for: model)
        defer { Corpus.unregister(registered) }
        guard differing.isEmpty else {
            let error = try #require(throws: OpenCoreDataError.self) {
                _ = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
            }
            #expect(error.code == .persistentStoreIncompatibleVersionHash)
            return
        }

        var expected: [String: Int] = [:]
        do {
            let raw = try RawDatabase(url)
            // Persistent history's entities (Z_ENT 16001...) are in Z_PRIMARYKEY but not in the model.
            for (ent, entry) in report.primaryKeys where ent < 16000 {
                guard let table = report.table(ofEntity: ent) else { continue }
                expected[entry.name] = Int(try raw.value("SELECT COUNT(*) FROM \(table) WHERE Z_ENT = \(ent)") as? Int64 ?? -1)
            }
        }
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let context = StoreHarness.context(coordinator)
        var read = 0
        for entity in model.entities {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
            request.includesSubentities = false
            let objects = try context.fetch(request)
            // A store's Z_PRIMARYKEY may still name an entity by its renaming identifier.
            let count = expected[entity.name!] ?? expected[entity.renamingIdentifier ?? ""]
            #expect(objects.count == count, "\(entity.name!)")
            for object in objects {
                for property in entity.properties { _ = object.value(forKey: property.name) }
            }
            read += objects.count
        }
        #expect(read == expected.values.reduce(0, +))
    }

    /// Stores without the table (older framework versions) have no cached model.
    @Test func storesWithoutCacheHaveNoCachedModel() throws {
        let without = CorpusStore.all.filter { item in !Self.storesWithCache.contains { $0.store == item.store } }
        #expect(without.count == 6)
        for item in without {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let url = try Corpus.copyStore(item.store, to: directory.url)
            #expect(try NSManagedObjectModel.cachedModel(ofStoreAt: url) == nil, "\(item.store)")
        }
    }

    /// The cache of CoreDataPlus SampleModel_V1 holds the same model as the compiled SampleModel.mom
    /// and as its Xcode model file.
    @Test func cacheEqualsTheCompiledModel() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore("\(CorpusCompiledModel.sampleModel)/Fixtures/SampleModel_V1.sqlite", to: directory.url)
        let cached = try #require(try NSManagedObjectModel.cachedModel(ofStoreAt: url))
        let compiled = try NSManagedObjectModel.load(contentsOf: Corpus.repo("\(CorpusCompiledModel.sampleModel)/Fixtures/SampleModel.momd/SampleModel.mom"))
        #expect(cached.entityVersionHashesByName == compiled.entityVersionHashesByName)
        Self.expectSameModel(cached, compiled)
    }
}
