import Foundation

/// Turns the element tree of a `contents` file into an `NSManagedObjectModel` (FORMATS.md §3.1).
///
/// Entities are created first; superentities, relationship destinations and inverses are resolved
/// once every entity exists, so the file's element order does not matter. Diagram layout
/// (`<elements>`) is ignored; unknown elements are listed in `XcodeModelFileInfo.unrecognizedElements`.
struct XcodeModelBuilder {
    let url: URL

    /// A relationship waiting for its destination and inverse to be resolved.
    private struct PendingRelationship {
        let relationship: NSRelationshipDescription
        let owner: NSEntityDescription
        let destinationName: String?
        let inverseName: String?
        let inverseEntityName: String?
        let line: Int
    }

    func build(_ root: XcodeModelXML, into model: NSManagedObjectModel) throws {
        guard root.name == "model" else {
            throw fail("the root element is <\(root.name)>, not <model>; this is not an Xcode model file", root)
        }
        var info = XcodeModelFileInfo(url: url)
        info.modelAttributes = root.attributes
        if let identifier = root["userDefinedModelVersionIdentifier"] {
            model.versionIdentifiers = [identifier]
        }

        for composite in root.children(named: "composite") {
            guard let name = composite["name"] else { throw fail("<composite> has no name", composite) }
            info.composites[name] = try composite.children(named: "attribute").map { try attribute(from: $0, entityName: name) }
        }

        var entities: [NSEntityDescription] = []
        var entityByName: [String: NSEntityDescription] = [:]
        var elementByEntity: [ObjectIdentifier: XcodeModelXML] = [:]
        var pending: [PendingRelationship] = []
        var pendingFetched: [(property: NSFetchedPropertyDescription, info: XcodeFetchedPropertyInfo, entity: String, line: Int)] = []

        for element in root.children(named: "entity") {
            guard let name = element["name"], !name.isEmpty else { throw fail("<entity> has no name", element) }
            guard entityByName[name] == nil else { throw fail("duplicate entity \(name)", element, entity: name) }
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = element["representedClassName"] ?? "NSManagedObject"
            entity.isAbstract = element.flag("isAbstract")
            entity.renamingIdentifier = element["elementID"]
            entity.versionHashModifier = element["versionHashModifier"]

            var properties: [NSPropertyDescription] = []
            var seen = Set<String>()
            for child in element.children {
                switch child.name {
                case "attribute":
                    properties.append(try attribute(from: child, entityName: name))
                case "relationship":
                    let (relationship, item) = try self.relationship(from: child, entity: entity)
                    properties.append(relationship)
                    pending.append(item)
                case "fetchedProperty":
                    let fetchedInfo = try fetchedProperty(from: child, entityName: name)
                    info.fetchedPropertiesByEntity[name, default: []].append(fetchedInfo)
                    let fetched = NSFetchedPropertyDescription()
                    fetched.name = fetchedInfo.name
                    readCommonProperty(child, into: fetched)
                    properties.append(fetched)
                    pendingFetched.append((fetched, fetchedInfo, name, child.line))
                case "userInfo":
                    entity.userInfo = userInfo(from: child)
                case "uniquenessConstraints":
                    entity.uniquenessConstraints = child.children(named: "uniquenessConstraint").map { constraint in
                        constraint.children(named: "constraint").compactMap { $0["value"] }
                    }
                case "fetchIndex":
                    info.fetchIndexesByEntity[name, default: []].append(fetchIndex(from: child))
                case "compoundIndexes":
                    info.compoundIndexesByEntity[name, default: []] += child.children(named: "compoundIndex").map { index in
                        index.children(named: "index").compactMap { $0["value"] }
                    }
                default:
                    info.unrecognizedElements.append("line \(child.line): <\(child.name)> in entity \(name)")
                    continue
                }
                if let property = properties.last, ["attribute", "relationship", "fetchedProperty"].contains(child.name) {
                    guard seen.insert(property.name).inserted else {
                        throw fail("duplicate property \(property.name)", child, entity: name)
                    }
                }
            }
            entity.properties = properties
            entities.append(entity)
            entityByName[name] = entity
            elementByEntity[ObjectIdentifier(entity)] = element
        }

        try resolveComposites(info.composites, entities: entities)
        // Fetch indexes once composites have their elements (an element may be indexed: `colorScheme.primary`).
        for entity in entities {
            entity.indexes = (info.fetchIndexesByEntity[entity.name ?? ""] ?? []).compactMap { fetchIndexDescription($0, entity.ownProperties) }
        }

        // Inheritance: subentities in file order; setting `subentities` sets each child's superentity.
        var links: [(child: NSEntityDescription, parent: NSEntityDescription)] = []
        for entity in entities {
            let element = elementByEntity[ObjectIdentifier(entity)]!
            guard let parentName = element["parentEntity"] else { continue }
            guard let parent = entityByName[parentName] else {
                throw fail("parentEntity \(parentName) is not an entity of the model", element, entity: entity.name)
            }
            links.append((entity, parent))
        }
        try EntityHierarchy.link(entities, links) { entity in
            fail("entity inheritance forms a cycle", elementByEntity[ObjectIdentifier(entity)]!, entity: entity.name)
        }
        model.entities = entities

        // Relationships: destinations, then inverses (which may be inherited by the inverse entity).
        for item in pending {
            guard let destinationName = item.destinationName else {
                throw fail("relationship \(item.relationship.name) has no destinationEntity", line: item.line, entity: item.owner.name)
            }
            guard let destination = entityByName[destinationName] else {
                throw fail("relationship \(item.relationship.name): destinationEntity \(destinationName) is not an entity of the model",
                           line: item.line, entity: item.owner.name)
            }
            item.relationship.destinationEntity = destination
        }
        for item in pending {
            guard let inverseName = item.inverseName else { continue }
            let inverseEntityName = item.inverseEntityName ?? item.destinationName ?? ""
            guard let inverseEntity = entityByName[inverseEntityName],
                  let inverse = inverseEntity.relationshipsByName[inverseName] else {
                throw fail("relationship \(item.relationship.name): inverse \(inverseEntityName).\(inverseName) does not exist",
                           line: item.line, entity: item.owner.name)
            }
            item.relationship.inverseRelationship = inverse
        }

        // Fetched properties' requests, once every entity they may name exists.
        for item in pendingFetched {
            guard let request = item.info.fetchRequest else {
                throw fail("fetched property \(item.info.name) has no <fetchRequest>", line: item.line, entity: item.entity)
            }
            // A predicate that does not parse (MomXML's test model has `predicateString="predicate"`)
            // does not stop the model from loading: reading the property throws it instead.
            item.property.fetchRequest = try model.fetchRequest(
                from: request, url: url, line: item.line, owner: "entity \(item.entity): fetched property \(item.info.name)",
                onBadPredicate: { item.property._predicateError = $0 })
        }

        for configuration in root.children(named: "configuration") {
            guard let name = configuration["name"] else { throw fail("<configuration> has no name", configuration) }
            let members = try configuration.children(named: "memberEntity").map { member in
                guard let memberName = member["name"], let entity = entityByName[memberName] else {
                    throw fail("configuration \(name): memberEntity \(member["name"] ?? "(no name)") is not an entity of the model", member)
                }
                return entity
            }
            model.setEntities(members, forConfigurationName: name)
        }

        info.fetchRequestTemplates = try root.children(named: "fetchRequest").map { try fetchRequest(from: $0) }
        try model.registerFetchRequestTemplates(info.fetchRequestTemplates, url: url)
        let known: Set<String> = ["entity", "elements", "configuration", "fetchRequest", "composite"]
        for child in root.children where !known.contains(child.name) {
            info.unrecognizedElements.append("line \(child.line): <\(child.name)> in <model>")
        }
        model._xcodeModelFile = info
    }

