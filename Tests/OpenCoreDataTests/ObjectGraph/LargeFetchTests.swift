import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// An object whose `awakeFromFetch()` runs the test's hook.
final class AwakeningProbe: NSManagedObject {
    @ManagedProperty var uid: Int64

    /// Run by `awakeFromFetch()`; set by one test at a time (the suite is serialized).
    nonisolated(unsafe) static var onAwakeFromFetch: ((AwakeningProbe) -> Void)?

    override func awakeFromFetch() {
        super.awakeFromFetch()
        Self.onAwakeFromFetch?(self)
    }

    static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription(name: "Probe", properties: [
            NSAttributeDescription(name: "uid", type: .integer64AttributeType, isOptional: false, defaultValue: 0)
        ])
        entity.managedObjectClassName = String(reflecting: AwakeningProbe.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

/// What Apple documents for a fetch of many rows, some registered before it: one instance per row
/// (uniquing, with objects registered before the fetch and with objects a nested fetch registers
/// from `awakeFromFetch()`), the rows' order, and `awakeFromFetch()` once per object. (Written
/// for a version that registered rows in batches of 64, hence the sizes; kept for any change to
/// how a fetch registers its rows.)
@Suite("Large fetches", .serialized)
struct LargeFetchTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]
    /// Rows registered at a time by the batching version.
    static let batch = 64
    /// More rows than three batches, and not a multiple of one.
    static let rowCount = 3 * batch + 17

    private func seededStore(_ storeType: String) throws -> TestStore {
        let store = try TestStore(storeType, model: AwakeningProbe.model())
        let seeding = store.newContext()
        for uid in 0..<Self.rowCount { AwakeningProbe(context: seeding).uid = Int64(uid) }
        try seeding.save()
        return store
    }

    private func probes(_ context: NSManagedObjectContext, asFaults: Bool, ascending: Bool = true) throws -> [AwakeningProbe] {
        let request = NSFetchRequest<AwakeningProbe>(entityName: "Probe")
        request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: ascending)]
        request.returnsObjectsAsFaults = asFaults
        return try context.fetch(request)
    }

    private func byUID(_ uid: Int, in context: NSManagedObjectContext) throws -> AwakeningProbe {
        let request = NSFetchRequest<AwakeningProbe>(entityName: "Probe")
        request.predicate = NSPredicate(format: "uid == %d", uid)
        return try #require(try context.fetch(request).first)
    }

    @Test(arguments: storeTypes, [true, false])
    func everyRowGetsOneObjectInOrder(storeType: String, asFaults: Bool) throws {
        let store = try seededStore(storeType)
        let context = store.newContext()
        // Objects registered before the fetch, far apart: a fault (on SQLite; the
        // in-memory store's predicate fired it) and a full object.
        let fault = try byUID(5, in: context)
        let full = try byUID(150, in: context)
        _ = full.uid
        #expect(fault.isFault == (storeType == NSSQLiteStoreType) && !full.isFault)
        let fullBefore = Set([fault, full].filter { !$0.isFault }.map(ObjectIdentifier.init))

        let fetched = try probes(context, asFaults: asFaults, ascending: false)
        #expect(fetched.count == Self.rowCount)
        #expect(Set(fetched.map(ObjectIdentifier.init)).count == Self.rowCount, "one instance per row")
        #expect(fetched.contains { $0 === fault } && fetched.contains { $0 === full })
        if storeType == NSSQLiteStoreType {  // the in-memory store sorts in memory, firing every fault
            #expect(fetched.allSatisfy { $0.isFault == (asFaults && !fullBefore.contains(ObjectIdentifier($0))) })
        }
        #expect(fetched.map { Int($0.uid) } == Array((0..<Self.rowCount).reversed()))
        #expect(context.registeredObjects.count == Self.rowCount)
        // Fetching again gives the same instances.
        let again = try probes(context, asFaults: true, ascending: false)
        #expect(zip(fetched, again).allSatisfy { $0 === $1 })
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func retainsRegisteredObjectsKeepsEveryFetchedObject(storeType: String) throws {
        let store = try seededStore(storeType)
        let context = store.newContext()
        context.retainsRegisteredObjects = true
        weak var last: AwakeningProbe?
        do { last = try probes(context, asFaults: true).last }
        #expect(last != nil, "kept by the context after the app let go")
        #expect(context.registeredObjects.count == Self.rowCount)
        withExtendedLifetime(store) {}
    }

    @Test(arguments: storeTypes)
    func awakeFromFetchRunsOncePerObjectAndNestedFetchesKeepUniquing(storeType: String) throws {
        let store = try seededStore(storeType)
        let context = store.newContext()
        var awoken: [Int64: Int] = [:]
        var nested: [Int64: AwakeningProbe] = [:]
        AwakeningProbe.onAwakeFromFetch = { probe in
            awoken[probe.uid, default: 0] += 1
            // Some objects fetch the next row while the outer fetch is turning rows into objects
            // (1 and 63: not made yet; 200: near the end).
            guard [1, 63, 200].contains(probe.uid), let context = probe.managedObjectContext else { return }
            nested[probe.uid + 1] = try? byUID(Int(probe.uid + 1), in: context)
        }
        defer { AwakeningProbe.onAwakeFromFetch = nil }
        let fetched = try probes(context, asFaults: false)
        #expect(fetched.map(\.uid) == (0..<Int64(Self.rowCount)).map { $0 })
        #expect(awoken.count == Self.rowCount && awoken.values.allSatisfy { $0 == 1 }, "awakeFromFetch once per object")
        #expect(nested.count == 3)
        for (uid, object) in nested { #expect(fetched[Int(uid)] === object, "the nested fetch's object is the outer fetch's") }
        withExtendedLifetime(store) {}
    }

    @Test
    func fetchLimitsAndOffsetsAcrossManyRows() throws {
        let store = try seededStore(NSSQLiteStoreType)
        let context = store.newContext()
        let request = NSFetchRequest<AwakeningProbe>(entityName: "Probe")
        request.sortDescriptors = [NSSortDescriptor(key: "uid", ascending: true)]
        request.fetchLimit = 3
        #expect(try context.fetch(request).map(\.uid) == [0, 1, 2])
        request.fetchLimit = Self.batch + 1
        request.fetchOffset = 10
        #expect(try context.fetch(request).map(\.uid) == (10..<Int64(11 + Self.batch)).map { $0 })
        #expect(context.registeredObjects.count == 0, "nothing held")
        withExtendedLifetime(store) {}
    }
}
