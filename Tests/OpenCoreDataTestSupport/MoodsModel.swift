import Foundation
import OpenCoreData

/// The seeds' model built in code: Mood → Country → Continent, with inverses.
///
/// Attributes follow seed 000: `numericISO3166Code` (Integer 16) and `updatedAt` (Date) on
/// Country and Continent; Mood has `date`, optional `latitude`/`longitude` (Double) and `colors` (Binary).
public enum MoodsModel {
    /// A new model; pass class names to map entities to subclasses.
    public static func make(moodClass: String = "NSManagedObject", countryClass: String = "NSManagedObject",
                            continentClass: String = "NSManagedObject") -> NSManagedObjectModel {
        let mood = NSEntityDescription(name: "Mood", managedObjectClassName: moodClass)
        let country = NSEntityDescription(name: "Country", managedObjectClassName: countryClass)
        let continent = NSEntityDescription(name: "Continent", managedObjectClassName: continentClass)

        let moodCountry = NSRelationshipDescription(name: "country", destination: country, toMany: false)
        let countryMoods = NSRelationshipDescription(name: "moods", destination: mood, toMany: true, deleteRule: .cascadeDeleteRule)
        moodCountry.inverseRelationship = countryMoods
        countryMoods.inverseRelationship = moodCountry
        let countryContinent = NSRelationshipDescription(name: "continent", destination: continent, toMany: false)
        let continentCountries = NSRelationshipDescription(name: "countries", destination: country, toMany: true)
        countryContinent.inverseRelationship = continentCountries
        continentCountries.inverseRelationship = countryContinent

        mood.properties = [
            NSAttributeDescription(name: "date", type: .dateAttributeType, isOptional: false),
            NSAttributeDescription(name: "latitude", type: .doubleAttributeType),
            NSAttributeDescription(name: "longitude", type: .doubleAttributeType),
            NSAttributeDescription(name: "colors", type: .binaryDataAttributeType),
            moodCountry,
        ]
        country.properties = [
            NSAttributeDescription(name: "numericISO3166Code", type: .integer16AttributeType, isOptional: false, defaultValue: 0),
            NSAttributeDescription(name: "updatedAt", type: .dateAttributeType, isOptional: false),
            countryMoods, countryContinent,
        ]
        continent.properties = [
            NSAttributeDescription(name: "numericISO3166Code", type: .integer16AttributeType, isOptional: false, defaultValue: 0),
            NSAttributeDescription(name: "updatedAt", type: .dateAttributeType, isOptional: false),
            continentCountries,
        ]
        let model = NSManagedObjectModel()
        model.entities = [mood, country, continent]
        return model
    }
}

/// A fresh temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL
    public init() {
        ReferenceCycles.install()
        url = FileManager.default.temporaryDirectory.appendingPathComponent("OpenCoreDataTests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A context on a new coordinator with one store of `type` (in memory or SQLite in `directory`).
public func makeContext(model: NSManagedObjectModel, storeType: String = NSInMemoryStoreType, at url: URL? = nil,
                        concurrencyType: NSManagedObjectContext.ConcurrencyType = .privateQueueConcurrencyType) throws -> NSManagedObjectContext {
    ReferenceCycles.install()
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: url, options: nil)
    let context = NSManagedObjectContext(concurrencyType: concurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}
