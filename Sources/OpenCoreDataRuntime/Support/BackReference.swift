/// A reference that does not keep its target alive and reads `nil` once the target is gone, as a
/// `weak` reference does, without being one: back references to an entity (a property's
/// ``NSPropertyDescription/entity``, a relationship's destination, a superentity, an index's
/// entity), to a model (an entity's ``NSEntityDescription/managedObjectModel``) and to a
/// coordinator (a store's ``NSPersistentStore/persistentStoreCoordinator``) hold their target's
/// `_reference` instead of the target.
///
/// Why: an object that is the target of a weak reference gets a side table, and every retain and
/// release of it then takes the runtime's slow path. A fault's initializer takes its entity owned,
/// so every fetched row retained and released its entity that way: the slow paths were 8% of case
/// 2's `perf` samples (1.4% after), and relationship code retains entities often (callgrind case 8
/// 531M -> 500M). Every fetch and insert retains the coordinator and the model.
///
/// `@unchecked Sendable` invariant: `target` is set when the target is made, before it is shared,
/// and cleared by its `deinit`. A thread that reads a back reference while another frees the last
/// reference to its target may see the target being freed (a weak reference would read `nil`);
/// models, their descriptions and coordinators are read-only while in use and outlive the objects
/// that point back at them, so that needs a thread holding a description or store of a model or
/// coordinator that another thread is freeing.
package final class BackReference<Target: AnyObject>: @unchecked Sendable {
    @exclusivity(unchecked) package private(set) unowned(unsafe) var target: Target?

    init() {}

    /// Makes the reference read `target`: from the target's initializer.
    func attach(_ target: Target) { self.target = target }

    /// Makes the reference read `nil`: from the target's `deinit`.
    func detach() { target = nil }
}

/// What back references to an entity hold (see ``BackReference``).
package typealias EntityReference = BackReference<NSEntityDescription>
