import Foundation

extension NSManagedObject {
    /// Loads the object's values from its context's store (or its prefetched snapshot).
    package func _fireFault() {
        guard _isFault else { return }
        // A fault from a batched fetch loads its whole batch (again, if it was turned back into a fault).
        if !_hasSnapshot, let batch = _fetchBatch, batch.load(containing: self) { return }
        if _cachedRowIsFresh(), _takeSnapshotAsValues() {
            _isFault = false
            _awakeFromFetch()
            return
        }
        guard let context = _context else {
            // Apple raises "could not fulfill a fault" here; we log and make the object read as empty.
            reportMisuse("the fault for \(_objectID) cannot fire: its context is gone")
            _values = RowValues(for: _layout)
            _isFault = false
            return
        }
        context._fulfillFault(self)
    }

    /// Gives a fault its fetched row: the snapshot and, unless `asFault`, the values, as
    /// `_fireFault()` would from the snapshot. The row is moved in, not copied: a copy was a
    /// retain and a release of its storage per fetched row.
    @inline(__always)
    package final func _takeFetchedRow(_ values: consuming RowValues, asFault: Bool) {
        if asFault {
            _snapshot = consume values
            return
        }
        _storedValues = consume values
        _shareSnapshotWithValues()
        _isFault = false
        _awakeFromFetch()
    }

    /// Fills a fault from a store node's values (to-one slots hold object IDs, to-many `nil`).
    package func _fulfill(values: RowValues, version: Int64) {
        _version = version
        if _isFault {
            _storedValues = values
            _shareSnapshotWithValues()
            _isFault = false
            _awakeFromFetch()
        } else {
            _snapshot = values
        }
    }

    /// For a new object leaving its context unsaved (a rollback, or its deletion before any save):
    /// lets go of the objects its relationships hold, keeping its attributes. Related objects hold
    /// each other strongly, so a graph of new objects that a rollback drops would otherwise keep
    /// itself alive for good: its context no longer reaches it to break the cycle (`reset()`,
    /// `refresh`), and a long-running process would leak each such graph.
    package func _dropRelationshipsOnLeaving() {
        guard !_isFault else { return }
        for slot in _layout.relationshipSlots where _values[slot] != nil { _values[slot] = nil }
    }

    /// Turns the object back into a fault, dropping its values (and unsaved changes).
    package func _turnIntoFault() {
        guard !_isFault, !_isInserted else { return }
        willTurnIntoFault()
        _values = RowValues()
        _snapshot = nil
        _clearChangedSlots()
        _dropFetchedPropertyValues()
        _isFault = true
        didTurnIntoFault()
    }
}
