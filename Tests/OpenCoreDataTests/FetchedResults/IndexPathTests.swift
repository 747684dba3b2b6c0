import Foundation
import OpenCoreData
import Testing

/// UIKit's and AppKit's `IndexPath` members, which Linux lacks and OpenCoreData provides.
@Suite("IndexPath sections, rows and items")
struct IndexPathTests {
    @Test func rowsItemsAndSections() {
        var path = IndexPath(row: 3, section: 1)
        #expect(path == IndexPath(indexes: [1, 3]))
        #expect(path.row == 3 && path.item == 3 && path.section == 1)
        #expect(IndexPath(item: 3, section: 1) == path)
        path.row = 4
        path.section = 2
        #expect(path == IndexPath(item: 4, section: 2))
        path.item = 0
        #expect(path.row == 0)
    }
}
