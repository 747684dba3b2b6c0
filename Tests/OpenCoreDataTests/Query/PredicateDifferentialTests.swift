import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The same predicates three ways: `evaluate(with:)` on fetched objects, a fetch on the SQLite store
/// (SQL where the compiler can, memory for the rest) and a fetch on the in-memory store. All three
/// must select the same objects; a subset also checks the result Apple's documentation gives.
@Suite("Predicate differential")
struct PredicateDifferentialTests {
    /// `Person(key, name, age, score, born, flag)` with a to-one `team` and a to-many `pets`.
    static func model() -> NSManagedObjectModel {
        let person = NSEntityDescription(
            name: "Person",
            properties: [
                NSAttributeDescription(name: "key", type: .integer32AttributeType, isOptional: false),
                NSAttributeDescription(name: "name", type: .stringAttributeType),
                NSAttributeDescription(name: "age", type: .integer64AttributeType),
                NSAttributeDescription(name: "score", type: .doubleAttributeType),
                NSAttributeDescription(name: "born", type: .dateAttributeType),
                NSAttributeDescription(name: "flag", type: .booleanAttributeType),
            ])
        let team = NSEntityDescription(
            name: "Team",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType),
                NSAttributeDescription(name: "rank", type: .integer16AttributeType),
            ])
        let pet = NSEntityDescription(
            name: "Pet",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType),
                NSAttributeDescription(name: "legs", type: .integer16AttributeType),
            ])
        let members = NSRelationshipDescription(name: "members", destination: person, toMany: true)
        let inTeam = NSRelationshipDescription(name: "team", destination: team, toMany: false)
        members.inverseRelationship = inTeam
        inTeam.inverseRelationship = members
        let pets = NSRelationshipDescription(name: "pets", destination: pet, toMany: true)
        let owner = NSRelationshipDescription(name: "owner", destination: person, toMany: false)
        pets.inverseRelationship = owner
        owner.inverseRelationship = pets
        person.properties += [inTeam, pets]
        team.properties += [members]
        pet.properties += [owner]
        let model = NSManagedObjectModel()
        model.entities = [person, team, pet]
        return model
    }

    static let epoch = Date(timeIntervalSinceReferenceDate: 0)
    static func day(_ n: Double) -> Date { epoch.addingTimeInterval(n * 86_400) }

    /// key, name, age, score, born, flag, team index, pets (name, legs).
    typealias Row = (Int, String?, Int?, Double?, Date?, Bool?, Int?, [(String?, Int?)])
    static let rows: [Row] = [
        (1, "Émile", 30, 1.5, day(1), true, 0, [("Rex", 4), ("Tweety", 2)]),
        (2, "emile", -5, -2.25, day(-10), false, 1, []),
        (3, "EMILE", 0, 0, day(100), nil, nil, [("rex", 4)]),
        (4, "Zoë", 41, nil, nil, true, 0, [("Nemo", 0), ("Émile", nil), (nil, 8)]),
        (5, "zoe", nil, 99.75, day(1), false, 2, [("Spot", 3)]),
        (6, "straße", 30, 30, day(365), true, 1, [("ZOË", 4), ("Max", 4)]),
        (7, "", 7, -0.5, day(0), nil, nil, []),
        (8, nil, 100, nil, day(-1), true, 2, [("", 2)]),
        (9, "Ann O'Neil", nil, 3, nil, nil, 0, [("Rex", 6), ("Rex", 4), ("Bo", nil)]),
        (10, "a%b_c*d?e", 12, 12, day(50), false, nil, []),
        (11, "STRASSE", -100, 1e9, day(2), true, 1, [("bo", 4)]),
    ]
    /// Team name and rank.
    static let teams: [(String?, Int?)] = [("Red", 1), ("red", 2), (nil, nil)]

    static func seed(_ context: NSManagedObjectContext) throws {
        try context.performAndWait {
            let teamObjects = teams.map { name, rank in
                let values: [String: Any?] = ["name": name, "rank": rank]
                return insertObject("Team", values.compactMapValues { $0 }, into: context)
            }
            for (key, name, age, score, born, flag, team, pets) in rows {
                let values: [String: Any?] = [
                    "key": key, "name": name, "age": age, "score": score, "born": born, "flag": flag,
                    "team": team.map { teamObjects[$0] },
                ]
                let person = insertObject("Person", values.compactMapValues { $0 }, into: context)
                for (petName, legs) in pets {
                    let petValues: [String: Any?] = ["name": petName, "legs": legs]
                    let pet = insertObject("Pet", petValues.compactMapValues { $0 }, into: context)
                    pet.setValue(person, forKey: "owner")
                }
            }
            try context.save()
        }
    }

    /// A predicate with its format (for messages).
    struct Case {
        let format: String
        let args: [Any]
        var predicate: NSPredicate { NSPredicate(format: format, argumentArray: args) }
    }

    /// The predicates, generated: every operator × options × attribute type × constant kind, then
    /// relationships, aggregates, compounds.
    static func cases() -> [Case] {
        var cases: [Case] = []
        func add(_ format: String, _ args: Any...) { cases.append(Case(format: format, args: args)) }
        let options = ["", "[c]", "[d]", "[cd]"]
        // Strings: every operator with every option against a few constants (nil separately).
        let stringOps = ["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS"]
        let strings = ["emile", "Émile", "EMILE", "zoe", "Zoë", "", "straße", "STRASSE", "e", "O'Neil"]
        for op in stringOps {
            for option in options {
                for constant in strings { add("name \(op)\(option) %@", constant) }
            }
        }
        for option in options {
            for pattern in ["*mile", "?oe", "E*", "*", "", "*'*", "a%b_c\\*d\\?e", "*s*e"] {
                add("name LIKE\(option) %@", pattern)
            }
            for regex in ["[eé]mile", ".*", "z.*", "", "STRA(SS|ß)E"] { add("name MATCHES\(option) %@", regex) }
            add("name IN\(option) %@", ["emile", "Zoë", "nobody"])
            add("team.name ==\(option) %@", "red")
            add("ANY pets.name ==\(option) %@", "rex")
            add("ANY pets.name BEGINSWITH\(option) %@", "zo")
        }
        for op in ["==", "!="] {
            for key in ["name", "age", "score", "born", "flag", "team", "team.name", "team.rank"] {
                add("\(key) \(op) nil")
            }
        }
        add("name IN %@", [String]())
        add("name IN %@", ["", "straße"])
        add("name BETWEEN %@", ["a", "z"])
        add("name BETWEEN %@", ["A", "Z"])
        // Numbers: integer, double and mixed constants.
        let numbers: [Any] = [0, -5, 30, 30.0, 30.5, -100, Int64(100), 1e9]
        for key in ["age", "score"] {
            for op in ["==", "!=", "<", "<=", ">", ">="] {
                for constant in numbers { add("\(key) \(op) %@", constant) }
                add("\(key) \(op) nil")
            }
            add("\(key) IN %@", [0, 30, 12.0])
            add("\(key) IN %@", [Int]())
            add("\(key) BETWEEN %@", [-5, 30])
            add("\(key) BETWEEN {0, 12.5}")
            add("NOT (\(key) BETWEEN %@)", [-5, 30])
            add("\(key) IN {-100, 7}")
        }
        // Dates.
        for op in ["==", "!=", "<", "<=", ">", ">="] {
            for date in [day(1), day(0), day(-1000)] { add("born \(op) %@", date) }
        }
        add("born BETWEEN %@", [day(0), day(100)])
        add("born IN %@", [day(1), day(2)])
        // Booleans.
        for op in ["==", "!="] {
            for constant in ["YES", "NO", "TRUE", "FALSE"] { add("flag \(op) \(constant)") }
            add("flag \(op) %@", true)
            add("flag \(op) %@", 1)
        }
        add("flag == 0")
        add("flag == %@", 2)
        add("flag != %@", 2)
        add("flag > %@", 0.5)
        add("flag IN %@", [2, 0])
        add("flag IN {YES}")
        // To-one key paths.
        for op in ["==", "!=", "<", ">", ">="] { add("team.rank \(op) %@", 1) }
        add("team.name BEGINSWITH 'R'")
        add("team.name IN {'Red', 'Blue'}")
        add("team.rank BETWEEN {1, 2}")
        add("NOT (team.name == 'Red')")
        // To-many: ANY, ALL, NONE, @count.
        for modifier in ["ANY", "ALL", "NONE", "SOME"] {
            add("\(modifier) pets.legs > 3")
            add("\(modifier) pets.legs == 4")
            add("\(modifier) pets.legs != 4")
            add("\(modifier) pets.name == 'Rex'")
            add("\(modifier) pets.name BEGINSWITH[cd] 'e'")
            add("\(modifier) pets.legs IN {0, 2}")
            add("\(modifier) pets.legs BETWEEN {2, 4}")
            add("\(modifier) pets.name LIKE '*e*'")
        }
        add("ANY pets.name == nil")
        add("ALL pets.name != nil")
        add("ANY pets.name == ''")
        for op in ["==", "!=", "<", "<=", ">", ">="] {
            for n in [0, 1, 2] { add("pets.@count \(op) %@", n) }
        }
        add("pets.@count == 0 OR age == nil")
        add("pets.@sum.legs > 5")
        add("pets.@max.legs == 4")
        add("pets.@min.legs < 3")
        add("pets.@avg.legs >= 4")
        add("pets.@avg.legs == 0")
        add("pets.@sum.legs == 0")
        add("pets.@sum.legs != 8")
        add("pets.@max.legs == nil")
        add("pets.@max.legs != 4")
        add("pets.@min.legs IN {0, 2}")
        add("pets.@avg.legs BETWEEN {3, 4.5}")
        add("pets.@sum.legs > 2.5")
        add("SUBQUERY(pets, $p, $p.legs == 4).@count >= 1")
        add("ANY pets.owner.name == 'zoe'")
        add("team.members.@count > 2")
        add("ANY team.members.age > 40")
        // Constants of the wrong type: never equal in memory, and not converted by SQL either.
        add("age == %@", "30")
        add("age == %@", "notANumber")
        add("age != %@", "30")
        add("age IN %@", ["30", 7])
        add("name == %@", 5)
        add("score > %@", "1")
        add("born == %@", "x")
        add("flag == %@", "YES")
        add("team.rank == %@", 65537)
        add("team.rank < %@", 1.5)
        add("age == %@", Int16(7))
        add("age == %@", Float(12))
        add("score == %@", Float(1.5))
        // Edge values: decomposed Unicode, NSNull and sets in IN, reversed bounds, NaN and infinity.
        add("name == %@", "E\u{301}mile")
        add("name BEGINSWITH %@", "E\u{301}")
        add("name ==[c] %@", "e\u{301}MILE")
        add("name IN %@", Set(["zoe", "EMILE"]))
        add("name IN %@", NSArray(array: ["zoe", NSNull()]))
        add("age IN %@", NSArray(array: [NSNull(), 30]))
        add("age BETWEEN %@", [30, -5])
        add("score == %@", Double.nan)
        add("score < %@", Double.infinity)
        add("score > %@", -Double.infinity)
        add("score == %@", 1_000_000_000)
        add("born > %@", 5)
        add("born == %@", NSDate(timeIntervalSinceReferenceDate: 86_400))
        add("SELF.age > 3")
        add("name CONTAINS 'ß'")
        add("name ==[c] 'STRASSE'")
        add("name LIKE[c] 'é*'")
        add("name LIKE[cd] 'E*'")
        add("ANY pets.legs > %@", 3.5)
        add("ALL pets.name BEGINSWITH ''")
        add("NONE pets.legs == nil")
        add("ANY pets.name IN %@", ["Rex", "bo"])
        add("ANY pets.name ==[c] 'émile'")
        add("team.rank == %@", true)
        add("age == %@", true)
        // Compounds and NOT.
        add("age > 0 AND name BEGINSWITH[c] 'e'")
        add("age > 0 OR name BEGINSWITH[c] 'e'")
        add("NOT (age > 0)")
        add("NOT (name ==[cd] 'emile')")
        add("NOT (age > 0 AND score < 10)")
        add("(age == nil OR score == nil) AND NOT flag == YES")
        add("TRUEPREDICATE")
        add("FALSEPREDICATE")
        add("NOT TRUEPREDICATE")
        add("flag == YES AND (ANY pets.legs == 4 OR pets.@count == 0)")
        add("name CONTAINS[c] 'e' AND NOT (ANY pets.name ==[c] 'rex')")
        add("age > score")
        add("name == team.name")
        add("SELF == SELF")
        add("%@ IN name", "mil")
        add("30 == age")
        add("5 < age")
        add("'emile' ==[c] name")
        return cases
    }

    /// The `key`s of the people a result holds.
    static func keys(_ objects: [NSManagedObject]) -> Set<Int> {
        Set(objects.compactMap { ($0.value(forKey: "key") as? NSNumber)?.intValue })
    }

    final class Stores {
        let sqlite: TestStore
        let memory: TestStore
        init() throws {
            sqlite = try TestStore(NSSQLiteStoreType, model: PredicateDifferentialTests.model())
            memory = try TestStore(NSInMemoryStoreType, model: PredicateDifferentialTests.model())
            try PredicateDifferentialTests.seed(sqlite.newContext())
            try PredicateDifferentialTests.seed(memory.newContext())
        }

        /// The keys a fetch with `predicate` returns from `store`, or the error it throws.
        func fetch(_ predicate: NSPredicate, from store: TestStore) -> Result<Set<Int>, any Error> {
            let context = store.newContext()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = predicate
            return Result { try context.performAndWait { try PredicateDifferentialTests.keys(context.fetch(request)) } }
        }
    }

    @Test func sqliteStoreInMemoryStoreAndEvaluationAgree() throws {
        let stores = try Stores()
        let context = stores.sqlite.newContext()
        let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(everyone.count == Self.rows.count)
        let store = try sqliteStore(stores.sqlite.coordinator)
        let person = try #require(stores.sqlite.model.entitiesByName["Person"])
        let mapping = try #require(store.schema.mapping(for: person))

        let cases = Self.cases()
        var inSQL = 0
        var selective = 0
        for testCase in cases {
            let predicate = testCase.predicate
            let evaluated = context.performAndWait { Self.keys(everyone.filter { predicate.evaluate(with: $0) }) }
            let sqlite = stores.fetch(predicate, from: stores.sqlite)
            let memory = stores.fetch(predicate, from: stores.memory)
            #expect((try? sqlite.get()) == evaluated, "SQLite: \(testCase.format) \(testCase.args): \(sqlite), evaluated \(evaluated.sorted())")
            #expect((try? memory.get()) == evaluated, "in-memory: \(testCase.format) \(testCase.args): \(memory), evaluated \(evaluated.sorted())")
            if !evaluated.isEmpty, evaluated.count < Self.rows.count { selective += 1 }
            let query = SQLiteQuery(schema: store.schema, mapping: mapping)
            if SQLiteStore.conjuncts(of: predicate).allSatisfy({ query.compile($0) != nil }) {
                inSQL += 1
            } else if ProcessInfo.processInfo.environment["OCD_LIST_IN_MEMORY"] != nil {
                print("in memory: \(testCase.format) \(testCase.args)")
            }
        }
        // Recorded for the report; the numbers only move when the compiler or the list changes.
        print("PredicateDifferential: \(cases.count) predicates, \(inSQL) fully in SQL, \(selective) selective")
        #expect(cases.count >= 400)
        #expect(selective * 2 > cases.count, "most predicates select some but not all objects")
        #expect(inSQL * 20 > cases.count * 19, "the SQL compiler handles at least 95% of them")
    }

    /// NaN equals nothing and has no order (IEEE 754, NSNumber's `isEqual:`), also not nil values in
    /// SQL, where SQLite would bind it as NULL.
    @Test func nanMatchesNothing() throws {
        let stores = try Stores()
        for format in ["score == %@", "score != %@", "score < %@", "score >= %@"] {
            let predicate = NSPredicate(format: format, Double.nan)
            let expected: Set<Int> = format.contains("!=") ? Set(Self.rows.map(\.0)) : []
            #expect(try stores.fetch(predicate, from: stores.sqlite).get() == expected, "\(format)")
            #expect(try stores.fetch(predicate, from: stores.memory).get() == expected, "\(format)")
        }
    }

    /// Results Apple's documentation states, checked on both stores and in memory.
    @Test(arguments: [
        // `[c]` folds case only, `[d]` diacritics only (Predicate Programming Guide, "String Comparisons").
        ("name ==[c] 'emile'", [2, 3]),
        ("name ==[d] 'Emile'", [1]),
        ("name ==[cd] 'EMILE'", [1, 2, 3]),
        ("name == 'emile'", [2]),
        ("name ==[cd] 'zoe'", [4, 5]),
        ("name BEGINSWITH[cd] 'EM'", [1, 2, 3]),
        ("name ENDSWITH 'e'", [1, 2, 5, 6, 10]),
        // LIKE: `?` one character, `*` zero or more; the whole string must match.
        ("name LIKE '?oe'", [5]),
        ("name LIKE[d] 'Zoe'", [4]),
        ("name LIKE '*'", [1, 2, 3, 4, 5, 6, 7, 9, 10, 11]),
        ("name LIKE 'a%b_c\\\\*d\\\\?e'", [10]),
        // MATCHES: ICU regular expression over the whole string.
        ("name MATCHES '[eÉ]mile'", [1, 2]),
        // `!= nil` selects every non-nil value; `!= value` also selects nil (in-memory semantics).
        ("name != nil", [1, 2, 3, 4, 5, 6, 7, 9, 10, 11]),
        ("name == nil", [8]),
        ("age != 30", [2, 3, 4, 5, 7, 8, 9, 10, 11]),
        ("age > -10", [1, 2, 3, 4, 6, 7, 8, 10]),
        ("team == nil", [3, 7, 10]),
        ("team.name ==[c] 'red'", [1, 2, 4, 6, 9, 11]),
        ("flag == NO", [2, 5, 10]),
        // ANY/ALL/NONE over a to-many: ALL is true for no destinations.
        ("ANY pets.name == 'Rex'", [1, 9]),
        ("ALL pets.legs == 4", [2, 3, 6, 7, 10, 11]),
        ("NONE pets.legs == 4", [2, 4, 5, 7, 8, 10]),
        ("pets.@count == 0", [2, 7, 10]),
        ("pets.@count >= 2", [1, 4, 6, 9]),
    ])
    func documentedResults(format: String, expected: [Int]) throws {
        let stores = try Stores()
        let predicate = NSPredicate(format: format)
        let context = stores.sqlite.newContext()
        let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        let evaluated = context.performAndWait { Self.keys(everyone.filter { predicate.evaluate(with: $0) }) }
        #expect(evaluated == Set(expected), "evaluate(with:)")
        #expect(try stores.fetch(predicate, from: stores.sqlite).get() == Set(expected), "SQLite store")
        #expect(try stores.fetch(predicate, from: stores.memory).get() == Set(expected), "in-memory store")
    }
}
