import Foundation

/// A fetch index: an index the store keeps over one or more properties of an entity, so fetches that
/// compare or sort by them need not scan the table.
///
/// ```swift
/// let byCode = NSFetchIndexDescription(
///     name: "byCode",
///     elements: [NSFetchIndexElementDescription(property: codeAttribute, collationType: .binary)])
/// countryEntity.indexes = [byCode]
/// // The SQLite store creates: CREATE INDEX Z_Country_byCode ON ZCOUNTRY (ZCODE COLLATE BINARY ASC)
/// ```
///
/// Related Core Data documentation: [NSFetchIndexDescription](https://developer.apple.com/documentation/coredata/nsfetchindexdescription)
///
/// - Note: Linux: the SQLite store creates binary indexes only; `.rTree` elements and
///   ``partialIndexPredicate`` are kept in the model but create no index (an R-tree index needs
///   SQLite's R*Tree module, a partial index a `WHERE` clause the store does not generate yet).
///
/// `@unchecked Sendable` invariant: mutated only while its model is built; read-only once in use.
open class NSFetchIndexDescription: NSObject, @unchecked Sendable {
    /// The index's name; the SQLite store names the index `Z_<EntityName>_<name>`.
    open var name: String
    /// The indexed properties, in index order.
    open var elements: [NSFetchIndexElementDescription] {
        didSet { for element in elements { element.indexDescription = self } }
    }
    /// The entity the index belongs to (set when the index is added to ``NSEntityDescription/indexes``).
    open internal(set) var entity: NSEntityDescription? {
        get { _entityReference?.target }
        set { _entityReference = newValue?._reference }
    }
    @exclusivity(unchecked) private var _entityReference: EntityReference?
    /// Limits the index to the objects that match (not applied by the Linux stores).
    open var partialIndexPredicate: NSPredicate?

    /// An index with a name and elements.
    ///
    /// Related Core Data documentation: [init(name:elements:)](https://developer.apple.com/documentation/coredata/nsfetchindexdescription/init(name:elements:))
    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        super.init()
        for element in self.elements { element.indexDescription = self }
    }
}

/// The kind of index an element takes part in.
///
/// Related Core Data documentation: [NSFetchIndexElementType](https://developer.apple.com/documentation/coredata/nsfetchindexelementtype)
public enum NSFetchIndexElementType: UInt, Sendable {
    /// An ordinary (B-tree) index.
    case binary = 0
    /// A spatial index (for range queries over two numbers).
    case rTree = 1
}

/// One property of a fetch index, with its collation and order.
///
/// Related Core Data documentation: [NSFetchIndexElementDescription](https://developer.apple.com/documentation/coredata/nsfetchindexelementdescription)
///
/// `@unchecked Sendable` invariant: mutated only while its model is built; read-only once in use.
open class NSFetchIndexElementDescription: NSObject, @unchecked Sendable {
    /// The indexed property.
    open private(set) var property: NSPropertyDescription?
    /// The indexed property's name.
    open var propertyName: String? { property?.name }
    /// Binary or R-tree.
    open var collationType: NSFetchIndexElementType
    /// Whether the index stores values in ascending order (the default).
    open var isAscending: Bool = true
    /// The index this element belongs to.
    open internal(set) weak var indexDescription: NSFetchIndexDescription?

    /// An element for `property`.
    ///
    /// Related Core Data documentation: [init(property:collationType:)](https://developer.apple.com/documentation/coredata/nsfetchindexelementdescription/init(property:collationtype:))
    public init(property: NSPropertyDescription, collationType: NSFetchIndexElementType) {
        self.property = property
        self.collationType = collationType
        super.init()
    }
}
