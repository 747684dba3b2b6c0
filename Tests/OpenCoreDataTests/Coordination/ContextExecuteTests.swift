import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// `NSManagedObjectContext.execute(_:)` returns an `NSPersistentStoreResult`, typed by request, as
/// on Apple. What a plain `NSFetchRequest` answers is not documented; Apple-platform code in the wild
/// reads it as an `NSAsynchronousFetchResult` whose `finalResult` is already set
/// (`try context.execute(request) as! NSAsynchronousFetchResult<…>`), which is what is checked here.
@Suite("Coordination: context execute(_:) results")
struct ContextExecuteTests {
    private func context(_ directory: TemporaryDirectory) throws -> NSManagedObjectContext {
        let model = M.model("1", [M.entity("Person", [M.attribute("name")])])
        let url = try M.makeStore(model, in: directory) { context in
            for name in ["Ann", "Bob", "Cy"] { insertObject("Person", ["name": name], into: context) }
        }
        return StoreHarness.context(try StoreHarness.coordinator(model: model, storeType: NSSQLiteStoreType, url: url))
    }

    private func sorted<T>(_ type: T.Type = T.self) -> NSFetchRequest<T> {
        let request = NSFetchRequest<T>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return request
    }

    @Test func aTypedFetchAnswersAFinishedFetchResultOfItsType() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let context = try context(directory)
        let request: NSFetchRequest<NSManagedObject> = sorted()
        let result: NSPersistentStoreResult = try context.execute(request)
        let fetched = try #require(result as? NSAsynchronousFetchResult<NSManagedObject>)
        #expect(fetched.finalResult?.map { $0.value(forKey: "name") as? String } == ["Ann", "Bob", "Cy"])
        #expect(fetched.operationError == nil && fetched.managedObjectContext === context)
        #expect(fetched.fetchRequest.fetchRequest === request)
        // The same objects `fetch(_:)` registers.
        #expect(fetched.finalResult?.first === (try context.fetch(request)).first)
    }

    @Test func anErasedFetchAnswersAnErasedResult() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let context = try context(directory)
        let request: NSFetchRequest<any NSFetchRequestResult> = sorted()
        let result = try #require(try context.execute(request) as? NSAsynchronousFetchResult<any NSFetchRequestResult>)
        #expect(
            result.finalResult?.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == [
                "Ann", "Bob", "Cy",
            ])
    }

    /// A request typed for objects whose `resultType` asks for IDs, dictionaries or a count answers
    /// those, in an erased result (a Swift generic class cannot hold them as `NSManagedObject`s).
    @Test func otherResultTypesAnswerTheirValues() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let context = try context(directory)
        let ids: NSFetchRequest<NSManagedObject> = sorted()
        ids.resultType = .managedObjectIDResultType
        let idResult = try #require(try context.execute(ids) as? NSAsynchronousFetchResult<any NSFetchRequestResult>)
        #expect(
            idResult.finalResult?.count == 3 && idResult.finalResult?.allSatisfy { $0 is NSManagedObjectID } == true)

        let counted: NSFetchRequest<NSNumber> = sorted()
        counted.resultType = .countResultType
        let count = try #require(try context.execute(counted) as? NSAsynchronousFetchResult<NSNumber>)
        #expect(count.finalResult == [3])

        let dictionaries: NSFetchRequest<NSDictionary> = sorted()
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name"]
        let rows = try #require(try context.execute(dictionaries) as? NSAsynchronousFetchResult<NSDictionary>)
        #expect(rows.finalResult?.map { $0["name"] as? String } == ["Ann", "Bob", "Cy"])
    }

    /// An asynchronous request still answers at once, before its fetch has run.
    @Test func anAsynchronousFetchStillAnswersAtOnce() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let context = try context(directory)
        let done = DispatchSemaphore(value: 0)
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: sorted(NSManagedObject.self)) { _ in done.signal() }
        try context.performAndWait {
            let result = try #require(try context.execute(asynchronous) as? NSAsynchronousFetchResult<NSManagedObject>)
            #expect(result.finalResult == nil && result.fetchRequest === asynchronous)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
    }

    /// A save request goes to the store and answers an (empty) store result.
    @Test func aSaveRequestAnswersAStoreResult() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let context = try context(directory)
        let save = NSSaveChangesRequest(inserted: [], updated: [], deleted: [], locked: [])
        let result = try context.execute(save)
        #expect(type(of: result) == NSPersistentStoreResult.self)
        #expect(try context.count(for: sorted(NSManagedObject.self)) == 3)
    }
}
