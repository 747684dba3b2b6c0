import Foundation

/// Entity inheritance as model files state it, one parent per entity, shared by the model readers
/// (Xcode model XML, compiled `.mom` archives).
enum EntityHierarchy {
    /// Gives each parent its children, in the order of `links`, after checking that no entity is its
    /// own ancestor; setting `subentities` sets each child's `superentity`. `cycle` makes the error
    /// for an entity whose ancestry loops.
    static func link(
        _ entities: [NSEntityDescription], _ links: [(child: NSEntityDescription, parent: NSEntityDescription)],
        cycle: (NSEntityDescription) -> any Error
    ) throws {
        var childrenByParent: [ObjectIdentifier: [NSEntityDescription]] = [:]
        var parentOf: [ObjectIdentifier: NSEntityDescription] = [:]
        for (child, parent) in links {
            childrenByParent[ObjectIdentifier(parent), default: []].append(child)
            parentOf[ObjectIdentifier(child)] = parent
        }
        for entity in entities {
            var visited: Set<ObjectIdentifier> = [ObjectIdentifier(entity)]
            var current = parentOf[ObjectIdentifier(entity)]
            while let ancestor = current {
                guard visited.insert(ObjectIdentifier(ancestor)).inserted else { throw cycle(entity) }
                current = parentOf[ObjectIdentifier(ancestor)]
            }
        }
        for entity in entities {
            if let children = childrenByParent[ObjectIdentifier(entity)] { entity.subentities = children }
        }
    }
}
