import Foundation

extension NSManagedObjectContext {
    /// Checks the object graph's consistency and returns what is wrong (empty when all is well):
    /// both sides of every loaded inverse relationship agree, and every changed object is
    /// registered, alive and in the right change set. For tests, in every build configuration
    /// (the release test run checks the optimized code's graph too); nothing else calls it.
    package func _checkInvariants() -> [String] {
        var problems: [String] = []
        let objects = registeredObjects
        // A deleted object keeps what its no-action and deny rules left, which need not agree.
        for object in objects where !object._isFault && !object._isDeleted {
            let layout = object._layout
            for slot in layout.relationshipSlots {
                let relationship = layout.relationships[slot]!
                guard let inverse = relationship.inverseRelationship else { continue }
                let destinations: [NSManagedObject]
                switch object._values[slot] {
                case let list as ManagedObjectList: destinations = list.objects
                case let destination as NSManagedObject: destinations = [destination]
                default: continue  // not loaded
                }
                for destination in destinations where !destination._isFault && !destination._isDeleted {
                    guard let back = destination._layout.indexByName[inverse.name] else {
                        problems.append("\(destination.objectID) has no relationship \(inverse.name)")
                        continue
                    }
                    switch destination._values[back] {
                    case let list as ManagedObjectList where !list.contains(object):
                        problems.append("\(object.objectID).\(relationship.name) holds \(destination.objectID), whose \(inverse.name) lacks it")
                    case let other as NSManagedObject where other !== object:
                        problems.append("\(object.objectID).\(relationship.name) holds \(destination.objectID), whose \(inverse.name) is \(other.objectID)")
                    case nil where !inverse.isToMany:
                        problems.append("\(object.objectID).\(relationship.name) holds \(destination.objectID), whose \(inverse.name) is nil")
                    default:
                        break
                    }
                }
            }
        }
        for object in inserted.values where !object._isInserted { problems.append("\(object.objectID) is in insertedObjects but not inserted") }
        for object in deleted.values where !object._isDeleted { problems.append("\(object.objectID) is in deletedObjects but not deleted") }
        for object in Array(inserted.values) + Array(changed.values) + Array(deleted.values) where object._contextLink !== _link {
            problems.append("\(object.objectID) has changes in a context it does not belong to")
        }
        return problems
    }
}
