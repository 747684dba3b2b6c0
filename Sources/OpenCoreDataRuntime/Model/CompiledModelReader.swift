import Foundation

/// Reads Core Data's compiled models (docs/compiled-models.md): a `.momd` directory (its current
/// version, named by `VersionInfo.plist`), a `.mom` file, or the bytes of one (a store's
/// `Z_MODELCACHE`, inflated). A `.mom` is an `NSKeyedArchiver` archive of the model's objects,
/// read with ``KeyedArchive`` and turned into model classes by ``CompiledModelBuilder``.
///
/// The optimized `.omo` file Xcode also writes into a `.momd` is a different, non-keyed format and
/// is ignored: the `.mom` beside it holds the same model.
package enum CompiledModelReader {
    /// Whether a URL names a compiled model (`.mom` or `.momd`).
    package static func isCompiledModel(_ url: URL) -> Bool {
        ["mom", "momd"].contains(url.pathExtension.lowercased())
    }

    /// Loads a `.momd` (its current version) or a `.mom` into `model`.
    package static func load(contentsOf url: URL, into model: NSManagedObjectModel) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw KeyedArchive.error("does not exist", url: url, what: "compiled model")
        }
        let file = isDirectory.boolValue ? try currentVersionURL(inBundle: url) : url
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw KeyedArchive.error("cannot be read", url: file, what: "compiled model")
        }
        try decode(data, url: file, what: "compiled model", into: model)
    }

    /// Decodes the keyed archive of an `NSManagedObjectModel` into `model`.
    package static func decode(_ data: Data, url: URL?, what: String, into model: NSManagedObjectModel) throws {
        let archive = try KeyedArchive(data: data, url: url, what: what)
        let root = try archive.topObject()
        guard root.isKind(of: "NSManagedObjectModel") else {
            throw archive.error("archives a \(root.className), not an NSManagedObjectModel")
        }
        var builder = CompiledModelBuilder(archive: archive, info: XcodeModelFileInfo(url: url ?? URL(fileURLWithPath: "/")))
        try builder.build(root, into: model)
    }

    // MARK: .momd

    /// What a `.momd`'s `VersionInfo.plist` says.
    package struct VersionInfo {
        /// `NSManagedObjectModel_CurrentVersionName`: the current `.mom`'s name without extension.
        package var currentVersionName: String?
        /// `NSManagedObjectModel_VersionHashes`: version name → entity name → 32-byte version hash.
        package var versionHashes: [String: [String: Data]] = [:]
        /// `NSManagedObjectModel_VersionChecksums` (newer tools): version name → `versionChecksum`.
        package var versionChecksums: [String: String] = [:]
    }

    /// Reads `VersionInfo.plist` of a `.momd`; `nil` when there is none.
    package static func versionInfo(ofBundle bundle: URL) throws -> VersionInfo? {
        let file = bundle.appendingPathComponent("VersionInfo.plist")
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        guard let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any] else {
            throw KeyedArchive.error("is not a property list dictionary", url: file, what: "VersionInfo.plist")
        }
        var info = VersionInfo()
        info.currentVersionName = plist["NSManagedObjectModel_CurrentVersionName"] as? String
        for (version, hashes) in plist["NSManagedObjectModel_VersionHashes"] as? [String: Any] ?? [:] {
            info.versionHashes[version] = (hashes as? [String: Any] ?? [:]).compactMapValues { $0 as? Data }
        }
        info.versionChecksums = (plist["NSManagedObjectModel_VersionChecksums"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        return info
    }

    /// The `.mom` a `.momd` names as current: `NSManagedObjectModel_CurrentVersionName` in
    /// `VersionInfo.plist`, else the only `.mom` in it.
    package static func currentVersionURL(inBundle bundle: URL) throws -> URL {
        if let name = try versionInfo(ofBundle: bundle)?.currentVersionName, !name.isEmpty {
            let file = bundle.appendingPathComponent(name + ".mom")
            guard FileManager.default.fileExists(atPath: file.path) else {
                throw KeyedArchive.error("names \(name) as the current version, but \(name).mom is not in the bundle",
                                         url: bundle.appendingPathComponent("VersionInfo.plist"), what: "VersionInfo.plist")
            }
            return file
        }
        let moms = ((try? FileManager.default.contentsOfDirectory(atPath: bundle.path)) ?? []).filter { $0.hasSuffix(".mom") }
        guard moms.count == 1, let only = moms.first else {
            throw KeyedArchive.error(
                moms.isEmpty ? "holds no .mom" : "holds \(moms.count) .mom files and no VersionInfo.plist naming the current one",
                url: bundle, what: "compiled model bundle")
        }
        return bundle.appendingPathComponent(only)
    }
}

