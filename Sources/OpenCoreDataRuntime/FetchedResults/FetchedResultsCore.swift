import Foundation

/// A section of a fetched results controller: its objects in order.
///
/// Not `Sendable`: used on its controller's context queue.
package final class FetchedResultsSection: NSFetchedResultsSectionInfo {
    package let name: String
    package let indexTitle: String?
    /// The objects, in the request's order.
    package var items: [NSManagedObject]
    /// The sort keys of the first object when the section was emptied during a batch, so that a
    /// new section can still be placed against it (see `FetchedResultsCore+Changes.swift`).
    var anchorKeys: [Any?]?

    init(name: String, indexTitle: String?, items: [NSManagedObject] = []) {
        self.name = name
        self.indexTitle = indexTitle
        self.items = items
    }

    package var numberOfObjects: Int { items.count }
    package var objects: [Any]? { items }
}

/// The state of an ``NSFetchedResultsController``, apart from its result type: the sections, where
/// each object sits, and the fetch settings the changes are checked against.
///
/// Not `Sendable`: used on its context's queue (the notifications it follows are posted there).
package final class FetchedResultsCore {
    /// Where an object sits: its section, and its sort keys as last placed (the binary search that
    /// finds it again needs the keys it was placed with, not the ones it has after a change).
    struct Placement {
        var keys: [Any?]
        var section: FetchedResultsSection
    }

    let request: NSFetchRequest<any NSFetchRequestResult>
    let context: NSManagedObjectContext
    let sectionNameKeyPath: String?
    let cacheName: String?
    weak var delegate: (any NSFetchedResultsControllerDelegate)?
    /// The controller typed for the delegate (the owner itself when its type is the erased one).
    var makeDelegateView: (() -> NSFetchedResultsController<any NSFetchRequestResult>)?
    /// The owner's `sectionIndexTitle(forSectionName:)` (which a subclass may override).
    var ownerIndexTitle: ((String) -> String?)?
    /// Set by the delegate protocol's default `controller(_:didChangeContentWith:)`.
    package var differenceCallbackIsDefault = false

    private(set) var hasFetched = false
    /// Counts changes to the results, so views of them can be cached.
    private(set) var version = 0
    var sections: [FetchedResultsSection] = []
    var sectionByName: [String: FetchedResultsSection] = [:]
    var placements: [ObjectIdentifier: Placement] = [:]
    /// The fetch's settings, as of ``performFetch()``.
    private(set) var sortDescriptors: [NSSortDescriptor] = []
    private(set) var entity: NSEntityDescription?
    private(set) var predicate: NSPredicate?
    private(set) var includesSubentities = true
    private var observer: (any NSObjectProtocol)?
    private var cachedFlatObjects: (version: Int, objects: [NSManagedObject])?

    init(request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext, sectionNameKeyPath: String?,
         cacheName: String?) {
        self.request = request
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    /// The fetched objects in order, across sections.
    var flatObjects: [NSManagedObject] {
        if let cachedFlatObjects, cachedFlatObjects.version == version { return cachedFlatObjects.objects }
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(placements.count)
        for section in sections { objects.append(contentsOf: section.items) }
        cachedFlatObjects = (version, objects)
        return objects
    }

    func noteChange() { version &+= 1 }

    // MARK: Fetching

    func performFetch() throws {
        guard let sorts = request.sortDescriptors, !sorts.isEmpty else {
            throw OpenCoreDataError(
                .coreDataError, "an NSFetchedResultsController needs a fetch request with sort descriptors",
                entityName: request.entityName)
        }
        guard request.resultType == .managedObjectResultType else {
            throw OpenCoreDataError(
                .coreDataError, "an NSFetchedResultsController's fetch request must return managed objects",
                entityName: request.entityName)
        }
        let results = try context.fetch(request)
        sortDescriptors = sorts
        predicate = request.predicate
        includesSubentities = request.includesSubentities
        entity = request.entity ?? request.entityName.flatMap {
            context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[$0]
        }
        load(results.compactMap { $0 as? NSManagedObject })
        hasFetched = true
        if observer == nil { startObserving() }
    }

    /// Makes the sections of `objects`, in the fetch's order.
    func load(_ objects: [NSManagedObject]) {
        sections = []
        sectionByName = [:]
        placements = [:]
        placements.reserveCapacity(objects.count)
        if sectionNameKeyPath == nil { addSection(named: "", at: 0) }
        var current: FetchedResultsSection?
        for object in objects {
            let name = sectionName(of: object)
            if current?.name != name {
                if let existing = sectionByName[name] {
                    // Apple logs "out of order section name": the sort does not group the sections.
                    reportMisuse("NSFetchedResultsController: the fetched objects are not grouped by \(sectionNameKeyPath ?? "")"
                        + " (section \"\(name)\" appears twice); sort by the section key path first")
                    current = existing
                } else {
                    current = addSection(named: name, at: sections.count)
                }
            }
            current!.items.append(object)
            placements[ObjectIdentifier(object)] = Placement(keys: keys(of: object), section: current!)
        }
        noteChange()
    }

    @discardableResult
    func addSection(named name: String, at index: Int) -> FetchedResultsSection {
        let section = FetchedResultsSection(name: name, indexTitle: indexTitle(forSectionName: name))
        sections.insert(section, at: index)
        sectionByName[name] = section
        return section
    }

    private func indexTitle(forSectionName name: String) -> String? {
        if let delegate, let view = makeDelegateView?() {
            return delegate.controller(view, sectionIndexTitleForSectionName: name)
        }
        return ownerIndexTitle?(name) ?? name.first.map { String($0).uppercased() }
    }

    private func startObserving() {
        let box = WeakFetchedResultsCore(self)
        observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
        ) { note in
            box.core?.contextObjectsDidChange(note)
        }
    }

    // MARK: Keys and sections

    /// The values an object is sorted by, one per sort descriptor.
    func keys(of object: NSManagedObject) -> [Any?] {
        sortDescriptors.map { sort in sort.key.map { PredicateKeyPath.value(of: object, keyPath: $0) } ?? object }
    }

    /// The order of two objects' sort keys, as the sort descriptors order them.
    func order(_ a: [Any?], _ b: [Any?]) -> ComparisonResult {
        for (index, sort) in sortDescriptors.enumerated() {
            var result: ComparisonResult
            if sort._ocdHasComparator {
                result = sort.comparator(PredicateValues.normalize(a[index]) ?? NSNull(), PredicateValues.normalize(b[index]) ?? NSNull())
            } else {
                result = sort._ocdSortSelector.order(a[index], b[index])
            }
            if !sort.ascending {
                result = result == .orderedAscending ? .orderedDescending : result == .orderedDescending ? .orderedAscending : .orderedSame
            }
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// The name of the section `object` belongs in: its section key path's value as text.
    func sectionName(of object: NSManagedObject) -> String {
        guard let keyPath = sectionNameKeyPath else { return "" }
        switch PredicateValues.normalize(PredicateKeyPath.value(of: object, keyPath: keyPath)) {
        case nil, is NSNull: return ""
        case let string as String: return string
        case let value?: return "\(value)"
        }
    }

    /// Whether `object` belongs in the results: of the entity, in the context, not deleted, and
    /// matching the predicate.
    func isMember(_ object: NSManagedObject) -> Bool {
        guard !object.isDeleted, object.managedObjectContext === context else { return false }
        if let entity {
            let objectEntity = object.entity
            guard objectEntity === entity || (includesSubentities && objectEntity.isKindOf(entity: entity)) else { return false }
        }
        return predicate?.evaluate(with: object) ?? true
    }

    /// The keys of the object at `row` of `section`, as placed.
    func placedKeys(_ section: FetchedResultsSection, _ row: Int) -> [Any?] {
        placements[ObjectIdentifier(section.items[row])]?.keys ?? keys(of: section.items[row])
    }

    /// Where `object` sits: its section's index and its row, found by binary search with the keys
    /// it was placed with, then among the objects whose keys are equal.
    func place(of object: NSManagedObject) -> (section: Int, row: Int)? {
        guard let placement = placements[ObjectIdentifier(object)],
              let row = row(of: object, placement),
              let section = sections.firstIndex(where: { $0 === placement.section }) else { return nil }
        return (section, row)
    }

    func row(of object: NSManagedObject, _ placement: Placement) -> Int? {
        let items = placement.section.items
        var low = 0, high = items.count
        while low < high {
            let mid = (low + high) / 2
            if order(placedKeys(placement.section, mid), placement.keys) == .orderedAscending { low = mid + 1 } else { high = mid }
        }
        var row = low
        while row < items.count {
            if items[row] === object { return row }
            if order(placedKeys(placement.section, row), placement.keys) != .orderedSame { break }
            row += 1
        }
        return items.firstIndex { $0 === object }  // keys that do not order consistently (a comparator's)
    }

    /// The row at which an object with `keys` goes in `section`: after every object ordered before
    /// it or equal to it.
    func insertionRow(for keys: [Any?], in section: FetchedResultsSection) -> Int {
        var low = 0, high = section.items.count
        while low < high {
            let mid = (low + high) / 2
            if order(placedKeys(section, mid), keys) == .orderedDescending { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

/// What the notification observer holds: the core, weakly.
///
/// `@unchecked Sendable` invariant: the observer runs on the thread posting the context's
/// notifications, the context's queue, where the core is used.
private final class WeakFetchedResultsCore: @unchecked Sendable {
    weak var core: FetchedResultsCore?
    init(_ core: FetchedResultsCore) { self.core = core }
}
