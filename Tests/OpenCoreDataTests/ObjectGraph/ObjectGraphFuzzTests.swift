import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Thousands of random graph operations on ``TestModels/graph()`` (every relationship shape and
/// delete rule), on each store. After every step the context's invariants hold; after every save
/// a fresh context (and, for SQLite, a new coordinator on the file) reads the same graph from the
/// store (read plainly, with prefetching, or in batches); after every rollback the context shows
/// the last saved graph again.
///
/// Deterministic: a failure names its seed and step; `OCD_SEED=<n>` replays one seed,
/// `OCD_STRESS=1` runs more seeds and longer runs.
@Suite("Object graph, randomized")
struct ObjectGraphFuzzTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    @Test(arguments: storeTypes)
    func randomOperationsKeepTheGraphAndTheStoreInStep(storeType: String) throws {
        let environment = ProcessInfo.processInfo.environment
        let stress = environment["OCD_STRESS"] != nil
        let seeds: [UInt64] = environment["OCD_SEED"].flatMap(UInt64.init).map { [$0] } ?? (stress ? Array(1...20) : [1, 2])
        let steps = stress ? 5_000 : 1_000
        for seed in seeds {
            let fuzzer = try GraphFuzzer(seed: seed, storeType: storeType)
            guard fuzzer.run(steps: steps) else { return }
            print("graph fuzz seed \(seed) (\(storeType)): \(steps) operations, \(fuzzer.saves) saves, \(fuzzer.deniedSaves) denied, \(fuzzer.rollbacks) rollbacks, \(fuzzer.liveObjects) objects at the end")
        }
    }
}

/// SplitMix64: a small deterministic generator.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One randomized run. The fuzzer holds objects it inserted until they are saved, and object IDs
/// afterwards, so unchanged objects come and go from the context as they would in an app.
final class GraphFuzzer {
    private enum Handle {
        case object(NSManagedObject)
        case id(NSManagedObjectID)
    }

    let seed: UInt64
    let storeType: String
    private var rng: SeededGenerator
    private let store: TestStore
    private let context: NSManagedObjectContext
    private var handles: [Int64: Handle] = [:]
    private var entityOf: [Int64: String] = [:]
    private var nextUID: Int64 = 1
    private var lastSaved = ""
    private var step = 0
    private var operation = ""
    private var history: [String] = []
    private var failed = false
    private(set) var saves = 0
    private(set) var deniedSaves = 0
    private(set) var rollbacks = 0
    var liveObjects: Int { handles.count }

    init(seed: UInt64, storeType: String) throws {
        self.seed = seed
        self.storeType = storeType
        rng = SeededGenerator(seed: seed)
        store = try TestStore(storeType, model: TestModels.graph())
        context = store.newContext()
        lastSaved = try canonical(context)
    }

    /// Runs `steps` operations; returns false after recording the first failure.
    func run(steps: Int) -> Bool {
        for index in 0..<steps {
            step = index
            do {
                try randomOperation()
            } catch {
                fail("unexpected error: \(error)")
            }
            if !failed {
                let problems = context._checkInvariants()
                if !problems.isEmpty { fail("invariants: \(problems.prefix(5))") }
            }
            if failed { return false }
        }
        return true
    }

    private func fail(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        failed = true
        Issue.record(
            "seed \(seed) (\(storeType)) step \(step) \(operation): \(message)\nlast operations:\n\(history.suffix(Int(ProcessInfo.processInfo.environment["OCD_HISTORY"] ?? "") ?? 12).joined(separator: "\n"))",
            sourceLocation: sourceLocation)
    }

    private func note(_ text: String) {
        operation = text
        history.append("\(step): \(text)")
    }

    // MARK: Objects

