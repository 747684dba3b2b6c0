import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The SQLite store reuses what it compiled for a format template's earlier instance
/// (`SQLiteStore.FetchPlan`). Every case runs one format with a sequence of arguments whose kinds
/// change the SQL (ASCII and non-ASCII strings, nil, NaN, temporary objects, collections, key
/// paths), and checks each fetch against in-memory evaluation of the same predicate. Debug builds
/// also assert, on every plan hit, that the plan's SQL and bindings are the compiler's.
@Suite("SQLite fetch plans for format templates")
struct SQLiteFetchPlanTests {
    /// Employees of two departments, with names that differ by case and diacritics, and nils.
    static func seeded() throws -> (TestStore, NSManagedObjectContext, [NSManagedObject]) {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        let departments = try context.performAndWait {
            let sales = insertObject("Department", ["name": "Sales", "budget": 10.5], into: context)
            let labs = insertObject("Department", ["name": "Labs"], into: context)
            let people: [(String, Int, NSManagedObject?, Bool)] = [
                ("Ann", 30, sales, true), ("ann", 41, labs, false), ("Zoë", 25, sales, true),
                ("Zoe", 52, nil, true), ("Bob", 30, labs, false), ("Émile", 19, nil, true),
            ]
            for (i, (name, age, department, active)) in people.enumerated() {
                let employee = insertObject(
                    i == 4 ? "Manager" : "Employee", ["name": name, "age": age, "active": active], into: context)
                employee.setValue(department, forKey: "department")
                if i % 2 == 0 { employee.setValue(Date(timeIntervalSinceReferenceDate: Double(i) * 1000), forKey: "hiredAt") }
            }
            try context.save()
            return [sales, labs]
        }
        return (store, context, departments)
    }

