import Foundation

extension NSManagedObjectContext {
    /// Computes the derived attributes a save must write (see ``NSDerivedAttributeDescription``):
    /// every derived attribute of inserted objects; those of updated objects whose source changed
    /// (and `now()` ones); and those of objects whose related objects changed what the expression
    /// reads (an article's `views` for its category's `articles.views.@sum`, a category's `name` for
    /// its articles' `category.name`). Objects whose value changes become updated objects of the save.
    /// When a derived value reads another derived value, a few more rounds let them settle.
    package func _updateDerivedAttributes() throws {
        guard let model = persistentStoreCoordinator?.managedObjectModel,
              let plan = try DerivedAttributePlan(model: model)
        else { return }
        var pending: [NSManagedObject] = Array(inserted.values) + changed.values.filter { $0.isUpdated } + Array(deleted.values)
        var stamped = Set<ObjectIdentifier>()  // objects whose now() values are set
        for _ in 0..<(plan.readsDerivedValues ? 4 : 1) where !pending.isEmpty {
            // Objects to recompute, with whether all their derived attributes are due.
            var targets: [ObjectIdentifier: (object: NSManagedObject, all: Bool)] = [:]
            for object in pending where !object._isDeleted && plan.attributes[ObjectIdentifier(object._layout)] != nil {
                targets[ObjectIdentifier(object)] = (object, object._isInserted)
            }
            for object in pending where !object._isFault && object._hasChangedSlots {
                for owner in plan.staleOwners(of: object) where !owner._isDeleted && owner._contextLink === _link {
                    targets[ObjectIdentifier(owner)] = (owner, true)
                }
            }
            var changedNow: [NSManagedObject] = []
            for (key, target) in targets {
                let object = target.object
                guard let attributes = plan.attributes[ObjectIdentifier(object._layout)] else { continue }
                if object._isFault { object._fireFault() }
                var changedAny = false
                var stamps: [(slot: Int, type: NSAttributeType)] = []
                for (slot, type, derivation) in attributes {
                    if derivation.isNow { stamps.append((slot, type)); continue }
                    if !target.all, let local = derivation.localKey, let localSlot = object._layout.indexByName[local],
                       !object._changedSlotsContain(localSlot) {
                        continue
                    }
                    let value = derivation.value(for: object, type: type)
                    if PredicateValues.equal(value, object._values[slot]) { continue }
                    object._storeValue(value, slot: slot)
                    changedAny = true
                }
                // `now()`: once per save, for objects the save writes.
                if !stamps.isEmpty, !stamped.contains(key), object.hasChanges {
                    let now = Date()
                    for (slot, type) in stamps { object._storeValue(ValueConversion.canonicalize(now, for: type), slot: slot) }
                    stamped.insert(key)
                    changedAny = true
                }
                if changedAny { changedNow.append(object) }
            }
            pending = changedNow
        }
    }
}

/// What one save needs to know about a model's derived attributes, worked out once per save.
private struct DerivedAttributePlan {
    /// One relationship step of a derived attribute's key path, seen from its destination: an object
    /// of `destination` whose `readSlot`-named property changed makes the owners found by walking
    /// `inverses` (nearest first) stale.
    struct Watch {
        var destination: NSEntityDescription
        var read: String
        var inverses: [NSRelationshipDescription]
        var owner: NSEntityDescription
    }

    /// The derived attributes of each entity layout: slot, type, checked expression.
    var attributes: [ObjectIdentifier: [(slot: Int, type: NSAttributeType, derivation: DerivationExpression)]] = [:]
    var watches: [Watch] = []
    /// Whether some derived attribute reads another one (then values need more than one round).
    var readsDerivedValues = false

    /// Nil when the model has no derived attributes (the common case costs one pass over entities).
    init?(model: NSManagedObjectModel) throws {
        var derivedNames = Set<String>()
        var reads = Set<String>()
        for entity in model.entities {
            let layout = entity.layout
            guard !layout.derivedSlots.isEmpty else { continue }
            var list: [(slot: Int, type: NSAttributeType, derivation: DerivationExpression)] = []
            for slot in layout.derivedSlots {
                let attribute = layout.properties[slot] as! NSDerivedAttributeDescription
                let derivation = try attribute._derivation(in: attribute.entity ?? entity)
                list.append((slot, attribute.attributeType, derivation))
                derivedNames.insert(attribute.name)
                if let attributeName = derivation.attributeName { reads.insert(attributeName) }
                // Watches are made once, from the entity that declares the attribute.
                guard attribute.entity == nil || attribute.entity === entity else { continue }
                var source = entity
                var relationships: [NSRelationshipDescription] = []
                for name in derivation.relationshipNames {
                    guard let relationship = source.relationshipsByName[name], let destination = relationship.destinationEntity else { break }
                    relationships.append(relationship)
                    source = destination
                }
                guard relationships.count == derivation.relationshipNames.count else { continue }
                for depth in relationships.indices {
                    let read = depth + 1 < relationships.count ? relationships[depth + 1].name : derivation.attributeName
                    guard let read, let destination = relationships[depth].destinationEntity else { continue }
                    // Without an inverse at every step the owners cannot be found from here.
                    let inverses = relationships[...depth].reversed().compactMap(\.inverseRelationship)
                    guard inverses.count == depth + 1 else { continue }
                    watches.append(Watch(destination: destination, read: read, inverses: inverses, owner: entity))
                }
            }
            attributes[ObjectIdentifier(layout)] = list
        }
        guard !attributes.isEmpty else { return nil }
        readsDerivedValues = !reads.isDisjoint(with: derivedNames)
    }

    /// The objects whose derived attributes read a value `object` changed.
    func staleOwners(of object: NSManagedObject) -> [NSManagedObject] {
        var owners: [NSManagedObject] = []
        let layout = object._layout
        for watch in watches {
            guard let slot = layout.indexByName[watch.read], object._changedSlotsContain(slot),
                  object.entity.isKindOf(entity: watch.destination) else { continue }
            var level = [object]
            for inverse in watch.inverses { level = level.flatMap { Self.related(of: $0, through: inverse) } }
            owners += level.filter { $0.entity.isKindOf(entity: watch.owner) }
        }
        return owners
    }

    /// The objects `object` holds in `relationship` (loading it if needed).
    private static func related(of object: NSManagedObject, through relationship: NSRelationshipDescription) -> [NSManagedObject] {
        guard let slot = object._layout.indexByName[relationship.name], object._layout.relationships[slot] != nil else { return [] }
        if relationship.isToMany { return object._toMany(slot: slot).objects }
        return object._toOne(slot: slot).map { [$0] } ?? []
    }
}
