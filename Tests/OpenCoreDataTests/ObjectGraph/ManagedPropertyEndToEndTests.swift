import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

// The classes of seed 000 (objc.io's Moody sample, "Adding new entities"), written as the seed
// writes them with only `@NSManaged` → `@ManagedProperty` and `#keyPath(x)` → `"x"`. The file
// declares its own `Managed` protocol, as the seed's app does, next to `import OpenCoreData`.

protocol Managed: AnyObject, NSFetchRequestResult {
    static var entityName: String { get }
    static var defaultSortDescriptors: [NSSortDescriptor] { get }
}

extension Managed {
    static var defaultSortDescriptors: [NSSortDescriptor] { return [] }

    static var sortedFetchRequest: NSFetchRequest<Self> {
        let request = NSFetchRequest<Self>(entityName: entityName)
        request.sortDescriptors = defaultSortDescriptors
        return request
    }
}

extension Managed where Self: NSManagedObject {
    static var entityName: String { return entity().name! }
}

struct ISO3166 {
    enum Country: Int16 {
        case guy = 328 // Guyana
        case pol = 616 // Poland
        case ltu = 440 // Lithuania
        case nic = 558 // Nicaragua
    }

    enum Continent: Int16 {
        case europe = 10_001
        case southAmerica = 10_002
        case northAmerica = 10_003

        init?(country: ISO3166.Country) {
            switch country {
            case .pol, .ltu: self = .europe
            case .guy: self = .southAmerica
            case .nic: self = .northAmerica
            }
        }
    }
}

final class Country: NSManagedObject {
    @ManagedProperty var updatedAt: Date

    fileprivate(set) var iso3166Code: ISO3166.Country {
        get {
            guard let c = ISO3166.Country(rawValue: numericISO3166Code) else {
                fatalError("Unknown country code")
            }
            return c
        }
        set {
            numericISO3166Code = newValue.rawValue
        }
    }

    @ManagedProperty fileprivate var numericISO3166Code: Int16
}

final class Continent: NSManagedObject {
    @ManagedProperty var updatedAt: Date

    fileprivate(set) var iso3166Code: ISO3166.Continent {
        get {
            guard let c = ISO3166.Continent(rawValue: numericISO3166Code) else {
                fatalError("Unknown continent code")
            }
            return c
        }
        set {
            numericISO3166Code = newValue.rawValue
        }
    }

    @ManagedProperty fileprivate var numericISO3166Code: Int16
}

extension Country: Managed {
    static var defaultSortDescriptors: [NSSortDescriptor] {
        return [NSSortDescriptor(key: "updatedAt", ascending: false)]
    }
}

extension Continent: Managed {
    static var defaultSortDescriptors: [NSSortDescriptor] {
        return [NSSortDescriptor(key: "updatedAt", ascending: false)]
    }
}

/// Stands in for `CLLocation`, which Linux does not have.
struct Location: Equatable {
    var latitude: Double
    var longitude: Double
}

final class Mood: NSManagedObject {
    public var location: Location? {
        guard let lat = latitude, let lon = longitude else { return nil }
        return Location(latitude: lat.doubleValue, longitude: lon.doubleValue)
    }

    @ManagedProperty fileprivate var latitude: NSNumber?
    @ManagedProperty fileprivate var longitude: NSNumber?
}

extension Mood: Managed {}

// The relationships (seed 004) and a few more attributes, declared in extensions the way Xcode's
// `+CoreDataProperties.swift` files declare them.

extension Mood {
    @ManagedProperty var date: Date
    @ManagedProperty var country: Country?
    /// Swift optionals of scalar types, which `@NSManaged` cannot express.
    @ManagedProperty var rating: Double?
    @ManagedProperty var intensity: Int16?
    /// An `Int` property over an Integer 64 attribute.
    @ManagedProperty var sequence: Int
}

extension Country {
    @ManagedProperty var moods: Set<Mood>
    @ManagedProperty var continent: Continent?
}

extension Continent {
    @ManagedProperty var countries: Set<Country>
}

