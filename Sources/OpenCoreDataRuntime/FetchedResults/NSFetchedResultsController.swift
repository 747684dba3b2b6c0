import Foundation

/// The kinds of change a fetched results controller reports.
///
/// Related Core Data documentation: [NSFetchedResultsChangeType](https://developer.apple.com/documentation/coredata/nsfetchedresultschangetype)
public enum NSFetchedResultsChangeType: UInt, Sendable {
    /// An object or section was inserted.
    case insert = 1
    /// An object or section was deleted.
    case delete = 2
    /// An object moved.
    case move = 3
    /// An object changed in place.
    case update = 4
}

/// A section of a fetched results controller.
///
/// Related Core Data documentation: [NSFetchedResultsSectionInfo](https://developer.apple.com/documentation/coredata/nsfetchedresultssectioninfo)
public protocol NSFetchedResultsSectionInfo {
    /// The section's name: the value of the controller's `sectionNameKeyPath` for its objects.
    ///
    /// Related Core Data documentation: [name](https://developer.apple.com/documentation/coredata/nsfetchedresultssectioninfo/name)
    var name: String { get }
    /// The section's title in a section index.
    ///
    /// Related Core Data documentation: [indexTitle](https://developer.apple.com/documentation/coredata/nsfetchedresultssectioninfo/indextitle)
    var indexTitle: String? { get }
    /// How many objects the section holds.
    ///
    /// Related Core Data documentation: [numberOfObjects](https://developer.apple.com/documentation/coredata/nsfetchedresultssectioninfo/numberofobjects)
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    ///
    /// Related Core Data documentation: [objects](https://developer.apple.com/documentation/coredata/nsfetchedresultssectioninfo/objects)
    var objects: [Any]? { get }
}

/// What a fetched results controller tells about changes to its results. Every method is optional
/// (the protocol's extension gives each a default), as on Apple.
///
/// ```swift
/// extension MoodsViewController: NSFetchedResultsControllerDelegate {
///     func controller(_ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange anObject: Any,
///                     at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
///         switch type {
///         case .insert: rows.insert(anObject, at: newIndexPath!.row)
///         case .delete: rows.remove(at: indexPath!.row)
///         default: break
///         }
///     }
/// }
/// ```
///
/// - Note: Linux: the controller passed to these methods is a view of yours typed
///   `NSFetchedResultsController<any NSFetchRequestResult>` (Swift generics do not convert as
///   Objective-C's do): it answers like yours, but `===` with yours is false; compare `fetchRequest`
///   instead. `controller(_:didChangeContentWith:)` takes a `CollectionDifference<NSManagedObjectID>`
///   (Apple's Swift form); the snapshot form needs UIKit and does not exist.
///
/// Related Core Data documentation: [NSFetchedResultsControllerDelegate](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate)
public protocol NSFetchedResultsControllerDelegate: AnyObject {
    /// Called before the controller reports a batch of changes.
    ///
    /// Related Core Data documentation: [controllerWillChangeContent(_:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate/controllerwillchangecontent(_:))
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>)

    /// Called for each object inserted, deleted, moved or updated: `indexPath` is its path before the
    /// batch (nil for an insert), `newIndexPath` after it (nil for a delete), as UIKit's batch
    /// updates expect.
    ///
    /// Related Core Data documentation: [controller(_:didChange:at:for:newIndexPath:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate/controller(_:didchange:at:for:newindexpath:))
    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)

    /// Called for each section inserted (its index after the batch) or deleted (its index before).
    ///
    /// Related Core Data documentation: [controller(_:didChange:atSectionIndex:for:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate/controller(_:didchange:atsectionindex:for:))
    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange sectionInfo: any NSFetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType)

    /// Called after the controller reported a batch of changes.
    ///
    /// Related Core Data documentation: [controllerDidChangeContent(_:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate/controllerdidchangecontent(_:))
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>)

    /// The index title of a section; the default asks the controller's
    /// ``NSFetchedResultsController/sectionIndexTitle(forSectionName:)``.
    ///
    /// Related Core Data documentation: [controller(_:sectionIndexTitleForSectionName:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate/controller(_:sectionindextitleforsectionname:))
    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String
    ) -> String?

    /// Called with a batch's changes as the difference between the object IDs of the fetched
    /// objects before and after it (in order, across sections). When a delegate implements it, the
    /// controller calls none of the other change methods, as on Apple.
    ///
    /// - Note: Linux: the difference is computed from the batch's changes (no re-fetch). Updates in
    ///   place are not part of a `CollectionDifference`. The snapshot form
    ///   (`NSDiffableDataSourceSnapshotReference`) needs UIKit and is not offered.
    ///
    /// Related Core Data documentation: [controller(_:didChangeContentWith:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontrollerdelegate/controller(_:didchangecontentwith:)-1a5ic)
    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>)
}

