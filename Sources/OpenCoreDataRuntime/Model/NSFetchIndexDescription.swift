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

    /// Decodes an index (`NSIndexName`, `NSIndexElements`); its elements name their properties,
    /// which are found when the index is added to an entity's ``NSEntityDescription/indexes``.
    ///
    /// Related Core Data documentation: [NSSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding)
    public required init?(coder: NSCoder) {
        name = ModelArchive.string(coder, "NSIndexName") ?? ""
        elements = ModelArchive.objects(coder, "NSIndexElements", of: NSFetchIndexElementDescription.self,
                                        with: [NSFetchIndexElementDescription.self])
        if let format = ModelArchive.string(coder, "NSPartialIndexPredicate") {
            partialIndexPredicate = try? NSPredicate(validatingFormat: format)
        }
        super.init()
        for element in elements { element.indexDescription = self }
    }

    /// Encodes the index with the keys of Apple's compiled models; a partial index predicate as its format.
    ///
    /// Related Core Data documentation: [NSCoding](https://developer.apple.com/documentation/foundation/nscoding)
    open func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "NSIndexName")
        coder.encode(elements, forKey: "NSIndexElements")
        ModelArchive.encode(partialIndexPredicate?.predicateFormat, forKey: "NSPartialIndexPredicate", with: coder)
        if let entity { coder.encode(entity, forKey: "NSEntity") }
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

    /// The property's name while the element is decoded and its property not yet found.
    package var _decodedPropertyName: String?

    /// Decodes an element (`NSPropertyName`, `NSFetchIndexElementType`, `NSAscending`).
    ///
    /// Related Core Data documentation: [NSSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding)
    public required init?(coder: NSCoder) {
        _decodedPropertyName = ModelArchive.string(coder, "NSPropertyName")
        collationType = coder.decodeInteger(forKey: "NSFetchIndexElementType") == 1 ? .rTree : .binary
        isAscending = coder.containsValue(forKey: "NSAscending") ? coder.decodeBool(forKey: "NSAscending") : true
        super.init()
    }

    /// Encodes the element with the keys of Apple's compiled models.
    ///
    /// Related Core Data documentation: [NSCoding](https://developer.apple.com/documentation/foundation/nscoding)
    open func encode(with coder: NSCoder) {
        ModelArchive.encode(propertyName ?? _decodedPropertyName, forKey: "NSPropertyName", with: coder)
        coder.encode(Int(collationType.rawValue), forKey: "NSFetchIndexElementType")
        coder.encode(isAscending, forKey: "NSAscending")
    }

    /// Finds the decoded element's property among `entity`'s; false if it has none of that name.
    package func _resolveDecodedProperty(in entity: NSEntityDescription) -> Bool {
        guard property == nil else { return true }
        guard let name = _decodedPropertyName, let found = entity.propertiesByName[name] else { return false }
        property = found
        return true
    }
}

extension NSFetchIndexDescription: NSSecureCoding {
    /// `true`: indexes decode with secure coding.
    ///
    /// Related Core Data documentation: [supportsSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding/supportssecurecoding)
    public static var supportsSecureCoding: Bool { true }
}

extension NSFetchIndexElementDescription: NSSecureCoding {
    /// `true`: index elements decode with secure coding.
    ///
    /// Related Core Data documentation: [supportsSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding/supportssecurecoding)
    public static var supportsSecureCoding: Bool { true }
}
