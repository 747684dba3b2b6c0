import Foundation

/// A fetch's results as the package's stores hand them to the context: managed objects as an
/// `[NSManagedObject]` when that is what the fetch returns, anything else (IDs, dictionaries, a
/// count, a custom store's answer) as `[Any]`.
///
/// Why: an `[Any]` holds each object in a 32-byte existential, which `fetch(_:)` then took apart
/// to build its `[T]`: 3.2 MB and a pass over every row at 100,000 rows (benchmark cases 2 and 3),
/// and a second array per lookup (case 4).
package enum FetchResults {
    case objects([NSManagedObject])
    case values([Any])

    /// The results as `[Any]`, as `execute(_:with:)` returns them.
    package var values: [Any] {
        switch self {
        case .objects(let objects): objects.map { $0 as Any }
        case .values(let values): values
        }
    }

    /// The managed objects among the results.
    package var managedObjects: [NSManagedObject] {
        switch self {
        case .objects(let objects): objects
        case .values(let values): values.compactMap { $0 as? NSManagedObject }
        }
    }

    package var count: Int {
        switch self {
        case .objects(let objects): objects.count
        case .values(let values): values.count
        }
    }
}