extension NSFetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) {}
    public func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}
    public func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange sectionInfo: any NSFetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType
    ) {}
    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) {}
    public func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String
    ) -> String? {
        controller.sectionIndexTitle(forSectionName: sectionName)
    }
    public func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        // Not implemented by the delegate: the controller reports the changes one by one instead.
        controller._core.differenceCallbackIsDefault = true
    }
}

/// Runs a fetch request and keeps its results, grouped in sections, up to date with the changes of
/// its context, telling a delegate what changed in the index paths a table or collection view needs.
///
/// ```swift
/// let request = NSFetchRequest<Mood>(entityName: "Mood")
/// request.sortDescriptors = [NSSortDescriptor(key: "country.name", ascending: true),
///                            NSSortDescriptor(key: "date", ascending: false)]
/// let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
///                                             sectionNameKeyPath: "country.name", cacheName: nil)
/// controller.delegate = self
/// try controller.performFetch()
/// let first = controller.object(at: IndexPath(row: 0, section: 0))
/// ```
///
/// Changes come from the context's `NSManagedObjectContextObjectsDidChange` notifications and are
/// applied to the results incrementally (a binary search in the sorted results per changed object,
/// never a re-fetch): objects inserted, deleted, refreshed or updated so that they enter or leave
/// the predicate, move (a sort key or the section changed their place) or change in place.
/// `NSInvalidatedAllObjectsKey` (the context was reset) makes the controller fetch again and report
/// the difference. As on Apple, without a delegate the controller does not track changes.
///
/// - Note: Linux: `cacheName` is kept but no cache is written (sections are computed from the fetch,
///   which is as fast as reading a cache would be); ``deleteCache(withName:)`` does nothing. The
///   generic parameter has no `NSFetchRequestResult` constraint, so that the delegate's
///   `NSFetchedResultsController<any NSFetchRequestResult>` can be spelled; results must be managed
///   objects. The order of objects whose sort keys are all equal is the fetch's, and new ones go
///   after them. A section's name is the key path's value as text, `""` for nil (Apple does not
///   document nil). Changes to a related object that a predicate or section key path goes through
///   are not seen (Apple does not see them either).
///
/// Not `Sendable`, as on Apple: use a controller on its context's queue.
///
/// Related Core Data documentation: [NSFetchedResultsController](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller)
open class NSFetchedResultsController<ResultType>: NSObject {
    /// The shared state (an erased view made for the delegate shares it).
    package let _core: FetchedResultsCore
    /// The typed results, made from the core's when first asked for after a change.
    private var typedObjects: (version: Int, objects: [ResultType])?

    /// Creates a controller for `fetchRequest` (which must have sort descriptors) in `context`,
    /// grouping the results into sections by `sectionNameKeyPath` (nil: one section).
    ///
    /// Related Core Data documentation: [init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/init(fetchrequest:managedobjectcontext:sectionnamekeypath:cachename:))
    public init(
        fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: NSManagedObjectContext,
        sectionNameKeyPath: String?, cacheName name: String?
    ) {
        self.fetchRequest = fetchRequest
        let untyped = NSFetchRequest<any NSFetchRequestResult>()
        untyped.copySettings(from: fetchRequest)
        _core = FetchedResultsCore(
            request: untyped, context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: name)
        super.init()
        _core.ownerIndexTitle = { [unowned self] in self.sectionIndexTitle(forSectionName: $0) }
        _core.makeDelegateView = { [unowned self] in
            if let erased = self as? NSFetchedResultsController<any NSFetchRequestResult> { return erased }
            return NSFetchedResultsController<any NSFetchRequestResult>(core: self._core, fetchRequest: self._core.request)
        }
    }

    /// A view typed for the delegate, sharing `core`.
    package init(core: FetchedResultsCore, fetchRequest: NSFetchRequest<ResultType>) {
        _core = core
        self.fetchRequest = fetchRequest
        super.init()
    }

    /// The fetch request the controller runs.
    ///
    /// - Note: Linux: ``performFetch()`` reads its settings each time; change them before calling it.
    ///
    /// Related Core Data documentation: [fetchRequest](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/fetchrequest)
    public let fetchRequest: NSFetchRequest<ResultType>

