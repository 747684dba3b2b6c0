import Foundation

// UIKit and AppKit add these to `IndexPath`; Linux has neither, and ``NSFetchedResultsController``
// speaks in section and row (or item) index paths. Where UIKit or AppKit exists they are theirs.
#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path of a row in a section (a table view's).
    ///
    /// - Note: Linux: UIKit's extension, provided by OpenCoreData.
    ///
    /// Related Core Data documentation: [init(row:section:)](https://developer.apple.com/documentation/foundation/indexpath/init(row:section:))
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }

    /// An index path of an item in a section (a collection view's).
    ///
    /// - Note: Linux: UIKit's and AppKit's extension, provided by OpenCoreData.
    ///
    /// Related Core Data documentation: [init(item:section:)](https://developer.apple.com/documentation/foundation/indexpath/init(item:section:))
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }

    /// The section: the first index.
    ///
    /// Related Core Data documentation: [section](https://developer.apple.com/documentation/foundation/indexpath/section)
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The row in the section: the second index.
    ///
    /// Related Core Data documentation: [row](https://developer.apple.com/documentation/foundation/indexpath/row)
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }

    /// The item in the section: the second index.
    ///
    /// Related Core Data documentation: [item](https://developer.apple.com/documentation/foundation/indexpath/item)
    public var item: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
#endif
