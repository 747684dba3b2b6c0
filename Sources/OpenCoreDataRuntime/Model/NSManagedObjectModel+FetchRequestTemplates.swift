import Foundation

extension NSManagedObjectModel {
    /// A copy of the fetch request template `name` whose predicate has its `$variables` replaced by
    /// the values in `variables`; `nil` if the model has no template of that name.
    ///
    /// ```swift
    /// // <fetchRequest name="byHumanName" entity="Human" predicateString="humanName == $humanName"/>
    /// let request = model.fetchRequestFromTemplate(withName: "byHumanName",
    ///                                              substitutionVariables: ["humanName": "Ada"])
    /// let humans = try context.fetch(request!)
    /// ```
    ///
    /// Templates come from the model file's top-level `<fetchRequest>` elements or from
    /// ``setFetchRequestTemplate(_:forName:)``. The template itself is left unchanged.
    ///
    /// Related Core Data documentation: [fetchRequestFromTemplate(withName:substitutionVariables:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/fetchrequestfromtemplate(withname:substitutionvariables:))
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any])
        -> NSFetchRequest<any NSFetchRequestResult>?
    {
        guard let template = fetchRequestTemplate(forName: name) else { return nil }
        let request = NSFetchRequest<any NSFetchRequestResult>()
        request.copySettings(from: template)
        request.predicate = template.predicate?.withSubstitutionVariables(variables)
        return request
    }

    /// Turns the model file's `<fetchRequest>` templates into fetch requests registered under their
    /// names. A predicate that does not parse fails the load with the file and template named.
    func registerFetchRequestTemplates(_ templates: [XcodeFetchRequestInfo], url: URL) throws {
        for info in templates where !info.name.isEmpty {
            let request = try fetchRequest(from: info, url: url, line: nil, owner: "fetch request template \(info.name)")
            setFetchRequestTemplate(request, forName: info.name)
        }
    }

    /// A model file's `<fetchRequest>` (a template, or a fetched property's request) as a fetch
    /// request. An unknown entity or a predicate that does not parse throws, naming `owner`, the
    /// file and (when known) the line; with `onBadPredicate`, a predicate that does not parse is
    /// handed to it instead and the request is returned without one.
    func fetchRequest(
        from info: XcodeFetchRequestInfo, url: URL, line: Int?, owner: String,
        onBadPredicate: ((OpenCoreDataError) -> Void)? = nil
    ) throws -> NSFetchRequest<any NSFetchRequestResult> {
        func fail(_ message: String) -> OpenCoreDataError {
            XcodeModelReader.error("\(owner): \(message)", url: url, line: line)
        }
        let request = NSFetchRequest<any NSFetchRequestResult>(entityName: info.entityName)
        guard let entity = entitiesByName[info.entityName] else {
            throw fail("entity \(info.entityName) is not an entity of the model")
        }
        request.entity = entity
        if let format = info.predicateString, !format.isEmpty {
            do {
                request.predicate = try NSPredicate(validatingFormat: format)
            } catch {
                let failure = fail("predicate \"\(format)\" does not parse: \(error)")
                guard let onBadPredicate else { throw failure }
                onBadPredicate(failure)
            }
        }
        if let limit = info.fetchLimit { request.fetchLimit = limit }
        if let size = info.fetchBatchSize { request.fetchBatchSize = size }
        if let type = info.resultType { request.resultType = NSFetchRequestResultType(rawValue: UInt(max(type, 0))) }
        func flag(_ key: String) -> Bool? { info.attributes[key].map { $0 == "YES" } }
        if let value = flag("includeSubentities") { request.includesSubentities = value }
        if let value = flag("includePropertyValues") { request.includesPropertyValues = value }
        if let value = flag("includesPendingChanges") { request.includesPendingChanges = value }
        if let value = flag("returnObjectsAsFaults") { request.returnsObjectsAsFaults = value }
        if let value = flag("returnDistinctResults") { request.returnsDistinctResults = value }
        return request
    }
}