    // MARK: Properties

    private func attribute(from element: XcodeModelXML, entityName: String) throws -> NSAttributeDescription {
        guard let name = element["name"], !name.isEmpty else { throw fail("<attribute> has no name", element, entity: entityName) }
        let typeName = element["attributeType"] ?? "Undefined"
        guard let type = Self.attributeType(named: typeName) else {
            throw fail("attribute \(name): unknown attributeType \"\(typeName)\"", element, entity: entityName)
        }
        let attribute: NSAttributeDescription
        if element.flag("derived") {
            let derived = NSDerivedAttributeDescription()
            if let expression = element["derivationExpression"]?.trimmingCharacters(in: .whitespaces) {
                derived._setDerivationExpression(format: expression)
            }
            attribute = derived
        } else if type == .compositeAttributeType {
            attribute = NSCompositeAttributeDescription()  // elements: see resolveComposites
        } else {
            attribute = NSAttributeDescription()
        }
        attribute.name = name
        attribute.attributeType = type
        readCommonProperty(element, into: attribute)
        attribute.valueTransformerName = element["valueTransformerName"]
        if type == .transformableAttributeType, let custom = element["customClassName"] { attribute.attributeValueClassName = custom }
        attribute.allowsExternalBinaryDataStorage = element.flag("allowsExternalBinaryDataStorage")
        attribute.preservesValueInHistoryOnDeletion = element.flag("preserveAfterDeletion")
        attribute.allowsCloudEncryption = element.flag("allowsCloudEncryption")
        attribute.defaultValue = Self.defaultValue(
            string: element["defaultValueString"], dateTimeInterval: element["defaultDateTimeInterval"], type: type)

        var extras = XcodeModelPropertyExtras()
        extras.line = element.line
        extras.minValueString = element["minValueString"]
        extras.maxValueString = element["maxValueString"]
        extras.minDateTimeInterval = element["minDateTimeInterval"].flatMap(Double.init)
        extras.maxDateTimeInterval = element["maxDateTimeInterval"].flatMap(Double.init)
        extras.regularExpressionString = element["regularExpressionString"]
        extras.defaultValueString = element["defaultValueString"]
        extras.customClassName = element["customClassName"]
        extras.usesScalarValueType = element["usesScalarValueType"].map { $0 == "YES" }
        extras.compositeName = element["composite"]
        attribute._xcodeModelExtras = extras
        attribute._setValidationPredicates(fromXcode: extras)
        return attribute
    }