    /// Names fetched through the store, and names that evaluate true in memory, for `predicate`.
    static func results(
        _ predicate: NSPredicate, in context: NSManagedObjectContext, sortedBy sort: [NSSortDescriptor]? = nil,
        limit: Int = 0
    ) throws -> (store: [String], memory: [String]) {
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = predicate
            request.sortDescriptors = sort
            request.fetchLimit = limit
            let fetched = try context.fetch(request).map { $0.value(forKey: "name") as! String }
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
            let matching = all.filter { predicate.evaluate(with: $0) }.map { $0.value(forKey: "name") as! String }
            return (sort == nil ? fetched.sorted() : fetched, matching.sorted())
        }
    }

    static func plans(_ store: TestStore) throws -> Int {
        try #require(sqliteStore(store.coordinator).connection).fetchPlans.count
    }

    /// Each format with argument sets that take it down different paths of the compiler.
    static var cases: [(format: String, argumentSets: [[Any]])] {
        [
        ("name == %@", [["Ann"], ["Bob"], ["Zoë"], ["ann"], [NSNull()], ["Émile"], [30], ["Zoe"]]),
        ("name ==[cd] %@", [["zoe"], ["ANN"], ["emile"]]),
        ("name BEGINSWITH %@ OR name CONTAINS[c] %@", [["A", "o"], ["Z", "É"], ["É", "B"]]),
        ("age > %d", [[29], [40], [-1], [100]]),
        ("age >= %@ AND age < %@", [[25, 42], [25.5, 41.5], [Double.nan, 50], [19, 20]]),
        ("%K == %@", [["name", "Ann"], ["age", 30], ["name", "Bob"], ["age", 41], ["active", false]]),
        ("%K < %f", [["age", 30.5], ["age", 26], ["age", Double.infinity]]),
        ("hiredAt > %@ OR hiredAt == nil", [[Date(timeIntervalSinceReferenceDate: 500)], [Date.distantPast]]),
        ("name IN %@", [[["Ann", "Bob"]], [["Zoë"]], [[] as [String]], [["ann", "Zoe", "x"]]]),
        ("age BETWEEN {%d, %d}", [[20, 30], [40, 60]]),
        ("department.name == %@", [["Sales"], ["Labs"], ["Nobody"]]),
        ("department.employees.@count == %d", [[2], [3], [0]]),
        ("ANY department.employees.name == %@", [["Ann"], ["Bob"]]),
        ("name == %@ OR (age > %d AND age < %d)", [["Ann", 40, 60], ["Zoë", 20, 26], ["x", 0, 100]]),
        // Integers bound as they are (read without boxing): 2^32 + 30 does not wrap to an Int32's
        // 30, and 2 is no Boolean's true.
        ("%K == %d", [["age", 30], ["age", 4_294_967_326], ["active", 1], ["active", 2], ["age", Int64(41)], ["active", 0]]),
        ]
    }

    @Test(arguments: 0..<15)
    func instancesAgreeWithMemory(index: Int) throws {
        let (format, argumentSets) = Self.cases[index]
        let (store, context, _) = try Self.seeded()
        // Twice over, so that every argument set also runs after the others have made plans.
        for argumentSet in argumentSets + argumentSets {
            let predicate = NSPredicate(format: format, argumentArray: argumentSet)
            let (fetched, expected) = try Self.results(predicate, in: context)
            #expect(fetched == expected, "\(format) with \(argumentSet)")
        }
        _ = store
    }

    /// The variadic form's integers (read in place, another way into the template) bind as the
    /// `argumentArray:` form's do.
    @Test func variadicIntegersBindAsNumbers() throws {
        let (store, context, _) = try Self.seeded()
        for _ in 0..<2 {
            let predicates = [
                NSPredicate(format: "%K == %d", "age", 30), NSPredicate(format: "%K == %d", "age", 4_294_967_326),
                NSPredicate(format: "%K == %lld", "age", Int64(41)), NSPredicate(format: "%K == %lld", "active", Int64(2)),
                NSPredicate(format: "%K == %d", "active", 1),
            ]
            for predicate in predicates {
                let (fetched, expected) = try Self.results(predicate, in: context)
                #expect(fetched == expected, "\(predicate.predicateFormat)")
            }
        }
        _ = store
    }

    @Test func objectsAndTemporaryObjects() throws {
        let (store, context, departments) = try Self.seeded()
        let format = "department == %@"
        let unsaved = context.performAndWait { insertObject("Department", ["name": "New"], into: context) }
        // A temporary object compiles to a constant: no plan is kept for it, and a later permanent
        // object still finds the employees.
        for department in [departments[0], unsaved, departments[1], unsaved, departments[0]] {
            let predicate = NSPredicate(format: format, department)
            let (fetched, expected) = try Self.results(predicate, in: context)
            #expect(fetched == expected)
        }
        // Object IDs bind as primary keys too.
        let predicate = NSPredicate(format: format, departments[1].objectID)
        #expect(try Self.results(predicate, in: context).store == ["Bob", "ann"])
        _ = store
    }

    /// A plan reused with its prepared statement (the short way to the rows) applies each request's
    /// own limit and offset, returns faults or full objects as each asks, and returns the objects
    /// already registered for rows fetched before. Ages ascending: Émile 19, Zoë 25, Ann 30, Bob 30
    /// (a Manager), ann 41, Zoe 52.
    @Test func aReusedPlanFollowsEachRequestsLimitOffsetAndFaulting() throws {
        let (store, context, _) = try Self.seeded()
        try context.performAndWait {
            func fetch(_ minimum: Int, limit: Int, offset: Int, faults: Bool) throws -> [NSManagedObject] {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.predicate = NSPredicate(format: "age >= %d", minimum)
                request.sortDescriptors = [
                    NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: true),
                ]
                request.fetchLimit = limit
                request.fetchOffset = offset
                request.returnsObjectsAsFaults = faults
                return try context.fetch(request)
            }
            func names(_ objects: [NSManagedObject]) -> [String] { objects.map { $0.value(forKey: "name") as! String } }
            let first = try fetch(20, limit: 2, offset: 1, faults: true)
            #expect(names(first) == ["Ann", "Bob"])
            let plansAfterFirst = try Self.plans(store)
            let full = try fetch(26, limit: 3, offset: 0, faults: false)
            #expect(full.allSatisfy { !$0.isFault })
            #expect(names(full) == ["Ann", "Bob", "ann"])
            #expect(full[0] === first[0] && full[1] === first[1])
            context.refreshAllObjects()
            let faults = try fetch(0, limit: 1, offset: 4, faults: true)
            #expect(faults.count == 1 && faults[0].isFault)
            #expect(names(faults) == ["ann"])
            #expect(try names(fetch(0, limit: 5, offset: 5, faults: false)) == ["Zoe"])
            #expect(try fetch(60, limit: 1, offset: 0, faults: true).isEmpty)
            // The limit is written into the SQL and an offset of 0 leaves `OFFSET ?` out: limit 3,
            // limit 1 with an offset, limit 5 with one, and limit 1 alone have a plan each.
            #expect(try Self.plans(store) == plansAfterFirst + 4)
            // The offset is bound: another offset with limit 1 reuses that plan.
            #expect(try names(fetch(0, limit: 1, offset: 3, faults: false)) == ["Bob"])
            #expect(try Self.plans(store) == plansAfterFirst + 4)
        }
    }

    /// A planned fetch binds its values straight into the plan's statement; when one cannot be bound
    /// as the plan's first instance's was (NaN after 25.5), the fetch compiles afresh. Either way the
    /// store runs one statement per fetch, and the results are right.
    @Test func aValueThePlanCannotBindRunsOneStatementCompiledAfresh() throws {
        let (store, context, _) = try Self.seeded()
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        try context.performAndWait { () throws in
            func names(_ minimum: Double) throws -> [String] {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.predicate = NSPredicate(format: "age >= %@", minimum)
                return try context.fetch(request).map { $0.value(forKey: "name") as! String }.sorted()
            }
            #expect(try names(25.5) == ["Ann", "Bob", "Zoe", "ann"])
            #expect(try names(40.5) == ["Zoe", "ann"])  // the plan's statement
            #expect(try names(.nan) == [])  // compiled afresh
            #expect(try names(30) == ["Ann", "Bob", "Zoe", "ann"])
            #expect(try names(52.0) == ["Zoe"])
        }
        #expect(statements.count == 5, "\(statements)")
    }

    @Test func plansAreKeptPerTemplateAndRequestShape() throws {
        let (store, context, _) = try Self.seeded()
        #expect(try Self.plans(store) == 0)
        for age in [30, 41, 25] { _ = try Self.results(NSPredicate(format: "age == %d", age), in: context) }
        // The in-memory check above fetches without a predicate: no template, no plan.
        #expect(try Self.plans(store) == 1)
        // Another sort or a limit is another statement, so another plan; results still follow them.
        let ascending = try Self.results(
            NSPredicate(format: "age > %d", 20), in: context, sortedBy: [NSSortDescriptor(key: "age", ascending: true)])
        let descending = try Self.results(
            NSPredicate(format: "age > %d", 20), in: context, sortedBy: [NSSortDescriptor(key: "age", ascending: false)],
            limit: 2)
        #expect(ascending.store == ["Zoë", "Ann", "Bob", "ann", "Zoe"])
        #expect(descending.store == ["Zoe", "ann"])
        #expect(try Self.plans(store) == 3)
        // The sort alone (no limit) is a plan of its own too; ties keep the primary key's order.
        let descendingAll = try Self.results(
            NSPredicate(format: "age > %d", 20), in: context,
            sortedBy: [NSSortDescriptor(key: "age", ascending: false)])
        #expect(descendingAll.store == ["Zoe", "ann", "Ann", "Bob", "Zoë"])
        #expect(try Self.plans(store) == 4)
        // And no sort at all is another.
        #expect(try Self.results(NSPredicate(format: "age > %d", 20), in: context).store.count == 5)
        #expect(try Self.plans(store) == 5)
        // A collection's size changes the SQL: no plan.
        _ = try Self.results(NSPredicate(format: "age IN %@", [30, 41]), in: context)
        #expect(try Self.plans(store) == 5)
    }

    /// Instances of a one-comparison template whose sides hold every slot share their template's
    /// origin and have their slots read from their own sides: instances alive together, with the
    /// slot on either side or on both, each fetch and validate their own rows. Any other template's
    /// instance (a compound, or a comparison whose side is not the slot itself) has an origin of
    /// its own.
    @Test func comparisonInstancesShareAnOriginAndReadTheirOwnSlots() throws {
        let (store, context, _) = try Self.seeded()
        defer { withExtendedLifetime(store) {} }
        // A format, argument sets, the names each set matches, and each set's slots as formats.
        let formats: [(String, [[Any]], [[String]], [[String]])] = [
            ("%K == %d", [["age", 30], ["age", 41], ["age", 19]], [["Ann", "Bob"], ["ann"], ["Émile"]],
             [["age", "30"], ["age", "41"], ["age", "19"]]),
            ("%@ == name", [["Zoe"], ["Ann"]], [["Zoe"], ["Ann"]], [["\"Zoe\""], ["\"Ann\""]]),
            ("name == %@", [["Zoë"], ["Bob"]], [["Zoë"], ["Bob"]], [["\"Zoë\""], ["\"Bob\""]]),
            ("%d < %K", [[40, "age"], [50, "age"]], [["Zoe", "ann"], ["Zoe"]], [["40", "age"], ["50", "age"]]),
            ("name == %@ AND age > %d", [["Ann", 20], ["Bob", 40]], [["Ann"], []],
             [["\"Ann\"", "20"], ["\"Bob\"", "40"]]),
            ("age + 0 == %d", [[25], [52]], [["Zoë"], ["Zoe"]], [["25"], ["52"]]),
        ]
        for (format, argumentSets, expected, expectedSlots) in formats {
            let predicates = argumentSets.map { NSPredicate(format: format, argumentArray: $0) }
            let origins = predicates.map { $0._templateOrigin }
            let shares = !format.contains("AND") && !format.contains("+")
            #expect(origins.allSatisfy { $0 != nil }, "\(format)")
            #expect((origins[0] === origins[1]) == shares, "\(format)")
            for (predicate, slots) in zip(predicates, expectedSlots) {
                let origin = try #require(predicate._templateOrigin)
                #expect(origin.slots(of: predicate).map(\.description) == slots, "\(predicate)")
            }
            for _ in 0..<2 {  // the second round by the plans the first made
                for (predicate, names) in zip(predicates, expected).reversed() {
                    let (fetched, evaluated) = try Self.results(predicate, in: context)
                    #expect(fetched == names.sorted(), "\(predicate)")
                    #expect(evaluated == names.sorted(), "\(predicate)")
                }
            }
        }
    }
}

