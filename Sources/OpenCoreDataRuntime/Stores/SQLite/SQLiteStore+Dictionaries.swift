import Foundation

extension SQLiteStore {
    /// Dictionary fetches with expression descriptions, grouping, `HAVING` or `DISTINCT`: the store
    /// selects and sorts the objects (in SQL where the predicate and sort compile) and
    /// ``FetchDictionaryResults`` builds the rows, exactly as the in-memory store does.
    func executeDictionaryFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext)
        throws -> [Any]
    {
        let objects = try executeFetch(FetchDictionaryResults.objectRequest(for: request), context: context)
        return try FetchDictionaryResults.rows(
            objects.compactMap { $0 as? NSManagedObject }, request: request, entity: request.entity!)
    }
}
