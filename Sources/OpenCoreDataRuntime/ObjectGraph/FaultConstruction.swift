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
        @exclusivity(unchecked) package var entity: NSEntityDescription {
            didSet { (entityRef, layoutRef) = Self.references(of: entity) }
        }
        @exclusivity(unchecked) package var key: Int64 = 0
        /// `entity` and its layout, unretained (`entity` holds both): read through a stored
        /// reference, each was retained and released around its supply's `take`.
        @exclusivity(unchecked) private var entityRef: Unmanaged<NSEntityDescription>
        @exclusivity(unchecked) private var layoutRef: Unmanaged<EntityLayout>

        /// References handed to the objects made for the rows (see ``ReferenceSupply``).
        @exclusivity(unchecked) private var entities = ReferenceSupply<NSEntityDescription>()
        @exclusivity(unchecked) private var layouts = ReferenceSupply<EntityLayout>()
        @exclusivity(unchecked) private var stores = ReferenceSupply<ObjectIDStore>()
        @exclusivity(unchecked) private var links = ReferenceSupply<ContextLink>()

        package init(store: ObjectIDStore, entity: NSEntityDescription) {
            self.store = store
            self.entity = entity
            (entityRef, layoutRef) = Self.references(of: entity)
        }

        private static func references(
            of entity: NSEntityDescription
        ) -> (Unmanaged<NSEntityDescription>, Unmanaged<EntityLayout>) {
            (Unmanaged.passUnretained(entity), entity.withLayout { Unmanaged.passUnretained($0) })
        }

        /// The row's entity, owned: the argument of the initializer of the row's object.
        @inline(__always)
        func takeEntity() -> NSEntityDescription { entities.take(entityRef) }

        /// The row's entity's layout, owned, for its object's `_layout`.
        @inline(__always)
        func takeLayout() -> EntityLayout { layouts.take(layoutRef) }

        /// The row's store, owned, for its object's `_identity`.
        @inline(__always)
        func takeStore() -> ObjectIDStore { stores.take(Unmanaged.passUnretained(store)) }

        /// `context`'s link, owned, for the row's object's `_contextLink`.
        @inline(__always)
        func takeLink(of context: NSManagedObjectContext) -> ContextLink {
            links.take(Unmanaged.passUnretained(context._link))
        }

        /// Releases the references retained for rows and not handed out (the fetch is done).
        package func releaseUnused() {
            entities.releaseUnused()
            layouts.releaseUnused()
            stores.releaseUnused()
            links.releaseUnused()
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