// Xcode's default codegen types a to-many relationship as `NSSet?` (`NSOrderedSet?` when
// ordered); a store name lets a second property view the same relationship.

extension Country {
    @ManagedProperty("moods") var moodsAsNSSet: NSSet?
}

final class Playlist: NSManagedObject {
    @ManagedProperty var name: String
    @ManagedProperty var tracks: NSOrderedSet?
    @ManagedProperty("tracks") var trackList: [Track]
}

final class Track: NSManagedObject {
    @ManagedProperty var title: String
    @ManagedProperty var playlist: Playlist?
}

/// Seed 004's way of inserting: by entity name, through the `Managed` protocol.
extension NSManagedObjectContext {
    func insertObject<A: NSManagedObject>() -> A where A: Managed {
        guard let obj = NSEntityDescription.insertNewObject(forEntityName: A.entityName, into: self) as? A else {
            fatalError("Wrong object type")
        }
        return obj
    }
}

/// `@ManagedProperty` classes, end to end: a model built in code, an in-memory store, insert, read
/// back, save, fetch in a second context, relationship inverses.
@Suite struct ManagedPropertyEndToEndTests {
    let coordinator: NSPersistentStoreCoordinator

    init() throws {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.makeModel())
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
    }

    /// The shared moods model, mapped to this file's classes, plus attributes for Swift optionals.
    static func makeModel() -> NSManagedObjectModel {
        let model = MoodsModel.make(moodClass: NSStringFromClass(Mood.self), countryClass: NSStringFromClass(Country.self),
                                    continentClass: NSStringFromClass(Continent.self))
        let mood = model.entitiesByName["Mood"]!
        mood.properties += [
            NSAttributeDescription(name: "rating", type: .doubleAttributeType),
            NSAttributeDescription(name: "intensity", type: .integer16AttributeType),
            NSAttributeDescription(name: "sequence", type: .integer64AttributeType, isOptional: false, defaultValue: 0),
        ]
        return model
    }

    func makeContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test func attributesRoundTripThroughTheStore() throws {
        let updatedAt = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let context = makeContext()
        try context.performAndWait { () throws -> Void in
            let country = Country(context: context)
            country.updatedAt = updatedAt
            country.iso3166Code = .pol
            #expect(country.numericISO3166Code == 616)
            #expect(country.iso3166Code == .pol)
            #expect(country.updatedAt == updatedAt)
            #expect(country.value(forKey: "numericISO3166Code") as? Int16 == 616)
            try context.save()
        }

        let other = makeContext()
        try other.performAndWait { () throws -> Void in
            let countries = try other.fetch(NSFetchRequest<Country>(entityName: "Country"))
            #expect(countries.count == 1)
            let country = try #require(countries.first)
            #expect(country.iso3166Code == .pol)
            #expect(country.updatedAt == updatedAt)

            country.iso3166Code = .ltu
            try other.save()
        }

        try context.performAndWait { () throws -> Void in
            context.refreshAllObjects()
            let country = try #require(try context.fetch(NSFetchRequest<Country>(entityName: "Country")).first)
            #expect(country.iso3166Code == .ltu)
        }
    }

    @Test func optionalAttributes() throws {
        let context = makeContext()
        try context.performAndWait { () throws -> Void in
            let mood = Mood(context: context)
            mood.date = Date(timeIntervalSinceReferenceDate: 1)
            #expect(mood.latitude == nil)
            #expect(mood.location == nil)
            #expect(mood.rating == nil)
            #expect(mood.intensity == nil)
            #expect(mood.sequence == 0)

            mood.latitude = NSNumber(value: 52.52)
            mood.longitude = NSNumber(value: 13.405)
            mood.rating = 4.5
            mood.intensity = -7
            mood.sequence = 1 << 40
            #expect(mood.location == Location(latitude: 52.52, longitude: 13.405))
            #expect(mood.rating == 4.5)
            #expect(mood.intensity == -7)
            #expect(mood.sequence == 1 << 40)
            // The NSNumber property stores the Double attribute's canonical value.
            #expect(mood.value(forKey: "latitude") as? Double == 52.52)
            try context.save()
        }

        let other = makeContext()
        try other.performAndWait { () throws -> Void in
            let mood = try #require(try other.fetch(NSFetchRequest<Mood>(entityName: "Mood")).first)
            #expect(mood.location == Location(latitude: 52.52, longitude: 13.405))
            #expect(mood.rating == 4.5)
            #expect(mood.intensity == -7)
            #expect(mood.sequence == 1 << 40)
            #expect(mood.date == Date(timeIntervalSinceReferenceDate: 1))

            mood.rating = nil
            mood.latitude = nil
            #expect(mood.rating == nil)
            #expect(mood.location == nil)
            try other.save()
        }

        let third = makeContext()
        try third.performAndWait { () throws -> Void in
            let mood = try #require(try third.fetch(NSFetchRequest<Mood>(entityName: "Mood")).first)
            #expect(mood.rating == nil)
            #expect(mood.latitude == nil)
            #expect(mood.longitude?.doubleValue == 13.405)
        }
    }

    @Test func relationshipsKeepTheirInverses() throws {
        let context = makeContext()
        try context.performAndWait { () throws -> Void in
            let country: Country = context.insertObject()
            country.iso3166Code = .guy
            country.updatedAt = Date()
            let continent: Continent = context.insertObject()
            continent.iso3166Code = ISO3166.Continent(country: .guy)!
            continent.updatedAt = Date()
            #expect(country.moods.isEmpty)
            #expect(country.continent == nil)

            // To-one set from the to-one side: the to-many side follows.
            let happy: Mood = context.insertObject()
            happy.date = Date()
            happy.country = country
            #expect(country.moods == [happy])
            country.continent = continent
            #expect(continent.countries == [country])

            // The generated to-many accessors: the to-one side follows.
            let sad: Mood = context.insertObject()
            sad.date = Date()
            country.addToMoods(sad)
            #expect(sad.country === country)
            #expect(country.moods == [happy, sad])
            country.removeFromMoods(happy)
            #expect(happy.country == nil)
            #expect(country.moods == [sad])
            country.addToMoods([happy, sad])
            #expect(happy.country === country)
            #expect(country.moods.count == 2)

            // Setting the whole set, and moving a mood to another country.
            let other: Country = context.insertObject()
            other.iso3166Code = .nic
            other.updatedAt = Date()
            sad.country = other
            #expect(country.moods == [happy])
            #expect(other.moods == [sad])
            other.moods = [happy, sad]
            #expect(country.moods.isEmpty)
            #expect(happy.country === other)
            other.removeFromMoods([happy])
            #expect(happy.country == nil)
            happy.country = country
            try context.save()
        }

        let fetching = makeContext()
        try fetching.performAndWait { () throws -> Void in
            let countries = try fetching.fetch(NSFetchRequest<Country>(entityName: "Country"))
            let guyana = try #require(countries.first { $0.iso3166Code == .guy })
            let nicaragua = try #require(countries.first { $0.iso3166Code == .nic })
            #expect(guyana.moods.count == 1)
            #expect(nicaragua.moods.count == 1)
            #expect(guyana.moods.first?.country === guyana)
            #expect(nicaragua.moods.first?.country === nicaragua)
            #expect(guyana.continent?.iso3166Code == .southAmerica)
            #expect(guyana.continent?.countries == [guyana])
            #expect(nicaragua.continent == nil)

            let moods = try fetching.fetch(NSFetchRequest<Mood>(entityName: "Mood"))
            #expect(moods.count == 2)
            #expect(Set(moods.compactMap(\.country)) == [guyana, nicaragua])
        }
    }

    @Test func managedProtocolOfTheSeedCoexists() throws {
        let context = makeContext()
        try context.performAndWait { () throws -> Void in
            let continent: Continent = context.insertObject()
            continent.iso3166Code = .europe
            continent.updatedAt = Date()
            try context.save()
            #expect(Continent.entityName == "Continent")
            #expect(Country.defaultSortDescriptors.map(\.key) == ["updatedAt"])
            let fetched = try context.fetch(Continent.sortedFetchRequest)
            #expect(fetched == [continent])
        }
    }

    @Test func xcodeCollectionTypesAndStoreNames() throws {
        let context = makeContext()
        try context.performAndWait { () throws -> Void in
            let country = Country(context: context)
            country.iso3166Code = .pol
            country.updatedAt = Date()
            let mood = Mood(context: context)
            mood.date = Date()
            #expect(country.moodsAsNSSet?.count == 0)
            country.moodsAsNSSet = NSSet(array: [mood])
            #expect(mood.country === country)
            #expect(country.moods == [mood])
            #expect(country.moodsAsNSSet?.contains(mood) == true)
            try context.save()
        }
    }

    @Test func orderedRelationships() throws {
        let playlist = NSEntityDescription()
        playlist.name = "Playlist"
        playlist.managedObjectClassName = NSStringFromClass(Playlist.self)
        let track = NSEntityDescription()
        track.name = "Track"
        track.managedObjectClassName = NSStringFromClass(Track.self)
        let tracks = NSRelationshipDescription(name: "tracks", destination: track, toMany: true, isOrdered: true)
        let owner = NSRelationshipDescription(name: "playlist", destination: playlist, toMany: false)
        tracks.inverseRelationship = owner
        owner.inverseRelationship = tracks
        playlist.properties = [NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false), tracks]
        track.properties = [NSAttributeDescription(name: "title", type: .stringAttributeType, isOptional: false), owner]
        let model = NSManagedObjectModel()
        model.entities = [playlist, track]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)

        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait { () throws -> Void in
            let list = Playlist(context: context)
            list.name = "Mix"
            #expect(list.trackList.isEmpty)
            let titles = ["b", "a", "c"]
            let made = titles.map { title in
                let t = Track(context: context)
                t.title = title
                return t
            }
            list.tracks = NSOrderedSet(array: made)
            #expect(list.trackList.map(\.title) == titles)
            #expect(made.allSatisfy { $0.playlist === list })
            list.trackList = made.reversed()
            #expect((list.tracks?.array as? [Track])?.map(\.title) == ["c", "a", "b"])
            try context.save()
        }

        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = coordinator
        try other.performAndWait { () throws -> Void in
            let list = try #require(try other.fetch(NSFetchRequest<Playlist>(entityName: "Playlist")).first)
            #expect(list.name == "Mix")
            #expect(list.trackList.map(\.title) == ["c", "a", "b"])
        }
    }

    @Test func nonOptionalValuesReadEmptyUntilSet() throws {
        let context = makeContext()
        context.performAndWait {
            let country = Country(context: context)
            #expect(country.updatedAt == Date(timeIntervalSinceReferenceDate: 0))
            #expect(country.numericISO3166Code == 0)
            #expect(country.moods.isEmpty)
        }
    }

    /// Typed reads after primitive writes: a primitive value of another type (canonicalized on the
    /// way in, so it lands in the typed field the accessors' fast path reads), an emptied optional
    /// (nil) and an emptied non-optional (its empty value).
    @Test func typedReadsOfValuesKeptAsGivenAndOfEmptiedSlots() throws {
        let context = makeContext()
        context.performAndWait {
            let mood = Mood(context: context)
            mood.intensity = 3
            mood.rating = 2.5
            #expect(mood.intensity == 3)
            #expect(mood.rating == 2.5)
            mood.setPrimitiveValue(Int(7), forKey: "intensity")  // an Int, for an Int16 attribute
            mood.setPrimitiveValue(NSNumber(value: 4.25), forKey: "rating")
            #expect(mood.intensity == 7)
            #expect(mood.rating == 4.25)
            mood.setPrimitiveValue(nil, forKey: "rating")
            #expect(mood.rating == nil)
            mood.date = Date(timeIntervalSinceReferenceDate: 86_400)
            #expect(mood.date == Date(timeIntervalSinceReferenceDate: 86_400))
            mood.setPrimitiveValue(nil, forKey: "date")
            #expect(mood.date == Date(timeIntervalSinceReferenceDate: 0))
        }
    }
}
