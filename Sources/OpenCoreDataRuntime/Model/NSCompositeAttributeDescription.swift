import Foundation

/// An attribute whose value is composed of other attributes (its ``elements``): a value type of the
/// model, stored in the entity's own table rather than in a related entity.
///
/// ```swift
/// let colorScheme = NSCompositeAttributeDescription()
/// colorScheme.name = "colorScheme"
/// colorScheme.elements = [
///     NSAttributeDescription(name: "primary", type: .stringAttributeType, isOptional: false),
///     NSAttributeDescription(name: "secondary", type: .stringAttributeType),
/// ]
/// aircraft.properties.append(colorScheme)
///
/// plane.setValue(["primary": "red", "secondary": "white"], forKey: "colorScheme")
/// request.predicate = NSPredicate(format: "colorScheme.primary == %@", "red")
/// ```
///
/// An object holds the value as a `[String: Any]` keyed by element name (a nested composite's value
/// is a nested dictionary); KVC, `@ManagedProperty var colorScheme: [String: Any]?` and change
/// tracking treat it as one property. Predicates and sort descriptors reach an element with a
/// namespaced key path (`colorScheme.primary`), in SQL and in memory alike. At save, each element
/// value is checked as an attribute is (required elements, type, validation predicates).
///
/// Elements may be of any attribute type except undefined, object ID and transformable, and binary
/// data only without external storage; adding a store for a model that breaks this fails with
/// `persistentStoreIncompatibleSchema`.
///
/// - Note: Linux: a value with no element set (`[:]`) is stored as nil, as its flattened columns
///   cannot tell them apart; fetched objects read it back as nil, and validation treats it as nil (a
///   required composite must have an element set). Keys that name no element fail validation rather
///   than being dropped. Transformable elements are not supported.
///
/// Related Core Data documentation: [NSCompositeAttributeDescription](https://developer.apple.com/documentation/coredata/nscompositeattributedescription)
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The composed attribute descriptions. Each must be an `NSAttributeDescription` (a nested
    /// ``NSCompositeAttributeDescription`` included); relationships cannot be elements.
    ///
    /// Related Core Data documentation: [elements](https://developer.apple.com/documentation/coredata/nscompositeattributedescription/elements)
    open var elements: [NSAttributeDescription] = []

    public override init() {
        super.init()
        attributeType = .compositeAttributeType
    }

    /// Decodes a composite attribute and its elements (`NSElements`; see ``NSPropertyDescription/init(coder:)``).
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        attributeType = .compositeAttributeType
        elements = ModelArchive.objects(coder, "NSElements", of: NSAttributeDescription.self, with: [NSAttributeDescription.self])
    }

    /// Encodes the composite and its elements (`NSElements`, a key of this framework's: no Apple
    /// archive with a composite attribute has been seen; see ``NSPropertyDescription/encode(with:)``).
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(elements, forKey: "NSElements")
    }

    /// Convenience initializer (not Apple API) for models built in code.
    public convenience init(name: String, elements: [NSAttributeDescription], isOptional: Bool = true) {
        self.init()
        self.name = name
        self.elements = elements
        self.isOptional = isOptional
    }

    /// The value a new object starts with: the ``NSAttributeDescription/defaultValue`` set on the
    /// composite, else a dictionary of the elements' default values (nil when no element has one).
    ///
    /// Related Core Data documentation: [defaultValue](https://developer.apple.com/documentation/coredata/nsattributedescription/defaultvalue)
    open override var defaultValue: Any? {
        get { _defaultValue(depth: 0) }
        set { super.defaultValue = newValue }
    }

    private func _defaultValue(depth: Int) -> Any? {
        if let value = super.defaultValue { return value }
        guard depth < 64 else { return nil }  // a composite that contains itself; the model check reports it
        var defaults: [String: Any] = [:]
        for element in elements {
            let value = if let nested = element as? NSCompositeAttributeDescription {
                nested._defaultValue(depth: depth + 1)
            } else {
                element.defaultValue
            }
            if let value { defaults[element.name] = value }
        }
        return defaults.isEmpty ? nil : defaults
    }

    /// The element of this composite named `name`.
    package func _element(named name: String) -> NSAttributeDescription? {
        elements.first { $0.name == name }
    }

    /// The non-composite elements, nested ones included, each with its path of element names, in
    /// element order (depth first). These are what a store keeps: one column each.
    package var _leaves: [(path: [String], attribute: NSAttributeDescription)] {
        var result: [(path: [String], attribute: NSAttributeDescription)] = []
        func walk(_ composite: NSCompositeAttributeDescription, _ prefix: [String], _ depth: Int) {
            guard depth < 64 else { return }  // a cycle; the model check reports it
            for element in composite.elements {
                if let nested = element as? NSCompositeAttributeDescription {
                    walk(nested, prefix + [element.name], depth + 1)
                } else {
                    result.append((prefix + [element.name], element))
                }
            }
        }
        walk(self, [], 0)
        return result
    }

    /// Checks every composite attribute of `model` before a store uses it: element types a store
    /// can keep, unique non-empty element names, no composite containing itself.
    package static func _validateComposites(in model: NSManagedObjectModel) throws {
        for entity in model.entities {
            for case let attribute as NSAttributeDescription in entity.ownProperties
            where attribute.attributeType == .compositeAttributeType && !attribute.isTransient {
                guard let composite = attribute as? NSCompositeAttributeDescription else {
                    throw OpenCoreDataError(
                        .persistentStoreIncompatibleSchema,
                        "attribute \(entity.name ?? "?").\(attribute.name) is of composite type but not an NSCompositeAttributeDescription, so it has no elements",
                        entityName: entity.name, key: attribute.name)
                }
                try composite._check(in: entity, path: composite.name, visiting: [])
            }
        }
    }

    private func _check(in entity: NSEntityDescription, path: String, visiting: Set<ObjectIdentifier>) throws {
        func unsupported(_ why: String) -> OpenCoreDataError {
            OpenCoreDataError(
                .persistentStoreIncompatibleSchema, "composite attribute \(entity.name ?? "?").\(path): \(why)",
                entityName: entity.name, key: path)
        }
        guard !visiting.contains(ObjectIdentifier(self)) else { throw unsupported("the composite contains itself") }
        var names = Set<String>()
        for element in elements {
            guard !element.name.isEmpty, !element.name.contains(".") else {
                throw unsupported("element name \"\(element.name)\" is empty or contains a dot")
            }
            guard names.insert(element.name).inserted else { throw unsupported("two elements are named \(element.name)") }
            switch element.attributeType {
            case .undefinedAttributeType, .objectIDAttributeType:
                throw unsupported("element \(element.name) is of type \(element.attributeType), which composites do not support")
            case .transformableAttributeType:
                throw unsupported("element \(element.name) is transformable, which composites do not support on Linux")
            case .binaryDataAttributeType where element.allowsExternalBinaryDataStorage:
                throw unsupported("element \(element.name) allows external binary storage, which composites do not support")
            case .compositeAttributeType:
                guard let nested = element as? NSCompositeAttributeDescription else {
                    throw unsupported("element \(element.name) is of composite type but not an NSCompositeAttributeDescription")
                }
                try nested._check(in: entity, path: path + "." + element.name, visiting: visiting.union([ObjectIdentifier(self)]))
            default:
                if element is NSDerivedAttributeDescription { throw unsupported("element \(element.name) is a derived attribute") }
            }
        }
    }
}

