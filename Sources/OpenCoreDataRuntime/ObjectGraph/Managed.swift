import Foundation

/// The helpers of objc.io's *Core Data* book (the seeds' `Managed` protocol), provided by the
/// library for those who want them: conform a class and get `entityName`, sorted fetch requests,
/// `fetch(in:configurationBlock:)`, `findOrCreate(in:matching:configure:)`,
/// `findOrFetch(in:matching:)`, `materializedObject(in:matching:)` and `context.insertObject()`.
///
/// ```swift
/// final class Country: NSManagedObject, Managed {
///     @ManagedProperty var numericISO3166Code: Int16
///     static var defaultSortDescriptors: [NSSortDescriptor] { [NSSortDescriptor(key: "numericISO3166Code", ascending: true)] }
/// }
/// let poland = Country.findOrCreate(in: context, matching: NSPredicate(format: "numericISO3166Code == 616")) {
///     $0.numericISO3166Code = 616
/// }
/// ```
///
/// Code that declares its own `protocol Managed` (as the book and the seeds do) keeps compiling:
/// a module's own declarations shadow imported ones, and the library's helpers apply only to
/// classes that conform to this protocol. Such a module can still name this one as
/// `OpenCoreData.Managed`.
///
/// - Note: Linux: not part of Apple's Core Data; the names follow the book so the seeds' code reads
///   the same with either protocol.
///
/// Related Core Data documentation: [NSFetchRequestResult](https://developer.apple.com/documentation/coredata/nsfetchrequestresult)
public protocol Managed: AnyObject, NSFetchRequestResult {
    /// The name of the class's entity.
    static var entityName: String { get }
    /// The sort descriptors of ``sortedFetchRequest``; none by default.
    static var defaultSortDescriptors: [NSSortDescriptor] { get }
}

extension Managed {
    public static var defaultSortDescriptors: [NSSortDescriptor] { [] }

    /// A fetch request for the entity, sorted by ``defaultSortDescriptors``.
    public static var sortedFetchRequest: NSFetchRequest<Self> {
        let request = NSFetchRequest<Self>(entityName: entityName)
        request.sortDescriptors = defaultSortDescriptors
        return request
    }

    /// ``sortedFetchRequest`` filtered by `predicate`.
    public static func sortedFetchRequest(with predicate: NSPredicate) -> NSFetchRequest<Self> {
        let request = sortedFetchRequest
        request.predicate = predicate
        return request
    }
}

extension Managed where Self: NSManagedObject {
    /// The entity's name in the model the class was used with (the class name before that).
    public static var entityName: String {
        ManagedObjectClassRegistry.entity(for: self)?.name ?? ManagedObjectClassRegistry.bareName(of: self)
    }

    /// Fetches objects of the entity; `configurationBlock` adjusts the request first. A failed fetch
    /// returns no objects (the book's helper does the same with `try!`; errors are logged here).
    public static func fetch(
        in context: NSManagedObjectContext, configurationBlock: (NSFetchRequest<Self>) -> Void = { _ in }
    ) -> [Self] {
        let request = NSFetchRequest<Self>(entityName: entityName)
        configurationBlock(request)
        do {
            return try context.fetch(request)
        } catch {
            reportMisuse("fetch(in:configurationBlock:) for \(entityName) failed: \(error)")
            return []
        }
    }

    /// The first object matching `predicate` in memory or in the store, or a new object that
    /// `configure` sets up.
    public static func findOrCreate(
        in context: NSManagedObjectContext, matching predicate: NSPredicate, configure: (Self) -> Void
    ) -> Self {
        if let object = findOrFetch(in: context, matching: predicate) { return object }
        let newObject: Self = context.insertObject()
        configure(newObject)
        return newObject
    }

    /// The first object matching `predicate`: a registered, non-fault one if any (no store round
    /// trip), else the first the store returns.
    public static func findOrFetch(in context: NSManagedObjectContext, matching predicate: NSPredicate) -> Self? {
        if let object = materializedObject(in: context, matching: predicate) { return object }
        return fetch(in: context) { request in
            request.predicate = predicate
            request.returnsObjectsAsFaults = false
            request.fetchLimit = 1
        }.first
    }

    /// A registered object of this class that is not a fault and matches `predicate`; faults are
    /// skipped so that no store round trip happens.
    public static func materializedObject(in context: NSManagedObjectContext, matching predicate: NSPredicate) -> Self? {
        // Walks the registry itself: `registeredObjects` would build a Set of every object first.
        for object in context.registry.liveObjects() {
            guard let result = object as? Self, !result.isFault else { continue }
            if predicate.evaluate(with: result) { return result }
        }
        return nil
    }
}

extension NSManagedObjectContext {
    /// Inserts a new object of `A`'s entity (the book's helper).
    ///
    /// The class is recorded for the entity first, so this works even before a bare class name
    /// from an Xcode model has been resolved. A model without the entity logs and returns an object
    /// that is not inserted (the book's helper traps; Apple's `insertNewObject` raises).
    public func insertObject<A: NSManagedObject>() -> A where A: Managed {
        guard let entity = NSEntityDescription.entity(forEntityName: A.entityName, in: self) else {
            reportMisuse("insertObject(): the context's model has no entity named \(A.entityName)")
            return A(entity: NSEntityDescription(name: A.entityName), insertInto: nil)
        }
        entity.withLayout { $0.noteClass(A.self) }
        return A(entity: entity, insertInto: self)
    }
}
