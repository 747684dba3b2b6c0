import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Automatic migration when the app's model is compiled (`.momd`/`.mom`), and from the model a
/// store caches (`Z_MODELCACHE`).
///
/// Apple's lightweight-migration documentation: Core Data finds the source model by searching the
/// app's bundles for a model whose entity version hashes match the store's metadata
/// (`NSManagedObjectModel.mergedModel(from:forStoreMetadata:)`); Xcode puts every version of a
/// versioned model into the compiled `.momd`. So a model loaded from a `.momd` finds its other
/// `.mom` versions without any option. Whether Apple also migrates from a store's `Z_MODELCACHE`
/// is not documented: that fallback is OpenCoreData's behaviour.
///
/// Fixture: CoreDataPlus SampleModel3 (`Fixtures/SampleModel3_V1.sqlite`, 12 users written with v1
/// `User(name, petName)`; v2 adds `Pet` and `User.pet`; v3 drops `petName`) and its compiled
/// `SampleModel3.momd`, whose `VersionInfo.plist` names v1 (`SampleModel3`) as the current
/// version. These are SQLite stores written by Apple's Core Data, so only the SQLite store runs
/// them (the in-memory store has nothing on disk to migrate).
@Suite("Migration: compiled models and the store's model cache", .enabled(if: Corpus.isPresent))
struct CompiledModelMigrationTests {
    static let folder = "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/Fixtures"
    static let store = "\(folder)/SampleModel3_V1.sqlite"
    static var momd: URL { Corpus.repo("\(folder)/SampleModel3.momd") }
    static var migrate: [AnyHashable: Any] {
        [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
    }

    /// A fresh copy of the V1 store in its own directory (the corpus file is never opened).
    private func copyOfStore(_ directory: TemporaryDirectory, _ subfolder: String) throws -> URL {
        let folder = directory.file(subfolder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try Corpus.copyStore(Self.store, to: folder)
    }

    /// Every `User` of the V1 store as its v1 model reads it: primary key → (name, petName).
    private func usersAsWrittenWithV1(_ directory: TemporaryDirectory) throws -> [String: [String: String]] {
        let url = try copyOfStore(directory, "Original")
        // The .momd's current version is v1, so loading the bundle gives the store's own model.
        let v1 = try #require(NSManagedObjectModel(contentsOf: Self.momd))
        let coordinator = try StoreHarness.coordinator(model: v1, storeType: NSSQLiteStoreType, url: url)
        defer { StoreHarness.close(coordinator) }
        let rows = try users(coordinator, keys: ["name", "petName"])
        #expect(rows.count == 12, "the fixture's report lists 12 ZUSER rows")
        #expect(rows.values.allSatisfy { $0["name"]!.hasPrefix("User_") && $0["petName"]!.hasPrefix("Dog_") })
        return rows
    }

    /// Primary key → key → value description of every `User`.
    private func users(_ coordinator: NSPersistentStoreCoordinator, keys: [String]) throws -> [String: [String: String]]
    {
        let context = StoreHarness.context(coordinator)
        return try context.performAndWait {
            var result: [String: [String: String]] = [:]
            for user in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User")) {
                result[user.objectID.uriRepresentation().lastPathComponent] = Dictionary(
                    uniqueKeysWithValues: keys.map { key in
                        let value = user.value(forKey: key)
                        return (
                            key,
                            (value as? NSManagedObject).map { "Pet:" + ($0.value(forKey: "name") as? String ?? "nil") }
                                ?? value.map { "\($0)" } ?? "nil"
                        )
                    })
            }
            return result
        }
    }

    /// The v1 rows as v3 must read them: same primary keys and names, no pet.
    private func expectedV3(_ v1: [String: [String: String]]) -> [String: [String: String]] {
        v1.mapValues { ["name": $0["name"]!, "pet": "nil"] }
    }

    /// A model version file copied alone into `directory`, out of any bundle.
    private func standalone(_ version: String, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file(version + ".mom")
        try FileManager.default.copyItem(at: Self.momd.appendingPathComponent(version + ".mom"), to: url)
        return url
    }

    @Test func v1StoreMigratesToTheNewestVersionWithOnlyTheCompiledBundle() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let expected = try usersAsWrittenWithV1(directory)

        // The newest version by version identifier (the bundle's current one is v1).
        let versions = ModelVersionBundle.versions(inBundle: Self.momd)
        #expect(versions.count == 3)
        let newest = try #require(
            versions.max { Int("\($0.versionIdentifiers.first!.base)")! < Int("\($1.versionIdentifiers.first!.base)")! }
        )
        #expect(newest.versionIdentifiers == ["3"])
        #expect(newest.entitiesByName["User"]?.attributesByName["petName"] == nil)
        #expect(ModelVersionBundle.enclosingBundle(of: newest)?.lastPathComponent == "SampleModel3.momd")

