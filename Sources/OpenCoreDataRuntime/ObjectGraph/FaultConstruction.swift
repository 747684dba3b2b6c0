/// Hands a fault's identity to `NSManagedObject.init(entity:insertInto:)` (which subclasses may
/// override, so it cannot take it as a parameter) through a thread-local slot: the object is made
/// on the calling thread, between `offer` and `withdraw`.
package enum FaultConstruction {
    /// A fetched row's identity without an ID: its entity, store and primary key. A fetch makes
    /// one and reuses it for each row.
    package final class RowOffer {
        // Set for each row and read while its object is made, on one thread: no run-time
        // exclusivity checks (about 600 instructions a row, callgrind case 2).
        package let store: ObjectIDStore
        @exclusivity(unchecked) package var entity: NSEntityDescription
        @exclusivity(unchecked) package var key: Int64 = 0

        package init(store: ObjectIDStore, entity: NSEntityDescription) {
            self.store = store
            self.entity = entity
        }
    }

    /// The identity taken, unretained: the offering code holds it while the object is made (a
    /// retained one was two reference-count operations per fetched row).
    enum Identity {
        case objectID(Unmanaged<NSManagedObjectID>)
        case row(Unmanaged<RowOffer>)
    }

    private static let slot = ThreadLocalReference<AnyObject>(.faultConstruction)

    static func offer(_ id: NSManagedObjectID) { slot.set(id) }

    static func offer(_ row: RowOffer) { slot.set(row) }

    static func withdraw() { slot.set(nil) }

    /// The offered identity if it is one of `entity`'s (an object of another entity made inside an
    /// overriding initializer does not take it); taking it empties the slot.
    static func take(for entity: NSEntityDescription) -> Identity? {
        guard let offered = slot.unretained else { return nil }
        let raw = offered.toOpaque()
        if offered._withUnsafeGuaranteedRef({ type(of: $0) == NSManagedObjectID.self }) {
            let id = Unmanaged<NSManagedObjectID>.fromOpaque(raw)
            guard id._withUnsafeGuaranteedRef({ $0.entity === entity }) else { return nil }
            slot.set(nil)
            return .objectID(id)
        }
        let row = Unmanaged<RowOffer>.fromOpaque(raw)
        guard row._withUnsafeGuaranteedRef({ $0.entity === entity }) else { return nil }
        slot.set(nil)
        return .row(row)
    }
}
