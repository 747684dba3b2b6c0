// Cross-platform code imports OpenCoreDataShim: Apple's Core Data on Apple platforms, OpenCoreData
// elsewhere. With Foundation imported too, our types still win on Linux.
import Foundation
import OpenCoreDataShim
import Testing

@Suite("Shim import")
struct ShimImportTests {
    @Test func shimExposesCoreDataNames() {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Mood")
        let sort: NSSortDescriptor = NSSortDescriptor(key: "date", ascending: true)
        request.sortDescriptors = [sort]
        #expect(request.entityName == "Mood")
        #expect(NSSQLiteStoreType == "SQLite")
    }
}