        let url = try copyOfStore(directory, "Migrated")
        // No OpenCoreDataMigrationSourceModelsOption and no .xcdatamodeld anywhere, and the store's
        // model cache emptied (of the copy) so it cannot stand in: v1 is found among the .momd's .mom
        // files by its entity version hashes.
        try RawDatabase(url, readOnly: false).execute("DELETE FROM Z_MODELCACHE")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let plan = try #require(
            try LightweightMigration.plan(storeMetadata: metadata, model: newest, options: Self.migrate, url: url))
        #expect(plan.sourceModel._xcodeModelFile?.url == Self.momd.appendingPathComponent("SampleModel3.mom"))
        let coordinator = try StoreHarness.coordinator(
            model: newest, storeType: NSSQLiteStoreType, url: url, options: Self.migrate)
        #expect(try sqliteStore(coordinator).migrationStatements.isEmpty == false)
        #expect(try users(coordinator, keys: ["name", "pet"]) == expectedV3(expected))
        let context = StoreHarness.context(coordinator)
        let pets = try context.performAndWait {
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Pet"))
        }
        #expect(pets == 0)
        StoreHarness.close(coordinator)

        // The store is now v3: it opens with v3 without migrating again, and its columns are v3's.
        let migrated = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(newest.isConfiguration(withName: nil, compatibleWithStoreMetadata: migrated))
        #expect(try MigrationFixture.columns("ZUSER", at: url).contains("ZPETNAME") == false)
        let reopened = try StoreHarness.coordinator(model: newest, storeType: NSSQLiteStoreType, url: url)
        #expect(try sqliteStore(reopened).migrationStatements.isEmpty)
        #expect(try users(reopened, keys: ["name", "pet"]) == expectedV3(expected))
        StoreHarness.close(reopened)
    }

    @Test func loadingTheMomdItselfFindsTheOtherVersions() throws {
        // NSManagedObjectModel(contentsOf: .momd) loads the current .mom; the bundle stays known, so
        // a store of another version (here v2, made from v1 by migrating) finds its source there.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = try copyOfStore(directory, "Store")
        let v2 = try NSManagedObjectModel.load(contentsOf: Self.momd.appendingPathComponent("SampleModel3_v2.mom"))
        StoreHarness.close(
            try StoreHarness.coordinator(model: v2, storeType: NSSQLiteStoreType, url: url, options: Self.migrate))
        let current = try #require(NSManagedObjectModel(contentsOf: Self.momd))
        #expect(current.versionIdentifiers == ["1"])
        #expect(ModelVersionBundle.enclosingBundle(of: current) == Self.momd)
        let candidates = LightweightMigration.sourceModelCandidates(for: current, options: nil)
        #expect(Set(candidates.flatMap { $0.versionIdentifiers.map { "\($0.base)" } }) == ["1", "2", "3"])
        // Only the plan is checked: opening would migrate the store back to v1.
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let plan = try LightweightMigration.plan(
            storeMetadata: metadata, model: current, options: Self.migrate, url: url)
        #expect(plan?.sourceModel.versionIdentifiers == ["2"])
    }

    @Test func aMomdURLInTheSourceModelsOptionIsSearchedToo() throws {
        // Every version of a .momd passed with the option is a candidate, not only its current one
        // (v1 here): a v2 store finds v2 there.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let expected = try usersAsWrittenWithV1(directory)
        let v2 = try NSManagedObjectModel.load(contentsOf: try standalone("SampleModel3_v2", in: directory))
        let v3 = try NSManagedObjectModel.load(contentsOf: try standalone("SampleModel3_v3", in: directory))
        let url = try copyOfStore(directory, "Migrated")
        // The store's cache would also do; clear it so only the option can supply the source.
        try RawDatabase(url, readOnly: false).execute("DELETE FROM Z_MODELCACHE")
        var options = Self.migrate
        options[OpenCoreDataMigrationSourceModelsOption] = [Self.momd]
        StoreHarness.close(
            try StoreHarness.coordinator(model: v2, storeType: NSSQLiteStoreType, url: url, options: options))
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "the store is v2 now")

        let coordinator = try StoreHarness.coordinator(
            model: v3, storeType: NSSQLiteStoreType, url: url, options: options)
        #expect(try users(coordinator, keys: ["name", "pet"]) == expectedV3(expected))
        StoreHarness.close(coordinator)
    }

    @Test func storeMigratesFromItsCachedModelWhenNoVersionIsAvailable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let expected = try usersAsWrittenWithV1(directory)
        // Only the destination: v3's .mom alone, outside any bundle, and no option.
        let v3 = try NSManagedObjectModel.load(contentsOf: try standalone("SampleModel3_v3", in: directory))
        #expect(ModelVersionBundle.enclosingBundle(of: v3) == nil)
        #expect(LightweightMigration.sourceModelCandidates(for: v3, options: Self.migrate).isEmpty)

        let url = try copyOfStore(directory, "Migrated")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let cached = try #require(try NSManagedObjectModel.cachedModel(ofStoreAt: url))
        #expect(
            cached.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "the cache is the v1 model")

        let coordinator = try StoreHarness.coordinator(
            model: v3, storeType: NSSQLiteStoreType, url: url, options: Self.migrate)
        #expect(try users(coordinator, keys: ["name", "pet"]) == expectedV3(expected))
        StoreHarness.close(coordinator)
        #expect(try MigrationFixture.columns("ZUSER", at: url).contains("ZPETNAME") == false)
        // The cache described v1; OpenCoreData cannot write Apple's archive, so migration empties it.
        #expect(try NSManagedObjectModel.cachedModel(ofStoreAt: url) == nil)
    }

    @Test func aCacheThatDoesNotMatchTheStoreIsNotUsed() throws {
        // The cache of another store (v1) put into a store written with a different model: its
        // hashes are not the store's, so it must not be taken as the source.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v3 = try NSManagedObjectModel.load(contentsOf: try standalone("SampleModel3_v3", in: directory))
        let apple = try copyOfStore(directory, "Apple")
        let blob = try #require(try ModelCache.blob(ofStoreAt: apple))
        let other = MigrationFixture.model(
            "1", [MigrationFixture.entity("User", [MigrationFixture.attribute("nickname")])])
        let url = try MigrationFixture.makeStore(other, in: directory) { context in
            let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
            user.setValue("kept", forKey: "nickname")
        }
        try RawDatabase(url, readOnly: false).execute(
            "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (x'\(blob.map { String(format: "%02x", $0) }.joined())')")
        #expect(try NSManagedObjectModel.cachedModel(ofStoreAt: url) != nil)
        try expectMissingSource(url, model: v3)
    }

    @Test func storeWithNoMatchingSourceAnywhereFailsWith134130AndIsUntouched() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let v3 = try NSManagedObjectModel.load(contentsOf: try standalone("SampleModel3_v3", in: directory))
        // Apple's store without its cache: no version, no option, no cache.
        let url = try copyOfStore(directory, "Apple")
        try RawDatabase(url, readOnly: false).execute("DELETE FROM Z_MODELCACHE")
        try expectMissingSource(url, model: v3)

        // A store OpenCoreData wrote (it writes no cache) with a model built in code.
        let v1 = MigrationFixture.model("1", [MigrationFixture.entity("Item", [MigrationFixture.attribute("title")])])
        let v2 = MigrationFixture.model(
            "2",
            [
                MigrationFixture.entity(
                    "Item", [MigrationFixture.attribute("title"), MigrationFixture.attribute("note")])
            ])
        let ours = try MigrationFixture.makeStore(v1, in: directory, name: "Ours.sqlite") { context in
            NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue("kept", forKey: "title")
        }
        #expect(try ModelCache.blob(ofStoreAt: ours) == nil)
        try expectMissingSource(ours, model: v2)
        let reader = try StoreHarness.coordinator(model: v1, storeType: NSSQLiteStoreType, url: ours)
        let context = StoreHarness.context(reader)
        let titles = try context.performAndWait {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).map {
                $0.value(forKey: "title") as? String
            }
        }
        #expect(titles == ["kept"], "the store still opens with the model it was written with")
        StoreHarness.close(reader)
    }

    /// Opening `url` with `model` and migration on fails with 134130 and leaves the files as they were.
    private func expectMissingSource(
        _ url: URL, model: NSManagedObjectModel, sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let before = try MigrationFixture.bytes(url)
        let sideFiles = {
            ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: url.path + $0) }
        }
        let sideFilesBefore = sideFiles()
        let error = #expect(throws: OpenCoreDataError.self, sourceLocation: sourceLocation) {
            _ = try StoreHarness.coordinator(
                model: model, storeType: NSSQLiteStoreType, url: url, options: Self.migrate)
        }
        #expect(error?.errorCode == 134_130, sourceLocation: sourceLocation)
        #expect(error?.code == .migrationMissingSourceModel, sourceLocation: sourceLocation)
        #expect(try MigrationFixture.bytes(url) == before, "store bytes unchanged", sourceLocation: sourceLocation)
        #expect(sideFiles() == sideFilesBefore, "no side file created", sourceLocation: sourceLocation)
    }

    // MARK: Model references to compiled versions

    @Test func modelReferencesResolveMomVersionsInsideAMomd() throws {
        let info = try #require(try CompiledModelReader.versionInfo(ofBundle: Self.momd))
        let v2Checksum = try #require(info.versionChecksums["SampleModel3_v2"])
        let v3Checksum = try #require(info.versionChecksums["SampleModel3_v3"])

        // By file URL: a .mom inside the .momd, and the .momd itself (its current version, v1).
        let byFile = NSManagedObjectModelReference(
            fileURL: Self.momd.appendingPathComponent("SampleModel3_v2.mom"), versionChecksum: v2Checksum)
        #expect(byFile.resolvedModel?.versionIdentifiers == ["2"])
        let bundleFile = NSManagedObjectModelReference(
            fileURL: Self.momd, versionChecksum: try #require(info.versionChecksums["SampleModel3"]))
        #expect(bundleFile.resolvedModel?.versionIdentifiers == ["1"])
        // A checksum that is not the model's resolves to nothing.
        #expect(
            NSManagedObjectModelReference(
                fileURL: Self.momd.appendingPathComponent("SampleModel3_v2.mom"), versionChecksum: v3Checksum
            ).resolvedModel == nil)

        // By name: the version's name inside a .momd among the bundle's resources.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let resources = directory.file("App")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.momd, to: resources.appendingPathComponent("SampleModel3.momd"))
        let bundle = try #require(Bundle(url: resources))
        #expect(
            NSManagedObjectModelReference(name: "SampleModel3_v3", in: bundle, versionChecksum: v3Checksum)
                .resolvedModel?.versionIdentifiers == ["3"])
        #expect(
            NSManagedObjectModelReference(name: "SampleModel3_v9", in: bundle, versionChecksum: v3Checksum)
                .resolvedModel == nil)
    }

    @Test func stagedMigrationThroughCompiledVersionsMovesPetNamesIntoPets() throws {
        // v1 → v2 lightweight (by checksum, found in the .momd), then a custom stage v2 → v3 that
        // turns each petName into a Pet before v3 drops the column. The references are a name in a
        // bundle and a .mom inside the .momd.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let expected = try usersAsWrittenWithV1(directory)
        let info = try #require(try CompiledModelReader.versionInfo(ofBundle: Self.momd))
        let resources = directory.file("App")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        let momd = resources.appendingPathComponent("SampleModel3.momd")
        try FileManager.default.copyItem(at: Self.momd, to: momd)
        let bundle = try #require(Bundle(url: resources))

        let v2 = NSManagedObjectModelReference(
            name: "SampleModel3_v2", in: bundle, versionChecksum: info.versionChecksums["SampleModel3_v2"]!)
        let v3 = NSManagedObjectModelReference(
            fileURL: momd.appendingPathComponent("SampleModel3_v3.mom"),
            versionChecksum: info.versionChecksums["SampleModel3_v3"]!)
        let lightweight = NSLightweightMigrationStage([
            info.versionChecksums["SampleModel3"]!, info.versionChecksums["SampleModel3_v2"]!,
        ])
        lightweight.label = "v1 to v2"
        let custom = NSCustomMigrationStage(migratingFrom: v2, to: v3)
        custom.label = "v2 to v3: petName becomes a Pet"
        custom.willMigrateHandler = { manager, _ in
            let context = manager.container!.newBackgroundContext()
            try context.performAndWait {
                for user in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User")) {
                    guard let petName = user.value(forKey: "petName") as? String else { continue }
                    let pet = NSEntityDescription.insertNewObject(forEntityName: "Pet", into: context)
                    pet.setValue(petName, forKey: "name")
                    user.setValue(pet, forKey: "pet")
                }
                try context.save()
            }
        }
        let url = try copyOfStore(directory, "Migrated")
        let model = try #require(v3.resolvedModel)
        var options = Self.migrate
        options[NSPersistentStoreStagedMigrationManagerOptionKey] = NSStagedMigrationManager([lightweight, custom])
        let coordinator = try StoreHarness.coordinator(
            model: model, storeType: NSSQLiteStoreType, url: url, options: options)
        let migrated = try users(coordinator, keys: ["name", "pet"])
        #expect(migrated == expected.mapValues { ["name": $0["name"]!, "pet": "Pet:" + $0["petName"]!] })
        StoreHarness.close(coordinator)
    }

    // MARK: mergedModel(from:forStoreMetadata:)

    @Test func mergedModelForStoreMetadataFindsTheStoresVersionInABundle() throws {
        // Apple: "The managed object model used to create the store for the metadata. If a model
        // cannot be created to match the version information specified by metadata, returns nil."
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let resources = directory.file("App")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.momd, to: resources.appendingPathComponent("SampleModel3.momd"))
        let bundle = try #require(Bundle(url: resources))
        let url = try copyOfStore(directory, "Store")
        let v1Metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let v1 = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: v1Metadata))
        #expect(v1.versionIdentifiers == ["1"])
        #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: v1Metadata))

        // After migrating the store to v3, the same bundle yields v3.
        let v3File = resources.appendingPathComponent("SampleModel3.momd/SampleModel3_v3.mom")
        StoreHarness.close(
            try StoreHarness.coordinator(
                model: try NSManagedObjectModel.load(contentsOf: v3File), storeType: NSSQLiteStoreType, url: url,
                options: Self.migrate))
        let v3Metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(
            NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: v3Metadata)?.versionIdentifiers == ["3"])

        // The Xcode source beside the compiled bundle does not make it ambiguous.
        try FileManager.default.copyItem(
            at: Corpus.repo("alemar11+CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld"),
            to: resources.appendingPathComponent("SampleModel3.xcdatamodeld"))
        #expect(
            NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: v3Metadata)?.versionIdentifiers == ["3"])

        // A store of an unknown model, and metadata without hashes, give nil.
        let other = MigrationFixture.model(
            "1", [MigrationFixture.entity("User", [MigrationFixture.attribute("nickname")])])
        let otherStore = try MigrationFixture.makeStore(other, in: directory, name: "Other.sqlite") { _ in }
        let otherMetadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: otherStore)
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: otherMetadata) == nil)
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: [:]) == nil)
    }

    // MARK: Mapping models beside a .momd

    @Test func automaticMigrationFindsTheCompiledMappingModelBesideTheMomd() throws {
        // CoreDataPlus ships SampleModel.momd with V2toV3.cdm beside it. Opening its V2 store with
        // the .momd's v3 finds v2 in the .momd and the .cdm beside it, which Apple uses before
        // inferring. Its policy class is `REPLACE_AT_RUNTIME.V2to3MakerPolicy` (the app rewrites it at
        // run time), so here the mapping fails by name: proof it was found rather than inferred
        // (inference would drop Car.maker and succeed). The store is untouched.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixtures = "alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures"
        let v3 = try NSManagedObjectModel.load(contentsOf: Corpus.repo("\(fixtures)/SampleModel.momd/SampleModel3.mom"))
        let url = try Corpus.copyStore("\(fixtures)/SampleModel_V2.sqlite", to: directory.url)
        let before = try MigrationFixture.bytes(url)
        let error = #expect(throws: OpenCoreDataError.self) {
            _ = try StoreHarness.coordinator(model: v3, storeType: NSSQLiteStoreType, url: url, options: Self.migrate)
        }
        // Only V2toV3.cdm (beside the .momd; the .xcmappingmodel is in another folder) has this
        // entity mapping and policy. (The message does not name a .cdm file: its mapping keeps no URL.)
        #expect(error?.message.contains(#"entity mapping "CarToCar""#) == true, "\(String(describing: error))")
        #expect(error?.message.contains("REPLACE_AT_RUNTIME.V2to3MakerPolicy") == true)
        #expect(try MigrationFixture.bytes(url) == before)
    }
}
