import Foundation

/// The values of one object as a store returns them to fill a fault.
///
/// Values are keyed by property name: attributes by value, to-one relationships by the
/// destination's `NSManagedObjectID` (or `NSNull`). To-many relationships are not included; the
/// store answers them in `newValue(forRelationship:forObjectWith:with:)`.
///
/// ```swift
/// return NSIncrementalStoreNode(objectID: objectID, withValues: ["name": "Poland", "code": 616], version: 1)
/// ```
///
/// Related Core Data documentation: [NSIncrementalStoreNode](https://developer.apple.com/documentation/coredata/nsincrementalstorenode)
open class NSIncrementalStoreNode: NSObject {
    /// The object the values belong to.
    public let objectID: NSManagedObjectID
    /// The row's version (`Z_OPT` in SQLite stores).
    open private(set) var version: UInt64
    /// Values in the entity's slot order (to-one slots hold `NSManagedObjectID?`).
    package private(set) var slotValues: RowValues

    /// Creates a node from values keyed by property name.
    public init(objectID: NSManagedObjectID, withValues values: [String: Any], version: UInt64) {
        self.objectID = objectID
        self.version = version
        slotValues = Self.slots(from: values, layout: objectID.entity.layout)
        super.init()
    }

    /// Creates a node from values already in slot order (our stores' fast path).
    package init(objectID: NSManagedObjectID, slotValues: RowValues, version: UInt64) {
        self.objectID = objectID
        self.version = version
        self.slotValues = slotValues
        super.init()
    }

    /// Replaces the node's values and version.
    open func update(withValues values: [String: Any], version: UInt64) {
        slotValues = Self.slots(from: values, layout: objectID.entity.layout)
        self.version = version
    }

    /// The value for a property, as the store gave it.
    open func value(for prop: NSPropertyDescription) -> Any? {
        objectID.entity.layout.indexByName[prop.name].flatMap { slotValues[$0] }
    }

    private static func slots(from values: [String: Any], layout: EntityLayout) -> RowValues {
        var slots = RowValues(for: layout)
        for (key, value) in values {
            guard let slot = layout.indexByName[key] else { continue }
            if let type = layout.attributeTypes[slot] {
                slots[slot] = ValueConversion.canonicalize(value, for: type)
            } else if layout.relationships[slot]?.isToMany == false {
                slots[slot] = value as? NSManagedObjectID
            }
        }
        return slots
    }
}