    /// The context the controller fetches in and watches.
    ///
    /// Related Core Data documentation: [managedObjectContext](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/managedobjectcontext)
    public var managedObjectContext: NSManagedObjectContext { _core.context }

    /// The key path whose value names each object's section, or nil for one section.
    ///
    /// Related Core Data documentation: [sectionNameKeyPath](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/sectionnamekeypath)
    public var sectionNameKeyPath: String? { _core.sectionNameKeyPath }

    /// The name of the section cache (kept; see the type's note: no cache is written on Linux).
    ///
    /// Related Core Data documentation: [cacheName](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/cachename)
    public var cacheName: String? { _core.cacheName }

    /// Deletes a section cache: nothing to do on Linux, where no cache is written.
    ///
    /// Related Core Data documentation: [deleteCache(withName:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/deletecache(withname:))
    public class func deleteCache(withName name: String?) {}

    /// The delegate told of changes; while it is nil the controller does not track changes.
    ///
    /// Related Core Data documentation: [delegate](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/delegate)
    public weak var delegate: (any NSFetchedResultsControllerDelegate)? {
        get { _core.delegate }
        set { _core.delegate = newValue }
    }

    /// Runs the fetch request and computes the sections; from then on the controller follows its
    /// context's changes (while it has a delegate).
    ///
    /// Throws what the fetch throws, and ``OpenCoreDataError`` (`coreDataError`) when the request has
    /// no sort descriptors or does not return managed objects (Apple raises).
    ///
    /// Related Core Data documentation: [performFetch()](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/performfetch())
    open func performFetch() throws {
        _core.request.copySettings(from: fetchRequest)
        try _core.performFetch()
    }

    /// The results of the last fetch, kept up to date; nil before ``performFetch()``.
    ///
    /// Related Core Data documentation: [fetchedObjects](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/fetchedobjects)
    public var fetchedObjects: [ResultType]? {
        guard _core.hasFetched else { return nil }
        if let typedObjects, typedObjects.version == _core.version { return typedObjects.objects }
        let objects = _core.flatObjects.map { $0 as! ResultType }  // managed objects, checked at fetch
        typedObjects = (_core.version, objects)
        return objects
    }

    /// The sections; nil before ``performFetch()``.
    ///
    /// Related Core Data documentation: [sections](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/sections)
    public var sections: [any NSFetchedResultsSectionInfo]? {
        _core.hasFetched ? _core.sections : nil
    }

    /// The object at `indexPath` (section, then row or item), which must be in range, as on Apple.
    ///
    /// Related Core Data documentation: [object(at:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/object(at:))
    public func object(at indexPath: IndexPath) -> ResultType {
        _core.sections[indexPath[0]].items[indexPath[1]] as! ResultType
    }

    /// The index path of `object` in the results, or nil if they do not hold it.
    ///
    /// Related Core Data documentation: [indexPath(forObject:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/indexpath(forobject:))
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let object = object as? NSManagedObject, let place = _core.place(of: object) else { return nil }
        return IndexPath(indexes: [place.section, place.row])
    }

    /// The index title of a section named `sectionName`: its first letter, capitalized (nil for an
    /// empty name). Override it to change the index.
    ///
    /// Related Core Data documentation: [sectionIndexTitle(forSectionName:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/sectionindextitle(forsectionname:))
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() }
    }

    /// The section index: the index titles of the sections, each once, in section order.
    ///
    /// - Note: Linux: Apple documents "the index titles of all the known sections"; here a title
    ///   shared by several sections appears once, as a section index needs.
    ///
    /// Related Core Data documentation: [sectionIndexTitles](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/sectionindextitles)
    open var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return _core.sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The section a section index entry leads to: the first section whose index title is `title`;
    /// failing that, the first section of the title at `sectionIndex` in ``sectionIndexTitles``,
    /// else `sectionIndex` kept within the sections.
    ///
    /// Related Core Data documentation: [section(forSectionIndexTitle:at:)](https://developer.apple.com/documentation/coredata/nsfetchedresultscontroller/section(forsectionindextitle:at:))
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        let sections = _core.sections
        if let found = sections.firstIndex(where: { $0.indexTitle == title }) { return found }
        let titles = sectionIndexTitles
        if titles.indices.contains(sectionIndex), let found = sections.firstIndex(where: { $0.indexTitle == titles[sectionIndex] }) {
            return found
        }
        return max(0, min(sectionIndex, sections.count - 1))
    }
}
