// A separate process for round-trip tests: `AttributeRoundTrip write STORE` saves
// AttributeSamples to a new SQLite store; `AttributeRoundTrip read STORE` prints the
// description of the Item objects in it; `AttributeRoundTrip migrate STORE` prints "migrating" and
// migrates a `TestModels.migrationPersonV1()` store to V2 (the parent kills it midway).
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 3, ["write", "read", "migrate"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: AttributeRoundTrip write|read|migrate STORE\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments[2])
if arguments[1] == "migrate" {
    FileHandle.standardOutput.write(Data("migrating\n".utf8))
    do {
        _ = try StoreHarness.coordinator(
            model: TestModels.migrationPersonV2(), storeType: NSSQLiteStoreType, url: url,
            options: [
                NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                OpenCoreDataMigrationSourceModelsOption: [TestModels.migrationPersonV1()],
            ])
        FileHandle.standardOutput.write(Data("migrated\n".utf8))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("AttributeRoundTrip: \(error)\n".utf8))
        exit(1)
    }
}
do {
    let context = try makeContext(model: TestModels.company(), storeType: NSSQLiteStoreType, at: url)
    try context.performAndWait {
        if arguments[1] == "write" {
            AttributeSamples.insert(into: context)
            try context.save()
        } else {
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            print(AttributeSamples.describe(items))
        }
    }
} catch {
    FileHandle.standardError.write(Data("AttributeRoundTrip: \(error)\n".utf8))
    exit(1)
}