/// Turns a decoded `NSManagedObjectModel` archive into model classes. Entities and properties are
/// created first, keyed by their archive UID, so superentities, destinations and inverses resolve
/// to the very objects the archive points at, whatever order the archive lists them in.
struct CompiledModelBuilder {
    typealias Object = KeyedArchive.Object
    let archive: KeyedArchive
    var info: XcodeModelFileInfo
    private var entityByUID: [Int: NSEntityDescription] = [:]
    private var propertyByUID: [Int: NSPropertyDescription] = [:]
    /// Inherited-property copies left out: their UID → the entity listing them and the name.
    private var inheritedCopies: [Int: (entityUID: Int, name: String)] = [:]

    init(archive: KeyedArchive, info: XcodeModelFileInfo) {
        self.archive = archive
        self.info = info
    }

    /// Keys each class's decoder reads; others are listed in `unrecognizedElements`.
    private static let modelKeys: Set<String> = [
        "NSEntities", "NSFetchRequestTemplates", "NSVersionIdentifiers", "NSConfigurations",
        "CDMCompilerToolVersion", "CDMCompilerXcodeVersion", "$class",
    ]
    private static let entityKeys: Set<String> = [
        "NSEntityName", "NSClassNameForEntity", "NSIsAbstract", "NSSuperentity", "NSSubentities", "NSProperties",
        "NSUserInfo", "NSVersionHashModifier", "NSRenamingIdentifier", "NSUniqueTuples", "NSFetchIndexDescriptions",
        "NSCompoundIndexes", "NSManagedObjectModel", "$class",
    ]
    private static let propertyKeys: Set<String> = [
        "NSPropertyName", "NSEntity", "NSIsOptional", "NSIsTransient", "NSIsReadOnly", "NSUserInfo",
        "NSVersionHashModifier", "NSRenamingIdentifier", "NSValidationPredicates", "NSValidationWarnings", "_P", "$class",
        "_NSIsIndexed", "_NSIsIndexedBySpotlight",  // written by NSPropertyDescription.encode(with:)
    ]
    private static let fetchedPropertyKeys: Set<String> = propertyKeys.union(["NSFetchRequest", "_NSFetchRequestEntityName"])
    private static let attributeKeys: Set<String> = propertyKeys.union([
        "NSAttributeType", "NSAttributeValueClassName", "NSDefaultValue", "NSValueTransformerName", "NSFlagsKey",
        "_NSAllowsExternalBinaryDataStorage", "_NSAllowsCloudEncryption",  // written by NSAttributeDescription.encode(with:)
    ])
    private static let compositeKeys: Set<String> = attributeKeys.union(["NSElements"])
    private static let derivedKeys: Set<String> = attributeKeys.union(["NSDerivationExpression", "NSFilteringPredicate"])
    private static let relationshipKeys: Set<String> = propertyKeys.union([
        "NSDestinationEntity", "_NSDestinationEntityName", "NSInverseRelationship", "_NSInverseRelationshipName",
        "NSMinCount", "NSMaxCount", "NSDeleteRule", "NSIsOrdered",
    ])

