import Foundation

/// The rows every library writes: the same values, computed the same way, so that the work is equal.
struct ItemValues {
    var id: Int64
    var name: String
    var rank: Int16
    var score: Double
    var weight: Double
    /// Seconds since 2001-01-01, which is how Core Data stores a Date.
    var createdAt: Double
    var flag: Bool
    var note: String?

    init(_ i: Int) {
        id = Int64(i)
        name = "item \(i)"
        rank = Int16(i % 1000)
        score = Double(i) * 0.5
        weight = Double(i % 97) + 0.25
        createdAt = 700_000_000 + Double(i)
        flag = i % 2 == 0
        note = i % 3 == 0 ? nil : "note \(i)"
    }

    /// Values read back from a row: the fields and nothing else (raw's and GRDB SQL's case 2 made
    /// `ItemValues(0)` first, formatting two strings a row that were thrown away).
    init(
        id: Int64, name: String, rank: Int16, score: Double, weight: Double, createdAt: Double, flag: Bool,
        note: String?
    ) {
        self.id = id
        self.name = name
        self.rank = rank
        self.score = score
        self.weight = weight
        self.createdAt = createdAt
        self.flag = flag
        self.note = note
    }

    /// What case 2 folds every attribute into, to check that all libraries read the same values.
    static func checksum(
        id: Int64, name: String, rank: Int16, score: Double, weight: Double, createdAt: Double, flag: Bool,
        note: String?
    ) -> Int64 {
        id &+ Int64(name.utf8.count) &+ Int64(rank) &+ Int64(score * 2) &+ Int64(weight * 4)
            &+ Int64(createdAt.rounded())
            &+ (flag ? 1 : 0) &+ Int64(note?.utf8.count ?? 0)
    }
}

/// The sizes a case works on, derived from `--n`.
struct Sizes {
    let n: Int
    /// Case 4: lookups (10,000 at N = 100,000).
    var lookups: Int { max(1, n / 10) }
    /// Case 7: moods (10,000 at N = 100,000) among `countries7` countries.
    var moods7: Int { max(1, n / 10) }
    var countries7: Int { min(250, moods7) }
    /// Case 8: countries (1,000 at N = 100,000), 100 moods each.
    var countries8: Int { max(1, n / 100) }
    let moodsPerCountry8 = 100

    /// The key of the `j`th lookup of case 4: spread over 0..<n, the same for every library.
    func lookupKey(_ j: Int) -> Int64 { Int64((j &* 7_919 &+ 13) % n) }
    /// The country code of the `i`th mood of case 7: 1...countries7, in an order that revisits them.
    func countryCode7(_ i: Int) -> Int16 { Int16((i &* 7_919) % countries7 + 1) }
    /// The date of a mood (cases 7 and 8).
    static func moodDate(_ i: Int) -> Double { 700_000_000 + Double(i) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
