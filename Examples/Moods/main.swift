// The README's first command: `swift run moods`. Run it twice.
//
// First run: builds the stack with NSPersistentContainer (seed 003), inserts moods whose countries
// and continents are found or created (seed 004), saves to an embedded SQLite store; then imports
// more moods in a background context, merged into the view context as each save lands, with a
// fetched results controller listing the moods per country (Import.swift).
// Later runs: open the same file through a hand-made model, coordinator and context (seed 003's
// other route) and list what is there. `--reset` deletes the store first.
import Foundation
import OpenCoreData

guard let modelURL = Bundle.module.url(forResource: "Moods", withExtension: "xcdatamodeld") else {
    fatalError("failed to find data model")
}
guard let mom = NSManagedObjectModel(contentsOf: modelURL) else {
    fatalError("Failed to create model from file: \(modelURL)")
}

let storeURL = NSPersistentContainer.defaultDirectoryURL().appendingPathComponent("Moods.sqlite")
if CommandLine.arguments.contains("--reset") {
    try? NSPersistentStoreCoordinator(managedObjectModel: mom).destroyPersistentStore(at: storeURL, ofType: NSSQLiteStoreType)
    print("Deleted \(storeURL.path)")
}

func firstRun() throws {
    print("No store at \(storeURL.path): creating it with NSPersistentContainer.")
    // As seed 003 writes it: the container finds Moods.xcdatamodeld among the program's resources.
    let container = NSPersistentContainer(name: "Moods")
    container.loadPersistentStores { description, error in
        if let error = error {
            fatalError("Unable to load persistent stores: \(error)")
        }
        print("Loaded \(description.type) store at \(description.url?.path ?? "?")")
    }
    let context = container.viewContext
    let samples: [(String, Double, Double)] = [
        ("PL", 52.23, 21.01), ("PL", 50.06, 19.94), ("LT", 54.69, 25.28), ("JP", 35.68, 139.69),
        ("GY", 6.80, -58.16), ("NI", 12.11, -86.24), ("KE", -1.29, 36.82), ("JP", 34.69, 135.50),
        ("PL", 51.11, 17.03), ("LT", 54.90, 23.90),
    ]
    try context.performAndWait {
        for (index, (code, lat, lon)) in samples.enumerated() {
            let mood = Mood.insert(into: context, colors: [UInt8(index), 0x80, 0xFF],
                                   location: Location(latitude: lat, longitude: lon), isoCountryCode: code)
            print("Inserted mood \(index + 1) in \(mood.country?.iso3166Code.name ?? "?")")
        }
        let countries = context.insertedObjects.filter { $0 is Country }.count
        let continents = context.insertedObjects.filter { $0 is Continent }.count
        try context.save()
        print("Saved \(samples.count) moods, \(countries) countries, \(continents) continents.")
    }
    try importMoods(count: 600, batchSize: 200, at: samples, into: container)
}

func laterRun() throws {
    print("Opening \(storeURL.path) with a hand-made stack.")
    let psc = NSPersistentStoreCoordinator(managedObjectModel: mom)
    do {
        try psc.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL, options: nil)
    } catch {
        fatalError("Error configuring persistent store: \(error)")
    }
    let moc = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
    moc.persistentStoreCoordinator = psc

    try moc.performAndWait {
        let moods = try moc.fetch(Mood.sortedFetchRequest)
        print("\(moods.count) moods in the store.")
        print("Moods per country, and their places:")
        let countries = try moc.fetch(Country.sortedFetchRequest).sorted { $0.iso3166Code.name < $1.iso3166Code.name }
        for country in countries {
            let places = Set(country.moods.compactMap(\.location).map { String(format: "(%.2f, %.2f)", $0.latitude, $0.longitude) }).sorted()
            print("  \(country.iso3166Code.name): \(country.moods.count) \(places.joined(separator: " "))")
        }
        print("Countries per continent:")
        let continents = try moc.fetch(Continent.sortedFetchRequest).sorted { $0.iso3166Code.name < $1.iso3166Code.name }
        for continent in continents {
            let names = continent.countries.map(\.iso3166Code.name).sorted()
            print("  \(continent.iso3166Code.name): \(names.joined(separator: ", "))")
        }
        let europe = NSPredicate(format: "country.continent.numericISO3166Code == %d", Int(ISO3166.Continent.europe.rawValue))
        let request = NSFetchRequest<Mood>(entityName: "Mood")
        request.predicate = europe
        print("Moods in Europe: \(try moc.count(for: request))")
    }
}

do {
    if FileManager.default.fileExists(atPath: storeURL.path) {
        try laterRun()
    } else {
        try firstRun()
        print("Run `swift run moods` again to reopen the store and list it.")
    }
} catch {
    print("Error: \(error)")
    exit(1)
}
