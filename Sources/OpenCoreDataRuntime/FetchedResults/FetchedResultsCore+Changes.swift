import Foundation

/// One change to a controller's results, in the index paths UIKit's batch updates expect: the old
/// path for deletes and a move's origin, the new path for inserts and a move's destination.
package struct FetchedResultsObjectChange {
    package let object: NSManagedObject
    package let type: NSFetchedResultsChangeType
    package let indexPath: IndexPath?
    package let newIndexPath: IndexPath?
}

/// One change to a controller's sections: a delete's index before the batch, an insert's after.
package struct FetchedResultsSectionChange {
    package let section: FetchedResultsSection
    package let index: Int
    package let type: NSFetchedResultsChangeType
}

/// A batch of changes, computed from one `NSManagedObjectContextObjectsDidChange` notification.
package struct FetchedResultsBatch {
    package var sectionChanges: [FetchedResultsSectionChange] = []
    package var objectChanges: [FetchedResultsObjectChange] = []
    /// The fetched objects' flat offsets before the batch (deletes, moves) and after it (inserts,
    /// moves), for the difference callback.
    var removals: [(offset: Int, object: NSManagedObject, movedTo: Int?)] = []
    var insertions: [(offset: Int, object: NSManagedObject, movedFrom: Int?)] = []
    package var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty }
}

extension FetchedResultsCore {
    /// Follows the context's change notification: applies its changes to the results and tells the
    /// delegate, if there is one (without one the controller does not track changes, as on Apple).
    func contextObjectsDidChange(_ note: Notification) {
        guard hasFetched, delegate != nil else { return }
        let info = note.userInfo ?? [:]
        let batch: FetchedResultsBatch
        if info[NSInvalidatedAllObjectsKey] != nil {  // the context was reset
            guard let refetched = try? context.fetch(request) else { return }
            batch = replaceAll(with: refetched.compactMap { $0 as? NSManagedObject })
        } else {
            let deleted = Self.objects(info[NSDeletedObjectsKey]) + Self.objects(info[NSInvalidatedObjectsKey])
            let changed = Self.objects(info[NSInsertedObjectsKey]) + Self.objects(info[NSUpdatedObjectsKey])
                + Self.objects(info[NSRefreshedObjectsKey])
            guard !deleted.isEmpty || !changed.isEmpty else { return }
            batch = apply(changed: changed, deleted: deleted)
        }
        report(batch)
    }

