import Foundation
import OpenCoreData

// A background import, as an app runs one: moods arrive from elsewhere (a feed, a sync) and are
// inserted in a private-queue context, saved some hundreds at a time. The view context merges each
// save as it lands, and a fetched results controller on it lists the moods per country and
// reports what each merge changed.

/// Imports `count` moods, recorded at the places of `samples` in turn, through a background
/// context in saves of `batchSize`, while the view context merges them; returns when the view
/// context has merged the last save.
func importMoods(count: Int, batchSize: Int, at samples: [(String, Double, Double)], into container: NSPersistentContainer) throws {
    let viewContext = container.viewContext
    viewContext.automaticallyMergesChangesFromParent = true

    // Sections need the fetch sorted by the section key path first.
    let request = Mood.sortedFetchRequest
    request.sortDescriptors = [NSSortDescriptor(key: "country.numericISO3166Code", ascending: true)] + Mood.defaultSortDescriptors
    let moodsPerCountry = NSFetchedResultsController(fetchRequest: request, managedObjectContext: viewContext,
                                                     sectionNameKeyPath: "country.numericISO3166Code", cacheName: nil)
    let reporter = MoodChangeReporter()
    moodsPerCountry.delegate = reporter
    try viewContext.performAndWait { try moodsPerCountry.performFetch() }
    print("Importing \(count) moods in the background, \(batchSize) a save.")

    let background = container.newBackgroundContext()
    background.perform {
        for start in stride(from: 0, to: count, by: batchSize) {
            for index in start..<min(start + batchSize, count) {
                let (code, latitude, longitude) = samples[index % samples.count]
                _ = Mood.insert(into: background, colors: [UInt8(index % 256), 0x40, 0xC0],
                                location: Location(latitude: latitude, longitude: longitude), isoCountryCode: code)
            }
            do {
                try background.save()
            } catch {
                fatalError("Failed to save the import: \(error)")
            }
            background.reset()  // the saved moods are not needed here any more
        }
        // Queued on the main queue behind the merges of the saves above.
        viewContext.perform { reporter.importFinished = true }
    }
    // The merges run on the main queue: a command-line program runs it itself (an app's main run
    // loop does).
    while !reporter.importFinished {
        RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.01))
    }

    print("Moods per country, as the fetched results controller lists them:")
    for section in moodsPerCountry.sections ?? [] {
        let country = (section.objects?.first as? Mood)?.country?.iso3166Code.name ?? section.name
        print("  \(country): \(section.numberOfObjects)")
    }
}

/// Prints, for each merged save, how many moods and countries the controller reports as changed.
final class MoodChangeReporter: NSFetchedResultsControllerDelegate {
    var importFinished = false
    private var objectChanges: [NSFetchedResultsChangeType: Int] = [:]
    private var newSections = 0

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) {
        objectChanges = [:]
        newSections = 0
    }

    func controller(_ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange anObject: Any,
                    at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
        objectChanges[type, default: 0] += 1
    }

    func controller(_ controller: NSFetchedResultsController<any NSFetchRequestResult>, didChange sectionInfo: any NSFetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {
        if type == .insert { newSections += 1 }
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<any NSFetchRequestResult>) {
        let counts = [(NSFetchedResultsChangeType.insert, "inserted"), (.update, "updated"), (.move, "moved"), (.delete, "deleted")]
            .map { "\(objectChanges[$0] ?? 0) \($1)" }
        print("The view context merged a save: moods \(counts.joined(separator: ", ")); \(newSections) new countries")
    }
}