    /// `NSFlagsKey` bit for "preserve value in history on deletion" [obs CoreDataPlus SampleModel.mom, `id`].
    static let preservesValueInHistoryOnDeletionFlag = 0x10

    mutating func build(_ root: Object, into model: NSManagedObjectModel) throws {
        note(unknownKeysOf: root, known: Self.modelKeys, in: "model")
        guard let entityTable = try root.dictionary("NSEntities") else { throw archive.error("has a model without NSEntities") }
        var entityObjects: [Object] = []
        for (_, value) in entityTable.entries {
            guard let object = value as? Object, object.isKind(of: "NSEntityDescription") else {
                throw archive.error("NSEntities holds a \(type(of: value)), not an NSEntityDescription")
            }
            entityObjects.append(object)
        }
        // Entities in order of name, as Xcode writes them into a model file (the archive's
        // dictionary order is a hash order).
        var named: [(name: String, object: Object)] = []
        for object in entityObjects {
            guard let name = try object.string("NSEntityName"), !name.isEmpty else { throw archive.error("\(object) has no NSEntityName") }
            guard !named.contains(where: { $0.name == name }) else { throw archive.error("has two entities named \(name)") }
            named.append((name, object))
        }
        named.sort { _utf8Precedes($0.name, $1.name) }

        // A model archived by the running framework (a store's Z_MODELCACHE) lists inherited
        // properties again in each subentity, as copies whose NSEntity is the subentity [obs
        // SampleModel_V1.sqlite: ExpensiveSportCar]; a compiled .mom lists own properties only.
        // A property whose name an ancestor has is such a copy and is left out.
        var superUID: [Int: Int] = [:]
        var propertyNamesByUID: [Int: Set<String>] = [:]
        for (_, object) in named {
            if let parent = try object.object("NSSuperentity") { superUID[object.uid] = parent.uid }
            let keys = try object.dictionary("NSProperties")?.entries.compactMap { $0.key as? String } ?? []
            propertyNamesByUID[object.uid] = Set(keys)
        }
        var entities: [NSEntityDescription] = []
        for (name, object) in named {
            var inherited: Set<String> = []
            var ancestor = superUID[object.uid]
            var steps = 0
            while let current = ancestor, steps < named.count {
                inherited.formUnion(propertyNamesByUID[current] ?? [])
                ancestor = superUID[current]
                steps += 1
            }
            let entity = try makeEntity(object, name: name, inherited: inherited)
            entityByUID[object.uid] = entity
            entities.append(entity)
        }

        // Inheritance: NSSuperentity of each entity; subentities in order of name.
        var links: [(child: NSEntityDescription, parent: NSEntityDescription)] = []
        for (name, object) in named {
            guard let superObject = try object.object("NSSuperentity") else { continue }
            guard let parent = entityByUID[superObject.uid] else {
                throw archive.error("entity \(name): its superentity is not an entity of the model")
            }
            links.append((entityByUID[object.uid]!, parent))
        }
        try EntityHierarchy.link(entities, links) { entity in
            archive.error("entity \(entity.name ?? "?"): inheritance forms a cycle")
        }
        model.entities = entities

        try resolveRelationships(named)
        for (name, object) in named { try readIndexes(object, entity: entityByUID[object.uid]!, name: name) }

        if let configurations = try root.dictionary("NSConfigurations") {
            for (key, value) in configurations.entries {
                guard let configuration = key as? String, let members = value as? [Any] else {
                    throw archive.error("NSConfigurations holds an entry that is not a name and a set of entities")
                }
                let entities = try members.map { member -> NSEntityDescription in
                    guard let object = member as? Object, let entity = entityByUID[object.uid] else {
                        throw archive.error("configuration \(configuration) holds something that is not an entity of the model")
                    }
                    return entity
                }
                model.setEntities(entities.sorted { _utf8Precedes($0.name ?? "", $1.name ?? "") }, forConfigurationName: configuration)
            }
        }

        if let templates = try root.dictionary("NSFetchRequestTemplates") {
            for (key, value) in templates.entries {
                guard let name = key as? String, let object = value as? Object, object.isKind(of: "NSFetchRequest") else {
                    throw archive.error("NSFetchRequestTemplates holds an entry that is not a name and a fetch request")
                }
                model.setFetchRequestTemplate(try fetchRequest(object, context: "fetch request template \(name)"), forName: name)
            }
        }

        if let identifiers = try root.array("NSVersionIdentifiers") {
            model.versionIdentifiers = Set(identifiers.compactMap { $0 as? AnyHashable })
        }
        model._xcodeModelFile = info
    }

