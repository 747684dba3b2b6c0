import Foundation

/// How to order objects: by the value at a key path, ascending or descending.
///
/// ```swift
/// request.sortDescriptors = [NSSortDescriptor(key: "lastName", ascending: true),
///                            NSSortDescriptor(key: "age", ascending: false)]
/// let order = NSSortDescriptor(key: "age", ascending: true).compare(["age": 3], to: ["age": 5]) // .orderedAscending
/// ```
///
/// Values order as in predicate comparisons: numbers numerically across types, strings by Unicode
/// order, dates chronologically; `nil` sorts before any value when ascending, as on Apple platforms.
///
/// Related Core Data documentation: [NSSortDescriptor](https://developer.apple.com/documentation/foundation/nssortdescriptor)
///
/// - Note: Linux: selector-based descriptors (`init(key:ascending:selector:)`, e.g.
///   `localizedStandardCompare:`) and Swift key-path initializers are not available; use
///   ``init(key:ascending:comparator:)``. Values that cannot be ordered against each other
///   (a string and a number) compare as equal instead of raising.
open class NSSortDescriptor: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the comparator closure is the caller's to keep
    // thread-safe, as with Apple's `Comparator`.

    /// The key path whose values are compared, or `nil` to compare the objects themselves.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    private let _comparator: ((Any, Any) -> ComparisonResult)?
    /// Whether the descriptor orders with a comparator closure (which a SQL store cannot run).
    package var _ocdHasComparator: Bool { _comparator != nil }

    /// A descriptor comparing the values at `key` with the default ordering.
    ///
    /// Related Core Data documentation: [init(key:ascending:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/init(key:ascending:))
    public init(key: String?, ascending: Bool) {
        self.key = key
        self.ascending = ascending
        _comparator = nil
        super.init()
    }

    /// A descriptor comparing the values at `key` with `cmptr` (which receives `NSNull()` for nil values).
    ///
    /// Related Core Data documentation: [init(key:ascending:comparator:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/init(key:ascending:comparator:))
    ///
    /// - Note: SQL stores cannot run a comparator; like Core Data's SQLite store, they should refuse
    ///   such descriptors or sort in memory.
    public init(key: String?, ascending: Bool, comparator cmptr: @escaping (Any, Any) -> ComparisonResult) {
        self.key = key
        self.ascending = ascending
        _comparator = cmptr
        super.init()
    }

    /// The comparator given at init, or the default ordering.
    ///
    /// Related Core Data documentation: [comparator](https://developer.apple.com/documentation/foundation/nssortdescriptor/comparator)
    open var comparator: (Any, Any) -> ComparisonResult {
        _comparator ?? { NSSortDescriptor.defaultOrder($0, $1) }
    }

    /// The same descriptor with the opposite direction.
    ///
    /// Related Core Data documentation: [reversedSortDescriptor](https://developer.apple.com/documentation/foundation/nssortdescriptor/reversedsortdescriptor)
    open var reversedSortDescriptor: Any {
        if let _comparator { return NSSortDescriptor(key: key, ascending: !ascending, comparator: _comparator) }
        return NSSortDescriptor(key: key, ascending: !ascending)
    }

    /// The order of two objects by this descriptor (already reversed when descending).
    ///
    /// Related Core Data documentation: [compare(_:to:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/compare(_:to:))
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        let v1 = key.map { PredicateKeyPath.value(of: object1, keyPath: $0) } ?? PredicateValues.normalize(object1)
        let v2 = key.map { PredicateKeyPath.value(of: object2, keyPath: $0) } ?? PredicateValues.normalize(object2)
        let order = _comparator.map { $0(PredicateValues.normalize(v1) ?? NSNull(), PredicateValues.normalize(v2) ?? NSNull()) }
            ?? Self.defaultOrder(v1, v2)
        guard !ascending else { return order }
        switch order {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// `compare:` semantics: nil first, then predicate value ordering; incomparable values are equal.
    package static func defaultOrder(_ a: Any?, _ b: Any?) -> ComparisonResult {
        let a = PredicateValues.normalize(a), b = PredicateValues.normalize(b)
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        default: return PredicateValues.compare(a, b) ?? .orderedSame
        }
    }

    /// Kept for source compatibility: evaluation is always allowed here.
    ///
    /// Related Core Data documentation: [allowEvaluation()](https://developer.apple.com/documentation/foundation/nssortdescriptor/allowevaluation())
    open func allowEvaluation() {}

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSSortDescriptor else { return false }
        return key == other.key && ascending == other.ascending && (_comparator == nil) == (other._comparator == nil)
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(key)
        hasher.combine(ascending)
        return hasher.finalize()
    }

    /// Apple's form: `(name, ascending, compare:)`.
    /// Returns `self`: instances are immutable.
    ///
    /// Related Core Data documentation: [NSCopying](https://developer.apple.com/documentation/foundation/nscopying)
    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var description: String {
        "(\(key ?? "SELF"), \(ascending ? "ascending" : "descending"), \(_comparator == nil ? "compare:" : "comparator"))"
    }
}
