import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime

/// A root context on a SQLite store, children made on it, and a second coordinator's view of the
/// file (what the stores hold, not what any context has unsaved).
final class NestedStack {
    let directory = TemporaryDirectory()
    let model = MoodsModel.make()
    let url: URL
    let root: NSManagedObjectContext

    init(rootType: NSManagedObjectContext.ConcurrencyType = .privateQueueConcurrencyType) throws {
        url = directory.file("Moods.sqlite")
        root = try makeContext(model: model, storeType: NSSQLiteStoreType, at: url, concurrencyType: rootType)
    }

    deinit { directory.remove() }

    /// A new context whose parent is `parent` (the root by default).
    func child(of parent: NSManagedObjectContext? = nil,
               _ type: NSManagedObjectContext.ConcurrencyType = .privateQueueConcurrencyType) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: type)
        context.parent = parent ?? root
        return context
    }

    /// The country codes the store holds, read through a coordinator of its own, in order.
    func storedCodes() throws -> [Int16] {
        let other = try makeContext(model: model, storeType: NSSQLiteStoreType, at: url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Country")
        request.sortDescriptors = [NSSortDescriptor(key: "numericISO3166Code", ascending: true)]
        return try other.fetch(request).map(code)
    }

    /// Saves countries with `codes` through the root, and returns their IDs.
    @discardableResult
    func saveCountries(_ codes: [Int16]) throws -> [NSManagedObjectID] {
        let countries = codes.map { country($0, in: root) }
        try root.save()
        return countries.map(\.objectID)
    }
}

/// A new country with `code` in `context`.
@discardableResult
func country(_ code: Int16, in context: NSManagedObjectContext) -> NSManagedObject {
    let country = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context)
    country.setValue(code, forKey: "numericISO3166Code")
    country.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "updatedAt")
    return country
}

/// A country's code.
func code(_ object: NSManagedObject) -> Int16 { object.value(forKey: "numericISO3166Code") as? Int16 ?? -1 }

/// The codes of `context`'s countries a request finds, in code order.
func fetchedCodes(_ context: NSManagedObjectContext, _ format: String? = nil, pending: Bool = true) throws -> [Int16] {
    let request = NSFetchRequest<NSManagedObject>(entityName: "Country")
    request.predicate = format.map { NSPredicate(format: $0) }
    request.includesPendingChanges = pending
    request.sortDescriptors = [NSSortDescriptor(key: "numericISO3166Code", ascending: true)]
    return try context.fetch(request).map(code)
}

/// How many countries match in `context`.
func countedCountries(_ context: NSManagedObjectContext, _ format: String? = nil, pending: Bool = true) throws -> Int {
    let request = NSFetchRequest<NSManagedObject>(entityName: "Country")
    request.predicate = format.map { NSPredicate(format: $0) }
    request.includesPendingChanges = pending
    return try context.count(for: request)
}