    // MARK: Entities

    private mutating func makeEntity(_ object: Object, name: String, inherited: Set<String>) throws -> NSEntityDescription {
        note(unknownKeysOf: object, known: Self.entityKeys, in: "entity \(name)")
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = try object.string("NSClassNameForEntity") ?? "NSManagedObject"
        entity.isAbstract = try object.bool("NSIsAbstract")
        entity.versionHashModifier = try object.string("NSVersionHashModifier")
        entity.renamingIdentifier = try object.string("NSRenamingIdentifier")
        entity.userInfo = try userInfo(object, key: "NSUserInfo")
        entity.uniquenessConstraints = try (object.array("NSUniqueTuples") ?? []).map { tuple in
            guard let names = tuple as? [Any] else { throw archive.error("entity \(name): NSUniqueTuples holds a non-array") }
            return names
        }

        var properties: [(name: String, property: NSPropertyDescription)] = []
        for (key, value) in try object.dictionary("NSProperties")?.entries ?? [] {
            guard let propertyObject = value as? Object else {
                throw archive.error("entity \(name): property \(key) is not an archived object")
            }
            if propertyObject.className == "_NSPropertyDescriptionProxy" { continue }  // an inherited property
            if let key = key as? String, inherited.contains(key) {
                inheritedCopies[propertyObject.uid] = (object.uid, key)
                continue
            }
            if propertyObject.isKind(of: "NSFetchedPropertyDescription") {
                try noteFetchedProperty(propertyObject, entityName: name)
            }
            let property = try makeProperty(propertyObject, entityName: name)
            propertyByUID[propertyObject.uid] = property
            properties.append((property.name, property))
        }
        properties.sort { _utf8Precedes($0.name, $1.name) }
        entity.properties = properties.map(\.property)
        return entity
    }