extension SQLiteFetchPlanTests {
    /// An instance of a one-comparison template whose integer slot (`%d`, `%lld`) is given an `Int`
    /// or `Int64` leaves that side pending: its slots' value, type and key path (what a fetch by a
    /// plan reads: the release benchmark's lookups) are read without making its expression.
    /// Reading the side makes it once, as the direct parse makes it; the instance fetches (the
    /// second time by the plan the first made), formats, compares equal and evaluates as the
    /// direct parse's does, with the integer on either side. Another integer type (`Int32`) makes
    /// the side at once. (Debug builds make the side in every planned fetch: they compile it again
    /// to check the plan.)
    @Test func integerSlotsStayPendingUntilRead() throws {
        let (store, context, _) = try Self.seeded()
        defer { withExtendedLifetime(store) {} }
        let cases: [(NSPredicate, String, [Any], [String], pendingIsRight: Bool?)] = [
            (NSPredicate(format: "%K == %lld", "age", Int64(30)), "%K == %lld", ["age", 30], ["Ann", "Bob"], true),
            (NSPredicate(format: "%K == %d", "age", 41), "%K == %d", ["age", 41], ["ann"], true),
            (NSPredicate(format: "%d < %K", 40, "age"), "%d < %K", [40, "age"], ["Zoe", "ann"], false),
            (NSPredicate(format: "age >= %d", 41), "age >= %d", [41], ["Zoe", "ann"], true),
            (NSPredicate(format: "age == %d", Int32(25)), "age == %d", [25], ["Zoë"], nil),
        ]
        for (predicate, format, arguments, names, pendingIsRight) in cases {
            let comparison = try #require(predicate as? NSComparisonPredicate)
            #expect((comparison._left == nil) == (pendingIsRight == false), "\(format)")
            #expect((comparison._right == nil) == (pendingIsRight == true), "\(format)")
            if pendingIsRight != nil {
                let slots = try #require(predicate._templateOrigin).slots(of: predicate)
                let index = try #require(arguments.firstIndex { $0 is Int })
                let value = try #require(arguments[index] as? Int)
                #expect(slots.constantInteger(at: index) == Int64(value))
                #expect(slots.constantType(at: index) == ObjectIdentifier(Int.self))
                #expect(slots.plainKeyPath(at: index) == nil)
                if arguments.count == 2 { #expect(slots.plainKeyPath(at: 1 - index) == "age") }
                #expect(!comparison._hasMadePendingExpression, "\(format)")
                #expect(slots[index].constantValue as? Int == value)  // made now
            }
            for _ in 0..<2 {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.predicate = predicate
                let fetched = try context.performAndWait { try context.fetch(request) }
                #expect(fetched.map { $0.value(forKey: "name") as! String }.sorted() == names.sorted(), "\(format)")
            }
            let direct = try PredicateParser.parsePredicateUncached(format, arguments: arguments)
            #expect(predicate == direct, "\(format)")
            #expect(predicate.predicateFormat == direct.predicateFormat)
            if let pendingIsRight {
                #expect(comparison._hasMadePendingExpression, "\(format)")
                let side = pendingIsRight ? comparison.rightExpression : comparison.leftExpression
                #expect(side === (pendingIsRight ? comparison.rightExpression : comparison.leftExpression))
                #expect(side.constantValue as? Int == arguments.compactMap { $0 as? Int }.first)
                #expect(side._constantInteger != nil && side._constantType == ObjectIdentifier(Int.self))
            }
            #expect(try Self.results(predicate, in: context).memory == names.sorted(), "\(format)")
        }
    }

    /// A typed fetch by a plan runs on the request's own settings, without the context's
    /// type-erasing copy, only where nothing else applies: the entity's unsaved changes are still
    /// merged, `affectedStores` still obeyed, and a subclass's overriding accessor still read, each
    /// once the plan exists.
    @Test func aPlannedTypedFetchLeavesOtherFetchesToTheGeneralPath() throws {
        let (store, context, _) = try Self.seeded()
        defer { withExtendedLifetime(store) {} }
        try context.performAndWait { () throws -> Void in
            func names(_ request: NSFetchRequest<NSManagedObject> = NSFetchRequest(entityName: "Employee"))
                throws -> [String]
            {
                request.predicate = NSPredicate(format: "%K == %d", "age", 30)
                return try context.fetch(request).map { $0.value(forKey: "name") as! String }.sorted()
            }
            #expect(try names() == ["Ann", "Bob"])  // makes the plan
            #expect(try names() == ["Ann", "Bob"])  // by the plan
            let unsaved = insertObject("Employee", ["name": "Dee", "age": 30], into: context)
            #expect(try names() == ["Ann", "Bob", "Dee"])
            context.delete(unsaved)
            #expect(try names() == ["Ann", "Bob"])
            let none = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            none.affectedStores = []
            #expect(try names(none) == [])
            let limited = FirstOnlyEmployees(entityName: "Employee")
            #expect(try names(limited).count == 1)
        }
        // A batched request still gets its lazily loading faults, and prefetching still prefetches
        // (in a fresh context each, after the plan is made).
        let batched = store.newContext()
        try batched.performAndWait { () throws -> Void in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "%K == %d", "age", 30)
            request.fetchBatchSize = 1
            let objects = try batched.fetch(request)
            #expect(objects.count == 2 && objects.allSatisfy { $0._fetchBatch != nil })
        }
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let prefetching = store.newContext()
        try prefetching.performAndWait { () throws -> Void in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "%K == %d", "age", 30)
            request.relationshipKeyPathsForPrefetching = ["department"]
            let objects = try prefetching.fetch(request)
            let fetched = statements.count
            let departments = objects.compactMap {
                ($0.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name")
            }
            #expect(departments.count == 2)
            #expect(statements.count == fetched, "\(statements.suffix(statements.count - fetched))")
        }
    }

