import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// A request subclass, as a custom `NSIncrementalStore` test double might declare.
final class TaggedSaveChangesRequest: NSSaveChangesRequest, @unchecked Sendable {
    let tag: String
    init(tag: String, inserted: Set<NSManagedObject>) {
        self.tag = tag
        super.init(inserted: inserted, updated: nil, deleted: [], locked: nil)
    }
}

@Suite("NSSaveChangesRequest")
struct SaveChangesRequestTests {
    /// Apple's `init(inserted:updated:deleted:locked:)` is designated: a subclass calls it, and the
    /// sets it was given come back.
    @Test func theSetInitializerIsDesignatedAndKeepsItsSets() throws {
        let context = try makeContext(model: TestModels.graph(), storeType: NSInMemoryStoreType)
        let objects = context.performAndWait {
            Set((0..<3).map { insertObject("Item", ["uid": Int64($0)], into: context) })
        }
        let request = TaggedSaveChangesRequest(tag: "t", inserted: objects)
        #expect(request.tag == "t")
        #expect(request.insertedObjects == objects)
        #expect(request.updatedObjects == nil, "nil stays nil")
        #expect(request.deletedObjects == [])
        #expect(request.requestType == .saveRequestType)
    }
}
