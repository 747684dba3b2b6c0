import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// The one-entry caches a lookup fetch goes through before its store: the model's last resolved
/// entity name, the coordinator's last answer for an entity's stores, and a format template's last
/// `%K` expression and one-comparison instances. Each must give the answer it gives without the
/// cache, whatever was asked before.
@Suite struct FetchResolutionCacheTests {
    private static func names(_ request: NSFetchRequest<NSManagedObject>, in context: NSManagedObjectContext) throws
        -> [String]
    {
        try context.fetch(request).map { "\($0.entity.name ?? "?"):\($0.value(forKey: "name") as? String ?? "?")" }
    }

    @Test func aRequestReusedWithAnotherEntityNameFetchesThatEntity() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        try context.performAndWait {
            insertObject("Department", ["name": "Ann"], into: context)
            insertObject("Employee", ["name": "Ann", "age": 30], into: context)
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            for (entityName, expected) in [("Department", "Department:Ann"), ("Employee", "Employee:Ann"), ("Department", "Department:Ann")] {
                request.entityName = entityName
                request.predicate = NSPredicate(format: "%K == %@", "name", "Ann")
                request.fetchLimit = 1
                #expect(try Self.names(request, in: context) == [expected])
                #expect(request.entity == nil)  // the caller's request is not resolved in place
            }
            let unknown = NSFetchRequest<NSManagedObject>(entityName: "Nope")
            #expect(throws: OpenCoreDataError.self) { try context.fetch(unknown) }
        }
    }

    /// Runs `body` in the queue of a context whose store holds Ann (30) and Bob (40).
    private static func withAnnAndBob(_ body: (NSManagedObjectContext) throws -> Void) throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        try context.performAndWait {
            insertObject("Employee", ["name": "Ann", "age": 30], into: context)
            insertObject("Employee", ["name": "Bob", "age": 40], into: context)
            try context.save()
            try body(context)
        }
    }

    private static func names(_ objects: [NSManagedObject]) -> [String] {
        objects.compactMap { $0.value(forKey: "name") as? String }.sorted()
    }

    /// A fetch hands its stores the request with its entity resolved, and counting asks them for
    /// another result type: the caller's request must stay as it was.
    @Test func countingLeavesTheCallersRequestAsItWas() throws {
        try Self.withAnnAndBob { (context: NSManagedObjectContext) throws in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "age > 35")
            #expect(try context.count(for: request) == 1)
            #expect(request.resultType == .managedObjectResultType && request.entity == nil)
            insertObject("Employee", ["name": "Cy", "age": 50], into: context)  // pending: counted in memory
            #expect(try context.count(for: request) == 2)
            #expect(request.resultType == .managedObjectResultType)
            #expect(Self.names(try context.fetch(request)) == ["Bob", "Cy"])
        }
    }

    /// A subclass may override a setting's getter (Apple's stores read the request through its
    /// getters): the store reads the override, not the stored setting.
    @Test func aSubclasssOverriddenGetterIsWhatTheStoreReads() throws {
        try Self.withAnnAndBob { (context: NSManagedObjectContext) throws in
            let request = OverFortyRequest(entityName: "Employee")
            request.predicate = NSPredicate(format: "age < 35")  // the override ignores it
            #expect(Self.names(try context.fetch(request)) == ["Bob"])
        }
    }

    /// A context keeps its last fetch's request copy for the next fetch, emptied: it keeps nothing
    /// of that fetch alive, and the next fetch sees only its own settings.
    @Test func theReusedRequestCopyKeepsNothingOfTheLastFetch() throws {
        try Self.withAnnAndBob { (context: NSManagedObjectContext) throws in
            weak var predicate: NSPredicate?
            weak var sort: NSSortDescriptor?
            do {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                let made = NSPredicate(format: "age > %d", 35)
                let byName = NSSortDescriptor(key: "name", ascending: false)
                (predicate, sort) = (made, byName)
                request.predicate = made
                request.sortDescriptors = [byName]
                request.fetchLimit = 1
                #expect(Self.names(try context.fetch(request)) == ["Bob"])
            }
            #expect(predicate == nil && sort == nil, "the context kept the last fetch's settings alive")
            let all = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            #expect(Self.names(try context.fetch(all)) == ["Ann", "Bob"])
            let subclassed = OverFortyRequest(entityName: "Employee")
            #expect(Self.names(try context.fetch(subclassed)) == ["Bob"])
            #expect(Self.names(try context.fetch(all)) == ["Ann", "Bob"])
        }
    }

    /// Two models with an entity of the same name: each context resolves its own model's.
    @Test func eachModelResolvesItsOwnEntity() throws {
        func model(_ attribute: String) -> NSManagedObjectModel {
            let model = NSManagedObjectModel()
            model.entities = [
                NSEntityDescription(
                    name: "Thing",
                    properties: [
                        NSAttributeDescription(name: "name", type: .stringAttributeType),
                        NSAttributeDescription(name: attribute, type: .integer64AttributeType),
                    ])
            ]
            return model
        }
        let first = try TestStore(NSSQLiteStoreType, model: model("size"))
        let second = try TestStore(NSSQLiteStoreType, model: model("weight"))
        for _ in 0..<2 {
            for (store, attribute) in [(first, "size"), (second, "weight")] {
                let context = store.newContext()
                try context.performAndWait { () throws in
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Thing")
                    request.predicate = NSPredicate(format: "%K == %lld", attribute, Int64(1))
                    #expect(try context.fetch(request).isEmpty)
                    #expect(store.model._entity(named: "Thing") === store.model.entitiesByName["Thing"])
                    #expect(store.model._entity(named: "Thing")?.attributesByName[attribute] != nil)
                }
            }
        }
    }

    /// Setting a model's entities drops the remembered name.
    @Test func replacingAModelsEntitiesForgetsTheLastName() {
        let model = NSManagedObjectModel()
        let old = NSEntityDescription(name: "Thing", properties: [])
        model.entities = [old, NSEntityDescription(name: "Other", properties: [])]
        #expect(model._entity(named: "Thing") === old)
        #expect(model._entity(named: "Thing") === old)
        let new = NSEntityDescription(name: "Thing", properties: [])
        model.entities = [new]
        #expect(model._entity(named: "Thing") === new)
        #expect(model._entity(named: "Other") == nil)
        #expect(model._entity(named: "Thing") === new)
    }

    /// A store added after a fetch takes part in the next fetch of the same entity.
    @Test func storesAddedAfterAFetchAreAskedNext() throws {
        let model = TestModels.company()
        let coordinator = try StoreHarness.coordinator(model: model, storeType: NSInMemoryStoreType)
        let context = StoreHarness.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        try context.performAndWait {
            insertObject("Department", ["name": "Sales"], into: context)
            try context.save()
            #expect(try context.count(for: request) == 1)
        }
        let entity = try #require(model.entitiesByName["Department"])
        #expect(coordinator.stores(for: entity).count == 1)
        let added = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        #expect(coordinator.stores(for: entity).count == 2)
        try coordinator.remove(added)
        #expect(coordinator.stores(for: entity).count == 1)
        try context.performAndWait { () throws in #expect(try context.count(for: request) == 1) }
    }

    /// `%K` slots given the same key share one expression; another key gets its own, and the
    /// predicates are the direct parse's either way.
    @Test func keyPathSlotsFollowTheirArguments() throws {
        var previous: NSComparisonPredicate?
        for (key, value) in [("id", 1), ("id", 2), ("code", 3), ("id", 4)] {
            let predicate = try #require(NSPredicate(format: "%K == %lld", key, Int64(value)) as? NSComparisonPredicate)
            let direct = try PredicateParser.parsePredicateUncached("%K == %lld", arguments: [key, Int64(value)])
            #expect(predicate == direct)
            #expect(predicate.predicateFormat == "\(key) == \(value)")
            #expect(predicate.leftExpression.keyPath == key)
            #expect(predicate.evaluate(with: [key: value]))
            #expect(!predicate.evaluate(with: [key: value + 1]))
            if let previous {
                let sameKey = previous.leftExpression.keyPath == key
                #expect((previous.leftExpression === predicate.leftExpression) == sameKey)
            }
            previous = predicate
        }
    }

    /// A `%K` slot keeps the expression of the first key it was given where it is read without a
    /// lock: that key gets the same expression back after other keys came between; another key has
    /// its own, shared while it is the last one given. (A format of this test's own, so that no
    /// other test gives its slot a key first.)
    @Test func aSlotsFirstKeyPathIsShared() throws {
        func left(_ key: String, _ value: Int64) throws -> NSExpression {
            let predicate = NSPredicate(format: "%K != %lld AND name != 'first-key test'", key, value)
            let compound = try #require(predicate as? NSCompoundPredicate)
            return try #require(compound.subpredicates.first as? NSComparisonPredicate).leftExpression
        }
        let first = try left("id", 1)
        let code = try left("code", 2)
        let again = try left("id", 3)
        let codeAgain = try left("code", 4)
        #expect(first.keyPath == "id" && code.keyPath == "code")
        #expect(again === first)
        #expect(code !== first)
        #expect(codeAgain === code)
    }

    /// One-comparison templates are instantiated directly; every kind of side gives the direct
    /// parse, and arguments of other types than the in-place ones go the general way.
    @Test func oneComparisonTemplatesGiveTheDirectParse() throws {
        let cases: [(String, [Any?])] = [
            ("%K == %lld", ["id", Int64(7)]),
            ("%K == %d", ["id", 7]),
            ("%K == %d", ["id", Int32(7)]),
            ("%K == %@", ["name", "Ann"]),
            ("%K == %@", ["name", NSString(string: "Ann")]),
            ("%K == %@", ["name", nil]),
            ("%@ == name", ["Ann"]),
            ("id < %d", [3]),
            ("%K == 'x'", ["name"]),
            ("%K == $VALUE", ["name"]),
            ("SELF == %@", ["a"]),
            ("%K == %K", ["a", "b"]),
            ("%K BEGINSWITH[cd] %@", ["name", "é"]),
            ("ANY %K == %d", ["tags", 2]),
        ]
        for _ in 0..<2 {
            for (format, args) in cases {
                let direct = try PredicateParser.parsePredicateUncached(format, arguments: PredicateParser.formatArguments(args))
                let arguments = args.map { $0 ?? NSNull() }
                let instance = NSPredicate(format: format, argumentArray: arguments)
                #expect(instance == direct, "\(format) \(args)")
                #expect(instance.predicateFormat == direct.predicateFormat, "\(format) \(args)")
            }
        }
        // The variadic form (read in place) and its evaluation.
        let variadic = NSPredicate(format: "%K == %d", "id", 7)
        #expect(variadic.predicateFormat == "id == 7")
        #expect(variadic.evaluate(with: ["id": 7]) && !variadic.evaluate(with: ["id": 8]))
        #expect(NSPredicate(format: "%K == %@", "name", nil).predicateFormat == "name == nil")
    }

    /// An integer argument (`%d`, `%lld`, as `Int`, `Int64` or through the array form) becomes a
    /// constant `Int` with the fields the direct parse's constant has, plus the integer a planned
    /// fetch binds without boxing.
    @Test func integerArgumentsBecomeIntConstants() throws {
        let predicates = [
            NSPredicate(format: "%K == %lld", "id", Int64(-7)), NSPredicate(format: "id == %d", -7),
            NSPredicate(format: "id == %lld", argumentArray: [Int64(-7)]),
            NSPredicate(format: "id == %d", argumentArray: [-7]),
        ]
        let direct = NSExpression(forConstantValue: -7)
        for predicate in predicates {
            let constant = try #require((predicate as? NSComparisonPredicate)?.rightExpression)
            #expect(constant == direct)
            #expect(constant.expressionType == .constantValue)
            #expect(constant.constantValue as? Int == -7)
            #expect(constant._constantType == direct._constantType)
            #expect(constant._constantInteger == -7)
            #expect(constant._plainKeyPath == nil)
        }
    }
}

/// A request whose predicate getter is overridden (see `aSubclasssOverriddenGetterIsWhatTheStoreReads`).
private final class OverFortyRequest: NSFetchRequest<NSManagedObject> {
    override var predicate: NSPredicate? {
        get { NSPredicate(format: "age > 35") }
        set {}
    }
}
