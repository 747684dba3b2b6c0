import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Fetched properties (NSFetchedPropertyDescription), with the semantics of Apple's class reference:
/// the value is an array fetched when first read, with `$FETCH_SOURCE`/`$FETCHED_PROPERTY` bound,
/// cached until the object turns into a fault or is refreshed, never saved. Every store test runs
/// on both stores.
@Suite("Fetched properties")
struct FetchedPropertyTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    final class Song: NSManagedObject {}

    final class Playlist: NSManagedObject {
        @ManagedProperty var genre: String?
        @ManagedProperty var songsOfGenre: [Song]?
    }

    /// `Playlist.songsOfGenre`: the songs whose genre is the playlist's, by title.
    /// `Playlist.taggedSongs`: the songs whose tag is the fetched property's `userInfo.tag`.
    static func model(songsEntityName: String = "Song") -> NSManagedObjectModel {
        let song = NSEntityDescription(name: "Song", properties: [
            NSAttributeDescription(name: "title", type: .stringAttributeType),
            NSAttributeDescription(name: "genre", type: .stringAttributeType),
            NSAttributeDescription(name: "tag", type: .stringAttributeType),
        ])
        song.managedObjectClassName = String(reflecting: Song.self)
        let ofGenre = NSFetchRequest<any NSFetchRequestResult>(entityName: songsEntityName)
        ofGenre.predicate = NSPredicate(format: "genre == $FETCH_SOURCE.genre")
        ofGenre.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        let tagged = NSFetchRequest<any NSFetchRequestResult>(entityName: "Song")
        tagged.predicate = NSPredicate(format: "tag == $FETCHED_PROPERTY.userInfo.tag")
        tagged.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
        let taggedSongs = NSFetchedPropertyDescription(name: "taggedSongs", fetchRequest: tagged)
        taggedSongs.userInfo = ["tag": "live"]
        let playlist = NSEntityDescription(name: "Playlist", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType),
            NSAttributeDescription(name: "genre", type: .stringAttributeType),
            NSFetchedPropertyDescription(name: "songsOfGenre", fetchRequest: ofGenre),
            taggedSongs,
        ])
        playlist.managedObjectClassName = String(reflecting: Playlist.self)
        let model = NSManagedObjectModel()
        model.entities = [song, playlist]
        return model
    }

    static func titles(_ value: Any?) -> [String] {
        ((value as? [Any]) ?? []).compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
    }

    /// A saved rock playlist and four songs (two rock, one jazz; two tagged "live").
    static func seed(_ store: TestStore) throws {
        let context = store.newContext()
        try context.performAndWait {
            insertObject("Playlist", ["name": "Loud", "genre": "rock"], into: context)
            insertObject("Song", ["title": "B", "genre": "rock", "tag": "live"], into: context)
            insertObject("Song", ["title": "A", "genre": "rock"], into: context)
            insertObject("Song", ["title": "C", "genre": "jazz", "tag": "live"], into: context)
            insertObject("Song", ["title": "D", "genre": "pop"], into: context)
            try context.save()
        }
    }

    static func playlist(in context: NSManagedObjectContext) throws -> NSManagedObject {
        try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Playlist")).first)
    }

    static func addSong(_ title: String, genre: String, to store: TestStore) throws {
        let other = store.newContext()
        try other.performAndWait {
            insertObject("Song", ["title": title, "genre": genre], into: other)
            try other.save()
        }
    }

    // MARK: Values

    @Test(arguments: storeTypes)
    func fetchSourceAndFetchedPropertyVariablesSelectTheRightObjects(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try Self.seed(store)
        let context = store.newContext()
        try context.performAndWait {
            // Fetching with the classes names them for their entities (NSEntityDescription's Linux note).
            _ = try context.fetch(NSFetchRequest<Song>(entityName: "Song"))
            let typed = try #require(try context.fetch(NSFetchRequest<Playlist>(entityName: "Playlist")).first)
            let playlist = try Self.playlist(in: context)
            // An ordered array, sorted as the request says (Apple: "an ordered NSArray").
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "B"])
            #expect(Self.titles(playlist.value(forKey: "taggedSongs")) == ["C", "B"])
            #expect(Self.titles(try playlist.checkedValue(forKey: "taggedSongs")) == ["C", "B"])
            // The variables' key paths are constants before the fetch, so the store can run it in SQL.
            let property = try #require(playlist.entity.propertiesByName["taggedSongs"] as? NSFetchedPropertyDescription)
            #expect(try property._request(for: playlist, model: store.model).predicate?.predicateFormat == #"tag == "live""#)
            // In compound predicates and on both variables too; other parts are left as they are.
            let compound = NSFetchRequest<any NSFetchRequestResult>(entityName: "Song")
            compound.predicate = NSPredicate(
                format: "genre == $FETCH_SOURCE.genre AND (tag == $FETCHED_PROPERTY.userInfo.tag OR title == $FETCHED_PROPERTY.name) AND title != nil")
            let both = NSFetchedPropertyDescription(name: "both", fetchRequest: compound)
            both.userInfo = ["tag": "live"]
            #expect(try both._request(for: playlist, model: store.model).predicate
                == NSPredicate(format: "genre == 'rock' AND (tag == 'live' OR title == 'both') AND title != nil"))
            // Through a `@ManagedProperty` declared as an array of the destination class.
            #expect(typed.songsOfGenre?.compactMap { $0.value(forKey: "title") as? String } == ["A", "B"])
            // Key paths through the property, as KVC collects them.
            #expect(playlist.value(forKeyPath: "songsOfGenre.title") as? [String] == ["A", "B"])
        }
    }

    @Test(arguments: storeTypes)
    func theValueIsFetchedLazilyAndCachedUntilRefresh(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try Self.seed(store)
        let context = store.newContext()
        try context.performAndWait {
            let playlist = try Self.playlist(in: context)
            #expect(playlist.value(forKey: "name") as? String == "Loud")  // the fault fired: values loaded
            // Lazy: loading the object did not fetch the property, so a song saved since is found.
            try Self.addSong("E", genre: "rock", to: store)
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "B", "E"])
            // Cached: a song saved after the first read is not seen ("a fetched property is static").
            try Self.addSong("F", genre: "rock", to: store)
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "B", "E"])
            // refresh(_:mergeChanges: true) keeps the object's changes and drops the cache.
            playlist.setValue("Louder", forKey: "name")
            context.refresh(playlist, mergeChanges: true)
            #expect(playlist.value(forKey: "name") as? String == "Louder")
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "B", "E", "F"])
            // refresh(_:mergeChanges: false) turns it into a fault; the next read fetches again.
            try Self.addSong("G", genre: "rock", to: store)
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "B", "E", "F"])
            context.refresh(playlist, mergeChanges: false)
            #expect(playlist.isFault)
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "B", "E", "F", "G"])
        }
    }

    @Test(arguments: storeTypes)
    func theFetchReflectsPendingChangesOfTheContext(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try Self.seed(store)
        let context = store.newContext()
        try context.performAndWait {
            let playlist = try Self.playlist(in: context)
            insertObject("Song", ["title": "AA", "genre": "rock"], into: context)  // not saved
            let b = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Song")).first {
                $0.value(forKey: "title") as? String == "B"
            })
            b.setValue("jazz", forKey: "genre")  // no longer rock, not saved
            #expect(Self.titles(playlist.value(forKey: "songsOfGenre")) == ["A", "AA"])
            // An unsaved source object works too: `$FETCH_SOURCE.genre` is read from it.
            let fresh = insertObject("Playlist", ["name": "Calm", "genre": "jazz"], into: context)
            #expect(Self.titles(fresh.value(forKey: "songsOfGenre")) == ["B", "C"])
        }
    }

    @Test(arguments: storeTypes)
    func theValueIsNeverSavedNorAChange(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        try Self.seed(store)
        let context = store.newContext()
        try context.performAndWait {
            let playlist = try Self.playlist(in: context)
            _ = playlist.value(forKey: "songsOfGenre")
            #expect(!playlist.hasChanges && !context.hasChanges)
            #expect(playlist.changedValues().isEmpty)
            #expect(playlist.committedValues(forKeys: nil).keys.sorted() == ["genre", "name"])
            // Setting it is refused: logged by setValue(_:forKey:), thrown by setCheckedValue.
            playlist.setValue([], forKey: "songsOfGenre")
            #expect(!playlist.hasChanges)
            #expect(throws: OpenCoreDataError.self) { try playlist.setCheckedValue([], forKey: "songsOfGenre") }
            // A new object's changed values do not hold it either, even once read.
            let fresh = insertObject("Playlist", ["name": "New", "genre": "pop"], into: context)
            #expect(Self.titles(fresh.value(forKey: "songsOfGenre")) == ["D"])
            #expect(fresh.changedValues().keys.sorted() == ["genre", "name"])
            try context.save()
        }
        // Nothing of it reaches the store: no column (SQLite), and a dictionary fetch leaves it out.
        if let url = store.url {
            let columns = try RawDatabase(url).rows("PRAGMA table_info(ZPLAYLIST)").compactMap { $0[1] as? String }
            #expect(columns.contains("ZGENRE") && !columns.contains { $0.contains("SONGS") })
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Playlist")
            request.resultType = .dictionaryResultType
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let rows = try reader.fetch(request)
            #expect(rows.map { ($0 as? [String: Any])?.keys.sorted() ?? [] } == [["genre", "name"], ["genre", "name"]])
        }
    }

    @Test func fetchedPropertiesAreNotPartOfTheVersionHash() throws {
        // FORMATS.md §2: "Fetched properties are not included".
        let with = Self.model()
        let without = Self.model()
        let playlist = try #require(without.entitiesByName["Playlist"])
        playlist.properties = playlist.properties.filter { !($0 is NSFetchedPropertyDescription) }
        #expect(with.entityVersionHashesByName == without.entityVersionHashesByName)
        #expect(with.entitiesByName["Playlist"]?.propertiesByName["songsOfGenre"] is NSFetchedPropertyDescription)
    }

    // MARK: Errors

    @Test(arguments: storeTypes)
    func aRequestForAnUnknownEntityFailsTheStoreLoad(storeType: String) throws {
        let error = try #require(throws: OpenCoreDataError.self) {
            _ = try TestStore(storeType, model: Self.model(songsEntityName: "Track"))
        }
        #expect(error.code == .persistentStoreIncompatibleSchema)
        #expect(error.entityName == "Playlist" && error.key == "songsOfGenre")
        #expect(error.message.contains("Track"))
    }

    // MARK: Model files

    static let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Playlist" representedClassName="Playlist" syncable="YES">
                <attribute name="genre" optional="YES" attributeType="String"/>
                <attribute name="name" optional="YES" attributeType="String"/>
                <fetchedProperty name="songsOfGenre" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Song" predicateString="genre == $FETCH_SOURCE.genre"/>
                </fetchedProperty>
                <fetchedProperty name="taggedSongs" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Song" predicateString="tag == $FETCHED_PROPERTY.userInfo.tag"/>
                    <userInfo>
                        <entry key="tag" value="live"/>
                    </userInfo>
                </fetchedProperty>
            </entity>
            <entity name="Song" representedClassName="Song" syncable="YES">
                <attribute name="genre" optional="YES" attributeType="String"/>
                <attribute name="tag" optional="YES" attributeType="String"/>
                <attribute name="title" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    static func writeModel(_ xml: String) throws -> URL {
        let directory = try ModelFixtures.scratchDirectory()
        let url = directory.appendingPathComponent("Music.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try xml.write(to: url.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return url
    }

    @Test(arguments: storeTypes)
    func fetchedPropertiesFromAModelFile(storeType: String) throws {
        let url = try Self.writeModel(Self.xml)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let model = try NSManagedObjectModel.load(contentsOf: url)
        let playlist = try #require(model.entitiesByName["Playlist"])
        let tagged = try #require(playlist.propertiesByName["taggedSongs"] as? NSFetchedPropertyDescription)
        #expect(tagged.isOptional && tagged.userInfo?["tag"] as? String == "live")
        #expect(tagged.fetchRequest?.entity === model.entitiesByName["Song"])
        #expect(playlist.attributesByName.keys.sorted() == ["genre", "name"])

        let store = try TestStore(storeType, model: model)
        try Self.seed(store)
        let context = store.newContext()
        try context.performAndWait {
            let object = try Self.playlist(in: context)
            // No sort descriptors in the file: compare as sets.
            #expect(Set(Self.titles(object.value(forKey: "songsOfGenre"))) == ["A", "B"])
            #expect(Set(Self.titles(object.value(forKey: "taggedSongs"))) == ["B", "C"])
        }
    }

    @Test func aModelFileWhoseFetchedPropertyNamesAnUnknownEntityFailsWithItsLine() throws {
        let url = try Self.writeModel(Self.xml.replacingOccurrences(of: "entity=\"Song\" predicateString=\"tag", with: "entity=\"Track\" predicateString=\"tag"))
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let error = try #require(throws: OpenCoreDataError.self) { _ = try NSManagedObjectModel.load(contentsOf: url) }
        #expect(error.message.contains("contents:9:"))  // the <fetchedProperty name="taggedSongs"> line
        #expect(error.message.contains("fetched property taggedSongs") && error.message.contains("Track"))
    }

    @Test func aPredicateThatDoesNotParseIsReportedWhenThePropertyIsRead() throws {
        // phimage/MomXML's test model has `predicateString="predicate"`; Apple's behaviour for it is
        // not documented. The model loads; reading the property throws (checked) or logs and is nil.
        let url = try Self.writeModel(Self.xml.replacingOccurrences(of: "genre == $FETCH_SOURCE.genre", with: "predicate"))
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let store = try TestStore(NSInMemoryStoreType, model: try NSManagedObjectModel.load(contentsOf: url))
        try Self.seed(store)
        let context = store.newContext()
        try context.performAndWait {
            let playlist = try Self.playlist(in: context)
            let error = try #require(throws: OpenCoreDataError.self) { try playlist.checkedValue(forKey: "songsOfGenre") }
            #expect(error.message.contains("predicate \"predicate\" does not parse"))
            #expect(playlist.value(forKey: "songsOfGenre") == nil)
            #expect(Set(Self.titles(playlist.value(forKey: "taggedSongs"))) == ["B", "C"])
        }
    }

    /// atomicbird/momcom's test model: `Entity.yesBooleans` fetches the entities whose
    /// `booleanAttribute = YES`.
    @Test(arguments: storeTypes)
    func corpusModelFetchedProperty(storeType: String) throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(ModelFixtures.momcom))
        let entity = try #require(model.entitiesByName["Entity"])
        #expect(entity.propertiesByName["yesBooleans"] is NSFetchedPropertyDescription)
        let store = try TestStore(storeType, model: model)
        let context = store.newContext()
        try context.performAndWait {
            let yes = NSEntityDescription.insertNewObject(forEntityName: "Entity", into: context)
            yes.setValue(true, forKey: "booleanAttribute")
            let no = NSEntityDescription.insertNewObject(forEntityName: "Entity", into: context)
            no.setValue(false, forKey: "booleanAttribute")
            let found = try #require(no.value(forKey: "yesBooleans") as? [NSManagedObject])
            #expect(found.count == 1 && found.first === yes)
        }
    }
}
