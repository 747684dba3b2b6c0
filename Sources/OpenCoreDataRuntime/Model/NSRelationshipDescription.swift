import Foundation

/// What happens to the destination when the source object is deleted.
///
/// Related Core Data documentation: [NSDeleteRule](https://developer.apple.com/documentation/coredata/nsdeleterule)
public enum NSDeleteRule: UInt, Sendable {
    case noActionDeleteRule = 0
    case nullifyDeleteRule = 1
    case cascadeDeleteRule = 2
    case denyDeleteRule = 3
}

/// A relationship from one entity to another.
///
/// ```swift
/// let country = NSRelationshipDescription()
/// country.name = "country"
/// country.destinationEntity = countryEntity
/// country.maxCount = 1
/// country.inverseRelationship = moods
/// ```
///
/// Related Core Data documentation: [NSRelationshipDescription](https://developer.apple.com/documentation/coredata/nsrelationshipdescription)
open class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    /// The entity at the other end (not kept alive by the relationship, as a weak reference: see
    /// ``BackReference``).
    open var destinationEntity: NSEntityDescription? {
        get { _destinationReference?.target }
        set { _destinationReference = newValue?._reference }
    }
    @exclusivity(unchecked) private var _destinationReference: EntityReference?
    /// The relationship that leads back.
    open weak var inverseRelationship: NSRelationshipDescription?
    /// The most objects the relationship may hold; `0` means no limit. `1` makes it to-one.
    open var maxCount: Int = 1
    /// The fewest objects the relationship must hold when saved.
    open var minCount: Int = 0
    /// What deleting the source does to the destination.
    open var deleteRule: NSDeleteRule = .nullifyDeleteRule
    /// Whether a to-many relationship keeps its objects in order.
    open var isOrdered: Bool = false
    /// Whether the relationship holds more than one object.
    open var isToMany: Bool { maxCount != 1 }

    /// The destination's name when the destination entity is not yet resolved (model files).
    package var _destinationEntityName: String?
    /// The inverse's name when it is not yet resolved (model files).
    package var _inverseName: String?

    public override init() { super.init() }

    /// Decodes a relationship. The destination and the inverse are read by name
    /// (`_NSDestinationEntityName`, `_NSInverseRelationshipName`) and linked when the model that holds
    /// them is decoded (see ``NSPropertyDescription/init(coder:)``).
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        _noteArchiveProblem(_decodeRelationshipFields(from: coder))
    }

    /// Encodes the relationship with the keys of Apple's compiled models (see ``NSPropertyDescription/encode(with:)``).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        _encodeRelationshipFields(with: coder)
    }

    /// Convenience initializer (not Apple API) for models built in code.
    public convenience init(name: String, destination: NSEntityDescription, toMany: Bool, isOptional: Bool = true,
                            deleteRule: NSDeleteRule = .nullifyDeleteRule, isOrdered: Bool = false) {
        self.init()
        self.name = name
        self.destinationEntity = destination
        self.maxCount = toMany ? 0 : 1
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.isOrdered = isOrdered
    }
}