    private func resolve(_ uid: Int64) -> NSManagedObject? {
        switch handles[uid] {
        case .object(let object)?:
            if object.managedObjectContext === context, !object.isDeleted { return object }
            if object.managedObjectContext == nil { handles[uid] = nil }
            return nil
        case .id(let id)?:
            let object = context.object(with: id)
            return object.isDeleted ? nil : object
        case nil:
            return nil
        }
    }

    private func pick(_ entity: String) -> NSManagedObject? {
        let uids = entityOf.filter { $0.value == entity && handles[$0.key] != nil }.keys.sorted()
        guard !uids.isEmpty else { return nil }
        for _ in 0..<4 {
            if let object = resolve(uids.randomElement(using: &rng)!) { return object }
        }
        return nil
    }

    private func pickAny() -> NSManagedObject? { pick(["Owner", "Item", "Tag"].randomElement(using: &rng)!) }

    private func uid(_ object: NSManagedObject?) -> String {
        guard let object else { return "-" }
        return (object.value(forKey: "uid") as? Int64).map(String.init) ?? "?"
    }

    private func members(_ object: NSManagedObject, _ key: String) -> [NSManagedObject] {
        switch object.value(forKey: key) {
        case let set as Set<NSManagedObject>: return set.sorted { uid($0) < uid($1) }
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }

    // MARK: Operations

    private func randomOperation() throws {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<16: insert()
        case 16..<24: setValue()
        case 24..<50: relate()
        case 50..<62: unrelate()
        case 62..<68: reorder()
        case 68..<78: delete()
        case 78..<88: try save()
        case 88..<91: try rollback()
        case 91..<93: processPendingChanges()
        default: refresh()
        }
    }

    private func insert() {
        let entity = ["Owner", "Item", "Item", "Tag"].randomElement(using: &rng)!
        let uid = nextUID
        nextUID += 1
        note("insert \(entity) \(uid)")
        let object = insertObject(entity, ["uid": uid, "value": Int32.random(in: 0..<100, using: &rng)], into: context)
        handles[uid] = .object(object)
        entityOf[uid] = entity
    }

    private func setValue() {
        guard let object = pickAny() else { return }
        let value: Int32? = Bool.random(using: &rng) ? Int32.random(in: 0..<100, using: &rng) : nil
        note("set \(uid(object)).value = \(value.map(String.init) ?? "nil")")
        object.setValue(value, forKey: "value")
    }

    private func relate() {
        guard let owner = pick("Owner"), let item = pick("Item") else { return }
        let viaToOne = Bool.random(using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:
            note("relate items \(uid(owner)) ← \(uid(item)) \(viaToOne ? "owner" : "items")")
            if viaToOne { item.setValue(owner, forKey: "owner") } else { owner.mutableSetValue(forKey: "items").add(item) }
        case 1:
            note("relate list \(uid(owner)) ← \(uid(item)) \(viaToOne ? "listOwner" : "list")")
            if viaToOne { item.setValue(owner, forKey: "listOwner") } else { owner.mutableOrderedSetValue(forKey: "list").add(item) }
        case 2:
            guard let tag = pick("Tag") else { return }
            note("relate tags \(uid(owner)) ↔ \(uid(tag)) \(viaToOne ? "tags" : "owners")")
            if viaToOne { owner.mutableSetValue(forKey: "tags").add(tag) } else { tag.mutableSetValue(forKey: "owners").add(owner) }
        case 3:
            note("relate guarded \(uid(owner)) ← \(uid(item))")
            if viaToOne { item.setValue(owner, forKey: "guardian") } else { owner.mutableSetValue(forKey: "guarded").add(item) }
        case 4:
            note("relate best \(uid(owner)) ↔ \(uid(item)) \(viaToOne ? "bestOf" : "best")")
            if viaToOne { item.setValue(owner, forKey: "bestOf") } else { owner.setValue(item, forKey: "best") }
        default:
            guard let child = pick("Item"), child !== item else { return }
            note("relate parent \(uid(item)) ← \(uid(child)) \(viaToOne ? "parent" : "subitems")")
            if viaToOne { child.setValue(item, forKey: "parent") } else { item.mutableSetValue(forKey: "subitems").add(child) }
        }
    }