    private func relationship(from element: XcodeModelXML, entity: NSEntityDescription) throws
        -> (NSRelationshipDescription, PendingRelationship)
    {
        guard let name = element["name"], !name.isEmpty else {
            throw fail("<relationship> has no name", element, entity: entity.name)
        }
        let relationship = NSRelationshipDescription()
        relationship.name = name
        readCommonProperty(element, into: relationship)
        let toMany = element.flag("toMany")
        relationship.maxCount = try integer("maxCount", element, entity: entity) ?? (toMany ? 0 : 1)
        relationship.minCount = try integer("minCount", element, entity: entity) ?? 0
        relationship.isOrdered = element.flag("ordered")
        switch element["deletionRule"] ?? "Nullify" {
        case "Nullify": relationship.deleteRule = .nullifyDeleteRule
        case "Cascade": relationship.deleteRule = .cascadeDeleteRule
        case "Deny": relationship.deleteRule = .denyDeleteRule
        case "No Action", "NoAction": relationship.deleteRule = .noActionDeleteRule
        case let other: throw fail("relationship \(name): unknown deletionRule \"\(other)\"", element, entity: entity.name)
        }
        relationship._destinationEntityName = element["destinationEntity"]
        relationship._inverseName = element["inverseName"]
        var extras = XcodeModelPropertyExtras()
        extras.line = element.line
        relationship._xcodeModelExtras = extras
        let item = PendingRelationship(
            relationship: relationship, owner: entity, destinationName: element["destinationEntity"],
            inverseName: element["inverseName"], inverseEntityName: element["inverseEntity"], line: element.line)
        return (relationship, item)
    }

