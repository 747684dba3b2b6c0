import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// `relationshipKeyPathsForPrefetching`: one fetch per key path step, objects kept alive by their sources.
@Suite("Relationship prefetching")
struct PrefetchingTests {
    /// 20 owners, 3 items each (the first is the owner's `best`), 2 subitems per item.
    private func seed(_ store: TestStore) throws {
        let context = store.newContext()
        var uid: Int64 = 0
        func next() -> Int64 { uid += 1; return uid }
        for _ in 0..<20 {
            let owner = insertObject("Owner", ["uid": next()], into: context)
            for index in 0..<3 {
                let item = insertObject("Item", ["uid": next(), "owner": owner], into: context)
                if index == 0 { owner.setValue(item, forKey: "best") }
                for _ in 0..<2 { insertObject("Item", ["uid": next(), "parent": item], into: context) }
            }
        }
        try context.save()
    }

    /// Reads every prefetched relationship and returns a description of the graph.
    private func walk(_ owners: [NSManagedObject]) -> [String] {
        owners.map { owner in
            let items = (owner.value(forKey: "items") as? Set<NSManagedObject> ?? []).map { item in
                let subitems = (item.value(forKey: "subitems") as? Set<NSManagedObject> ?? []).compactMap { $0.value(forKey: "uid") as? Int64 }
                return "\(item.value(forKey: "uid") as? Int64 ?? -1)\(subitems.sorted())"
            }.sorted()
            return "\(owner.value(forKey: "uid") as? Int64 ?? -1): \(items) best \(owner.value(forKeyPath: "best.uid") as? Int64 ?? -1)"
        }.sorted()
    }

