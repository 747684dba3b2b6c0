import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

@Suite("SQLite store")
struct SQLiteStoreTests {
    // MARK: Values

    @Test func everyAttributeTypeRoundTrips() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let big = Data((0..<10_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.123456)
        let uuid = UUID()
        let decimal = Decimal(string: "12345678901234567890.123456789")!
        let rows: [String: [String: Any]] = [
            "max": [
                "int16": Int16.max, "int32": Int32.max, "int64": Int64.max, "double": Double.greatestFiniteMagnitude,
                "float": Float(3.25), "string": "", "bool": true, "date": date, "binary": big, "uuid": uuid,
                "decimal": decimal, "uri": URL(string: "https://example.com/a?b=c#d")!,
            ],
            "min": [
                "int16": Int16.min, "int32": Int32.min, "int64": Int64.min, "double": -0.5, "float": Float(-1.5),
                "string": "한국어 😀 e\u{301}", "bool": false, "date": Date(timeIntervalSince1970: -1.75),
                "binary": Data(), "decimal": Decimal(-1) / Decimal(8),
            ],
            "nil": [:],
        ]
        for (tag, values) in rows {
            let item = insertObject("Item", values, into: context)
            if tag == "nil" { item.setValue("nil", forKey: "string") }
        }
        try context.save()
        try store.reopen()
        let fetched = try store.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        #expect(fetched.count == 3)
        let max = try #require(fetched.first { $0.value(forKey: "int16") as? Int16 == .max })
        #expect(max.value(forKey: "int32") as? Int32 == .max)
        #expect(max.value(forKey: "int64") as? Int64 == .max)
        #expect(max.value(forKey: "double") as? Double == .greatestFiniteMagnitude)
        #expect(max.value(forKey: "float") as? Float == 3.25)
        #expect(max.value(forKey: "string") as? String == "")
        #expect(max.value(forKey: "bool") as? Bool == true)
        #expect(max.value(forKey: "date") as? Date == date)
        #expect((max.value(forKey: "binary") as? Data) == big)
        #expect(max.value(forKey: "uuid") as? UUID == uuid)
        #expect(max.value(forKey: "decimal") as? Decimal == decimal)
        #expect(max.value(forKey: "uri") as? URL == URL(string: "https://example.com/a?b=c#d")!)
        let min = try #require(fetched.first { $0.value(forKey: "int16") as? Int16 == .min })
        #expect(min.value(forKey: "int32") as? Int32 == .min)
        #expect(min.value(forKey: "int64") as? Int64 == .min)
        #expect(min.value(forKey: "string") as? String == "한국어 😀 e\u{301}")
        #expect(min.value(forKey: "bool") as? Bool == false)
        #expect(min.value(forKey: "date") as? Date == Date(timeIntervalSince1970: -1.75))
        #expect(min.value(forKey: "binary") as? Data == Data())
        #expect(min.value(forKey: "decimal") as? Decimal == Decimal(string: "-0.125"))
        #expect(min.value(forKey: "uuid") == nil)
        let empty = try #require(fetched.first { $0.value(forKey: "string") as? String == "nil" })
        for key in ["int16", "int32", "int64", "decimal", "double", "float", "bool", "date", "binary", "uuid", "uri"] {
            #expect(empty.value(forKey: key) == nil, "\(key) should stay nil")
        }
    }

    // MARK: File layout

    @Test func fileLayoutMatchesCoreData() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sales = insertObject("Department", ["name": "Sales"], into: context)
        let ann = insertObject(
            "Employee", ["name": "Ann", "hiredAt": Date(timeIntervalSinceReferenceDate: 1.5), "department": sales],
            into: context)
        insertObject("Manager", ["name": "Dee", "department": sales], into: context)
        let project = insertObject("Project", ["title": "Rocket"], into: context)
        ann.setValue(Set([project]), forKey: "projects")
        let uuid = UUID()
        insertObject("Item", ["uuid": uuid], into: context)
        try context.save()