extension NSCompositeAttributeDescription {
    /// The composite's version hash: SHA-256(attribute hash ‖ each element's version hash, elements in
    /// binary order of name), so adding, removing or changing an element changes the entity's hash.
    ///
    /// [unverified] FORMATS.md §2 does not say how Apple hashes composites (no Apple-written store
    /// with a composite was available); this layout is our choice, and a store Apple wrote for a
    /// model with composites may not match it.
    package func _compositeVersionHash(base attributeHash: Data, owner: NSEntityDescription?, depth: Int = 0) -> Data {
        var hasher = SHA256Hasher()
        hasher.update(attributeHash)
        guard depth < 64 else { return hasher.finalize() }  // a composite that contains itself
        for element in elements.sorted(by: { _utf8Precedes($0.name, $1.name) }) {
            if let nested = element as? NSCompositeAttributeDescription {
                let nestedHash = Self._attributeHash(nested, base: nested._baseVersionHash)
                hasher.update(nested._compositeVersionHash(base: nestedHash, owner: owner, depth: depth + 1))
            } else {
                hasher.update(element._versionHash(in: owner))
            }
        }
        return hasher.finalize()
    }
}

extension NSCompositeAttributeDescription {
    /// Checks the element names after the composite in a namespaced key path (`colorScheme.primary`),
    /// throwing ``OpenCoreDataError/Code/unknownKey`` for one that names no element. A key path may
    /// end on a nested composite; `@` operators after the composite are not checked.
    package func _checkElementPath(_ names: ArraySlice<String>, keyPath: String, entity: NSEntityDescription) throws {
        var current: NSAttributeDescription = self
        for name in names {
            if name.hasPrefix("@") { return }
            guard let composite = current as? NSCompositeAttributeDescription, let element = composite._element(named: name) else {
                throw OpenCoreDataError(
                    .unknownKey,
                    "keypath \(keyPath) not found in entity \(entity.name ?? "?"): \(current.name) has no element \(name)",
                    entityName: entity.name, key: name)
            }
            current = element
        }
    }
}
