import Foundation

/// A fetch that runs on the context's queue after `execute(_:)` returns, handing its results to a
/// completion block.
///
/// ```swift
/// let request = NSFetchRequest<NSManagedObject>(entityName: "Country")
/// let asynchronous = NSAsynchronousFetchRequest(fetchRequest: request) { result in
///     // On the context's queue.
///     let countries = result.finalResult ?? []
/// }
/// _ = try context.execute(asynchronous)  // returns at once
/// ```
///
/// As on Apple platforms, `execute(_:)` returns an ``NSAsynchronousFetchResult`` at once, with
/// ``NSAsynchronousFetchResult/finalResult`` still `nil`; the fetch is queued on the context (as with
/// `perform(_:)`), and when it finishes the result holds the objects, or
/// ``NSPersistentStoreAsynchronousResult/operationError`` the error, and the completion block runs on
/// the context's queue with it.
///
/// Related Core Data documentation: [NSAsynchronousFetchRequest](https://developer.apple.com/documentation/coredata/nsasynchronousfetchrequest)
///
/// - Note: Linux: there is no `progress` reporting or cancellation; `estimatedResultCount` is kept
///   but unused.
open class NSAsynchronousFetchRequest<ResultType: NSFetchRequestResult>: NSPersistentStoreRequest,
    _OCDAsynchronousRequest
{
    /// The fetch to run.
    public let fetchRequest: NSFetchRequest<ResultType>
    /// Called on the context's queue when the fetch has finished (or failed).
    public let completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    /// A hint of how many results to expect.
    open var estimatedResultCount: Int = 0
    open override var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// A request running `fetchRequest` and calling `blk` with the result.
    ///
    /// Related Core Data documentation: [init(fetchRequest:completionBlock:)](https://developer.apple.com/documentation/coredata/nsasynchronousfetchrequest/init(fetchrequest:completionblock:))
    public init(
        fetchRequest request: NSFetchRequest<ResultType>,
        completionBlock blk: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    ) {
        fetchRequest = request
        completionBlock = blk
        super.init()
    }

    package func _ocdStart(in context: NSManagedObjectContext) -> Any {
        let result = NSAsynchronousFetchResult(fetchRequest: self, context: context)
        context.perform {
            do {
                result.finalResult = try context.fetch(self.fetchRequest)
            } catch {
                result.operationError = error
            }
            self.completionBlock?(result)
        }
        return result
    }
}

/// An asynchronous request a context starts from `execute(_:)`.
package protocol _OCDAsynchronousRequest {
    /// Queues the work on `context` and returns the result object at once.
    func _ocdStart(in context: NSManagedObjectContext) -> Any
}

/// What a store request returns.
///
/// Related Core Data documentation: [NSPersistentStoreResult](https://developer.apple.com/documentation/coredata/nspersistentstoreresult)
open class NSPersistentStoreResult: NSObject {}

/// The result of a request that finishes after `execute(_:)` returns.
///
/// Related Core Data documentation: [NSPersistentStoreAsynchronousResult](https://developer.apple.com/documentation/coredata/nspersistentstoreasynchronousresult)
open class NSPersistentStoreAsynchronousResult: NSPersistentStoreResult {
    /// The context the request runs in.
    public let managedObjectContext: NSManagedObjectContext
    /// The error the request ended with, if any (set on the context's queue before the completion block runs).
    open internal(set) var operationError: (any Error)?

    init(context: NSManagedObjectContext) {
        managedObjectContext = context
        super.init()
    }
}

/// The result of an ``NSAsynchronousFetchRequest``.
///
/// Related Core Data documentation: [NSAsynchronousFetchResult](https://developer.apple.com/documentation/coredata/nsasynchronousfetchresult)
open class NSAsynchronousFetchResult<ResultType: NSFetchRequestResult>: NSPersistentStoreAsynchronousResult {
    /// The request that produced this result.
    public let fetchRequest: NSAsynchronousFetchRequest<ResultType>
    /// The fetched objects: `nil` until the fetch has finished, and after a failure.
    open internal(set) var finalResult: [ResultType]?

    init(fetchRequest: NSAsynchronousFetchRequest<ResultType>, context: NSManagedObjectContext) {
        self.fetchRequest = fetchRequest
        super.init(context: context)
    }
}