    private mutating func makeProperty(_ object: Object, entityName: String) throws -> NSPropertyDescription {
        guard let name = try object.string("NSPropertyName"), !name.isEmpty else {
            throw archive.error("entity \(entityName): \(object) has no NSPropertyName")
        }
        let property: NSPropertyDescription
        let context = "entity \(entityName): property \(name)"
        if object.isKind(of: "NSRelationshipDescription") {
            note(unknownKeysOf: object, known: Self.relationshipKeys, in: context)
            let relationship = NSRelationshipDescription()
            relationship.minCount = try object.int("NSMinCount") ?? 0
            // A to-many without an upper bound is 0 in model files, -1 in some archives [obs
            // SampleModel2 Z_MODELCACHE `books`]; Core Data's version hash uses the value as stored.
            relationship.maxCount = try object.int("NSMaxCount") ?? 1
            relationship.isOrdered = try object.bool("NSIsOrdered")
            let rule = try object.int("NSDeleteRule") ?? 1
            guard let deleteRule = NSDeleteRule(rawValue: UInt(clamping: max(rule, 0))), rule >= 0 else {
                throw archive.error("\(context): unknown NSDeleteRule \(rule)")
            }
            relationship.deleteRule = deleteRule
            relationship._destinationEntityName = try object.string("_NSDestinationEntityName")
            relationship._inverseName = try object.string("_NSInverseRelationshipName")
            property = relationship
        } else if object.isKind(of: "NSAttributeDescription") {
            let typeCode = try object.int("NSAttributeType") ?? 0
            guard let type = NSAttributeType(rawValue: UInt(clamping: max(typeCode, 0))), typeCode >= 0 else {
                throw archive.error("\(context): unknown NSAttributeType \(typeCode)")
            }
            let attribute: NSAttributeDescription
            if object.isKind(of: "NSDerivedAttributeDescription") {
                note(unknownKeysOf: object, known: Self.derivedKeys, in: context)
                let derived = NSDerivedAttributeDescription()
                if let format = try object.value("NSDerivationExpression") as? String {  // written by encode(with:)
                    derived._setDerivationExpression(format: format)
                } else if let expression = try object.object("NSDerivationExpression") {
                    let decoded = try ArchivedPredicateDecoder(archive: archive).expression(expression)
                    let format = ArchivedPredicateDecoder.modelFileFormat(of: decoded)
                    // `count:(pages)` is the archived form of the key path `pages.@count`, the form
                    // the stores' derived-attribute support reads.
                    derived.derivationExpression = XcodeModelBuilder.isPlainKeyPath(format) ? NSExpression(forKeyPath: format) : decoded
                    derived._derivationExpressionFormat = format
                }
                if try object.value("NSFilteringPredicate") != nil {
                    info.unrecognizedElements.append("\(context): NSFilteringPredicate (not supported)")
                }
                attribute = derived
            } else if object.isKind(of: "NSCompositeAttributeDescription") {
                // No Apple-written archive with a composite attribute has been seen: `NSElements` is
                // what NSCompositeAttributeDescription.encode(with:) writes.
                note(unknownKeysOf: object, known: Self.compositeKeys, in: context)
                let composite = NSCompositeAttributeDescription()
                composite.elements = try (object.array("NSElements") ?? []).map { item in
                    guard let element = item as? Object, element.isKind(of: "NSAttributeDescription"),
                          let attribute = try makeProperty(element, entityName: entityName) as? NSAttributeDescription
                    else { throw archive.error("\(context): an element of the composite is not an attribute") }
                    return attribute
                }
                attribute = composite
            } else {
                note(unknownKeysOf: object, known: Self.attributeKeys, in: context)
                attribute = NSAttributeDescription()
            }
            attribute.attributeType = type
            attribute.valueTransformerName = try object.string("NSValueTransformerName")
            if let className = try object.string("NSAttributeValueClassName"), type == .transformableAttributeType {
                attribute.attributeValueClassName = className
            }
            attribute.allowsExternalBinaryDataStorage = try object.bool("_NSAllowsExternalBinaryDataStorage")
            attribute.allowsCloudEncryption = try object.bool("_NSAllowsCloudEncryption")
            let flags = try object.int("NSFlagsKey") ?? 0
            attribute.preservesValueInHistoryOnDeletion = flags & Self.preservesValueInHistoryOnDeletionFlag != 0
            if flags & ~Self.preservesValueInHistoryOnDeletionFlag != 0 {
                info.unrecognizedElements.append("\(context): NSFlagsKey bits \(flags & ~Self.preservesValueInHistoryOnDeletionFlag)")
            }
            attribute.defaultValue = try defaultValue(object, type: type, context: context)
            property = attribute
        } else if object.isKind(of: "NSFetchedPropertyDescription") {
            note(unknownKeysOf: object, known: Self.fetchedPropertyKeys, in: context)
            let fetched = NSFetchedPropertyDescription()
            if let fetch = try object.object("NSFetchRequest") {
                // By entity name: the entities are not all made yet (the store's check resolves it).
                let described = try fetchRequestInfo(fetch, fallbackEntity: try object.string("_NSFetchRequestEntityName"))
                let request = NSFetchRequest<any NSFetchRequestResult>(entityName: described.entityName)
                request.predicate = try predicate(fetch, decoder: ArchivedPredicateDecoder(archive: archive))
                fetched.fetchRequest = request
            }
            property = fetched
        } else {
            throw archive.error("\(context) is a \(object.className), not an attribute or relationship")
        }
        property.name = name
        property.isOptional = try object.bool("NSIsOptional")
        property.isTransient = try object.bool("NSIsTransient")
        property.isIndexed = try object.bool("_NSIsIndexed")
        property.isIndexedBySpotlight = try object.bool("_NSIsIndexedBySpotlight")
        property.versionHashModifier = try object.string("NSVersionHashModifier")
        property.renamingIdentifier = try object.string("NSRenamingIdentifier")
        property.userInfo = try userInfo(object, key: "NSUserInfo")
        if let predicates = try object.array("NSValidationPredicates"), !predicates.isEmpty {
            let decoder = ArchivedPredicateDecoder(archive: archive)
            let decoded = try predicates.map { item -> NSPredicate in
                if let text = item as? String { return try NSPredicate(validatingFormat: text) }  // GNUstep-style archives
                guard let predicate = item as? Object else { throw archive.error("\(context): a validation predicate is a \(type(of: item))") }
                return try decoder.predicate(predicate)
            }
            property._setValidationPredicates(decoded, warnings: try object.array("NSValidationWarnings") ?? [])
        }
        return property
    }