    /// Attributes every property element shares.
    private func readCommonProperty(_ element: XcodeModelXML, into property: NSPropertyDescription) {
        property.isOptional = element.flag("optional")
        property.isTransient = element.flag("transient")
        property.isIndexed = element.flag("indexed")
        property.isIndexedBySpotlight = element.flag("spotlightIndexingEnabled")
        property.renamingIdentifier = element["elementID"]
        property.versionHashModifier = element["versionHashModifier"]
        if let userInfo = element.child(named: "userInfo") { property.userInfo = self.userInfo(from: userInfo) }
    }

    private func fetchedProperty(from element: XcodeModelXML, entityName: String) throws -> XcodeFetchedPropertyInfo {
        guard let name = element["name"] else { throw fail("<fetchedProperty> has no name", element, entity: entityName) }
        return XcodeFetchedPropertyInfo(
            name: name,
            isOptional: element.flag("optional"),
            fetchRequest: try element.child(named: "fetchRequest").map { try fetchRequest(from: $0) },
            userInfo: element.child(named: "userInfo").map(stringUserInfo) ?? [:])
    }

    private func fetchRequest(from element: XcodeModelXML) throws -> XcodeFetchRequestInfo {
        guard let entityName = element["entity"] else { throw fail("<fetchRequest> has no entity", element) }
        return XcodeFetchRequestInfo(
            name: element["name"] ?? "",
            entityName: entityName,
            predicateString: element["predicateString"],
            fetchLimit: element["fetchLimit"].flatMap { Int($0) },
            fetchBatchSize: element["fetchBatchSize"].flatMap { Int($0) },
            resultType: element["resultType"].flatMap { Int($0) },
            attributes: element.attributes)
    }

    /// A `<fetchIndex>` as an `NSFetchIndexDescription`, or `nil` if an element names no property of
    /// the entity (expression elements, inherited properties), which the model keeps only as file info.
    private func fetchIndexDescription(_ info: XcodeFetchIndexInfo, _ properties: [NSPropertyDescription])
        -> NSFetchIndexDescription?
    {
        var elements: [NSFetchIndexElementDescription] = []
        for item in info.elements {
            guard let name = item.property, let property = Self.indexedProperty(name, in: properties) else {
                return nil
            }
            let element = NSFetchIndexElementDescription(
                property: property, collationType: item.type?.lowercased() == "rtree" ? .rTree : .binary)
            element.isAscending = item.order != "descending"
            elements.append(element)
        }
        return elements.isEmpty ? nil : NSFetchIndexDescription(name: info.name, elements: elements)
    }