        let raw = try RawDatabase(try #require(store.url))
        let tables = try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map {
            $0[0] as? String
        }
        #expect(
            tables == [
                "ZDEPARTMENT", "ZEMPLOYEE", "ZITEM", "ZPROJECT", "Z_2PROJECTS", "Z_METADATA", "Z_MODELCACHE",
                "Z_PRIMARYKEY",
            ])
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'ZEMPLOYEE'") as? String
                == "CREATE TABLE ZEMPLOYEE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZACTIVE INTEGER, ZAGE INTEGER, ZDEPARTMENT INTEGER, ZLEVEL INTEGER, ZHIREDAT TIMESTAMP, ZNAME VARCHAR )"
        )
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'Z_2PROJECTS'") as? String
                == "CREATE TABLE Z_2PROJECTS ( Z_2MEMBERS INTEGER, Z_5PROJECTS INTEGER, PRIMARY KEY (Z_2MEMBERS, Z_5PROJECTS) )"
        )
        let itemColumns = try raw.rows("PRAGMA table_info(ZITEM)").map { "\($0[1]!) \($0[2]!)" }
        #expect(
            itemColumns == [
                "Z_PK INTEGER", "Z_ENT INTEGER", "Z_OPT INTEGER", "ZBOOL INTEGER", "ZINT16 INTEGER", "ZINT32 INTEGER",
                "ZINT64 INTEGER", "ZDATE TIMESTAMP", "ZDECIMAL DECIMAL", "ZDOUBLE FLOAT", "ZFLOAT FLOAT",
                "ZSTRING VARCHAR", "ZURI VARCHAR", "ZBINARY BLOB", "ZUUID BLOB",
            ])
        let indexes = Set(
            try raw.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'").compactMap
            { $0[0] as? String })
        #expect(indexes == ["ZEMPLOYEE_ZDEPARTMENT_INDEX", "ZEMPLOYEE_Z_ENT_INDEX", "Z_2PROJECTS_Z_5PROJECTS_INDEX"])
        #expect(try raw.value("PRAGMA page_size") as? Int64 == 4096)
        #expect(try raw.value("PRAGMA auto_vacuum") as? Int64 == 2)
        #expect(try raw.value("PRAGMA journal_mode") as? String == "wal")

        // Z_PRIMARYKEY: numbering, parents, and the shared counter of a hierarchy.
        let keys = try raw.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { row in
            row.map { "\($0!)" }.joined(separator: " ")
        }
        #expect(keys == ["1 Department 0 1", "2 Employee 0 2", "3 Manager 2 0", "4 Item 0 1", "5 Project 0 1"])
        #expect(
            try raw.rows("SELECT Z_ENT, ZNAME FROM ZEMPLOYEE ORDER BY ZNAME").map { "\($0[0]!) \($0[1]!)" } == [
                "2 Ann", "3 Dee",
            ])
        #expect(try raw.rows("SELECT Z_PK FROM ZEMPLOYEE ORDER BY Z_PK").map { "\($0[0]!)" } == ["1", "2"])
        #expect(try raw.value("SELECT ZDEPARTMENT FROM ZEMPLOYEE WHERE ZNAME = 'Ann'") as? Int64 == 1)
        #expect(
            try raw.rows("SELECT Z_2MEMBERS, Z_5PROJECTS FROM Z_2PROJECTS").map { "\($0[0]!)-\($0[1]!)" }
                == ["\(ann.objectID.primaryKey!)-\(project.objectID.primaryKey!)"])

        // Stored representations.
        #expect(try raw.value("SELECT ZHIREDAT FROM ZEMPLOYEE WHERE ZNAME = 'Ann'") as? Double == 1.5)
        #expect(try raw.value("SELECT typeof(ZHIREDAT) FROM ZEMPLOYEE WHERE ZNAME = 'Ann'") as? String == "real")
        let uuidBlob = try #require(try raw.value("SELECT ZUUID FROM ZITEM") as? Data)
        #expect(uuidBlob == withUnsafeBytes(of: uuid.uuid) { Data($0) })

        // Z_METADATA: one row, the UUID in Z_UUID and not in the plist.
        let metadataRows = try raw.rows("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA")
        #expect(metadataRows.count == 1)
        #expect(metadataRows[0][0] as? Int64 == 1)
        let storeUUID = try #require(metadataRows[0][1] as? String)
        #expect(storeUUID == store.coordinator.persistentStores.first?.identifier)
        #expect(storeUUID == storeUUID.uppercased())
        let plistData = try #require(metadataRows[0][2] as? Data)
        #expect(plistData.prefix(8) == Data("bplist00".utf8))
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: plistData, format: nil) as? [String: Any])
        #expect(plist[NSStoreUUIDKey] == nil)
        #expect(plist[NSStoreTypeKey] as? String == "SQLite")
        #expect(plist[NSPersistenceFrameworkVersionKey] as? Int == 1344)
        #expect(plist["NSStoreModelVersionHashesVersion"] as? Int == 3)
        #expect(plist["_NSAutoVacuumLevel"] as? String == "2")
        #expect(plist[NSStoreModelVersionIdentifiersKey] as? [String] == [""])
        let hashes = try #require(plist[NSStoreModelVersionHashesKey] as? [String: Data])
        #expect(Set(hashes.keys) == ["Department", "Employee", "Manager", "Project", "Item"])
        #expect(store.coordinator.persistentStores.first?.metadata[NSStoreUUIDKey] as? String == storeUUID)

        // Z_OPT: 1 on insert, 2 after one update.
        #expect(try raw.value("SELECT Z_OPT FROM ZDEPARTMENT") as? Int64 == 1)
        sales.setValue("Sales & Marketing", forKey: "name")
        try context.save()
        #expect(try raw.value("SELECT Z_OPT FROM ZDEPARTMENT") as? Int64 == 2)
    }

    @Test func orderedPolymorphicAndInverseLessRelationships() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.media())
        let context = store.newContext()
        let playlist = insertObject("Playlist", ["name": "Mix"], into: context)
        let songs = (1...3).map { insertObject("Song", ["title": "S\($0)"], into: context) }
        let remix = insertObject("Remix", ["title": "R", "artist": "DJ"], into: context)
        playlist.setValue(NSOrderedSet(array: [songs[2], remix, songs[0], songs[1]]), forKey: "songs")
        let tags = (1...2).map { insertObject("Tag", ["label": "T\($0)"], into: context) }
        let library = insertObject("Library", ["name": "Home", "favorite": remix, "tags": Set(tags)], into: context)
        try context.save()
        _ = library

        let raw = try RawDatabase(try #require(store.url))
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'ZLIBRARY'") as? String
                == "CREATE TABLE ZLIBRARY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFAVORITE INTEGER, Z3_FAVORITE INTEGER, ZNAME VARCHAR )"
        )
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'ZSONG'") as? String
                == "CREATE TABLE ZSONG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPLAYLIST INTEGER, Z_FOK_PLAYLIST INTEGER, ZTITLE VARCHAR, ZARTIST VARCHAR )"
        )
        #expect(
            try raw.value("SELECT sql FROM sqlite_master WHERE name = 'Z_1TAGS'") as? String
                == "CREATE TABLE Z_1TAGS ( Z_1TAGSINVERSE INTEGER, Z_5TAGS INTEGER, PRIMARY KEY (Z_1TAGSINVERSE, Z_5TAGS) )"
        )
        #expect(
            try raw.rows("SELECT ZTITLE FROM ZSONG ORDER BY Z_FOK_PLAYLIST").map { $0[0] as? String } == [
                "S3", "R", "S1", "S2",
            ])
        #expect(try raw.value("SELECT Z3_FAVORITE FROM ZLIBRARY") as? Int64 == 4)

        try store.reopen()
        let reader = store.newContext()
        let freshPlaylist = try #require(
            try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Playlist")).first)
        let ordered = try #require(freshPlaylist.value(forKey: "songs") as? NSOrderedSet)
        #expect(
            ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == [
                "S3", "R", "S1", "S2",
            ])
        let freshLibrary = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Library")).first)
        let favorite = try #require(freshLibrary.value(forKey: "favorite") as? NSManagedObject)
        #expect(favorite.entity.name == "Remix")
        #expect(favorite.value(forKey: "artist") as? String == "DJ")
        let freshTags = try #require(freshLibrary.value(forKey: "tags") as? Set<NSManagedObject>)
        #expect(Set(freshTags.compactMap { $0.value(forKey: "label") as? String }) == ["T1", "T2"])

        // Reordering saves the new positions.
        let reversed = NSOrderedSet(array: ordered.array.reversed())
        freshPlaylist.setValue(reversed, forKey: "songs")
        try reader.save()
        let third = store.newContext()
        let again = try #require(try third.fetch(NSFetchRequest<NSManagedObject>(entityName: "Playlist")).first)
        let titles = (again.value(forKey: "songs") as? NSOrderedSet)?.array.compactMap {
            ($0 as? NSManagedObject)?.value(forKey: "title") as? String
        }
        #expect(titles == ["S2", "S1", "R", "S3"])

        // Fetching the superentity returns subentity rows with their own values; dictionaries too.
        let allSongs = try third.fetch(NSFetchRequest<NSManagedObject>(entityName: "Song"))
        #expect(allSongs.count == 4)
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Song")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["title"]
        dictionaries.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        #expect(try third.fetch(dictionaries).compactMap { $0["title"] as? String } == ["R", "S1", "S2", "S3"])
        let limitedCount = NSFetchRequest<NSManagedObject>(entityName: "Song")
        limitedCount.fetchLimit = 3
        #expect(try third.count(for: limitedCount) == 3)
    }

    @Test func faultForDeletedRowThrows() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sales = insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        let id = sales.objectID
        context.delete(sales)
        try context.save()
        let error = try #require(throws: OpenCoreDataError.self) { try store.newContext().existingObject(with: id) }
        #expect(error.code == .persistentStoreOperation)
    }

    // MARK: Transactions

    @Test func failedSaveLeavesNothingOnDiskAndKeepsChanges() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let sqlite = try sqliteStore(store.coordinator)
        sqlite.testHooks.failAfterRowWrites = 2
        for i in 0..<5 { insertObject("Department", ["name": "D\(i)"], into: context) }
        #expect(throws: OpenCoreDataError.self) { try context.save() }
        let raw = try RawDatabase(try #require(store.url))
        #expect(try raw.value("SELECT COUNT(*) FROM ZDEPARTMENT") as? Int64 == 0)
        #expect(context.insertedObjects.count == 5)
        #expect(context.hasChanges)
        sqlite.testHooks.failAfterRowWrites = nil
        try context.save()
        #expect(try raw.value("SELECT COUNT(*) FROM ZDEPARTMENT") as? Int64 == 5)
        #expect(!context.hasChanges)
    }

    @Test func uniquenessConstraintViolationIsAConstraintErrorWithoutValues() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.coreDataPlusSampleModelV1())
        let context = store.newContext()
        for _ in 0..<2 { insertObject("Car", ["numberPlate": "SECRET-PLATE"], into: context) }
        let error = try #require(throws: OpenCoreDataError.self) { try context.save() }
        #expect(error.code == .managedObjectConstraintMerge)
        // Found before writing (the unique index Z_Car_UNIQUE_numberPlate stays as a safety net).
        #expect(error.sqliteCode == nil)
        #expect(error.conflictList.count == 1)
        #expect(error.entityName == "Car")
        #expect(!error.description.contains("SECRET-PLATE"))
        #expect(try RawDatabase(try #require(store.url)).value("SELECT COUNT(*) FROM ZCAR") as? Int64 == 0)
    }

    @Test func optimisticLockingConflictBetweenCoordinators() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let seed = store.newContext()
        insertObject("Department", ["name": "Sales"], into: seed)
        try seed.save()
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let first = store.newContext()
        let second = StoreHarness.context(other)
        let a = try #require(try first.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        let b = try #require(try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        a.setValue("First", forKey: "name")
        try first.save()
        b.setValue("Second", forKey: "name")
        let error = try #require(throws: OpenCoreDataError.self) { try second.save() }
        #expect(error.code == .managedObjectMerge)
        #expect((error as NSError).code == NSManagedObjectMergeError)
        let check = try store.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))
        #expect(check.first?.value(forKey: "name") as? String == "First")
    }

    @Test func primaryKeysComeFromZMaxAcrossCoordinators() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let a = store.newContext()
        let b = StoreHarness.context(other)
        let x = insertObject("Employee", ["name": "X"], into: a)
        let y = insertObject("Manager", ["name": "Y"], into: b)
        try a.obtainPermanentIDs(for: [x])
        try b.obtainPermanentIDs(for: [y])
        try a.save()
        try b.save()
        #expect(x.objectID.uriRepresentation().lastPathComponent == "p1")
        #expect(y.objectID.uriRepresentation().lastPathComponent == "p2")
        #expect(
            x.objectID.uriRepresentation().absoluteString.hasPrefix(
                "x-coredata://\(store.coordinator.persistentStores[0].identifier!)/Employee/"))
    }

    @Test func twoCoordinatorsWriteConcurrently() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let other = try store.secondCoordinator()
        defer { StoreHarness.close(other) }
        let coordinators = [store.coordinator, other]
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let context = StoreHarness.context(coordinators[worker])
            for batch in 0..<5 {
                for i in 0..<20 { insertObject("Employee", ["name": "w\(worker)-\(batch)-\(i)"], into: context) }
                do { try context.save() } catch { failures.withLock { $0.append("\(error)") } }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let raw = try RawDatabase(try #require(store.url))
        #expect(try raw.value("SELECT COUNT(*) FROM ZEMPLOYEE") as? Int64 == 200)
        #expect(try raw.value("SELECT COUNT(DISTINCT Z_PK) FROM ZEMPLOYEE") as? Int64 == 200)
        #expect(try raw.value("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Employee'") as? Int64 == 200)
    }

    @Test func fileNamesWithURISpecialCharacters() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("My Store #1?%.sqlite")
        let writer = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSSQLiteStoreType, url: url)
        let context = StoreHarness.context(writer)
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        StoreHarness.close(writer)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["My Store #1?%.sqlite"])
        let reader = try StoreHarness.coordinator(model: TestModels.company(), storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(reader) }
        #expect(
            try StoreHarness.context(reader).count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 1)
    }

    // MARK: Files that are not stores

    private func expectRejected(_ bytes: Data, code: OpenCoreDataError.Code = .persistentStoreOpen) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Store.sqlite")
        try bytes.write(to: url)
        let error = try #require(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(model: TestModels.company(), storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == code)
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Store.sqlite"])
    }

    @Test func rejectsFilesThatAreNotStoresWithoutTouchingThem() throws {
        try expectRejected(
            Data("this is not a database, just some text that is long enough to look like a header....".utf8))
        try expectRejected(Data())

        // A SQLite database that is not a Core Data store.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let plain = directory.file("plain.sqlite")
        try RawDatabase(plain, readOnly: false).execute("CREATE TABLE foo (bar INTEGER); INSERT INTO foo VALUES (1)")
        try expectRejected(try Data(contentsOf: plain))

        // Truncated stores: past the header, and inside it.
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for i in 0..<200 {
            insertObject("Department", ["name": String(repeating: "x", count: 100) + "\(i)"], into: context)
        }
        try context.save()
        StoreHarness.close(store.coordinator)
        let full = try Data(contentsOf: try #require(store.url))
        #expect(full.count > 8192)
        try expectRejected(full.prefix(4096))
        try expectRejected(full.prefix(50))
    }

    // MARK: Compatibility

    private func modelWithoutItem() -> NSManagedObjectModel {
        let model = TestModels.company()
        model.entities = model.entities.filter { $0.name != "Item" }
        return model
    }

    @Test func incompatibleModelIsRejectedWithoutTouchingTheFile() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        StoreHarness.close(store.coordinator)
        let url = try #require(store.url)
        let before = try Data(contentsOf: url)
        let error = try #require(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(model: modelWithoutItem(), storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == .persistentStoreIncompatibleVersionHash)
        #expect((error as NSError).code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(try Data(contentsOf: url) == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: url.path + "-shm"))
        // The right model still opens it.
        try store.reopen()
        #expect(try store.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 1)
    }

    @Test func changedAttributeTypeIsIncompatible() throws {
        let store = try TestStore(NSSQLiteStoreType)
        StoreHarness.close(store.coordinator)
        let changed = TestModels.company()
        let department = try #require(changed.entitiesByName["Department"])
        (department.propertiesByName["budget"] as? NSAttributeDescription)?.attributeType = .floatAttributeType
        let url = try #require(store.url)
        let before = try Data(contentsOf: url)
        let error = try #require(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(model: changed, storeType: NSSQLiteStoreType, url: url)
        }
        #expect(error.code == .persistentStoreIncompatibleVersionHash)
        #expect(try Data(contentsOf: url) == before)
    }

    // MARK: Metadata and files

    @Test func metadataReadsAndWritesThroughTheCoordinator() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let url = try #require(store.url)
        let persistent = try #require(store.coordinator.persistentStores.first)
        var metadata = store.coordinator.metadata(for: persistent)
        metadata["AppVersion"] = "7"
        store.coordinator.setMetadata(metadata, for: persistent)
        let context = store.newContext()
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        StoreHarness.close(store.coordinator)
        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(read["AppVersion"] as? String == "7")
        #expect(read[NSStoreUUIDKey] as? String == persistent.identifier)
        #expect(read[NSStoreTypeKey] as? String == NSSQLiteStoreType)

        var updated = read
        updated["AppVersion"] = "8"
        try NSPersistentStoreCoordinator.setMetadata(updated, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        #expect(
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)[
                "AppVersion"] as? String == "8")
        try store.reopen()
        #expect(store.coordinator.persistentStores.first?.identifier == persistent.identifier)
    }

    @Test func destroyRemovesTheFileAndItsCompanions() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        let url = try #require(store.url)
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
        try store.coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).isEmpty)
    }

    @Test func pragmasAndReadOnlyOptions() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Store.sqlite")
        let writer = try StoreHarness.coordinator(
            model: TestModels.company(), storeType: NSSQLiteStoreType, url: url,
            options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"], NSPersistentStoreTimeoutOption: 5])
        let context = StoreHarness.context(writer)
        insertObject("Department", ["name": "Sales"], into: context)
        try context.save()
        #expect(try RawDatabase(url).value("PRAGMA journal_mode") as? String == "delete")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        StoreHarness.close(writer)

        let reader = try StoreHarness.coordinator(
            model: TestModels.company(), storeType: NSSQLiteStoreType, url: url,
            options: [NSReadOnlyPersistentStoreOption: true])
        defer { StoreHarness.close(reader) }
        let readContext = StoreHarness.context(reader)
        let sales = try #require(try readContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        sales.setValue("Renamed", forKey: "name")
        #expect(throws: OpenCoreDataError.self) { try readContext.save() }
        insertObject("Department", ["name": "New"], into: readContext)
        let insertError = try #require(throws: OpenCoreDataError.self) { try readContext.save() }
        #expect(insertError.code == .persistentStoreSave)

        #expect(throws: OpenCoreDataError.self) {
            try StoreHarness.coordinator(
                model: TestModels.company(), storeType: NSSQLiteStoreType, url: url,
                options: [NSSQLitePragmasOption: ["journal_mode; DROP TABLE ZDEPARTMENT": "WAL"]])
        }
    }
}