    private func owners(_ context: NSManagedObjectContext, prefetch: [String]?) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        request.relationshipKeyPathsForPrefetching = prefetch
        return try context.fetch(request)
    }

    @Test func oneStatementPerKeyPathStepOnSQLite() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        try seed(store)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }

        let plain = store.newContext()
        let expected = walk(try owners(plain, prefetch: nil))
        let withoutPrefetching = statements.count

        statements = []
        let context = store.newContext()
        let fetched = try owners(context, prefetch: ["items", "items.subitems", "best"])
        // `best` needs no statement: the owners' best items came with `items`.
        #expect(statements.count == 3, "owners, items, subitems: \(statements)")
        #expect(context.registeredObjects.count == 20 + 60 + 120, "prefetched objects stay alive, held by their sources")
        statements = []
        #expect(walk(fetched) == expected)
        #expect(statements.isEmpty, "everything was prefetched: \(statements)")
        print("prefetching: \(withoutPrefetching) statements without, 3 with")
        #expect(withoutPrefetching > 100)
    }

    @Test func dottedToOnePaths() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        try seed(store)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "parent != nil")
        request.relationshipKeyPathsForPrefetching = ["parent.owner"]
        let subitems = try context.fetch(request)
        #expect(subitems.count == 120)
        #expect(statements.count == 3, "\(statements)")
        statements = []
        let owners = Set(subitems.compactMap { $0.value(forKeyPath: "parent.owner.uid") as? Int64 })
        #expect(owners.count == 20)
        #expect(statements.isEmpty, "\(statements)")
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func prefetchedGraphMatchesTheLoadedOne(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        try seed(store)
        let plain = store.newContext()
        let context = store.newContext()
        #expect(walk(try owners(context, prefetch: ["items.subitems", "best", "tags", "list"])) == walk(try owners(plain, prefetch: nil)))
        #expect(context._checkInvariants().isEmpty)
    }

    // MARK: Ordered and many-to-many key paths

    /// `owners` owners with 3 items each in `list` (ordered, kept in reverse insertion order so the
    /// order is not the primary keys'), 2 subitems per item, and 2 of 5 shared tags (many-to-many).
    private func seedLists(_ store: TestStore, owners: Int) throws {
        let context = store.newContext()
        var uid: Int64 = 0
        func next() -> Int64 { uid += 1; return uid }
        let tags = (0..<5).map { _ in insertObject("Tag", ["uid": next()], into: context) }
        for index in 0..<owners {
            let owner = insertObject("Owner", ["uid": next()], into: context)
            let list = owner.mutableOrderedSetValue(forKey: "list")
            for _ in 0..<3 {
                let item = insertObject("Item", ["uid": next()], into: context)
                list.insert(item, at: 0)
                for _ in 0..<2 { insertObject("Item", ["uid": next(), "parent": item], into: context) }
            }
            owner.mutableSetValue(forKey: "tags").addObjects(from: [tags[index % 5], tags[(index + 2) % 5]])
        }
        try context.save()
    }

    /// Each owner's list in order (with each item's subitems) and its tags with their owner counts.
    private func walkLists(_ owners: [NSManagedObject]) -> [String] {
        func uid(_ object: NSManagedObject) -> Int64 { object.value(forKey: "uid") as? Int64 ?? -1 }
        return owners.map { owner in
            let list = (owner.value(forKey: "list") as? NSOrderedSet)?.array.compactMap { $0 as? NSManagedObject } ?? []
            let items = list.map { item in
                "\(uid(item))\((item.value(forKey: "subitems") as? Set<NSManagedObject> ?? []).map(uid).sorted())"
            }
            let tags = (owner.value(forKey: "tags") as? Set<NSManagedObject> ?? []).map { tag in
                "\(uid(tag))×\((tag.value(forKey: "owners") as? Set<NSManagedObject>)?.count ?? -1)"
            }.sorted()
            return "\(uid(owner)): \(items) \(tags)"
        }.sorted()
    }

    private func statementsToPrefetchLists(ownerCount: Int) throws -> (statements: [String], graph: [String], expected: [String]) {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        try seedLists(store, owners: ownerCount)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let plain = store.newContext()  // objects hold their context weakly: keep it alive
        let expected = walkLists(try owners(plain, prefetch: nil))
        statements = []
        let context = store.newContext()
        let fetched = try owners(context, prefetch: ["list", "list.subitems", "tags", "tags.owners"])
        let counted = statements
        statements = []
        #expect(fetched.allSatisfy { !$0.hasFault(forRelationshipNamed: "list") && !$0.hasFault(forRelationshipNamed: "tags") })
        let graph = walkLists(fetched)
        #expect(statements.isEmpty, "everything was prefetched: \(statements)")
        return (counted, graph, expected)
    }

    @Test func orderedAndManyToManyKeyPathsTakeOneStatementPerStep() throws {
        let small = try statementsToPrefetchLists(ownerCount: 10)
        let large = try statementsToPrefetchLists(ownerCount: 300)
        // The owners, `list` (foreign key + Z_FOK_ order), `list.subitems`, `tags` (join table),
        // `tags.owners` (join table, the other way): 5 statements however many owners there are.
        #expect(small.statements.count == 5, "\(small.statements)")
        #expect(large.statements.count == small.statements.count, "\(large.statements)")
        #expect(small.graph == small.expected)
        #expect(large.graph == large.expected, "prefetched ordered relationships keep their order")
        #expect(large.statements.contains { $0.contains("Z_FOK_") }, "the order comes from the Z_FOK_ column")
    }

    @Test func batchedRelationshipReadsAreChunkedBelowSQLitesVariableLimit() throws {
        let result = try statementsToPrefetchLists(ownerCount: 1_100)
        // 1,100 owners: 3 chunks (512 + 512 + 76) for `list` and for `tags`; `list.subitems` (an
        // unordered one-to-many) is one fetch by foreign key; the 5 tags take one for `tags.owners`.
        #expect(result.statements.count == 1 + 3 + 1 + 3 + 1, "\(result.statements.count) statements")
        #expect(result.graph == result.expected)
    }

    /// `Playlist.songs` (ordered) ↔ `Song.playlists` (ordered): both sides in one join table with
    /// two `Z_FOK_` columns.
    private static func playlistModel() -> NSManagedObjectModel {
        let playlist = NSEntityDescription(name: "Playlist", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let song = NSEntityDescription(name: "Song", properties: [NSAttributeDescription(name: "title", type: .stringAttributeType)])
        let songs = NSRelationshipDescription(name: "songs", destination: song, toMany: true, isOrdered: true)
        let playlists = NSRelationshipDescription(name: "playlists", destination: playlist, toMany: true, isOrdered: true)
        songs.inverseRelationship = playlists
        playlists.inverseRelationship = songs
        playlist.properties += [songs]
        song.properties += [playlists]
        let model = NSManagedObjectModel()
        model.entities = [playlist, song]
        return model
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func orderedManyToManyKeepsEachSidesOrder(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.playlistModel())
        let writer = store.newContext()
        let songs = (0..<6).map { insertObject("Song", ["title": "s\($0)"], into: writer) }
        var expected: [String: [String]] = [:]
        for index in 0..<4 {
            let name = "p\(index)"
            let playlist = insertObject("Playlist", ["name": name], into: writer)
            // Each playlist in its own order: rotated, and reversed for odd playlists.
            var order = Array(songs[index...] + songs[..<index])
            if index % 2 == 1 { order.reverse() }
            playlist.setValue(NSOrderedSet(array: order), forKey: "songs")
            expected[name] = order.map { $0.value(forKey: "title") as! String }
        }
        try writer.save()

        nonisolated(unsafe) var statements: [String] = []
        if storeType == NSSQLiteStoreType {
            try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        }
        let context = store.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Playlist")
        request.relationshipKeyPathsForPrefetching = ["songs", "songs.playlists"]
        let playlists = try context.fetch(request)
        if storeType == NSSQLiteStoreType { #expect(statements.count == 3, "\(statements)") }
        statements = []
        var read: [String: [String]] = [:]
        for playlist in playlists {
            let ordered = playlist.value(forKey: "songs") as? NSOrderedSet
            read[playlist.value(forKey: "name") as! String] = ordered?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
        }
        #expect(read == expected)
        // Each song's playlists, in the order they were added to it, as a plain load reads them.
        let names = { (object: NSManagedObject) in
            (object.value(forKey: "playlists") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } ?? []
        }
        let prefetched = songs.map { names(context.object(with: $0.objectID)) }
        #expect(statements.isEmpty, "the songs' playlists were prefetched: \(statements)")
        let plain = store.newContext()
        #expect(prefetched == songs.map { names(plain.object(with: $0.objectID)) })
        #expect(prefetched[0] == ["p0", "p1", "p2", "p3"], "s0 joined the playlists in that order")
        #expect(context._checkInvariants().isEmpty)
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func prefetchedListsMatchTheLoadedOnes(storeType: String) throws {
        let store = try TestStore(storeType, model: TestModels.graph())
        try seedLists(store, owners: 12)
        let context = store.newContext()
        let plain = store.newContext()
        let prefetched = walkLists(try owners(context, prefetch: ["list.subitems", "tags.owners"]))
        #expect(prefetched == walkLists(try owners(plain, prefetch: nil)))
        #expect(prefetched.first?.contains("[]") == false, "the graph is not empty")
        #expect(context._checkInvariants().isEmpty)
    }

    @Test func aStoreWithoutBatchedReadsIsAskedObjectByObject() throws {
        DictionaryTestStore.register()
        let store = try TestStore(DictionaryTestStore.storeType, model: TestModels.graph())
        try seedLists(store, owners: 8)
        let dictionaryStore = try #require(store.coordinator.persistentStores.first as? DictionaryTestStore)
        let plain = store.newContext()
        let expected = walkLists(try owners(plain, prefetch: nil))
        let context = store.newContext()
        let before = dictionaryStore.relationshipLoads
        let fetched = try owners(context, prefetch: ["list", "tags"])
        // The store adopts no batched read: one `newValue(forRelationship:)` per owner and key path
        // (whether the destinations then arrive as faults is up to the store's fetch).
        #expect(dictionaryStore.relationshipLoads - before == 8 * 2)
        #expect(fetched.allSatisfy { !$0.hasFault(forRelationshipNamed: "list") && !$0.hasFault(forRelationshipNamed: "tags") })
        let loadsAfterPrefetch = dictionaryStore.relationshipLoads
        #expect(walkLists(fetched) == expected)
        #expect(dictionaryStore.relationshipLoads - loadsAfterPrefetch == 24 + 5, "only the items' subitems and the 5 tags' owners load lazily")
    }
}
