import Foundation

/// A fetch's rows of one entity, decoded and waiting to become objects: a store fills it row by
/// row and hands it to ``NSManagedObjectContext/_registerFetchedRows(_:offer:layout:asFault:into:)``
/// when it is full, when the rows' entity changes and at the end.
///
/// Why batches: one row at a time, the context's registry took its lock three times a row (look
/// the row up, file its new object, and the object's `deinit`). A batch is looked up under one
/// lock and its new objects filed under one more, so a fetched row takes the lock once (in its
/// object's `deinit`). `perf`, case 3: the registry was about 12% of a large fetch's samples, most
/// of it the lock's atomic operations.
package struct FetchedRowBatch: ~Copyable {
    /// One row: its primary key and `Z_OPT`, its values, and (while the batch is being registered)
    /// its object, retained, and whether that object was made for it. The object is held as
    /// `Unmanaged`: read from this memory as a reference, it was retained and released around every
    /// use (four pairs a row, callgrind case 2).
    fileprivate struct Row {
        var key: Int64
        var version: Int64
        var values: RowValues
        var object: Unmanaged<NSManagedObject>? = nil
        var isNew = false
    }

    /// Rows a batch holds at most: a large fetch takes the registry's lock about twice per this
    /// many rows.
    package static let defaultCapacity = 64

    fileprivate let rows: UnsafeMutablePointer<Row>
    package let capacity: Int
    /// Rows held (their `values` initialized, `object` `nil`).
    package fileprivate(set) var count = 0

    /// An empty batch of at most `capacity` rows (a fetch limited to fewer rows asks for fewer).
    package init(capacity: Int) {
        self.capacity = Swift.max(1, Swift.min(capacity, Self.defaultCapacity))
        rows = .allocate(capacity: self.capacity)
    }

    deinit {
        rows.deinitialize(count: count)  // rows left by a fetch that threw
        rows.deallocate()
    }

    package var isEmpty: Bool { count == 0 }
    package var isFull: Bool { count == capacity }

    /// Adds a row; the batch must not be full.
    @inline(__always)
    package mutating func append(key: Int64, version: Int64, values: consuming RowValues) {
        (rows + count).initialize(to: Row(key: key, version: version, values: values))
        count += 1
    }
}

extension NSManagedObjectContext {
    /// Turns a batch of fetched rows of `offer`'s entity into objects, appended to `objects` in row
    /// order, and empties the batch: each row's registered object (filled with the row if it is a
    /// fault), or a new fault registered for it, given the row's values (``_registerFetchedObject``
    /// for one row at a time).
    ///
    /// The registry is looked up for the whole batch under one lock, the new faults are made, then
    /// filed under one lock; only then does any object take its row (which runs `awakeFromFetch()`
    /// for an object fetched as a full object), so code that runs there finds every object of the
    /// batch registered. A row that comes twice in one batch gets the first one's object.
    package func _registerFetchedRows(
        _ batch: inout FetchedRowBatch, offer: FaultConstruction.RowOffer, layout: EntityLayout, asFault: Bool,
        into objects: inout [NSManagedObject]
    ) {
        let count = batch.count
        guard count > 0 else { return }
        let rows = batch.rows
        let store = offer.store
        let root = layout.rootID
        // Registered objects first, one lock.
        let missing = registry.objects(
            store: store, root: root, count: count, key: { rows[$0].key }, found: { rows[$0].object = $1 })
        if missing > 0 {
            let cls = layout.managedObjectClass
            for index in 0..<count where rows[index].object == nil {
                offer.key = rows[index].key
                let object = NSManagedObject.makeFault(class: cls, row: offer, context: self)
                object._version = rows[index].version
                rows[index].object = Unmanaged.passRetained(consume object)
                rows[index].isNew = true
            }
            // The new faults filed, one lock. A fault whose row has an object by then (the same row
            // earlier in the batch) gives way to it, and is released here, after the lock.
            let registered = registry.registerFetched(
                count: count, isNew: { rows[$0].isNew }, object: { rows[$0].object.unsafelyUnwrapped })
            for (index, object) in registered {
                rows[index].object.unsafelyUnwrapped.release()
                rows[index].object = object
                rows[index].isNew = false
            }
            if retainsRegisteredObjects {
                for index in 0..<count where rows[index].isNew {
                    _retainRegistered(rows[index].object.unsafelyUnwrapped.takeUnretainedValue())
                }
            }
        }
        // No `reserveCapacity(objects.count + count)`: reserving an exact size each batch reallocated
        // the array every batch, copying it whole (appending grows it geometrically).
        for index in 0..<count {
            let row = (rows + index).move()
            let object = row.object.unsafelyUnwrapped.takeRetainedValue()
            if object._isFault {
                object._version = row.version
                object._takeFetchedRow(row.values, asFault: asFault)
            }
            objects.append(consume object)
        }
        batch.count = 0
    }
}
