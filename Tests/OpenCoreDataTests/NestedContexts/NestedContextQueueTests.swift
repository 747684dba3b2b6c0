import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// Children and parents of both concurrency types, each used inside its own `perform`: the push
/// into the parent runs on the parent's side (`performAndWait`), and nothing is shared between
/// the blocks but contexts and object IDs (as Core Data's threading rules ask).
@Suite("Nested contexts across queues")
struct NestedContextQueueTests {
    @Test func privateChildOfAMainQueueParent() async throws {
        let stack = try NestedStack(rootType: .mainQueueConcurrencyType)
        let view = stack.root
        let background = stack.child(of: view, .privateQueueConcurrencyType)
        let id = try await background.perform { () throws -> NSManagedObjectID in
            let added = country(616, in: background)
            try background.save()
            return added.objectID
        }
        let seen = try await view.perform { () throws -> (Int, Int16?, Bool) in
            let inserted = view.insertedObjects.count
            let value = view.registeredObject(for: id).map(code)
            try view.save()
            return (inserted, value, view.hasChanges)
        }
        #expect(seen.0 == 1 && seen.1 == 616 && !seen.2)
        #expect(try stack.storedCodes() == [616])
    }

    @Test func mainQueueChildOfAPrivateParent() async throws {
        let stack = try NestedStack(rootType: .privateQueueConcurrencyType)
        let writer = stack.root
        let ui = stack.child(of: writer, .mainQueueConcurrencyType)
        let id = try await ui.perform { () throws -> NSManagedObjectID in
            let added = country(7, in: ui)
            try ui.save()
            return added.objectID
        }
        let value = try await writer.perform { () throws -> Int16? in
            let value = writer.registeredObject(for: id).map(code)
            try writer.save()
            return value
        }
        #expect(value == 7)
        let fetched = try await ui.perform { try fetchedCodes(ui) }
        #expect(fetched == [7])
    }

    @Test func siblingChildrenSaveIntoOneParentConcurrently() async throws {
        let stack = try NestedStack()
        let parent = stack.root
        let perChild = 50
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                let child = stack.child(of: parent)
                group.addTask {
                    try await child.perform {
                        for n in 0..<perChild { country(Int16(index * 100 + n), in: child) }
                        try child.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        let inserted = await parent.perform { parent.insertedObjects.count }
        #expect(inserted == 4 * perChild)
        try await parent.perform { try parent.save() }
        #expect(try stack.storedCodes().count == 4 * perChild)
    }
}
