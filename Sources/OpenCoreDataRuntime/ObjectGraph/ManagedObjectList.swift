import Foundation

/// The kind of change to a to-many relationship.
///
/// Related Core Data documentation: [NSKeyValueSetMutationKind](https://developer.apple.com/documentation/foundation/nskeyvaluesetmutationkind)
public enum NSKeyValueSetMutationKind: UInt, Sendable {
    case union = 1
    case minus = 2
    case intersect = 3
    case set = 4
}

/// The objects of a loaded to-many relationship.
package enum ManagedObjectList {
    case unordered(Set<NSManagedObject>)
    case ordered([NSManagedObject])

    package var count: Int {
        switch self {
        case .unordered(let s): s.count
        case .ordered(let a): a.count
        }
    }
    package var objects: [NSManagedObject] {
        switch self {
        case .unordered(let s): Array(s)
        case .ordered(let a): a
        }
    }
    package func contains(_ object: NSManagedObject) -> Bool {
        switch self {
        case .unordered(let s): s.contains(object)
        case .ordered(let a): a.contains { $0 === object }
        }
    }
    package mutating func insert(_ object: NSManagedObject) {
        switch self {
        // `self` lets go of the storage first, so the insert does not copy it (O(1), not O(n)).
        case .unordered(var s): self = .ordered([]); s.insert(object); self = .unordered(s)
        case .ordered(var a):
            self = .ordered([])
            if !a.contains(where: { $0 === object }) { a.append(object) }
            self = .ordered(a)
        }
    }
    package mutating func remove(_ object: NSManagedObject) {
        switch self {
        case .unordered(var s): self = .ordered([]); s.remove(object); self = .unordered(s)
        case .ordered(var a): self = .ordered([]); a.removeAll { $0 === object }; self = .ordered(a)
        }
    }
    /// The value `value(forKey:)` returns: `Set<NSManagedObject>` or `NSOrderedSet`.
    package var publicValue: Any {
        switch self {
        case .unordered(let s): s
        case .ordered(let a): NSOrderedSet(array: a)
        }
    }
}
