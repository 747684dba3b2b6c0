import Foundation

/// A fetch's results as the package's stores hand them to the context: managed objects as an
/// `[NSManagedObject]` when that is what the fetch returns, anything else (IDs, dictionaries, a
/// count, a custom store's answer) as `[Any]`.
///
/// Why: an `[Any]` holds each object in a 32-byte existential, which `fetch(_:)` then took apart
/// to build its `[T]`: 3.2 MB and a pass over every row at 100,000 rows (benchmark cases 2 and 3),
/// and a second array per lookup (case 4).
package enum FetchResults {
    /// Managed objects; `ofClass` is their class when the store knows they all are exactly of it
    /// (so `fetch(_:)` can hand them over as `[T]` without reading every object's class word: a
    /// cache miss per row in a large fetch, about 2% of case 2's time).
    case objects([NSManagedObject], ofClass: ObjectIdentifier? = nil)
    case values([Any])

    /// The results as `[Any]`, as `execute(_:with:)` returns them.
    package var values: [Any] {
        switch self {
        case .objects(let objects, _): objects.map { $0 as Any }
        case .values(let values): values
        }
    }

    /// The managed objects among the results.
    package var managedObjects: [NSManagedObject] {
        switch self {
        case .objects(let objects, _): objects
        case .values(let values): values.compactMap { $0 as? NSManagedObject }
        }
    }

    package var count: Int {
        switch self {
        case .objects(let objects, _): objects.count
        case .values(let values): values.count
        }
    }
}
