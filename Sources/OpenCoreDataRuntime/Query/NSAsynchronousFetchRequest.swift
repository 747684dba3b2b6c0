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
///   but unused. As with `NSFetchRequest`, the generic parameter has no `NSFetchRequestResult`
///   constraint, so that `NSAsynchronousFetchRequest<NSFetchRequestResult>` (an existential) works.
open class NSAsynchronousFetchRequest<ResultType>: NSPersistentStoreRequest,
    _OCDContextRequest
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

    package func _ocdExecute(in context: NSManagedObjectContext) -> NSPersistentStoreResult {
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

/// A fetch a context runs itself from `execute(_:)`, not through the coordinator: a fetch request
/// of any result type, or an asynchronous one.
package protocol _OCDContextRequest {
    /// Runs (or, for an asynchronous request, queues) the fetch in `context` and returns its result.
    func _ocdExecute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult
}

extension NSFetchRequest: _OCDContextRequest {
    /// The fetch, run now, as an `NSAsynchronousFetchResult` whose `finalResult` holds the results:
    /// of `ResultType` when they are, else of `any NSFetchRequestResult`.
    package func _ocdExecute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let results: [any NSFetchRequestResult] = try context._untypedFetch(self).compactMap { value in
            // A count comes back as a Swift integer; Apple's is an NSNumber.
            value as? any NSFetchRequestResult ?? ValueConversion.int64(value).map { NSNumber(value: $0) }
        }
        if let typed = results as? [ResultType] {
            let wrapper = NSAsynchronousFetchRequest(fetchRequest: self, completionBlock: nil)
            return NSAsynchronousFetchResult(fetchRequest: wrapper, context: context, finalResult: typed)
        }
        let erased = NSFetchRequest<any NSFetchRequestResult>()
        erased.copySettings(from: self)
        let wrapper = NSAsynchronousFetchRequest(fetchRequest: erased, completionBlock: nil)
        return NSAsynchronousFetchResult(
            fetchRequest: wrapper, context: context, finalResult: results)
    }
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
open class NSAsynchronousFetchResult<ResultType>: NSPersistentStoreAsynchronousResult {
    /// The request that produced this result.
    public let fetchRequest: NSAsynchronousFetchRequest<ResultType>
    /// The fetched objects: `nil` until the fetch has finished, and after a failure.
    open internal(set) var finalResult: [ResultType]?

    init(
        fetchRequest: NSAsynchronousFetchRequest<ResultType>, context: NSManagedObjectContext,
        finalResult: [ResultType]? = nil
    ) {
        self.fetchRequest = fetchRequest
        self.finalResult = finalResult
        super.init(context: context)
    }
}