    /// `NSDefaultValue` as the attribute type's canonical Swift value; a value of a class only the
    /// app knows (a transformable's custom class) is left out and noted.
    private mutating func defaultValue(_ object: Object, type: NSAttributeType, context: String) throws -> Any? {
        guard let value = try object.value("NSDefaultValue") else { return nil }
        if let archived = value as? Object {
            info.unrecognizedElements.append("\(context): default value of class \(archived.className) (left out)")
            return nil
        }
        return Self.canonicalDefaultValue(value, type: type)
    }

    /// A default value as the attribute type's canonical Swift value (an archive holds numbers as
    /// `NSNumber`s of any width).
    static func canonicalDefaultValue(_ value: Any, type: NSAttributeType) -> Any? {
        let number = value as? NSNumber
        switch type {
        case .integer16AttributeType: return KeyedArchive.integer(value).flatMap { Int16(exactly: $0) }
        case .integer32AttributeType: return KeyedArchive.integer(value).flatMap { Int32(exactly: $0) }
        case .integer64AttributeType: return KeyedArchive.integer(value).map { Int64($0) }
        case .doubleAttributeType: return (value as? Double) ?? number?.doubleValue
        case .floatAttributeType: return (value as? Float) ?? number?.floatValue
        case .booleanAttributeType: return (value as? Bool) ?? number?.boolValue
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return decimal }
            if let text = value as? String { return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) }  // as encode(with:) writes it
            return number.map { Decimal(string: $0.stringValue, locale: Locale(identifier: "en_US_POSIX")) ?? Decimal($0.doubleValue) }
        default: return value
        }
    }

    /// Records a fetched property as file info (name, entity, predicate), as for Xcode model files;
    /// ``makeProperty(_:entityName:)`` makes its `NSFetchedPropertyDescription`.
    private mutating func noteFetchedProperty(_ object: Object, entityName: String) throws {
        let name = try object.string("NSPropertyName") ?? ""
        var request: XcodeFetchRequestInfo?
        if let fetch = try object.object("NSFetchRequest") {
            let decoded = try fetchRequestInfo(fetch, fallbackEntity: try object.string("_NSFetchRequestEntityName"))
            request = decoded
        }
        let userInfo = (try self.userInfo(object, key: "NSUserInfo") ?? [:]).reduce(into: [String: String]()) {
            if let key = $1.key as? String { $0[key] = "\($1.value)" }
        }
        info.fetchedPropertiesByEntity[entityName, default: []].append(
            XcodeFetchedPropertyInfo(name: name, isOptional: try object.bool("NSIsOptional"), fetchRequest: request, userInfo: userInfo))
    }

    // MARK: Relationships and indexes

    private func resolveRelationships(_ named: [(name: String, object: Object)]) throws {
        for (name, object) in named {
            for (_, value) in try object.dictionary("NSProperties")?.entries ?? [] {
                guard let propertyObject = value as? Object,
                      let relationship = propertyByUID[propertyObject.uid] as? NSRelationshipDescription else { continue }
                func resolvedRelationship(_ inverse: Object) -> NSRelationshipDescription? {
                    if let own = propertyByUID[inverse.uid] as? NSRelationshipDescription { return own }
                    guard let copy = inheritedCopies[inverse.uid] else { return nil }
                    return entityByUID[copy.entityUID]?.relationshipsByName[copy.name]
                }
                let context = "entity \(name): relationship \(relationship.name)"
                if let destination = try propertyObject.object("NSDestinationEntity") {
                    guard let entity = entityByUID[destination.uid] else { throw archive.error("\(context): its destination is not an entity of the model") }
                    relationship.destinationEntity = entity
                } else if let destinationName = relationship._destinationEntityName {
                    guard let entity = entityByUID.values.first(where: { $0.name == destinationName }) else {
                        throw archive.error("\(context): destination \(destinationName) is not an entity of the model")
                    }
                    relationship.destinationEntity = entity
                } else {
                    throw archive.error("\(context) has no destination entity")
                }
                if let inverse = try propertyObject.object("NSInverseRelationship") {
                    guard let inverseRelationship = resolvedRelationship(inverse) else {
                        throw archive.error("\(context): its inverse is not a relationship of the model")
                    }
                    relationship.inverseRelationship = inverseRelationship
                } else if let inverseName = relationship._inverseName {
                    guard let inverse = relationship.destinationEntity?.relationshipsByName[inverseName] else {
                        throw archive.error("\(context): inverse \(inverseName) does not exist")
                    }
                    relationship.inverseRelationship = inverse
                }
            }
        }
    }

    /// `NSFetchIndexDescriptions` as `indexes`; legacy `NSCompoundIndexes` as file info, as the
    /// Xcode model reader keeps `<compoundIndexes>`.
    private mutating func readIndexes(_ object: Object, entity: NSEntityDescription, name: String) throws {
        var indexes: [NSFetchIndexDescription] = []
        for item in try object.array("NSFetchIndexDescriptions") ?? [] {
            guard let index = item as? Object, index.isKind(of: "NSFetchIndexDescription") else {
                throw archive.error("entity \(name): NSFetchIndexDescriptions holds something that is not a fetch index")
            }
            let indexName = try index.string("NSIndexName") ?? ""
            var elements: [NSFetchIndexElementDescription] = []
            var infoElements: [XcodeFetchIndexInfo.Element] = []
            for raw in try index.array("NSIndexElements") ?? [] {
                guard let element = raw as? Object else { throw archive.error("entity \(name): index \(indexName) has a malformed element") }
                let propertyName = try element.string("NSPropertyName")
                let type = try element.int("NSFetchIndexElementType") ?? 0
                let ascending = element.contains("NSAscending") ? try element.bool("NSAscending") : true
                infoElements.append(.init(property: propertyName, expression: nil, type: type == 1 ? "RTree" : "Binary",
                                          order: ascending ? "ascending" : "descending"))
                guard let propertyName, let property = entity.propertiesByName[propertyName] else { continue }
                let description = NSFetchIndexElementDescription(property: property, collationType: type == 1 ? .rTree : .binary)
                description.isAscending = ascending
                elements.append(description)
            }
            info.fetchIndexesByEntity[name, default: []].append(XcodeFetchIndexInfo(name: indexName, elements: infoElements))
            if try index.value("NSPartialIndexPredicate") != nil {
                info.unrecognizedElements.append("entity \(name): index \(indexName): partial index predicate (left out)")
            }
            if !elements.isEmpty, elements.count == infoElements.count {
                indexes.append(NSFetchIndexDescription(name: indexName, elements: elements))
            }
        }
        if !indexes.isEmpty { entity.indexes = indexes }
        let compound = try (object.array("NSCompoundIndexes") ?? []).map { item -> [String] in
            guard let names = item as? [Any] else { throw archive.error("entity \(name): NSCompoundIndexes holds a non-array") }
            return names.compactMap { ($0 as? String) ?? ($0 as? Object).flatMap { try? $0.string("NSPropertyName") } }
        }
        if !compound.isEmpty { info.compoundIndexesByEntity[name, default: []] += compound }
    }

    // MARK: Fetch requests

    private func fetchRequest(_ object: Object, context: String) throws -> NSFetchRequest<any NSFetchRequestResult> {
        // `NSEntityName` is what a template written by this framework names when it has no entity object.
        let entity = try object.object("NSEntity").flatMap { entityByUID[$0.uid] }
            ?? object.string("NSEntityName").flatMap { name in entityByUID.values.first { $0.name == name } }
        guard let entity, let name = entity.name else {
            throw archive.error("\(context): its entity is not an entity of the model")
        }
        let request = NSFetchRequest<any NSFetchRequestResult>(entityName: name)
        request.entity = entity
        let decoder = ArchivedPredicateDecoder(archive: archive)
        request.predicate = try predicate(object, decoder: decoder)
        if let sorts = try object.array("NSSortDescriptors") {
            request.sortDescriptors = try sorts.map { item in
                guard let sort = item as? Object else { throw archive.error("\(context): a sort descriptor is malformed") }
                return try decoder.sortDescriptor(sort)
            }
        }
        request.fetchLimit = try object.int("NSFetchLimit") ?? 0
        request.fetchOffset = try object.int("NSFetchOffset") ?? 0
        request.fetchBatchSize = try object.int("NSBatchSize") ?? 0
        if let type = try object.int("NSResultType"), type >= 0 {
            request.resultType = NSFetchRequestResultType(rawValue: UInt(type))
        }
        return request
    }

    private func fetchRequestInfo(_ object: Object, fallbackEntity: String?) throws -> XcodeFetchRequestInfo {
        let entityName = try object.object("NSEntity").flatMap { try $0.string("NSEntityName") } ?? object.string("NSEntityName")
            ?? fallbackEntity ?? ""
        let predicate = try predicate(object, decoder: ArchivedPredicateDecoder(archive: archive))
        return XcodeFetchRequestInfo(
            name: "", entityName: entityName, predicateString: predicate?.predicateFormat,
            fetchLimit: try object.int("NSFetchLimit"), fetchBatchSize: try object.int("NSBatchSize"),
            resultType: try object.int("NSResultType"), attributes: [:])
    }

    // MARK: Helpers

    /// A fetch request's `NSPredicate`: an archived predicate, or a format string (as this
    /// framework's `encode(with:)` writes it).
    private func predicate(_ request: Object, decoder: ArchivedPredicateDecoder) throws -> NSPredicate? {
        switch try request.value("NSPredicate") {
        case nil: return nil
        case let format as String:
            do { return try NSPredicate(validatingFormat: format) } catch {
                throw archive.error("\(request): predicate does not parse: \(format)")
            }
        case let object as Object: return try decoder.predicate(object)
        case let other?: throw archive.error("\(request): NSPredicate is a \(type(of: other))")
        }
    }

    private func userInfo(_ object: Object, key: String) throws -> [AnyHashable: Any]? {
        try object.dictionary(key)?.userInfo
    }

    private mutating func note(unknownKeysOf object: Object, known: Set<String>, in context: String) {
        let unknown = object.fields.keys.filter { !known.contains($0) }.sorted()
        if !unknown.isEmpty { info.unrecognizedElements.append("\(context): \(unknown.joined(separator: ", "))") }
    }
}
