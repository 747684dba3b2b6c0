import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Random inserts, updates, deletes, relationship changes, saves, rollbacks and refreshes in a
/// root, its child and its grandchild (one thread). After each step: the root's inverses agree
/// (what children push keeps its graph whole; a child's own graph may be stale, as on Apple, since
/// nothing merges its parent's later changes into it), and in every context counts agree with
/// fetches and a child sees what its parent sees plus its own inserts and updates, less its
/// deletes. At the end, once everything is saved, the store, the root and a fresh child agree.
/// Deterministic: `OCD_SEED=<n>` replays one seed, `OCD_STRESS=1` runs more.
@Suite("Nested contexts: randomized")
struct NestedContextFuzzTests {
    @Test func randomOperationsKeepEveryLevelConsistent() throws {
        let environment = ProcessInfo.processInfo.environment
        let stress = environment["OCD_STRESS"] != nil
        let seeds: [UInt64] = environment["OCD_SEED"].flatMap(UInt64.init).map { [$0] } ?? (stress ? Array(1...20) : [1, 2, 3])
        for seed in seeds { try run(seed: seed, steps: stress ? 2_000 : 250) }
    }

    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let stack = try NestedStack()
        let child = stack.child()
        let grandchild = stack.child(of: child)
        let contexts = [stack.root, child, grandchild]
        for context in contexts { context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump }

        func all(_ entity: String, in context: NSManagedObjectContext) throws -> [NSManagedObject] {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.sortDescriptors = [NSSortDescriptor(key: "objectID", ascending: true)]
            return try context.fetch(request)
        }
        func pick(_ entity: String, in context: NSManagedObjectContext) throws -> NSManagedObject? {
            let objects = try all(entity, in: context)
            return objects.isEmpty ? nil : objects[Int.random(in: 0..<objects.count, using: &random)]
        }

        for step in 0..<steps {
            let level = Int.random(in: 0..<3, using: &random)
            let context = contexts[level]
            let operation = Int.random(in: 0..<10, using: &random)
            switch operation {
            case 0, 1:
                country(Int16.random(in: 0..<100, using: &random), in: context)
            case 2:
                try pick("Country", in: context)?.setValue(Int16.random(in: 0..<100, using: &random), forKey: "numericISO3166Code")
            case 3:
                if let victim = try pick("Country", in: context) { context.delete(victim) }
            case 4:
                let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: context)
                mood.setValue(Date(timeIntervalSinceReferenceDate: Double(step)), forKey: "date")
                mood.setValue(try pick("Country", in: context), forKey: "country")
            case 5:
                if let mood = try pick("Mood", in: context) { mood.setValue(try pick("Country", in: context), forKey: "country") }
            case 6, 7:
                context.processPendingChanges()
                do { try context.save() } catch { context.rollback() }  // e.g. an update to an object the parent deleted
            case 8:
                context.rollback()
            default:
                // (A changed object refreshed without merging drops one side of its relationship
                // changes and leaves the other, as on Apple: only unchanged ones are.)
                if let object = try pick("Country", in: context) {
                    context.refresh(object, mergeChanges: object.hasChanges || Bool.random(using: &random))
                }
            }
            for (index, context) in contexts.enumerated() {
                context.processPendingChanges()
                let where_ = "seed \(seed) step \(step) operation \(operation) at level \(level), checking level \(index)"
                if index == 0 { #expect(context._checkInvariants().isEmpty, "\(where_): \(context._checkInvariants())") }
                let countries = try all("Country", in: context)
                #expect(try countedCountries(context) == countries.count, "\(where_): count")
                // (Compared with the fetch, not with the objects' values: a child's unchanged objects
                // can hold older values than its parent's, and a predicate matches the parent's.)
                #expect(
                    try countedCountries(context, "numericISO3166Code < 50")
                        == fetchedCodes(context, "numericISO3166Code < 50").count, "\(where_): count with a predicate")
                guard let parent = context.parent else { continue }
                let seenAbove = Set(try all("Country", in: parent).map(\.objectID))
                let own = context.insertedObjects.union(context.updatedObjects).filter { $0.entity.name == "Country" }
                let dropped = Set(context.deletedObjects.map(\.objectID))
                let expected = seenAbove.union(own.map(\.objectID)).subtracting(dropped)
                #expect(Set(countries.map(\.objectID)) == expected, "\(where_): what the child sees")
                if Set(countries.map(\.objectID)) != expected { return }
            }
        }

        for context in contexts.reversed() {
            context.processPendingChanges()
            do { try context.save() } catch {
                context.rollback()
                try context.save()
            }
        }
        #expect(stack.root._checkInvariants().isEmpty, "seed \(seed): \(stack.root._checkInvariants())")
        let stored = try stack.storedCodes().sorted()
        #expect(try all("Country", in: stack.root).map(code).sorted() == stored, "seed \(seed): root and store")
        #expect(try all("Country", in: stack.child()).map(code).sorted() == stored, "seed \(seed): a fresh child and store")
        let other = try makeContext(model: stack.model, storeType: NSSQLiteStoreType, at: stack.url)
        let storedMoods = try all("Mood", in: other).map { ($0.value(forKey: "country") as? NSManagedObject).map(code) ?? -1 }
        let rootMoods = try all("Mood", in: stack.root).map { ($0.value(forKey: "country") as? NSManagedObject).map(code) ?? -1 }
        #expect(storedMoods.sorted() == rootMoods.sorted(), "seed \(seed): moods' countries, root and store")
    }
}