    /// Two integer slots: the first is left pending, the second made; both sides read back as the
    /// direct parse's, and the comparison evaluates as it does.
    @Test func aTemplateWithTwoIntegerSlotsLeavesTheFirstPending() throws {
        for (a, b) in [(30, 30), (30, 41)] {
            let predicate = try #require(NSPredicate(format: "%d == %d", a, b) as? NSComparisonPredicate)
            #expect(predicate._left == nil && predicate._right != nil)
            let direct = try PredicateParser.parsePredicateUncached("%d == %d", arguments: [a, b])
            #expect(predicate == direct)
            #expect(predicate.evaluate(with: nil) == (a == b))
        }
    }

    /// Threads that read a fresh instance's pending side together all get the one expression made.
    @Test func aPendingSideIsMadeOnceForConcurrentReaders() {
        for round in 0..<20 {
            let predicate = NSPredicate(format: "%K == %lld", "age", Int64(round)) as! NSComparisonPredicate
            let seen = Locked<Set<ObjectIdentifier>>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let side = predicate.rightExpression
                seen.withLock { _ = $0.insert(ObjectIdentifier(side)) }
            }
            #expect(seen.withLock { $0.count } == 1)
            #expect(predicate.rightExpression.constantValue as? Int == round)
        }
    }
}

