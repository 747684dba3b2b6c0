import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The `ocd` command-line tool, run as a separate process from the build products directory, its
/// output compared with what Apple's Core Data wrote (version hashes, row counts).
@Suite("ocd command-line tool")
struct OCDToolTests {
    struct Result {
        let status: Int32
        let output: String
        let error: String
        /// Whether the process exited or was stopped by a signal (a trap).
        var reason: Process.TerminationReason = .exit
    }

    /// Runs the `ocd` SwiftPM builds beside the test bundle (the test target depends on it).
    static func ocd(_ arguments: String...) throws -> Result { try ocd(arguments) }

    static func ocd(_ arguments: [String]) throws -> Result {
        let directory = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        let tool = directory.appendingPathComponent("ocd")
        try #require(FileManager.default.isExecutableFile(atPath: tool.path), "ocd not built at \(tool.path)")
        return try run(tool, arguments)
    }

    /// Runs `executable` with `arguments` (and `environment` added to this process's) to its end.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes before waiting, so a large output cannot block the tool.
        let errorData = Locked(Data())
        let reader = DispatchGroup()
        let errorHandle = error.fileHandleForReading
        DispatchQueue.global().async(group: reader) {
            let data = errorHandle.readDataToEndOfFile()
            errorData.withLock { $0 = data }
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        reader.wait()
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            error: errorData.withLock { String(decoding: $0, as: UTF8.self) }, reason: process.terminationReason)
    }

    /// `entity name` → its `versionHash:` line, from `ocd model` output.
    static func hashes(in output: String) -> [String: String] {
        var result: [String: String] = [:]
        var entity: String?
        for line in output.split(separator: "\n").map(String.init) {
            if line.hasPrefix("entity ") {
                entity = String(line.dropFirst(7).prefix { $0 != " " })
            } else if let entity, line.hasPrefix("  versionHash: ") {
                result[entity] = String(line.dropFirst("  versionHash: ".count))
            }
        }
        return result
    }

    // MARK: ocd model

    /// The hashes and checksum `ocd model` prints equal the ones Apple's Core Data stored for the
    /// same model (store metadata or a compiled model's VersionInfo.plist; see VersionHashTests).
    @Test(arguments: StoreHashVector.all)
    func modelPrintsApplesVersionHashes(_ vector: StoreHashVector) throws {
        let result = try Self.ocd("model", ModelFixtures.url(vector.model).path)
        #expect(result.status == 0, "\(result.error)")
        #expect(Self.hashes(in: result.output) == vector.hashes)
        if let checksum = vector.checksum {
            #expect(result.output.contains("\nversionChecksum: \(checksum)\n"))
        }
    }

    @Test func modelPrintsEntitiesAttributesAndRelationships() throws {
        let path = ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld").path
        let result = try Self.ocd("model", path)
        #expect(result.status == 0)
        #expect(result.output.contains("current version: SampleModel.xcdatamodel\n"))
        #expect(result.output.contains("\nentity SportCar (parent Car, class SportCar)\n"))
        #expect(result.output.contains("\n  attribute numberPlate: String\n"))
        #expect(result.output.contains("\n  relationship cars -> Car (to-many, inverse owner, delete Nullify, optional)\n"))
        #expect(result.output.contains("\n  relationship owner -> Person (to-one, inverse cars, delete Nullify, optional)\n"))
        #expect(result.output.contains("\n  uniqueness: numberPlate\n"))
    }

    @Test func modelPrintsTemplatesConfigurationsFetchedPropertiesAndUnknownElements() throws {
        let momcom = try Self.ocd("model", ModelFixtures.url(ModelFixtures.momcom).path)
        #expect(momcom.status == 0)
        #expect(momcom.output.contains("\n  fetched property yesBooleans -> Entity where booleanAttribute = YES\n"))
        #expect(momcom.output.contains("\nconfigurations:\n  UnrelatedConfiguration: UnrelatedEntity\n"))
        #expect(momcom.output.contains("\n  FetchRequestObjects: Entity where booleanAttribute == 1 AND floatAttribute > 5\n"))
        #expect(!momcom.output.contains("not understood"))

        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let contents = directory.file("contents")
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Human"><attribute name="name" optional="YES" attributeType="String"/><aura/></entity>
            </model>
            """.utf8).write(to: contents)
        let future = try Self.ocd("model", contents.path)
        #expect(future.status == 0)
        #expect(future.output.hasSuffix("\nnot understood (kept out of the model):\n  line 3: <aura> in entity Human\n"))
    }

    /// Every model the corpus pairs with a store: the printed hashes equal the store's
    /// `NSStoreModelVersionHashes` in the corpus report.
    @Test(.enabled(if: Corpus.isPresent), arguments: CorpusStore.withModel)
    func modelHashesEqualTheCorpusStoreReports(_ item: CorpusStore) throws {
        let result = try Self.ocd("model", Corpus.repo(item.model!).path)
        #expect(result.status == 0, "\(result.error)")
        #expect(Self.hashes(in: result.output) == (try Corpus.report(item.store)).versionHashes)
    }

    // MARK: ocd store

    @Test func storeShowsMetadataRowCountsAndSampleWithoutTouchingTheFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("SampleModel_V1.sqlite")
        try FileManager.default.copyItem(
            at: ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"), to: store)
        let before = try Data(contentsOf: store)
        let model = ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel")
        let result = try Self.ocd("store", store.path, "--model", model.path, "--sample", "2")
        #expect(result.status == 0, "\(result.error)")
        let out = result.output
        #expect(out.contains("\n  NSStoreUUID: \"753753D3-A961-4901-AB05-8CC48B1D3853\"\n"))
        #expect(out.contains("\n    Car: nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=\n"))
        #expect(out.contains("\n  Car: 115 rows (Z_ENT 1, table ZCAR, Z_MAX 125)\n"))
        #expect(out.contains("\n  SportCar: 5 rows (Z_ENT 2, table ZCAR, Z_MAX 0)\n"))
        #expect(out.contains("\n  ZCAR: 125\n  ZPERSON: 20\n"))
        #expect(out.contains("\ncompatible: yes\n"))
        #expect(out.contains("\n  Person: 20 objects\n"))
        let personLines = out.split(separator: "\n").filter { $0.hasPrefix("    Person p") }
        #expect(personLines.count == 2)
        #expect(personLines.allSatisfy { $0.contains("firstName=\"") && $0.contains(" cars=") })
        // The store is read from a scratch copy: unchanged, and no -wal or -shm appears beside it.
        #expect(try Data(contentsOf: store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["SampleModel_V1.sqlite"])
    }

    @Test func storeWithAnIncompatibleModelSaysWhy() throws {
        let store = ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let model = ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel")
        let result = try Self.ocd("store", store.path, "--model", model.path)
        #expect(result.status == 0)
        #expect(result.output.contains("\ncompatible: no\n  Car: version hash differs\n"))
        #expect(result.output.contains("\n  ExpensiveSportCar: only in the store\n"))
        #expect(result.output.contains("\n  LuxuryCar: only in the model\n"))
        #expect(result.output.contains("\nsample: not read (the model does not fit the store)\n"))
    }

    /// Without `--model`, the model Core Data cached in the store is printed and reads the sample.
    @Test func storeWithoutModelUsesTheModelCachedInTheStore() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("SampleModel_V1.sqlite")
        try FileManager.default.copyItem(
            at: ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"), to: store)
        let before = try Data(contentsOf: store)
        let result = try Self.ocd("store", store.path, "--sample", "1")
        #expect(result.status == 0, "\(result.error)")
        let out = result.output
        #expect(out.contains("\nmodel cache (Z_MODELCACHE): 4 entities\n"))
        // The hashes Apple stored in the same file's metadata (printed above it).
        #expect(out.contains("\n    Car: nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=\n"))
        #expect(out.contains("\n  entity Car versionHash nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=\n"))
        #expect(out.contains("\n  entity ExpensiveSportCar (parent SportCar) versionHash PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=\n    attributes: isLimitedEdition: Boolean\n"))
        #expect(out.contains("\n    relationships: cars -> Car (to-many)\n"))
        #expect(out.contains("\nmodel: Z_MODELCACHE (the model cached in the store)\ncompatible: yes\n"))
        #expect(out.contains("\n  Person: 20 objects\n"))
        #expect(out.contains("\n    Car p1 ") && out.contains(" maker=\"FIAT\" "))
        #expect(try Data(contentsOf: store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["SampleModel_V1.sqlite"])
    }

    /// Every corpus store without `--model`: the cached model is used where the store has one, and
    /// fits it (except SampleModel2's derived-attribute hashes, see CompiledModelTests); stores
    /// without a cache say so. `ocd model` prints a compiled model's hashes as Xcode's compiler did.
    @Test(.enabled(if: Corpus.isPresent), arguments: CorpusStore.all)
    func storeWithoutModelReadsTheCacheOfEveryCorpusStore(_ item: CorpusStore) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(item.store, to: directory.url)
        let result = try Self.ocd("store", url.path)
        #expect(result.status == 0, "\(result.error)")
        let report = try Corpus.report(item.store)
        if report.rowCounts["Z_MODELCACHE"] != nil {
            #expect(result.output.contains("\nmodel cache (Z_MODELCACHE): \(report.versionHashes.count) entities\n"))
            let fits = CompiledModelTests.knownHashMismatches[item.store] == nil
            #expect(result.output.contains("\nmodel: Z_MODELCACHE (the model cached in the store)\ncompatible: \(fits ? "yes" : "no")\n"))
            #expect(result.output.contains(fits ? "\nsample (up to 3 per entity):\n" : "\nsample: not read"))
        } else {
            #expect(result.output.contains("\nmodel cache (Z_MODELCACHE): none in this store\n"))
            #expect(result.output.contains("\nsample: give --model to read objects\n"))
        }
    }

    @Test(.enabled(if: Corpus.isPresent)) func modelPrintsACompiledModel() throws {
        let bundle = Corpus.repo("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd")
        let info = try #require(try CompiledModelReader.versionInfo(ofBundle: bundle))
        for version in ["SampleModel3", "SampleModel3_v2", "SampleModel3_v3"] {
            let result = try Self.ocd("model", bundle.appendingPathComponent(version + ".mom").path)
            #expect(result.status == 0, "\(result.error)")
            #expect(Self.hashes(in: result.output) == info.versionHashes[version]!.mapValues { $0.base64EncodedString() })
            #expect(result.output.contains("\nversionChecksum: \(info.versionChecksums[version]!)\n"))
        }
        #expect(Self.hashes(in: try Self.ocd("model", bundle.path).output) == info.versionHashes["SampleModel3"]!.mapValues { $0.base64EncodedString() })
    }

    /// For every corpus store (old framework versions included): the table row counts `ocd store`
    /// prints equal the corpus report's, and with its model every entity's objects are counted.
    @Test(.enabled(if: Corpus.isPresent), arguments: CorpusStore.all)
    func storeRowCountsEqualTheCorpusReports(_ item: CorpusStore) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try Corpus.copyStore(item.store, to: directory.url)
        var arguments = ["store", url.path]
        if let model = item.model { arguments += ["--model", Corpus.repo(model).path] }
        let result = try Self.ocd(arguments)
        #expect(result.status == 0, "\(result.error)")
        let report = try Corpus.report(item.store)
        let tables = result.output.components(separatedBy: "\ntables:\n").last!.components(separatedBy: "\n\n").first!
        var counts: [String: Int] = [:]
        for line in tables.split(separator: "\n") {
            let parts = line.trimmingCharacters(in: .whitespaces).components(separatedBy: ": ")
            if parts.count == 2, let count = Int(parts[1]) { counts[parts[0]] = count }
        }
        #expect(counts == report.rowCounts)
        if item.model != nil {
            #expect(result.output.contains(item.matchesModel ? "\ncompatible: yes\n" : "\ncompatible: no\n"))
        }
    }

    /// A transformer of the app's own, which `ocd` does not have: text stored as its UTF-8 bytes reversed.
    final class ReversingTransformer: ValueTransformer {
        static let name = NSValueTransformerName(rawValue: "OCDTestReversingTransformer")
        override class func transformedValueClass() -> AnyClass { NSData.self }
        override class func allowsReverseTransformation() -> Bool { true }
        override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { Data($0.utf8.reversed()) } }
        override func reverseTransformedValue(_ value: Any?) -> Any? {
            (value as? Data).map { String(decoding: $0.reversed(), as: UTF8.self) }
        }
    }

    /// With `--model`, a transformable attribute whose transformer `ocd` lacks is shown as its stored
    /// bytes, with a note, instead of failing the sample with 134070 (as without `--model`).
    @Test func storeWithModelShowsValuesOfAnUnknownTransformerAsBytes() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let modelURL = directory.file("Notes.xml")
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="Note" syncable="YES">
                    <attribute name="payload" optional="YES" attributeType="Transformable" valueTransformerName="OCDTestReversingTransformer"/>
                    <attribute name="title" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """.write(to: modelURL, atomically: true, encoding: .utf8)
        ValueTransformer.setValueTransformer(ReversingTransformer(), forName: ReversingTransformer.name)
        let store = directory.file("Notes.sqlite")
        let coordinator = try StoreHarness.coordinator(
            model: try NSManagedObjectModel.load(contentsOf: modelURL), storeType: NSSQLiteStoreType, url: store)
        let context = StoreHarness.context(coordinator)
        try context.performAndWait {
            insertObject("Note", ["title": "first", "payload": "abc"], into: context)
            try context.save()
        }
        StoreHarness.close(coordinator)

        let result = try Self.ocd("store", store.path, "--model", modelURL.path)
        #expect(result.status == 0, "\(result.error)")
        let out = result.output
        #expect(out.contains("\ncompatible: yes\n"))
        #expect(out.contains("\nnote: ocd has no value transformer named OCDTestReversingTransformer: Note.payload shown as stored bytes\n"))
        #expect(out.contains("\n  Note: 1 objects\n"))
        #expect(out.contains(" payload=<3 bytes 0x636261> title=\"first\""), "\(out)")
    }

    // MARK: ocd generate

    /// The classes generated from Moods.xcdatamodeld declare the properties `Examples/Moods/Model.swift`
    /// declares by hand, with the same types.
    @Test func generateMatchesTheMoodsExample() throws {
        let package = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let example = package.appendingPathComponent("Examples/Moods")
        let result = try Self.ocd("generate", example.appendingPathComponent("Moods.xcdatamodeld").path)
        #expect(result.status == 0, "\(result.error)")
        let generated = Self.declarations(result.output)
        let handWritten = Self.declarations(try String(contentsOf: example.appendingPathComponent("Model.swift"), encoding: .utf8))
        #expect(Set(generated.keys) == ["Continent", "Country", "Mood"])
        #expect(result.output.contains("final class Mood: NSManagedObject {"))
        for (className, properties) in handWritten {
            var expected = properties
            if className == "Mood" {
                // The example keeps latitude/longitude as fileprivate NSNumber? behind a `location`
                // property; the model's optional scalar Double becomes `Double?`.
                expected["latitude"] = "Double?"
                expected["longitude"] = "Double?"
            }
            #expect(generated[className] == expected, "\(className)")
        }

        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let written = try Self.ocd("generate", example.appendingPathComponent("Moods.xcdatamodeld").path, "--output", directory.url.path)
        #expect(written.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["Continent.swift", "Country.swift", "Mood.swift"])
        let country = try String(contentsOf: directory.file("Country.swift"), encoding: .utf8)
        #expect(country.contains("import OpenCoreData\n") && country.contains("    @ManagedProperty var moods: Set<Mood>\n"))
    }

    /// `class name` → `property name` → type, for every `@ManagedProperty` declaration.
    static func declarations(_ source: String) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        var current: String?
        for line in source.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if let range = line.range(of: "class "), line.hasSuffix("{"), line.contains(": NSManagedObject") {
                current = String(line[range.upperBound...].prefix { $0 != ":" })
            } else if let current, line.hasPrefix("@ManagedProperty"), let range = line.range(of: "var ") {
                let declaration = line[range.upperBound...].components(separatedBy: ": ")
                result[current, default: [:]][declaration[0]] = declaration[1]
            }
        }
        return result
    }

    @Test func generatesInheritanceOptionalsAndOrderedRelationships() throws {
        let result = try Self.ocd("generate", ModelFixtures.url(ModelFixtures.contentful).path)
        #expect(result.status == 0)
        let sample = try Self.ocd("generate", ModelFixtures.url(ModelFixtures.sampleModel).path)
        #expect(sample.output.contains("class Car: NSManagedObject {"))
        #expect(sample.output.contains("class SportCar: Car {"))
        #expect(sample.output.contains("final class ExpensiveSportCar: SportCar {"))
        #expect(sample.output.contains("    @ManagedProperty var owner: Person?\n"))
        #expect(sample.output.contains("    @ManagedProperty var cars: Set<Car>\n"))
        #expect(sample.output.contains("    @ManagedProperty var id: UUID?\n") || sample.output.contains("    @ManagedProperty var id: UUID\n"))
        #expect(result.output.contains(": [") || result.output.contains("Set<"))
    }

    // MARK: Errors

    @Test func wrongPathsAndForeignFilesFailWithOneLine() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let text = directory.file("notes.txt")
        try Data("not a model, not a store\n".utf8).write(to: text)
        let plainSQLite = directory.file("plain.sqlite")
        try RawDatabase(plainSQLite, readOnly: false).execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        let missing = directory.file("missing.sqlite").path

        let cases: [([String], String)] = [
            (["store", missing], "no such file or directory"),
            (["model", missing], "no such file or directory"),
            (["generate", missing], "no such file or directory"),
            (["store", text.path], "not a SQLite database"),
            (["model", text.path], "not a Core Data model"),
            (["store", plainSQLite.path], "not a Core Data store"),
            (["store", directory.url.path], "is a directory"),
            (["store", plainSQLite.path, "--model", text.path], "not a Core Data model"),
        ]
        for (arguments, expected) in cases {
            let result = try Self.ocd(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.output.isEmpty, "\(arguments)")
            let lines = result.error.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.error)")
            #expect(result.error.contains(expected), "\(arguments): \(result.error)")
        }
        #expect(try Data(contentsOf: text) == Data("not a model, not a store\n".utf8))
    }
}
