/// A reference to an entity that does not keep it alive and reads `nil` once the entity is gone, as
/// a `weak` reference does, without being one: the model's back references (a property's
/// ``NSPropertyDescription/entity``, a relationship's destination, a superentity, an index's
/// entity) hold the entity's ``NSEntityDescription/_reference`` instead of the entity.
///
/// Why: an object that is the target of a weak reference gets a side table, and every retain and
/// release of it then takes the runtime's slow path. A fault's initializer takes its entity owned,
/// so every fetched row retained and released its entity that way: the slow paths were 8% of case
/// 2's `perf` samples (1.4% after), and relationship code retains entities often (callgrind case 8
/// 531M -> 500M).
///
/// `@unchecked Sendable` invariant: `entity` is set when the entity is made, before it is shared,
/// and cleared by its `deinit`. A thread that reads a back reference while another frees the last
/// reference to its entity may see the entity being freed (a weak reference would read `nil`);
/// model descriptions are read-only while in use and live as long as their model, so that needs a
/// thread holding a property of a model that another thread is freeing.
package final class EntityReference: @unchecked Sendable {
    @exclusivity(unchecked) package fileprivate(set) unowned(unsafe) var entity: NSEntityDescription?

    init() {}
}

extension NSEntityDescription {
    /// Makes `reference` read this entity: from the entity's initializer.
    func _attach(_ reference: EntityReference) { reference.entity = self }

    /// Makes `reference` read `nil`: from the entity's `deinit`.
    func _detach(_ reference: EntityReference) { reference.entity = nil }
}