    /// The objects of a notification's set, whatever collection holds them.
    static func objects(_ value: Any?) -> [NSManagedObject] {
        switch value {
        case nil: return []
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [NSManagedObject]: return array
        case let set as Set<AnyHashable>: return set.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
        case let array as [Any]: return array.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }

    // MARK: Computing a batch

    /// Applies changed objects (inserted, updated or refreshed: each enters, leaves, moves or
    /// changes in place) and deleted ones to the results, and returns what changed.
    func apply(changed: [NSManagedObject], deleted: [NSManagedObject]) -> FetchedResultsBatch {
        struct Leaving { let object: NSManagedObject; let section: FetchedResultsSection; let row: Int }
        struct Entering { let object: NSManagedObject; let keys: [Any?]; let sectionName: String }
        struct Moving { let object: NSManagedObject; let section: FetchedResultsSection; let row: Int; let keys: [Any?]; let sectionName: String }

        // 1. Classify each object against the results as they are, and find the old places.
        var seen = Set<ObjectIdentifier>()
        var leaving: [Leaving] = []
        var entering: [Entering] = []
        var moving: [Moving] = []
        var inPlace: [(object: NSManagedObject, section: FetchedResultsSection, row: Int)] = []
        let deletedIDs = Set(deleted.map(ObjectIdentifier.init))
        for object in deleted + changed {
            let id = ObjectIdentifier(object)
            guard seen.insert(id).inserted else { continue }
            let placement = placements[id]
            let member = !deletedIDs.contains(id) && isMember(object)
            guard let placement else {
                if member { entering.append(Entering(object: object, keys: keys(of: object), sectionName: sectionName(of: object))) }
                continue
            }
            guard let row = row(of: object, placement) else { continue }
            guard member else {
                leaving.append(Leaving(object: object, section: placement.section, row: row))
                continue
            }
            let newKeys = keys(of: object)
            let name = sectionName(of: object)
            if name == placement.section.name, order(newKeys, placement.keys) == .orderedSame {
                inPlace.append((object, placement.section, row))
                placements[id]?.keys = newKeys  // orders the same
            } else {
                moving.append(Moving(object: object, section: placement.section, row: row, keys: newKeys, sectionName: name))
            }
        }
        if leaving.isEmpty, entering.isEmpty, moving.isEmpty, inPlace.isEmpty { return FetchedResultsBatch() }

        let oldSectionIndex = Dictionary(uniqueKeysWithValues: sections.enumerated().map { (ObjectIdentifier($1), $0) })
        let oldOffsets = sectionOffsets()
        func oldFlat(_ section: FetchedResultsSection, _ row: Int) -> Int { oldOffsets[oldSectionIndex[ObjectIdentifier(section)]!] + row }
        func oldPath(_ section: FetchedResultsSection, _ row: Int) -> IndexPath { IndexPath(indexes: [oldSectionIndex[ObjectIdentifier(section)]!, row]) }

        // 2. Take out the objects that leave or move, the last rows first.
        var removals: [(section: FetchedResultsSection, row: Int)] = leaving.map { ($0.section, $0.row) } + moving.map { ($0.section, $0.row) }
        removals.sort { a, b in
            a.section === b.section ? a.row > b.row : oldSectionIndex[ObjectIdentifier(a.section)]! > oldSectionIndex[ObjectIdentifier(b.section)]!
        }
        for removal in removals {
            if removal.section.items.count > 0, removal.section.anchorKeys == nil { removal.section.anchorKeys = placedKeys(removal.section, 0) }
            removal.section.items.remove(at: removal.row)
        }
        for item in leaving { placements[ObjectIdentifier(item.object)] = nil }

        // 3. Put in the objects that enter or move, each after the objects ordered before or with it.
        var newSections: Set<ObjectIdentifier> = []
        func insert(_ object: NSManagedObject, keys: [Any?], sectionName: String) {
            let section = sectionByName[sectionName] ?? {
                let created = addSection(named: sectionName, at: sectionInsertionIndex(for: keys))
                newSections.insert(ObjectIdentifier(created))
                return created
            }()
            section.items.insert(object, at: insertionRow(for: keys, in: section))
            placements[ObjectIdentifier(object)] = Placement(keys: keys, section: section)
        }
        for item in entering { insert(item.object, keys: item.keys, sectionName: item.sectionName) }
        for item in moving { insert(item.object, keys: item.keys, sectionName: item.sectionName) }

        // 4. Sections left empty go (the one section of a controller without a section key path stays).
        var batch = FetchedResultsBatch()
        for section in sections { section.anchorKeys = nil }
        if sectionNameKeyPath != nil {
            for (index, section) in sections.enumerated().reversed() where section.items.isEmpty {
                sections.remove(at: index)
                sectionByName[section.name] = nil
                batch.sectionChanges.append(
                    FetchedResultsSectionChange(section: section, index: oldSectionIndex[ObjectIdentifier(section)]!, type: .delete))
            }
        }
        noteChange()

        // 5. New places.
        let newSectionIndex = Dictionary(uniqueKeysWithValues: sections.enumerated().map { (ObjectIdentifier($1), $0) })
        let newOffsets = sectionOffsets()
        for (index, section) in sections.enumerated() where newSections.contains(ObjectIdentifier(section)) {
            batch.sectionChanges.append(FetchedResultsSectionChange(section: section, index: index, type: .insert))
        }
        func newPlace(_ object: NSManagedObject) -> (path: IndexPath, flat: Int) {
            let placement = placements[ObjectIdentifier(object)]!
            let sectionIndex = newSectionIndex[ObjectIdentifier(placement.section)]!
            let row = row(of: object, placement)!
            return (IndexPath(indexes: [sectionIndex, row]), newOffsets[sectionIndex] + row)
        }

        // 6. A moved object whose place among the objects that stay is the same, and whose order
        // with the other such objects is kept, changed in place: an update, not a move.
        let enteringPlaces = entering.map { newPlace($0.object) }
        let movingNew = moving.map { newPlace($0.object) }
        let movingOldFlat = moving.map { oldFlat($0.section, $0.row) }
        let unstableOld = (leaving.map { oldFlat($0.section, $0.row) } + movingOldFlat).sorted()
        let unstableNew = (enteringPlaces.map(\.flat) + movingNew.map(\.flat)).sorted()
        var keptInPlace = Set<Int>()  // indexes into `moving`
        var gaps: [Int: [Int]] = [:]  // stable objects before -> indexes into `moving`
        for (i, item) in moving.enumerated() where item.sectionName == item.section.name {
            let rankOld = movingOldFlat[i] - Self.countBelow(movingOldFlat[i], in: unstableOld)
            let rankNew = movingNew[i].flat - Self.countBelow(movingNew[i].flat, in: unstableNew)
            if rankOld == rankNew { gaps[rankOld, default: []].append(i) }
        }
        for (_, members) in gaps {
            let byOld = members.sorted { movingOldFlat[$0] < movingOldFlat[$1] }
            for kept in Self.longestIncreasing(byOld.map { movingNew[$0].flat }) { keptInPlace.insert(byOld[kept]) }
        }

        // 7. The changes.
        for item in leaving {
            let from = oldFlat(item.section, item.row)
            batch.objectChanges.append(FetchedResultsObjectChange(
                object: item.object, type: .delete, indexPath: oldPath(item.section, item.row), newIndexPath: nil))
            batch.removals.append((from, item.object, nil))
        }
        for (item, place) in zip(entering, enteringPlaces) {
            batch.objectChanges.append(FetchedResultsObjectChange(object: item.object, type: .insert, indexPath: nil, newIndexPath: place.path))
            batch.insertions.append((place.flat, item.object, nil))
        }
        for (i, item) in moving.enumerated() {
            let isMove = !keptInPlace.contains(i)
            batch.objectChanges.append(FetchedResultsObjectChange(
                object: item.object, type: isMove ? .move : .update, indexPath: oldPath(item.section, item.row),
                newIndexPath: movingNew[i].path))
            if isMove {
                batch.removals.append((movingOldFlat[i], item.object, movingNew[i].flat))
                batch.insertions.append((movingNew[i].flat, item.object, movingOldFlat[i]))
            }
        }
        for item in inPlace {
            batch.objectChanges.append(FetchedResultsObjectChange(
                object: item.object, type: .update, indexPath: oldPath(item.section, item.row), newIndexPath: newPlace(item.object).path))
        }
        return batch
    }

    /// Replaces the results with `objects` (a fetch after the context was reset): every old object
    /// and section is deleted, every new one inserted.
    func replaceAll(with objects: [NSManagedObject]) -> FetchedResultsBatch {
        var batch = FetchedResultsBatch()
        var flat = 0
        for (sectionIndex, section) in sections.enumerated() {
            if sectionNameKeyPath != nil {
                batch.sectionChanges.append(FetchedResultsSectionChange(section: section, index: sectionIndex, type: .delete))
            }
            for (row, object) in section.items.enumerated() {
                batch.objectChanges.append(FetchedResultsObjectChange(
                    object: object, type: .delete, indexPath: IndexPath(indexes: [sectionIndex, row]), newIndexPath: nil))
                batch.removals.append((flat, object, nil))
                flat += 1
            }
        }
        load(objects)
        flat = 0
        for (sectionIndex, section) in sections.enumerated() {
            if sectionNameKeyPath != nil {
                batch.sectionChanges.append(FetchedResultsSectionChange(section: section, index: sectionIndex, type: .insert))
            }
            for (row, object) in section.items.enumerated() {
                batch.objectChanges.append(FetchedResultsObjectChange(
                    object: object, type: .insert, indexPath: nil, newIndexPath: IndexPath(indexes: [sectionIndex, row])))
                batch.insertions.append((flat, object, nil))
                flat += 1
            }
        }
        return batch
    }

    /// Where each section starts in the flat list of objects.
    private func sectionOffsets() -> [Int] {
        var offsets: [Int] = []
        offsets.reserveCapacity(sections.count)
        var total = 0
        for section in sections {
            offsets.append(total)
            total += section.items.count
        }
        return offsets
    }

    /// The index for a new section whose first object has `keys`: after every section whose first
    /// object is ordered before it or with it (sections emptied by this batch by their old first keys).
    private func sectionInsertionIndex(for keys: [Any?]) -> Int {
        var low = 0, high = sections.count
        while low < high {
            let mid = (low + high) / 2
            let section = sections[mid]
            let first = section.items.isEmpty ? section.anchorKeys : placedKeys(section, 0)
            if let first, order(first, keys) == .orderedDescending { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// How many of `sorted` are below `value`.
    private static func countBelow(_ value: Int, in sorted: [Int]) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The indexes of a longest strictly increasing subsequence of `values`.
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // index into values of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var result: [Int] = []
        var index = tails.last ?? -1
        while index >= 0 {
            result.append(index)
            index = previous[index]
        }
        return result.reversed()
    }

    // MARK: Reporting

    /// Tells the delegate: through `controller(_:didChangeContentWith:)` if it implements it, else
    /// will-change, the section changes, the object changes (deletes, inserts, moves, updates) and
    /// did-change.
    func report(_ batch: FetchedResultsBatch) {
        guard !batch.isEmpty, let delegate, let view = makeDelegateView?() else { return }
        differenceCallbackIsDefault = false
        delegate.controller(view, didChangeContentWith: difference(of: batch))
        if !differenceCallbackIsDefault { return }
        delegate.controllerWillChangeContent(view)
        for change in batch.sectionChanges where change.type == .delete {
            delegate.controller(view, didChange: change.section, atSectionIndex: change.index, for: .delete)
        }
        for change in batch.sectionChanges where change.type == .insert {
            delegate.controller(view, didChange: change.section, atSectionIndex: change.index, for: .insert)
        }
        for change in batch.objectChanges {
            delegate.controller(view, didChange: change.object, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
        }
        delegate.controllerDidChangeContent(view)
    }

    /// The batch as a difference of the fetched objects' IDs (updates in place are not part of it).
    private func difference(of batch: FetchedResultsBatch) -> CollectionDifference<NSManagedObjectID> {
        var changes: [CollectionDifference<NSManagedObjectID>.Change] = []
        for removal in batch.removals {
            changes.append(.remove(offset: removal.offset, element: removal.object.objectID, associatedWith: removal.movedTo))
        }
        for insertion in batch.insertions {
            changes.append(.insert(offset: insertion.offset, element: insertion.object.objectID, associatedWith: insertion.movedFrom))
        }
        // Valid by construction (distinct offsets, moves paired); an empty one is always valid.
        return CollectionDifference(changes) ?? CollectionDifference([])!
    }
}