    private func unrelate() {
        guard let object = pickAny() else { return }
        let keys = object.entity.relationshipsByName.keys.sorted()
        let key = keys.randomElement(using: &rng)!
        let relationship = object.entity.relationshipsByName[key]!
        if relationship.isToMany {
            guard let member = members(object, key).randomElement(using: &rng) else { return }
            note("unrelate \(uid(object)).\(key) − \(uid(member))")
            if relationship.isOrdered {
                object.mutableOrderedSetValue(forKey: key).remove(member)
            } else {
                object.mutableSetValue(forKey: key).remove(member)
            }
        } else {
            note("unrelate \(uid(object)).\(key) = nil")
            object.setValue(nil, forKey: key)
        }
    }

    private func reorder() {
        guard let owner = pick("Owner") else { return }
        let list = owner.mutableOrderedSetValue(forKey: "list")
        let count = list.count
        switch Int.random(in: 0..<5, using: &rng) {
        case 0:
            let shuffled = list.array.shuffled(using: &rng)
            note("reorder \(uid(owner)).list = \(shuffled.map { uid($0) })")
            owner.setValue(NSOrderedSet(array: shuffled), forKey: "list")
        case 1:
            guard let item = pick("Item") else { return }
            let index = Int.random(in: 0...count - (list.contains(item) ? 1 : 0), using: &rng)
            note("insert \(uid(item)) into \(uid(owner)).list at \(index)")
            list.insert(item, at: index)
        case 2:
            guard count > 0 else { return }
            let index = Int.random(in: 0..<count, using: &rng)
            note("remove \(uid(owner)).list[\(index)]")
            list.removeObject(at: index)
        case 3:
            guard count > 0, let item = pick("Item") else { return }
            let index = Int.random(in: 0..<count, using: &rng)
            note("replace \(uid(owner)).list[\(index)] with \(uid(item))")
            list.replaceObject(at: index, with: item)
        default:
            guard count > 1 else { return }
            let indexes = IndexSet((0..<count).filter { _ in Bool.random(using: &rng) })
            let target = Int.random(in: 0...(count - indexes.count), using: &rng)
            note("move \(uid(owner)).list \(Array(indexes)) to \(target)")
            list.moveObjects(at: indexes, to: target)
        }
    }

    private func delete() {
        guard let object = pickAny() else { return }
        note("delete \(object.entity.name!) \(uid(object))")
        let tagOwners = object.entity.name == "Tag" ? members(object, "owners") : []
        context.delete(object)
        // Tag.owners has no action: keeping the owners consistent is the app's job, as on Apple.
        for owner in tagOwners where !owner.isDeleted { owner.mutableSetValue(forKey: "tags").remove(object) }
    }

    private func save() throws {
        context.processPendingChanges()  // the save does it too; done first to know what it deletes
        let deletedUIDs = context.deletedObjects.compactMap { $0.value(forKey: "uid") as? Int64 }
        note("save (\(context.insertedObjects.count) inserted, \(context.updatedObjects.count) updated, \(deletedUIDs.count) deleted)")
        do {
            try context.save()
        } catch let error as OpenCoreDataError {
            let codes = error.code == .validationMultipleErrors ? error.detailedErrors.map(\.code) : [error.code]
            guard codes.allSatisfy({ $0 == .validationRelationshipDeniedDelete }) else { throw error }
            deniedSaves += 1
            // A denied delete leaves the store as it was.
            let reader = store.newContext()
            let inStore = try canonical(reader)
            if inStore != lastSaved { fail("a failed save changed the store:\n\(diff(lastSaved, inStore))") }
            if Bool.random(using: &rng) { return try rollback() }
            for owner in context.deletedObjects where owner.entity.name == "Owner" {
                owner.mutableSetValue(forKey: "guarded").removeAllObjects()
            }
            note("save after emptying denied relationships")
            try context.save()
        }
        saves += 1
        for (uid, handle) in handles {
            if case .object(let object) = handle {
                handles[uid] = object.managedObjectContext === context ? .id(object.objectID) : nil
            }
        }
        for uid in deletedUIDs { handles[uid] = nil }

        let here = try canonical(context)
        let reader = store.newContext()
        let inStore = try canonical(reader, style: saves % 3)
        if here != inStore { return fail("the store differs from the context after a save:\n\(diff(here, inStore))") }
        if storeType == NSSQLiteStoreType, saves % 5 == 0 {
            let coordinator = try store.secondCoordinator()
            defer { StoreHarness.close(coordinator) }
            let fromFile = try canonical(StoreHarness.context(coordinator))
            if here != fromFile { return fail("a new coordinator reads another graph:\n\(diff(here, fromFile))") }
        }
        lastSaved = here
    }

