import Foundation

extension NSManagedObjectContext {
    /// Computes the derived attributes a save must write (see ``NSDerivedAttributeDescription``):
    /// every derived attribute of inserted objects; those of updated objects whose source changed
    /// (and `now()` ones); and those of objects whose related objects changed what the expression
    /// reads (an article's `views` for its category's `articles.views.@sum`, a category's `name` for
    /// its articles' `category.name`). Objects whose value changes become updated objects of the save.
    /// Runs a few rounds so a derived value that reads another derived value settles.
    package func _updateDerivedAttributes() throws {
        guard let model = persistentStoreCoordinator?.managedObjectModel else { return }
        let derivedEntities = model.entities.filter { !$0.layout.derivedSlots.isEmpty }
        guard !derivedEntities.isEmpty else { return }
        // Every derived attribute that follows relationships, for finding stale owners.
        var pathed: [(entity: NSEntityDescription, derivation: DerivationExpression)] = []
        for entity in derivedEntities {
            for slot in entity.layout.derivedSlots {
                let attribute = entity.layout.properties[slot] as! NSDerivedAttributeDescription
                guard attribute.entity === entity else { continue }  // inherited: listed with its own entity
                let derivation = try attribute._derivation(in: entity)
                if !derivation.relationshipNames.isEmpty { pathed.append((entity, derivation)) }
            }
        }

        var pending: [NSManagedObject] = Array(inserted.values) + changed.values.filter { $0.isUpdated } + Array(deleted.values)
        var stamped = Set<ObjectIdentifier>()  // objects whose now() values are set
        for _ in 0..<4 where !pending.isEmpty {
            // Objects to recompute, with whether all their derived attributes are due.
            var targets: [ObjectIdentifier: (object: NSManagedObject, all: Bool)] = [:]
            for object in pending where !object._isDeleted {
                targets[ObjectIdentifier(object)] = (object, object._isInserted)
            }
            for object in pending where !object._isFault {
                for owner in Self.staleOwners(of: object, pathed) where !owner._isDeleted && owner._context === self {
                    targets[ObjectIdentifier(owner)] = (owner, true)
                }
            }
            var changedNow: [NSManagedObject] = []
            for (key, target) in targets where !target.object._layout.derivedSlots.isEmpty {
                let object = target.object
                if object._isFault { object._fireFault() }
                var changedAny = false
                var nowSlots: [(slot: Int, attribute: NSDerivedAttributeDescription)] = []
                for slot in object._layout.derivedSlots {
                    let attribute = object._layout.properties[slot] as! NSDerivedAttributeDescription
                    let derivation = try attribute._derivation(in: attribute.entity ?? object.entity)
                    if derivation.isNow { nowSlots.append((slot, attribute)); continue }
                    if !target.all, let local = derivation.localKey, let localSlot = object._layout.indexByName[local],
                       !object._changedSlots.contains(localSlot) {
                        continue
                    }
                    let value = derivation.value(for: object, type: attribute.attributeType)
                    if PredicateValues.equal(value, object._values[slot]) { continue }
                    object._storeValue(value, slot: slot)
                    changedAny = true
                }
                // `now()`: once per save, for objects the save writes.
                if !nowSlots.isEmpty, !stamped.contains(key), object.hasChanges {
                    let now = Date()
                    for (slot, attribute) in nowSlots {
                        object._storeValue(ValueConversion.canonicalize(now, for: attribute.attributeType), slot: slot)
                    }
                    stamped.insert(key)
                    changedAny = true
                }
                if changedAny { changedNow.append(object) }
            }
            pending = changedNow
        }
    }

    /// The objects whose derived attributes read a value `object` changed, found by walking the
    /// expression's relationships back through their inverses.
    private static func staleOwners(
        of object: NSManagedObject, _ pathed: [(entity: NSEntityDescription, derivation: DerivationExpression)]
    ) -> [NSManagedObject] {
        var owners: [NSManagedObject] = []
        let layout = object._layout
        let changedNames = Set(object._changedSlots.map { layout.properties[$0].name })
        guard !changedNames.isEmpty else { return [] }
        for (entity, derivation) in pathed {
            var source = entity
            var sources: [NSEntityDescription] = []  // the entity each relationship leaves from
            var relationships: [NSRelationshipDescription] = []
            for name in derivation.relationshipNames {
                guard let relationship = source.relationshipsByName[name], let destination = relationship.destinationEntity else { break }
                sources.append(source)
                relationships.append(relationship)
                source = destination
            }
            guard relationships.count == derivation.relationshipNames.count else { continue }
            for depth in relationships.indices {
                guard let destination = relationships[depth].destinationEntity, object.entity.isKindOf(entity: destination) else { continue }
                // What the expression reads from objects at this depth.
                let read = depth + 1 < relationships.count ? relationships[depth + 1].name : derivation.attributeName
                guard let read, changedNames.contains(read) else { continue }
                var level = [object]
                for step in stride(from: depth, through: 0, by: -1) {
                    guard let inverse = relationships[step].inverseRelationship else { level = []; break }
                    level = level.flatMap { related(of: $0, through: inverse) }
                }
                owners += level.filter { $0.entity.isKindOf(entity: entity) }
            }
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