/// An object whose `awakeFromFetch()` runs a fetch (once, not from nested fetches).
final class FetchingProbe: NSManagedObject {
    nonisolated(unsafe) static var nestedFetch: ((NSManagedObjectContext) -> Void)?
    nonisolated(unsafe) static var depth = 0

    override func awakeFromFetch() {
        super.awakeFromFetch()
        guard Self.depth == 0, let context = managedObjectContext, let nestedFetch = Self.nestedFetch else { return }
        Self.depth += 1
        defer { Self.depth -= 1 }
        nestedFetch(context)
    }
}

@Suite("SQLite statements reused while they are stepped", .serialized)
struct SQLiteNestedFetchTests {
    static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription(
            name: "Probe", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        entity.managedObjectClassName = String(reflecting: FetchingProbe.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    /// A fetch inside `awakeFromFetch()` of the same shape (the same format, so the same plan and
    /// statement) while the outer fetch is still stepping its statement: each must see every row
    /// once. Apple documents no rule against fetching there.
    @Test(arguments: ["name != %@", "name != 'x'"])
    func aFetchInsideAwakeFromFetchDoesNotDisturbTheOuterOne(format: String) throws {
        let store = try TestStore(NSSQLiteStoreType, model: Self.model())
        let writer = store.newContext()
        try writer.performAndWait {
            for name in ["a", "b", "c", "d"] { insertObject("Probe", ["name": name], into: writer) }
            try writer.save()
        }
        func request(_ excluded: String) -> NSFetchRequest<NSManagedObject> {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Probe")
            request.predicate = NSPredicate(format: format, excluded)
            request.returnsObjectsAsFaults = false
            return request
        }
        var nestedCounts: [Int] = []
        FetchingProbe.nestedFetch = { context in nestedCounts.append((try? context.fetch(request("zz")).count) ?? -1) }
        defer { FetchingProbe.nestedFetch = nil }
        let reader = store.newContext()
        let names = try reader.performAndWait { try reader.fetch(request("zz")).map { $0.value(forKey: "name") as! String } }
        #expect(names == ["a", "b", "c", "d"])
        #expect(!nestedCounts.isEmpty && nestedCounts.allSatisfy { $0 == 4 }, "\(nestedCounts)")
    }
}

/// A template instance's slots: one or two kept inline, more in an array; each reads back in order.
@Suite struct TemplateSlotsTests {
    @Test(arguments: 0...4)
    func slotsReadBackInOrder(count: Int) {
        let expressions = (0..<count).map { NSExpression(forConstantValue: $0) }
        let slots = TemplateSlots(expressions)
        #expect(slots.count == count)
        #expect(slots.map(ObjectIdentifier.init) == expressions.map(ObjectIdentifier.init))
        if count >= 1 {
            let inline = TemplateSlots(expressions[0], count >= 2 ? expressions[1] : nil)
            #expect(Array(inline).map(ObjectIdentifier.init) == expressions.prefix(2).map(ObjectIdentifier.init))
        }
    }
}

/// A typed request whose `fetchLimit` getter says 1.
private final class FirstOnlyEmployees: NSFetchRequest<NSManagedObject> {
    override var fetchLimit: Int {
        get { 1 }
        set {}
    }
}
