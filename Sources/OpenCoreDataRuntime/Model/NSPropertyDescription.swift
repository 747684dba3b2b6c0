import Foundation

/// A property of an entity: an attribute or a relationship.
///
/// ```swift
/// let name = NSAttributeDescription()
/// name.name = "name"
/// name.attributeType = .stringAttributeType
/// name.isOptional = false
/// ```
///
/// Related Core Data documentation: [NSPropertyDescription](https://developer.apple.com/documentation/coredata/nspropertydescription)
///
/// `@unchecked Sendable` invariant: a description is mutated only while its model is being built;
/// once a coordinator uses the model it is read-only (Apple raises on later mutation).
open class NSPropertyDescription: NSObject, @unchecked Sendable {
    /// The property's name.
    open var name: String = ""
    /// The entity that owns the property (not kept alive by it: see ``BackReference``).
    open internal(set) var entity: NSEntityDescription! {
        get { _entityReference?.target }
        set { _entityReference = newValue?._reference }
    }
    @exclusivity(unchecked) private var _entityReference: EntityReference?
    /// Whether the property may be nil when saved. Defaults to `true`, as on Apple.
    open var isOptional: Bool = true
    /// Whether the property is not saved to the store.
    open var isTransient: Bool = false
    /// Free-form information about the property.
    open var userInfo: [AnyHashable: Any]?
    /// A string that makes the version hash differ when nothing else does.
    open var versionHashModifier: String?
    /// The name this property had in the previous model version, for migrations.
    open var renamingIdentifier: String?
    /// Whether the store should index the property (deprecated on Apple in favour of fetch indexes).
    open var isIndexed: Bool = false
    /// Whether Spotlight indexes the property (stored, no effect on Linux).
    open var isIndexedBySpotlight: Bool = false
    /// The validation predicates (evaluated at save; see ``NSPropertyDescription/setValidationPredicates(_:withValidationWarnings:)``).
    open private(set) var validationPredicates: [NSPredicate] = []
    /// The warnings that go with ``validationPredicates``.
    open private(set) var validationWarnings: [Any] = []
    /// Whether ``validationPredicates`` is not empty, read without a dynamic call by the save's
    /// validation of every value. An app's subclass may override the `open` getter, so for any
    /// class but the framework's own the getter is asked.
    package final var _hasValidationPredicates: Bool {
        _isFrameworkClass ? _storedHasValidationPredicates : !validationPredicates.isEmpty
    }
    @exclusivity(unchecked) private final var _storedHasValidationPredicates = false
    /// Read-only properties (derived attributes) cannot be set; this feeds the version hash.
    package var _isReadOnly: Bool { false }
    /// What the Xcode model file said that has no Core Data property yet (validation bounds, ...).
    package var _xcodeModelExtras: XcodeModelPropertyExtras?

    /// Whether this is an instance of one of the framework's own property classes (decided once:
    /// comparing metadata on every validated value cost about 50 instructions each).
    package final let _isFrameworkClass: Bool

    public override init() {
        _isFrameworkClass = Self._isFrameworkClass(Swift.type(of: self))
        super.init()
    }

    /// Decodes a property archived by ``encode(with:)`` or read from a compiled model's keys
    /// (`NSPropertyName`, `NSIsOptional`, ...). The owning entity is not decoded: adding the property
    /// to an entity sets it, and a decoded model links its entities itself.
    ///
    /// Related Core Data documentation: [NSSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding)
    public required init?(coder: NSCoder) {
        _isFrameworkClass = Self._isFrameworkClass(Swift.type(of: self))
        super.init()
        _noteArchiveProblem(_decodePropertyFields(from: coder))
    }

    /// What was wrong in the archive this property was decoded from; the model that holds it fails
    /// to decode (see ``ModelArchive/fail(_:_:)`` for why the property itself does not).
    package private(set) final var _archiveProblem: String?

    /// Keeps the first problem found while decoding.
    package final func _noteArchiveProblem(_ problem: String?) {
        if _archiveProblem == nil { _archiveProblem = problem }
    }

    /// Encodes the property with the keys of Apple's compiled models, so that an archive of a model
    /// is a `.mom` (see ``NSManagedObjectModel/encode(with:)``).
    ///
    /// Related Core Data documentation: [NSCoding](https://developer.apple.com/documentation/foundation/nscoding)
    open func encode(with coder: NSCoder) { _encodePropertyFields(with: coder) }

    private static func _isFrameworkClass(_ cls: NSPropertyDescription.Type) -> Bool {
        let type = ObjectIdentifier(cls)
        return [
            NSAttributeDescription.self, NSRelationshipDescription.self, NSDerivedAttributeDescription.self,
            NSCompositeAttributeDescription.self, NSFetchedPropertyDescription.self, NSExpressionDescription.self,
        ].contains { ObjectIdentifier($0) == type }
    }

    /// Sets the validation predicates and the warnings reported when each fails. The save
    /// evaluates each predicate with the property's value as `SELF` (`length >= 3`,
    /// `SELF <= 100`, `SELF MATCHES "[A-Z].*"`) and reports a failure with Cocoa's code for the
    /// bound it expresses, or `NSManagedObjectValidationError` with the warning as its message.
    ///
    /// Related Core Data documentation: [setValidationPredicates(_:withValidationWarnings:)](https://developer.apple.com/documentation/coredata/nspropertydescription/setvalidationpredicates(_:withvalidationwarnings:))
    open func setValidationPredicates(_ validationPredicates: [NSPredicate]?, withValidationWarnings warnings: [String]?) {
        _setValidationPredicates(validationPredicates ?? [], warnings: warnings ?? [])
    }

    /// Sets predicates with warnings of any kind (model files store Cocoa codes as numbers).
    package func _setValidationPredicates(_ predicates: [NSPredicate], warnings: [Any]) {
        validationPredicates = predicates
        validationWarnings = warnings
        _storedHasValidationPredicates = !predicates.isEmpty
        entity?.invalidateLayout()  // the layout keeps whether there are any (`EntityLayout.hasValidationPredicates`)
    }

    open override var description: String {
        "(\(type(of: self))), name \(name), isOptional \(isOptional), isTransient \(isTransient), entity \(entity?.name ?? "nil")"
    }
}
