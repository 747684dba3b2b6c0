import Foundation
import OpenCoreData
import Synchronization

// Issue 40's cases, OpenCoreData's side: several contexts on one coordinator, automatic merging into a
// main-queue view context, a merge of a did-save, and NSFetchedResultsController. Raw SQLite's and
// GRDB's sides of c1 and c2 are in ContextsPeers.swift; c3 and c4 are OpenCoreData's alone.

extension OpenCoreDataSubject {
    func runContexts(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        if kind == .frcInsert { StatementCounter.install() }  // before the store opens its connections
        guard let coordinator = try context(directory).persistentStoreCoordinator else {
            throw BenchError("no coordinator")
        }
        switch kind {
        case .importContexts: return try runImport(coordinator, sizes: sizes)
        case .readers: return try runReadersCase(readersSides(coordinator, sizes: sizes), sizes: sizes)
        case .mergeSave: return try runMerge(coordinator, sizes: sizes)
        case .frcInsert: return try runFetchedResults(coordinator, sizes: sizes)
        default: throw BenchError("case \(kind) is not a contexts case")
        }
    }

    static func privateContext(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// c1: four private-queue contexts on four threads each import a quarter of N rows in saves of
    /// 1,000 (resetting after each), into a main-queue view context with
    /// `automaticallyMergesChangesFromParent`. Timed until the view context has merged every row
    /// (its ObjectsDidChange notifications, counted on the main thread, which runs its run loop
    /// meanwhile as an app's does).
    func runImport(_ coordinator: NSPersistentStoreCoordinator, sizes: Sizes) throws -> Measurement {
        let view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = coordinator
        view.automaticallyMergesChangesFromParent = true
        final class Merged: Sendable { let rows = Atomic<Int>(0) }
        let merged = Merged()
        let token = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: view, queue: nil
        ) { note in
            let inserted = note.userInfo?[NSInsertedObjectsKey]
            let count = (inserted as? Set<NSManagedObject>)?.count ?? (inserted as? NSSet)?.count ?? 0
            merged.rows.add(count, ordering: .relaxed)
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let clock = ContinuousClock()
        let start = clock.now
        let importers = Workers(Sizes.importers) { k in
            let context = Self.privateContext(coordinator)
            try context.performAndWait { () throws -> Void in
                var i = sizes.importRange(k).lowerBound
                while i < sizes.importRange(k).upperBound {
                    for j in i..<min(sizes.importRange(k).upperBound, i + sizes.importSave) {
                        Self.insertItem(j, into: context)
                    }
                    try context.save()
                    context.reset()
                    i += sizes.importSave
                }
            }
        }
        while !importers.finished { _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001)) }
        try importers.join()
        let imported = clock.now
        let deadline = imported + .seconds(60)
        while merged.rows.load(ordering: .relaxed) < sizes.n, clock.now < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001))
        }
        let end = clock.now
        let mergedRows = merged.rows.load(ordering: .relaxed)
        guard mergedRows == sizes.n else {
            throw BenchError("the view context merged \(mergedRows) inserted rows of \(sizes.n)")
        }
        let check = Self.privateContext(coordinator)
        let stored = try check.performAndWait { try check.count(for: NSFetchRequest<OCDItem>(entityName: "Item")) }
        guard stored == sizes.n else { throw BenchError("the store holds \(stored) rows of \(sizes.n)") }
        let ms = milliseconds(start.duration(to: end))
        return Measurement(
            milliseconds: ms, check: Int64(stored),
            metrics: [
                Metric.rowsPerSecond: Double(sizes.n) / ms * 1000,
                Metric.mergeLag: milliseconds(imported.duration(to: end)),
            ])
    }

    /// c2: each reader a private-queue context fetching a block of 1,000 items with their values;
    /// the writer a private-queue context that fetches a block, adds 1 to each `score` and saves.
    func readersSides(_ coordinator: NSPersistentStoreCoordinator, sizes: Sizes) -> ReadersSides {
        ReadersSides(
            makeReader: {
                let context = Self.privateContext(coordinator)
                return { block in
                    try context.performAndWait {
                        let items = try context.fetch(Self.blockRequest(block, sizes: sizes))
                        // Every row of a block has had the same number of saves: score - id/2.
                        let saves = items.first.map { $0.score - Double($0.id) * 0.5 }
                        return (items.count, items.allSatisfy { $0.score - Double($0.id) * 0.5 == saves })
                    }
                }
            },
            makeWriter: {
                let context = Self.privateContext(coordinator)
                return { block, timeline in
                    try context.performAndWait {
                        for item in try context.fetch(Self.blockRequest(block, sizes: sizes)) { item.score += 1 }
                        let start = timeline.now()
                        try context.save()
                        let end = timeline.now()
                        context.reset()
                        return Span(start: start, end: end)
                    }
                }
            })
    }

    static func blockRequest(_ block: Int, sizes: Sizes) -> NSFetchRequest<OCDItem> {
        let request = NSFetchRequest<OCDItem>(entityName: "Item")
        let low = Int64(block * sizes.readBlock)
        request.predicate = NSPredicate(format: "id >= %lld AND id < %lld", low, low + Int64(sizes.readBlock))
        request.returnsObjectsAsFaults = false
        return request
    }

    /// c3: a receiving context holds N/10 items with their values; a writer context holds the same
    /// items, adds 1 to each `score` and saves; the receiver merges the did-save
    /// (`mergeChanges(fromContextDidSave:)`). Five rounds; the medians of the save and of the merge.
    /// After each merge the receiver's objects must read the new values (read untimed, so each
    /// merge meets loaded objects) and the receiver must have no changes.
    func runMerge(_ coordinator: NSPersistentStoreCoordinator, sizes: Sizes) throws -> Measurement {
        let receiver = Self.privateContext(coordinator)
        let writer = Self.privateContext(coordinator)
        let request = NSFetchRequest<OCDItem>(entityName: "Item")
        request.predicate = NSPredicate(format: "id < %lld", Int64(sizes.mergeObjects))
        request.returnsObjectsAsFaults = false
        let held = try receiver.performAndWait { try receiver.fetch(request) }
        let written = try writer.performAndWait { try writer.fetch(request) }
        guard held.count == sizes.mergeObjects, written.count == sizes.mergeObjects else {
            throw BenchError("fetched \(held.count) and \(written.count) items of \(sizes.mergeObjects)")
        }
        /// The did-save, posted on the writer's queue inside `performAndWait` and read after it.
        final class Saved: @unchecked Sendable { var note: Notification? }
        let saved = Saved()
        let token = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: writer, queue: nil
        ) { saved.note = $0 }
        defer { NotificationCenter.default.removeObserver(token) }

        let clock = ContinuousClock()
        var saves: [Double] = []
        var merges: [Double] = []
        for round in 1...Sizes.mergeRounds {
            saves.append(
                try writer.performAndWait { () throws -> Double in
                    for item in written { item.score += 1 }
                    let start = clock.now
                    try writer.save()
                    return milliseconds(start.duration(to: clock.now))
                })
            guard let note = saved.note else { throw BenchError("round \(round): no did-save notification") }
            saved.note = nil
            let start = clock.now
            receiver.mergeChanges(fromContextDidSave: note)
            merges.append(milliseconds(start.duration(to: clock.now)))
            let wrong = receiver.performAndWait {
                held.filter { $0.score != Double($0.id) * 0.5 + Double(round) }.count
                    + (receiver.hasChanges ? 1 : 0)
            }
            guard wrong == 0 else { throw BenchError("round \(round): \(wrong) merged objects hold wrong values") }
        }
        let save = median(saves) ?? 0
        let merge = median(merges) ?? 0
        return Measurement(
            milliseconds: merge, check: Int64(sizes.mergeObjects * Sizes.mergeRounds),
            metrics: [Metric.save: save, Metric.merge: merge, Metric.mergeOverSave: merge / save])
    }

    /// c4: a controller over all N items, sorted by `rank` then `id`, in sections by `rank` (1,000
    /// sections of 100 at N = 100,000). Then many single inserts, each into a section's end: the
    /// time from `processPendingChanges()` to the delegate's `didChange` (median), the SQL statements
    /// run meanwhile (none: no re-fetch), the index path each insert reported, and that the
    /// sections are still the objects the fetch made. Each insert is saved afterwards, untimed.
    func runFetchedResults(_ coordinator: NSPersistentStoreCoordinator, sizes: Sizes) throws -> Measurement {
        let context = Self.privateContext(coordinator)
        return try context.performAndWait { () throws -> Measurement in
            let request = NSFetchRequest<OCDItem>(entityName: "Item")
            request.sortDescriptors = [
                NSSortDescriptor(key: "rank", ascending: true), NSSortDescriptor(key: "id", ascending: true),
            ]
            let controller = NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "rank", cacheName: nil)
            let recorder = InsertRecorder()
            controller.delegate = recorder
            let clock = ContinuousClock()
            let fetchStart = clock.now
            try controller.performFetch()
            let fetchMs = milliseconds(fetchStart.duration(to: clock.now))
            guard let sections = controller.sections, sections.count == sizes.frcSections else {
                throw BenchError("the controller has \(controller.sections?.count ?? 0) sections, not \(sizes.frcSections)")
            }
            let sectionObjects = sections.map { $0 as AnyObject }

            var deliveries: [Double] = []
            var statements = 0
            var added: [Int: Int] = [:]
            for i in 0..<sizes.frcInserts {
                let rank = (i &* 389 &+ 17) % sizes.frcSections
                Self.insertItem(sizes.n + i, into: context)
                for case let item as OCDItem in context.insertedObjects { item.rank = Int16(rank) }
                recorder.changes = []
                let before = StatementCounter.count.load(ordering: .relaxed)
                let start = clock.now
                context.processPendingChanges()
                statements += StatementCounter.count.load(ordering: .relaxed) - before
                let expected = IndexPath(indexes: [rank, sizes.frcRows(inSection: rank) + added[rank, default: 0]])
                guard recorder.changes.count == 1, let change = recorder.changes.first, change.type == .insert,
                    change.newIndexPath == expected, let delivered = change.at
                else {
                    throw BenchError("insert \(i): the delegate got \(recorder.changes.map { "\($0.type) \(String(describing: $0.newIndexPath))" }), expected an insert at \(expected)")
                }
                deliveries.append(milliseconds(start.duration(to: delivered)))
                added[rank, default: 0] += 1
                try context.save()
            }
            guard let after = controller.sections, after.count == sectionObjects.count,
                zip(after, sectionObjects).allSatisfy({ ($0 as AnyObject) === $1 }),
                controller.fetchedObjects?.count == sizes.n + sizes.frcInserts
            else {
                throw BenchError("the controller's sections were rebuilt or its objects miscounted: a re-fetch")
            }
            guard statements == 0 else {
                throw BenchError("\(statements) SQL statements ran while changes were delivered: a re-fetch")
            }
            let deliveryMedian = median(deliveries) ?? 0
            return Measurement(
                milliseconds: deliveryMedian, check: Int64(sizes.frcInserts),
                metrics: [
                    Metric.deliveryMedian: deliveryMedian, Metric.deliveryMax: deliveries.max() ?? 0,
                    Metric.statements: Double(statements), Metric.fetch: fetchMs,
                ])
        }
    }
}

/// c4's delegate: each object change and when it arrived.
final class InsertRecorder: NSFetchedResultsControllerDelegate {
    struct Change {
        var type: NSFetchedResultsChangeType
        var newIndexPath: IndexPath?
        var at: ContinuousClock.Instant?
    }
    var changes: [Change] = []

    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        changes.append(Change(type: type, newIndexPath: newIndexPath, at: ContinuousClock.now))
    }
}

extension Sizes {
    /// c1: the rows importer `k` imports.
    func importRange(_ k: Int) -> Range<Int> { n * k / Sizes.importers..<n * (k + 1) / Sizes.importers }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}
