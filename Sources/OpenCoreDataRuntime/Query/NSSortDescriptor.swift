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
/// - Note: Linux: there is no Objective-C, so ``init(key:ascending:selector:)`` takes this module's
///   ``Selector`` (`Selector("localizedStandardCompare:")` or a string literal) and recognises
///   `compare:`, `caseInsensitiveCompare:`, `localizedCompare:`, `localizedCaseInsensitiveCompare:`
///   and `localizedStandardCompare:`; any other name sorts as `compare:` (Apple sends the message and
///   raises if the values do not implement it). Values that cannot be ordered against each other (a
///   string and a number) compare as equal instead of raising.
open class NSSortDescriptor: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the comparator closure is the caller's to keep
    // thread-safe, as with Apple's `Comparator`.

    /// The key path whose values are compared, or `nil` to compare the objects themselves.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// The method that compares the values: `compare:` unless given at init, `nil` with a comparator.
    ///
    /// Related Core Data documentation: [selector](https://developer.apple.com/documentation/foundation/nssortdescriptor/selector)
    public let selector: Selector?
    /// The Swift key path given at init, if any.
    ///
    /// Related Core Data documentation: [keyPath](https://developer.apple.com/documentation/foundation/nssortdescriptor/keypath)
    public let keyPath: AnyKeyPath?
    private let _comparator: ((Any, Any) -> ComparisonResult)?
    /// How ``selector`` orders values (`compare:` for names it does not know).
    package let _ocdSortSelector: SortSelector
    /// Whether the descriptor orders with a comparator closure (which a SQL store cannot run).
    package var _ocdHasComparator: Bool { _comparator != nil }

    /// Every field at once: for the key-path initializers and ``reversedSortDescriptor``.
    private init(
        key: String?, ascending: Bool, selector: Selector?, keyPath: AnyKeyPath?,
        comparator: ((Any, Any) -> ComparisonResult)?
    ) {
        self.key = key
        self.ascending = ascending
        self.selector = selector
        self.keyPath = keyPath
        _comparator = comparator
        _ocdSortSelector = selector.flatMap { SortSelector(name: Self.selectorName($0)) } ?? .compare
        super.init()
    }

    /// A descriptor comparing the values at `key` with the default ordering (`compare:`).
    ///
    /// Related Core Data documentation: [init(key:ascending:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/init(key:ascending:))
    public init(key: String?, ascending: Bool) {
        self.key = key
        self.ascending = ascending
        selector = Selector("compare:")
        keyPath = nil
        _comparator = nil
        _ocdSortSelector = .compare
        super.init()
    }

    /// A descriptor comparing the values at `key` with the method `selector` names.
    ///
    /// ```swift
    /// NSSortDescriptor(key: "name", ascending: true, selector: Selector("localizedCaseInsensitiveCompare:"))
    /// ```
    ///
    /// The SQLite store sorts these in SQL through collations that call the same string comparison.
    ///
    /// Related Core Data documentation: [init(key:ascending:selector:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/init(key:ascending:selector:))
    public init(key: String?, ascending: Bool, selector: Selector?) {
        self.key = key
        self.ascending = ascending
        self.selector = selector
        keyPath = nil
        _comparator = nil
        _ocdSortSelector = selector.flatMap { SortSelector(name: Self.selectorName($0)) } ?? .compare
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
        selector = nil
        keyPath = nil
        _comparator = cmptr
        _ocdSortSelector = .compare
        super.init()
    }

    /// A descriptor comparing the values at a Swift key path with the default ordering.
    ///
    /// ```swift
    /// request.sortDescriptors = [NSSortDescriptor(keyPath: \Country.updatedAt, ascending: false)]
    /// ```
    ///
    /// Related Core Data documentation: [init(keyPath:ascending:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/init(keypath:ascending:)-3zyh5)
    ///
    /// - Note: Linux: without Objective-C, ``key`` is derived from the key path's description
    ///   (`\Country.team?.name` gives `"team.name"`), so the key path must name stored properties,
    ///   as the `@objc` properties Apple requires. A key path with subscripts or computed parts stops
    ///   the program, as Apple's "could not extract a String from KeyPath" does.
    public convenience init<Root, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(
            key: SwiftKeyPathName.kvcKey(from: keyPath, root: Root.self), ascending: ascending, selector: Selector("compare:"),
            keyPath: keyPath, comparator: nil)
    }

    /// A descriptor comparing the values at a Swift key path with `cmptr`.
    ///
    /// Related Core Data documentation: [init(keyPath:ascending:comparator:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/init(keypath:ascending:comparator:))
    ///
    /// - Note: Linux: ``key`` is derived from the key path as in ``init(keyPath:ascending:)``.
    public convenience init<Root, Value>(
        keyPath: KeyPath<Root, Value>, ascending: Bool, comparator cmptr: @escaping (Any, Any) -> ComparisonResult
    ) {
        self.init(
            key: SwiftKeyPathName.kvcKey(from: keyPath, root: Root.self), ascending: ascending, selector: nil, keyPath: keyPath,
            comparator: cmptr)
    }

    private static func selectorName(_ selector: Selector) -> String {
        #if canImport(ObjectiveC)
        NSStringFromSelector(selector)
        #else
        selector.name
        #endif
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
        NSSortDescriptor(
            key: key, ascending: !ascending, selector: selector, keyPath: keyPath, comparator: _comparator)
    }

    /// The order of two objects by this descriptor (already reversed when descending).
    ///
    /// Related Core Data documentation: [compare(_:to:)](https://developer.apple.com/documentation/foundation/nssortdescriptor/compare(_:to:))
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        let v1 = key.map { PredicateKeyPath.value(of: object1, keyPath: $0) } ?? PredicateValues.normalize(object1)
        let v2 = key.map { PredicateKeyPath.value(of: object2, keyPath: $0) } ?? PredicateValues.normalize(object2)
        let order = _comparator.map { $0(PredicateValues.normalize(v1) ?? NSNull(), PredicateValues.normalize(v2) ?? NSNull()) }
            ?? _ocdSortSelector.order(v1, v2)
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
            && selector == other.selector
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
        "(\(key ?? "SELF"), \(ascending ? "ascending" : "descending"), \(_comparator == nil ? selector.map(Self.selectorName) ?? "compare:" : "comparator"))"
    }
}
