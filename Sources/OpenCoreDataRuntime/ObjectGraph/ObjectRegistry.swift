import Foundation

/// A context's registered objects by object ID, held weakly (unchanged objects the app drops are
/// released; the context's change sets keep the changed ones alive).
///
/// Keys compare object IDs directly: `NSManagedObjectID` as a dictionary key would go through
/// `NSObject`'s `isEqual(_: Any?)`, a dynamic cast per probe, on every fetch and insert.
package struct ObjectRegistry {
    private struct Key: Hashable {
        let id: NSManagedObjectID
        func hash(into hasher: inout Hasher) { hasher.combine(id.hash) }
        static func == (lhs: Key, rhs: Key) -> Bool { lhs.id._isSameID(as: rhs.id) }
    }

    private var entries: [Key: WeakObject] = [:]

    package init() {}

    package subscript(id: NSManagedObjectID) -> WeakObject? {
        get { entries[Key(id: id)] }
        set { entries[Key(id: id)] = newValue }
    }

    package var count: Int { entries.count }
    package var values: some Collection<WeakObject> { entries.values }

    package mutating func removeAll() { entries.removeAll() }

    /// Drops the entries whose objects are gone, in place (the table is not rebuilt when all are alive,
    /// as when a context inserts or fetches many objects at once).
    package mutating func sweep() {
        var gone: [Key] = []
        for (key, entry) in entries where entry.object == nil { gone.append(key) }
        for key in gone { entries.removeValue(forKey: key) }
    }
}

/// A weak reference kept in a context's registry.
package struct WeakObject {
    package weak var object: NSManagedObject?
    package init(_ object: NSManagedObject) { self.object = object }
}
