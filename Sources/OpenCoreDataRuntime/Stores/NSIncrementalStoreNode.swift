import Foundation

/// The values of one object as a store returns them to fill a fault.
///
/// Values are keyed by property name: attributes by value, to-one relationships by the
/// destination's `NSManagedObjectID` (or `NSNull`). A to-one relationship left out is asked for
/// with `newValue(forRelationship:forObjectWith:with:)` when the fault fires (Apple resolves it
/// lazily too, and discourages leaving it out). To-many relationships are not read from the node;
/// the store answers them in `newValue(forRelationship:forObjectWith:with:)`, once, on first access.
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
    /// The stored to-one relationships the values left out, which the store is asked for (only a
    /// node made from a dictionary has any: our stores' nodes hold every slot).
    package private(set) var omittedToOneSlots: [Int] = []

    /// Creates a node from values keyed by property name.
    public init(objectID: NSManagedObjectID, withValues values: [String: Any], version: UInt64) {
        self.objectID = objectID
        self.version = version
        (slotValues, omittedToOneSlots) = Self.slots(from: values, layout: objectID.entity.layout)
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
        (slotValues, omittedToOneSlots) = Self.slots(from: values, layout: objectID.entity.layout)
        self.version = version
    }

    /// The value for a property, as the store gave it.
    open func value(for prop: NSPropertyDescription) -> Any? {
        objectID.entity.layout.indexByName[prop.name].flatMap { slotValues[$0] }
    }

    private static func slots(from values: [String: Any], layout: EntityLayout) -> (RowValues, omittedToOnes: [Int]) {
        var slots = RowValues(for: layout)
        var omitted: [Int] = []
        for slot in layout.relationshipSlots where values[layout.names[slot]] == nil {
            if let relationship = layout.relationships[slot], !relationship.isToMany, !relationship.isTransient {
                omitted.append(slot)
            }
        }
        for (key, value) in values {
            guard let slot = layout.indexByName[key] else { continue }
            if let type = layout.attributeTypes[slot] {
                slots[slot] = ValueConversion.canonicalize(value, for: type)
            } else if layout.relationships[slot]?.isToMany == false {
                slots[slot] = value as? NSManagedObjectID
            }
        }
        return (slots, omitted)
    }
}

extension NSIncrementalStore {
    /// `newValuesForObject(with:with:)`, with the to-one relationships the node left out asked for
    /// with `newValue(forRelationship:forObjectWith:with:)`: what the coordinator gives a fault.
    package func _newValuesResolvingOmittedToOnes(
        for objectID: NSManagedObjectID, with context: NSManagedObjectContext
    ) throws -> NSIncrementalStoreNode {
        let node = try newValuesForObject(with: objectID, with: context)
        guard !node.omittedToOneSlots.isEmpty else { return node }
        // A new node: the store's own may be kept and handed out again.
        var values = node.slotValues
        let layout = node.objectID.entity.layout
        for slot in node.omittedToOneSlots {
            guard let relationship = layout.relationships[slot] else { continue }
            let destination = try newValue(forRelationship: relationship, forObjectWith: objectID, with: context)
            values[slot] = Self._relationshipIDs(in: destination).first
        }
        return NSIncrementalStoreNode(objectID: node.objectID, slotValues: values, version: node.version)
    }
}
