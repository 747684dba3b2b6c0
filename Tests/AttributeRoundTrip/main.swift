// A separate process for round-trip tests: `AttributeRoundTrip write STORE` saves
// AttributeSamples to a new SQLite store; `AttributeRoundTrip read STORE` prints the
// description of the Item objects in it.
import Foundation
import OpenCoreData
import OpenCoreDataTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 3, ["write", "read"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: AttributeRoundTrip write|read STORE\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments[2])
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
