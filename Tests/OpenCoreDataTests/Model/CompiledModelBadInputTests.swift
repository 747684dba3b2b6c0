import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Bad compiled models and model caches: each is a thrown ``OpenCoreDataError`` naming the file
/// (Cocoa's `NSFileReadCorruptFileError`, 259), never a crash, and the store is left as it was.
/// Uses the test bundle's copy of CoreDataPlus SampleModel_V1.sqlite, so it runs without the corpus.
@Suite("Compiled model and model cache bad input")
struct CompiledModelBadInputTests {
    static let storeFixture = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"

    func storeCopy(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("SampleModel_V1.sqlite")
        try FileManager.default.copyItem(at: ModelFixtures.url(Self.storeFixture), to: url)
        return url
    }

    @Test func theFixtureCacheDecodes() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let model = try #require(try NSManagedObjectModel.cachedModel(ofStoreAt: try storeCopy(in: directory)))
        #expect(model.entities.compactMap(\.name) == ["Car", "ExpensiveSportCar", "Person", "SportCar"])
    }

    /// Every prefix of the DEFLATE stream, and streams that are not DEFLATE at all.
    @Test func truncatedOrCorruptCacheBlobsThrow() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try storeCopy(in: directory)
        let blob = try #require(try ModelCache.blob(ofStoreAt: url))
        #expect(try ModelCache.inflate(blob, url: url).starts(with: Data("bplist00".utf8)))
        var lengths = Array(stride(from: 0, to: blob.count, by: max(blob.count / 40, 1)))
        lengths.append(blob.count - 1)
        for length in lengths {
            let error = try #require(throws: OpenCoreDataError.self, "prefix of \(length) bytes") {
                _ = try ModelCache.model(fromCache: blob.prefix(length), url: url)
            }
            #expect(error.code == .fileReadCorruptFile)
            #expect(error.message.contains(url.path))
        }
        for garbage in [Data(repeating: 0xFF, count: 64), Data("not deflate at all".utf8), Data([0x01, 0x00])] {
            #expect(throws: OpenCoreDataError.self) { _ = try ModelCache.model(fromCache: garbage, url: url) }
        }
        // A valid DEFLATE stream of something that is not a model archive.
        let plain = Data([0x01, 0x05, 0x00, 0xFA, 0xFF]) + Data("hello".utf8)  // a stored block
        let error = try #require(throws: OpenCoreDataError.self) { _ = try ModelCache.model(fromCache: plain, url: url) }
        #expect(error.code == .fileReadCorruptFile)
        #expect(error.message.contains("not a keyed archive"))  // "hello" is an old-style plist string
    }

    /// A store whose cache row was damaged: `cachedModel(ofStoreAt:)` throws naming the store, and
    /// the file is not changed by trying.
    @Test func aDamagedCacheInAStoreThrowsAndLeavesTheFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try storeCopy(in: directory)
        let blob = try #require(try ModelCache.blob(ofStoreAt: url))
        do {
            let raw = try RawDatabase(url, readOnly: false)
            let hex = blob.prefix(blob.count / 2).map { String(format: "%02x", $0) }.joined()
            try raw.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = x'\(hex)'")
        }
        let before = try Data(contentsOf: url)
        let error = try #require(throws: OpenCoreDataError.self) { _ = try NSManagedObjectModel.cachedModel(ofStoreAt: url) }
        #expect(error.code == .fileReadCorruptFile)
        #expect(error.url == url)
        #expect(error.message.contains("Z_MODELCACHE"))
        #expect(try Data(contentsOf: url) == before)
        // Not a Core Data store at all: the metadata reader's error.
        let text = directory.file("notes.sqlite")
        try Data("plain text".utf8).write(to: text)
        #expect(throws: OpenCoreDataError.self) { _ = try NSManagedObjectModel.cachedModel(ofStoreAt: text) }
    }

    /// `.mom` files that are not model archives: `init?(contentsOf:)` is nil, `load` says why.
    @Test(arguments: [
        ("text.mom", Data("not a model\n".utf8), "not a property list"),
        ("array.mom", Self.xml(["a", "b"]), "not a keyed archive"),
        ("plain.mom", Self.xml(["hello": "world"]), "not a keyed archive"),
        ("other.mom", Self.xml(["$archiver": "GSKeyedArchiver", "$objects": [], "$top": [:]]), "not NSKeyedArchiver"),
        ("dangling.mom", Self.archive(root: 7, objects: ["$null"]), "refers to object 7"),
        ("string.mom", Self.archive(root: 1, objects: ["$null", "just a string"]), "not an archived object"),
        ("wrongroot.mom", Self.archive(root: 1, objects: ["$null", ["$class": uid(2)], ["$classname": "NSFetchRequest", "$classes": ["NSFetchRequest", "NSObject"]]]),
         "not an NSManagedObjectModel"),
        // NSEntities is an array holding itself: decoding stops at a depth limit instead of recursing forever.
        ("cycle.mom", Self.archive(root: 1, objects: [
            "$null", ["$class": uid(3), "NSEntities": uid(2)], ["$class": uid(4), "NS.objects": [uid(2)]],
            ["$classname": "NSManagedObjectModel", "$classes": ["NSManagedObjectModel", "NSObject"]],
            ["$classname": "NSArray", "$classes": ["NSArray", "NSObject"]],
        ]), "deep"),
        // An entity whose relationship points at an object that is not an entity.
        ("badgraph.mom", Self.archive(root: 1, objects: [
            "$null", ["$class": uid(3), "NSEntities": uid(2)], ["$class": uid(4), "NS.keys": [uid(5)], "NS.objects": [uid(6)]],
            ["$classname": "NSManagedObjectModel", "$classes": ["NSManagedObjectModel", "NSObject"]],
            ["$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]],
            "A",
            ["$class": uid(7), "NSEntityName": uid(5), "NSProperties": uid(8)],
            ["$classname": "NSEntityDescription", "$classes": ["NSEntityDescription", "NSObject"]],
            ["$class": uid(4), "NS.keys": [uid(9)], "NS.objects": [uid(10)]],
            "r",
            ["$class": uid(11), "NSPropertyName": uid(9), "NSDestinationEntity": uid(1), "NSMaxCount": 1],
            ["$classname": "NSRelationshipDescription", "$classes": ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]],
        ]), "destination is not an entity"),
    ] as [(String, Data, String)])
    func nonModelFilesThrow(_ name: String, _ data: Data, _ reason: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file(name)
        try data.write(to: url)
        #expect(NSManagedObjectModel(contentsOf: url) == nil)
        let error = try #require(throws: OpenCoreDataError.self) { _ = try NSManagedObjectModel.load(contentsOf: url) }
        #expect(error.code == .fileReadCorruptFile)
        #expect(error.message.contains(url.path))
        #expect(error.message.contains(reason), "\(error.message)")
    }

    /// `.momd` bundles without a usable version.
    @Test func brokenMomdBundlesThrow() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let empty = directory.file("Empty.momd")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: OpenCoreDataError.self) { _ = try NSManagedObjectModel.load(contentsOf: empty) }
        let missing = directory.file("Missing.momd")
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: true)
        try Self.xml(["NSManagedObjectModel_CurrentVersionName": "Gone"]).write(to: missing.appendingPathComponent("VersionInfo.plist"))
        let error = try #require(throws: OpenCoreDataError.self) { _ = try NSManagedObjectModel.load(contentsOf: missing) }
        #expect(error.message.contains("Gone.mom is not in the bundle"))
        #expect(NSManagedObjectModel(contentsOf: directory.file("Nowhere.momd")) == nil)
    }

    // MARK: Building archives

    static func uid(_ index: Int) -> [String: Any] { ["CF$UID": index] }

    static func xml(_ plist: Any) -> Data {
        (try? PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)) ?? Data()
    }

    /// An XML keyed archive (UIDs as `{CF$UID = n}`, as in FreeCoreData's EmployeeDirectory.mom).
    static func archive(root: Int, objects: [Any]) -> Data {
        xml(["$archiver": "NSKeyedArchiver", "$version": 100000, "$top": ["root": uid(root)], "$objects": objects])
    }
}
