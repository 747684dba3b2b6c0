import Foundation
import OpenCoreData

// Seed 000's classes, with `@NSManaged` spelled `@ManagedProperty` and `#keyPath(x)` spelled "x".

final class Country: NSManagedObject {
    @ManagedProperty var updatedAt: Date
    @ManagedProperty var moods: Set<Mood>
    @ManagedProperty var continent: Continent?

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

    static func findOrCreate(for isoCountry: ISO3166.Country, in context: NSManagedObjectContext) -> Country {
        let predicate = NSPredicate(format: "%K == %d", "numericISO3166Code", Int(isoCountry.rawValue))
        let country = findOrCreate(in: context, matching: predicate) { country in
            country.iso3166Code = isoCountry
            country.updatedAt = Date()
            country.continent = Continent.findOrCreateContinent(for: isoCountry, in: context)
        }
        return country
    }
}

extension Country: Managed {
    static var defaultSortDescriptors: [NSSortDescriptor] {
        [NSSortDescriptor(key: "updatedAt", ascending: false)]
    }
}

final class Continent: NSManagedObject {
    @ManagedProperty var updatedAt: Date
    @ManagedProperty var countries: Set<Country>

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

    static func findOrCreateContinent(for isoCountry: ISO3166.Country, in context: NSManagedObjectContext) -> Continent? {
        guard let iso3166 = ISO3166.Continent(country: isoCountry) else { return nil }
        let predicate = NSPredicate(format: "%K == %d", "numericISO3166Code", Int(iso3166.rawValue))
        return findOrCreate(in: context, matching: predicate) { continent in
            continent.iso3166Code = iso3166
            continent.updatedAt = Date()
        }
    }
}

extension Continent: Managed {
    static var defaultSortDescriptors: [NSSortDescriptor] {
        [NSSortDescriptor(key: "updatedAt", ascending: false)]
    }
}

/// Where a mood was recorded (stands in for CoreLocation's CLLocation, which Linux lacks).
struct Location {
    var latitude: Double
    var longitude: Double
}

final class Mood: NSManagedObject {
    @ManagedProperty var date: Date
    @ManagedProperty var colors: Data?
    @ManagedProperty var country: Country?

    public var location: Location? {
        guard let lat = latitude, let lon = longitude else { return nil }
        return Location(latitude: lat.doubleValue, longitude: lon.doubleValue)
    }

    @ManagedProperty fileprivate var latitude: NSNumber?
    @ManagedProperty fileprivate var longitude: NSNumber?

    static func insert(into context: NSManagedObjectContext, colors: [UInt8], location: Location?, isoCountryCode: String?) -> Mood {
        let mood: Mood = context.insertObject()
        mood.colors = Data(colors)
        mood.date = Date()
        if let coord = location {
            mood.latitude = NSNumber(value: coord.latitude)
            mood.longitude = NSNumber(value: coord.longitude)
        }
        let isoCode = isoCountryCode ?? ""
        let isoCountry = ISO3166.Country.fromISO3166(isoCode)
        mood.country = Country.findOrCreate(for: isoCountry, in: context)
        return mood
    }
}

extension Mood: Managed {
    static var defaultSortDescriptors: [NSSortDescriptor] {
        [NSSortDescriptor(key: "date", ascending: false)]
    }
}