    /// The property a fetch index element names: one of `properties`, or, for a namespaced key path
    /// (`colorScheme.primary`; how Xcode writes one is not documented), a composite's element.
    private static func indexedProperty(_ name: String, in properties: [NSPropertyDescription]) -> NSPropertyDescription? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard var current = properties.first(where: { $0.name == parts[0] }) else { return nil }
        for part in parts.dropFirst() {
            guard let next = (current as? NSCompositeAttributeDescription)?.elements.first(where: { $0.name == part }) else {
                return nil
            }
            current = next
        }
        return current
    }

    private func fetchIndex(from element: XcodeModelXML) -> XcodeFetchIndexInfo {
        XcodeFetchIndexInfo(
            name: element["name"] ?? "",
            elements: element.children(named: "fetchIndexElement").map {
                .init(property: $0["property"], expression: $0["expression"], type: $0["type"], order: $0["order"])
            })
    }

    private func userInfo(from element: XcodeModelXML) -> [AnyHashable: Any] {
        stringUserInfo(element).reduce(into: [AnyHashable: Any]()) { $0[$1.key] = $1.value }
    }

    private func stringUserInfo(_ element: XcodeModelXML) -> [String: String] {
        var result: [String: String] = [:]
        for entry in element.children(named: "entry") {
            if let key = entry["key"] { result[key] = entry["value"] ?? "" }
        }
        return result
    }

    private func integer(_ attribute: String, _ element: XcodeModelXML, entity: NSEntityDescription) throws -> Int? {
        guard let text = element[attribute] else { return nil }
        guard let value = Int(text) else {
            throw fail("\(attribute)=\"\(text)\" is not an integer", element, entity: entity.name)
        }
        return value
    }

    // MARK: Errors

    private func fail(_ message: String, _ element: XcodeModelXML, entity: String? = nil) -> OpenCoreDataError {
        fail(message, line: element.line, entity: entity)
    }

    private func fail(_ message: String, line: Int, entity: String?) -> OpenCoreDataError {
        var error = XcodeModelReader.error(entity.map { "entity \($0): \(message)" } ?? message, url: url, line: line)
        error.entityName = entity
        return error
    }

    // MARK: Value conversion

    /// The attribute type an Xcode `attributeType` string names.
    static func attributeType(named name: String) -> NSAttributeType? {
        switch name {
        case "Undefined": .undefinedAttributeType
        case "Integer 16": .integer16AttributeType
        case "Integer 32": .integer32AttributeType
        case "Integer 64": .integer64AttributeType
        case "Decimal": .decimalAttributeType
        case "Double": .doubleAttributeType
        case "Float": .floatAttributeType
        case "String": .stringAttributeType
        case "Boolean": .booleanAttributeType
        case "Date": .dateAttributeType
        case "Binary": .binaryDataAttributeType
        case "UUID": .UUIDAttributeType
        case "URI": .URIAttributeType
        case "Transformable": .transformableAttributeType
        case "ObjectID", "Object ID": .objectIDAttributeType
        case "Composite": .compositeAttributeType
        default: nil
        }
    }

    /// `defaultValueString` converted to the attribute type's canonical Swift value
    /// (see ``NSAttributeDescription``); `nil` when the text does not convert.
    static func defaultValue(string: String?, dateTimeInterval: String?, type: NSAttributeType) -> Any? {
        if type == .dateAttributeType {
            if let interval = dateTimeInterval.flatMap(Double.init) { return Date(timeIntervalSinceReferenceDate: interval) }
            return string.flatMap(parseDate)
        }
        guard let string else { return nil }
        let text = string.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16AttributeType: return integerValue(text).flatMap { Int16(exactly: $0) }
        case .integer32AttributeType: return integerValue(text).flatMap { Int32(exactly: $0) }
        case .integer64AttributeType: return integerValue(text)
        case .decimalAttributeType: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case .doubleAttributeType: return Double(text)
        case .floatAttributeType: return Float(text)
        case .stringAttributeType: return string
        case .booleanAttributeType:
            switch text.lowercased() {
            case "yes", "true", "1": return true
            case "no", "false", "0": return false
            default: return nil
            }
        case .UUIDAttributeType: return UUID(uuidString: text)
        case .URIAttributeType: return URL(string: text)
        default: return nil
        }
    }

    private static func integerValue(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        if let value = Double(text), value.rounded() == value { return Int64(exactly: value) }
        return nil
    }

    private static func parseDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// Whether a derivation expression is a plain key path (`photos.@count`, `author.name`).
    static func isPlainKeyPath(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "@" || first == "_" || CharacterSet.letters.contains(first) else {
            return false
        }
        return text.unicodeScalars.allSatisfy { $0 == "." || $0 == "@" || $0 == "_" || CharacterSet.alphanumerics.contains($0) }
    }
}
