import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// `NSAsynchronousFetchRequest` through `context.execute(_:)` on both stores.
@Suite("Asynchronous fetches")
struct AsynchronousFetchTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// What the completion block saw.
    private final class Outcome: @unchecked Sendable {
        // @unchecked Sendable: written once in the completion block, read after the semaphore.
        var keys: [Int]?
        var error: (any Error)?
        var onContextQueue = false
        var sameResult = false
    }

    private func run(_ request: NSFetchRequest<NSManagedObject>, _ store: TestStore) throws -> Outcome {
        let context = store.newContext()
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        var returned: NSAsynchronousFetchResult<NSManagedObject>?
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: request) { result in
            outcome.keys = result.finalResult?.map { ($0.value(forKey: "key") as! NSNumber).intValue }
            outcome.error = result.operationError
            outcome.onContextQueue = NSManagedObjectContext._current === context
            outcome.sameResult = result === returned
            done.signal()
        }
        try context.performAndWait {
            // Inside a block the queued fetch cannot start yet: execute returns the empty result at once.
            returned = try #require(try context.execute(asynchronous) as? NSAsynchronousFetchResult<NSManagedObject>)
            #expect(returned?.finalResult == nil && returned?.operationError == nil)
            #expect(returned?.fetchRequest === asynchronous && returned?.managedObjectContext === context)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        returned = nil  // the block holds it, and it holds the request that holds the block
        return outcome
    }

    @Test(arguments: storeTypes)
    func deliversResultsOnTheContextQueue(storeType: String) throws {
        let store = try TestStore(storeType, model: PredicateDifferentialTests.model())
        try PredicateDifferentialTests.seed(store.newContext())
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age > 30")
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        let outcome = try run(request, store)
        #expect(outcome.keys == [4, 8])
        #expect(outcome.error == nil)
        #expect(outcome.onContextQueue && outcome.sameResult)
    }

    @Test(arguments: storeTypes)
    func reportsErrorsInOperationError(storeType: String) throws {
        let store = try TestStore(storeType, model: PredicateDifferentialTests.model())
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "nickname == 'x'")
        let outcome = try run(request, store)
        #expect(outcome.keys == nil)
        #expect((outcome.error as? OpenCoreDataError)?.code == .unknownKey)
    }
}