    private func rollback() throws {
        note("rollback")
        rollbacks += 1
        context.rollback()
        for (uid, handle) in handles {
            if case .object(let object) = handle, object.managedObjectContext !== context { handles[uid] = nil }
        }
        let here = try canonical(context)
        if here != lastSaved { fail("rollback does not restore the saved graph:\n\(diff(lastSaved, here))") }
    }

    /// Runs the delete rules of the objects deleted since the last save or processing.
    private func processPendingChanges() {
        note("processPendingChanges (\(context.deletedObjects.count) deleted)")
        context.processPendingChanges()
    }

    private func refresh() {
        if Int.random(in: 0..<8, using: &rng) == 0 {
            note("refreshAllObjects")
            context.refreshAllObjects()
            return
        }
        guard let object = pickAny() else { return }
        let merge = object.hasChanges
        note("refresh \(uid(object)) mergeChanges: \(merge)")
        context.refresh(object, mergeChanges: merge)
    }

    // MARK: Comparing graphs

    /// Every object by uid with its value and its relationships' destinations by uid.
    /// `style` 1 prefetches every relationship, 2 fetches in batches of 7: both must read the same graph.
    private func canonical(_ context: NSManagedObjectContext, style: Int = 0) throws -> String {
        var lines: [String] = []
        for entity in ["Owner", "Item", "Tag"] {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            if style == 1 {
                request.relationshipKeyPathsForPrefetching = context.persistentStoreCoordinator!.managedObjectModel
                    .entitiesByName[entity]!.relationshipsByName.keys.sorted()
            } else if style == 2 {
                request.fetchBatchSize = 7
            }
            let objects = try context.fetch(request)
            for object in objects.sorted(by: { uid($0).count == uid($1).count ? uid($0) < uid($1) : uid($0).count < uid($1).count }) {
                var parts = ["\(entity) \(uid(object)) value=\((object.value(forKey: "value") as? Int32).map(String.init) ?? "nil")"]
                for key in object.entity.relationshipsByName.keys.sorted() {
                    let relationship = object.entity.relationshipsByName[key]!
                    if relationship.isToMany {
                        var ids = members(object, key).map { uid($0) }
                        if !relationship.isOrdered { ids.sort() }
                        parts.append("\(key)=[\(ids.joined(separator: ","))]")
                    } else {
                        parts.append("\(key)=\(uid(object.value(forKey: key) as? NSManagedObject))")
                    }
                }
                lines.append(parts.joined(separator: " "))
            }
        }
        return lines.joined(separator: "\n")
    }

    private func diff(_ expected: String, _ actual: String) -> String {
        let a = expected.split(separator: "\n"), b = actual.split(separator: "\n")
        let missing = Set(a).subtracting(b).sorted().map { "- \($0)" }
        let extra = Set(b).subtracting(a).sorted().map { "+ \($0)" }
        return (missing + extra).prefix(10).joined(separator: "\n")
    }
}
