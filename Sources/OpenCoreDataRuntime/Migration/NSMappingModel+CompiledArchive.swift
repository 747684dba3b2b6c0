import Foundation

extension NSMappingModel {
    /// Decodes a compiled mapping model (a `.cdm`, Xcode's compiled `.xcmappingmodel`): an
    /// `NSKeyedArchiver` archive of `NSMappingModel` → `NSEntityMappings` → `NSEntityMapping`
    /// (`NSMappingName`, `NSMappingType`, `NSSourceEntityName`, `NSSourceEntityVersionHash`,
    /// `NSDestinationEntityName`, `NSDestinationEntityVersionHash`, `NSSourceExpression`,
    /// `NSEntityMigrationPolicyClassName`, `NSUserInfo`, `NSAttributeMappings`,
    /// `NSRelationshipMappings`) → `NSPropertyMapping` (`NSDestinationPropertyName`,
    /// `NSValueExpression`, `NSUserInfo`, `NSPropertyTransforms`) [obs CoreDataPlus V2toV3.cdm,
    /// docs/compiled-models.md].
    ///
    /// The source expression Xcode writes is `FETCH(FUNCTION($manager,
    /// "fetchRequestForSourceEntityNamed:predicateString:", …), $manager.sourceContext, NO)`; it is
    /// kept as its fetch-request function, the form inferred mappings use here. Property transforms
    /// (none in the corpus) are not supported and throw rather than being dropped.
    ///
    /// - Throws: ``OpenCoreDataError`` `fileReadCorruptFile` (259) naming `url` when the data is not
    ///   a mapping model archive or holds something this reader does not understand.
    static func compiledMappingModel(from data: Data, url: URL? = nil) throws -> NSMappingModel {
        let archive = try KeyedArchive(data: data, url: url, what: "compiled mapping model")
        let root = try archive.topObject()
        guard root.isKind(of: "NSMappingModel") else {
            throw archive.error("archives a \(root.className), not an NSMappingModel")
        }
        let decoder = ArchivedPredicateDecoder(archive: archive)
        let model = NSMappingModel()
        model.entityMappings = try (root.array("NSEntityMappings") ?? []).map { item in
            guard let object = item as? KeyedArchive.Object, object.isKind(of: "NSEntityMapping") else {
                throw archive.error("NSEntityMappings holds something that is not an NSEntityMapping")
            }
            return try entityMapping(object, archive: archive, decoder: decoder)
        }
        return model
    }

    private static func entityMapping(
        _ object: KeyedArchive.Object, archive: KeyedArchive, decoder: ArchivedPredicateDecoder
    ) throws -> NSEntityMapping {
        let mapping = NSEntityMapping()
        mapping.name = try object.string("NSMappingName") ?? ""
        let context = "entity mapping \(mapping.name ?? "")"
        let type = try object.int("NSMappingType") ?? 0
        guard type >= 0, let mappingType = NSEntityMappingType(rawValue: UInt(type)) else {
            throw archive.error("\(context): unknown NSMappingType \(type)")
        }
        mapping.mappingType = mappingType
        mapping.sourceEntityName = try object.string("NSSourceEntityName")
        mapping.destinationEntityName = try object.string("NSDestinationEntityName")
        mapping.sourceEntityVersionHash = try data(object, "NSSourceEntityVersionHash", context: context, archive: archive)
        mapping.destinationEntityVersionHash = try data(object, "NSDestinationEntityVersionHash", context: context, archive: archive)
        mapping.entityMigrationPolicyClassName = try object.string("NSEntityMigrationPolicyClassName")
        mapping.userInfo = try object.dictionary("NSUserInfo")?.userInfo
        if let source = try object.object("NSSourceExpression") {
            if source.className == "NSFetchRequestExpression" {
                guard let request = try source.object("NSFRExpression") else { throw archive.error("\(context): its source expression has no fetch request") }
                mapping.sourceExpression = try decoder.expression(request)
            } else {
                mapping.sourceExpression = try decoder.expression(source)
            }
        }
        mapping.attributeMappings = try propertyMappings(object, "NSAttributeMappings", context: context, archive: archive, decoder: decoder)
        mapping.relationshipMappings = try propertyMappings(object, "NSRelationshipMappings", context: context, archive: archive, decoder: decoder)
        return mapping
    }

    private static func propertyMappings(
        _ object: KeyedArchive.Object, _ key: String, context: String, archive: KeyedArchive, decoder: ArchivedPredicateDecoder
    ) throws -> [NSPropertyMapping]? {
        guard let items = try object.array(key) else { return nil }
        return try items.map { item in
            guard let object = item as? KeyedArchive.Object, object.isKind(of: "NSPropertyMapping") else {
                throw archive.error("\(context): \(key) holds something that is not an NSPropertyMapping")
            }
            let mapping = NSPropertyMapping()
            mapping.name = try object.string("NSDestinationPropertyName")
            if let expression = try object.object("NSValueExpression") { mapping.valueExpression = try decoder.expression(expression) }
            mapping.userInfo = try object.dictionary("NSUserInfo")?.userInfo
            if let transforms = try object.array("NSPropertyTransforms"), !transforms.isEmpty {
                throw archive.error("\(context): property \(mapping.name ?? "?") has property transforms, which are not supported")
            }
            return mapping
        }
    }

    private static func data(_ object: KeyedArchive.Object, _ key: String, context: String, archive: KeyedArchive) throws -> Data? {
        guard let value = try object.value(key) else { return nil }
        guard let data = value as? Data else { throw archive.error("\(context): \(key) is not data") }
        return data
    }
}
