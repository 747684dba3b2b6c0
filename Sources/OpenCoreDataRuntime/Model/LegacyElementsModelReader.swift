import Foundation

/// Reads pre-Xcode 4 model files (docs/compiled-models.md, "Pre-Xcode 4 `elements` models"): a
/// `.xcdatamodel` folder holding `elements`, an `NSKeyedArchiver` archive of Xcode's design-time
/// UML classes (`XDPMModel`, `XDModelPackage`, `XDPMEntity`, `XDPMAttribute`, `XDPMRelationship`),
/// instead of the XML `contents` of later Xcode versions.
///
/// The archive is read with ``KeyedArchive`` and translated into the element tree an Xcode 4
/// `contents` file gives (`<model>`, `<entity>`, `<attribute>`, `<relationship>` with the same
/// attribute names), which ``XcodeModelBuilder`` turns into the model: type codes, defaults,
/// validation bounds, inverses and relationship counts mean the same in both formats, and are
/// interpreted in one place. User info (whose values may be dictionaries here, strings in XML) is
/// set from the archive afterwards. Keys not listed below are reported in
/// `XcodeModelFileInfo.unrecognizedElements`; a file that is not such an archive, or that contradicts
/// itself, throws `NSFileReadCorruptFileError` (259) naming the file.
package enum LegacyElementsModelReader {
    typealias Object = KeyedArchive.Object

    /// Whether `url` is an `elements` file (the reader's input).
    package static func isElementsFile(_ url: URL) -> Bool {
        url.lastPathComponent == "elements"
    }

    /// Reads the `elements` archive at `url` into `model`.
    package static func load(contentsOf url: URL, into model: NSManagedObjectModel) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw KeyedArchive.error("cannot be read", url: url, what: what)
        }
        let archive = try KeyedArchive(data: data, url: url, what: what)
        let root = try archive.topObject()
        guard root.isKind(of: "XDPMModel") else {
            throw archive.error("archives a \(root.className), not Xcode's XDPMModel")
        }
        var translator = Translator(archive: archive)
        let tree = try translator.modelElement(root)
        do {
            try XcodeModelBuilder(url: url).build(tree, into: model)
        } catch let error as OpenCoreDataError {
            // The builder names the file and a line; the archive has no lines.
            let prefix = "\(url.path):0: "
            let message = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            var corrupt = archive.error(message)
            corrupt.entityName = error.entityName
            throw corrupt
        }
        for entity in model.entities {
            guard let name = entity.name, let found = translator.userInfo[name] else { continue }
            entity.userInfo = found.entity
            for property in entity.properties {
                if let info = found.properties[property.name] { property.userInfo = info }
            }
        }
        model._xcodeModelFile?.unrecognizedElements += translator.unrecognized
    }

    static let what = "pre-Xcode 4 model (elements)"

    /// Walks the archive and builds the equivalent `contents` element tree.
    struct Translator {
        let archive: KeyedArchive
        /// Entity name → its user info and its properties' (property name → user info).
        var userInfo: [String: (entity: [AnyHashable: Any]?, properties: [String: [AnyHashable: Any]])] = [:]
        var unrecognized: [String] = []

        init(archive: KeyedArchive) { self.archive = archive }

        // Fields of each class that are read, or known to hold nothing the model needs (UML
        // bookkeeping: visibility, `_uniqueElementID`, the buckets' `ordered`/`wasEncoded` flags).
        private static let umlElementKeys: Set<String> = ["$class", "_name", "_owner", "_uniqueElementID", "_visibility"]
        private static let modelKeys: Set<String> = [
            "$class", "_configurationsByName", "_modelVersionIdentifier", "_xd_comments", "_xd_modelManager",
            "_xd_modelName", "_xd_rootPackage",
        ]
        private static let packageKeys: Set<String> = umlElementKeys.union([
            "XDBucketForClassesstorage", "XDBucketForClasseswasEncoded", "XDBucketForDataTypesstorage",
            "XDBucketForDataTypeswasEncoded", "XDBucketForInterfacesstorage", "XDBucketForInterfaceswasEncoded",
            "XDBucketForPackagesstorage", "XDBucketForPackageswasEncoded", "_xd_owningModel",
        ])
        private static let entityKeys: Set<String> = umlElementKeys.union([
            "XDBucketForGeneralizationsduplicates", "XDBucketForGeneralizationsordered",
            "XDBucketForGeneralizationsstorage", "XDBucketForGeneralizationswasEncoded",
            "XDBucketForOwnedAttributesordered", "XDBucketForOwnedAttributesstorage",
            "XDBucketForOwnedAttributeswasEncoded", "XDBucketForStereotypesordered", "XDBucketForStereotypesstorage",
            "XDBucketForStereotypeswasEncoded", "_isAbstract",
        ])
        /// UML property fields; Core Data's values are in the stereotypes, these stay at their defaults.
        private static let propertyKeys: Set<String> = umlElementKeys.union([
            "XDBucketForStereotypesordered", "XDBucketForStereotypesstorage", "XDBucketForStereotypeswasEncoded",
            "_association", "_default", "_isComposite", "_isDerived", "_isLeaf", "_isOrdered", "_isReadOnly",
            "_isStatic", "_isUnique", "_type",
        ])

        /// Entity stereotype values → `<entity>` attributes.
        private static let entityValues: [String: String] = [
            "XD_PSK_entityClassName": "representedClassName", "XD_PSK_isAbstract": "isAbstract",
            "XD_PSK_elementID": "elementID", "XD_PSK_versionHashModifier": "versionHashModifier",
        ]
        /// Property stereotype values shared by attributes and relationships → element attributes.
        private static let propertyValues: [String: String] = [
            "XD_PPSK_isOptional": "optional", "XD_PPSK_isTransient": "transient", "XD_PPSK_isIndexed": "indexed",
            "XD_PPSK_isSpotlightIndexed": "spotlightIndexingEnabled", "XD_PPSK_elementID": "elementID",
            "XD_PPSK_versionHashModifier": "versionHashModifier",
        ]
        private static let attributeValues: [String: String] = propertyValues.merging([
            "XD_PAttK_defaultValueAsString": "defaultValueString", "XD_PAttK_minValueString": "minValueString",
            "XD_PAttK_maxValueString": "maxValueString", "XD_PAttK_regularExpressionString": "regularExpressionString",
            "XD_PAttK_valueTransformerName": "valueTransformerName",
            "XD_PAttK_allowsExternalBinaryDataStorage": "allowsExternalBinaryDataStorage",
        ]) { $1 }
        private static let relationshipValues: [String: String] = propertyValues.merging([
            "XD_PRK_isToMany": "toMany", "XD_PRK_minCount": "minCount", "XD_PRK_maxCount": "maxCount",
            "XD_PRK_ordered": "ordered",
        ]) { $1 }
        /// `<attribute attributeType>` names, in `NSAttributeType` terms through ``XcodeModelBuilder``.
        private static let attributeTypeNames = [
            "Undefined", "Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float", "String", "Boolean",
            "Date", "Binary", "UUID", "URI", "Transformable", "ObjectID",
        ]

        // MARK: Model and packages

        mutating func modelElement(_ root: Object) throws -> XcodeModelXML {
            note(unknownKeysOf: root, known: Self.modelKeys, in: "model")
            var attributes: [String: String] = [:]
            if let identifier = try root.string("_modelVersionIdentifier"), !identifier.isEmpty {
                attributes["userDefinedModelVersionIdentifier"] = identifier
            }
            if let configurations = try root.dictionary("_configurationsByName"), !configurations.entries.isEmpty {
                // No corpus model has one: how members are archived is unknown.
                unrecognized.append("model: _configurationsByName (\(configurations.entries.count) configurations, left out)")
            }
            guard let package = try root.object("_xd_rootPackage") else { throw archive.error("has a model without _xd_rootPackage") }
            var entities: [(name: String, object: Object)] = []
            try collectEntities(package, into: &entities, depth: 0)
            entities.sort { _utf8Precedes($0.name, $1.name) }
            let model = XcodeModelXML(name: "model", attributes: attributes, line: 0)
            model.children = try entities.map { try entityElement($0.object, name: $0.name) }
            return model
        }

        /// The `XDPMEntity` objects of a package and its subpackages.
        private mutating func collectEntities(_ package: Object, into entities: inout [(name: String, object: Object)], depth: Int)
            throws
        {
            guard package.isKind(of: "XDModelPackage") || package.isKind(of: "XDUMLPackageImp"), depth < 32 else {
                throw archive.error("\(package) is not a model package")
            }
            note(unknownKeysOf: package, known: Self.packageKeys, in: "package")
            for key in ["XDBucketForInterfacesstorage", "XDBucketForDataTypesstorage"] {
                if let bucket = try package.dictionary(key), !bucket.entries.isEmpty {
                    unrecognized.append("package: \(key) (\(bucket.entries.count) entries, left out)")
                }
            }
            for (key, value) in try package.dictionary("XDBucketForClassesstorage")?.entries ?? [] {
                guard let entity = value as? Object, entity.isKind(of: "XDPMEntity") else {
                    unrecognized.append("package: class \(key) is a \((value as? Object)?.className ?? "\(type(of: value))"), not an entity (left out)")
                    continue
                }
                guard let name = try entity.string("_name"), !name.isEmpty else { throw archive.error("\(entity) has no _name") }
                guard !entities.contains(where: { $0.name == name }) else { throw archive.error("has two entities named \(name)") }
                entities.append((name, entity))
            }
            for (_, value) in try package.dictionary("XDBucketForPackagesstorage")?.entries ?? [] {
                guard let child = value as? Object else { throw archive.error("a subpackage is not an archived object") }
                try collectEntities(child, into: &entities, depth: depth + 1)
            }
        }

        // MARK: Entities and properties

        private mutating func entityElement(_ object: Object, name: String) throws -> XcodeModelXML {
            let context = "entity \(name)"
            note(unknownKeysOf: object, known: Self.entityKeys, in: context)
            if let generalizations = try object.array("XDBucketForGeneralizationsstorage"), !generalizations.isEmpty {
                // Inheritance: no corpus model has a superentity, so how it is archived is unknown;
                // leaving it out would give a different model, so the file is refused.
                throw archive.error("\(context): has a superentity (XDBucketForGeneralizations), which is not supported in pre-Xcode 4 models")
            }
            let values = try stereotypeValues(object, context: context)
            var attributes = try xmlAttributes(values, Self.entityValues, context: context)
            attributes["name"] = name
            if try object.bool("_isAbstract") { attributes["isAbstract"] = "YES" }
            for (key, value) in values where !Self.entityValues.keys.contains(key) {
                switch key {
                case "XD_PSK_userInfo": userInfo[name, default: (nil, [:])].entity = try plainUserInfo(value, context: context)
                case "XD_PSK_classMapping": break  // an XDUMLClassImp named XDGenericRecordClass [obs every elements file]
                case "XD_PSK_fetchRequestsArray", "XDPMCompoundIndexes":
                    if let items = value as? [Any], !items.isEmpty {
                        unrecognized.append("\(context): \(key) (\(items.count) items, left out)")
                    } else if value != nil, !(value is [Any]) {
                        unrecognized.append("\(context): \(key) (left out)")
                    }
                default: unrecognized.append("\(context): stereotype value \(key)")
                }
            }
            let element = XcodeModelXML(name: "entity", attributes: attributes, line: 0)
            for (key, value) in try object.dictionary("XDBucketForOwnedAttributesstorage")?.entries ?? [] {
                guard let property = value as? Object, let propertyName = try property.string("_name"), !propertyName.isEmpty else {
                    throw archive.error("\(context): property \(key) is not a named archived object")
                }
                if let child = try propertyElement(property, name: propertyName, entityName: name) { element.children.append(child) }
            }
            return element
        }

        private mutating func propertyElement(_ object: Object, name: String, entityName: String) throws -> XcodeModelXML? {
            let context = "entity \(entityName): property \(name)"
            let isRelationship = object.isKind(of: "XDPMRelationship")
            guard isRelationship || object.isKind(of: "XDPMAttribute") else {
                unrecognized.append("\(context): a \(object.className) (left out)")
                return nil
            }
            note(unknownKeysOf: object, known: Self.propertyKeys, in: context)
            let values = try stereotypeValues(object, context: context)
            let known = isRelationship ? Self.relationshipValues : Self.attributeValues
            var attributes = try xmlAttributes(values, known, context: context)
            attributes["name"] = name
            for (key, value) in values where !known.keys.contains(key) {
                switch (key, isRelationship) {
                case ("XD_PPSK_userInfo", _):
                    if let info = try plainUserInfo(value, context: context) {
                        userInfo[entityName, default: (nil, [:])].properties[name] = info
                    }
                case ("XD_PPSK_isStoredInTruthFile", _):
                    // Sync Services' truth file; false in every corpus file, not a Core Data model property.
                    if flag(value) == true { unrecognized.append("\(context): XD_PPSK_isStoredInTruthFile (left out)") }
                case ("XD_PAttK_attributeType", false):
                    guard let code = value.flatMap(KeyedArchive.integer),
                          let typeName = Self.attributeTypeNames.first(where: { XcodeModelBuilder.attributeType(named: $0)?.rawValue == UInt(exactly: code) })
                    else { throw archive.error("\(context): unknown attribute type \(value.map { "\($0)" } ?? "nil")") }
                    attributes["attributeType"] = typeName
                case ("XD_PRK_deleteRule", true):
                    // NSDeleteRule's raw values [obs Recipes: 1 nullify, 2 cascade, matching Xcode 4's contents].
                    let names = [0: "No Action", 1: "Nullify", 2: "Cascade", 3: "Deny"]
                    guard let code = value.flatMap(KeyedArchive.integer), let rule = names[code] else {
                        throw archive.error("\(context): unknown delete rule \(value.map { "\($0)" } ?? "nil")")
                    }
                    attributes["deletionRule"] = rule
                case ("XD_PRK_destination", true):
                    guard let destination = value as? Object, let destinationName = try destination.string("_name") else {
                        throw archive.error("\(context): its destination is not an entity")
                    }
                    attributes["destinationEntity"] = destinationName
                case ("XD_PRK_inverseRelationship", true):
                    guard let value else { continue }
                    guard let inverse = value as? Object, inverse.isKind(of: "XDPMRelationship"),
                          let inverseName = try inverse.string("_name"),
                          let owner = try inverse.object("_owner"), let ownerName = try owner.string("_name")
                    else { throw archive.error("\(context): its inverse is not a relationship of an entity") }
                    attributes["inverseName"] = inverseName
                    attributes["inverseEntity"] = ownerName
                default:
                    unrecognized.append("\(context): stereotype value \(key)")
                }
            }
            if !isRelationship, attributes["attributeType"] == nil {
                throw archive.error("\(context): has no attribute type (XD_PAttK_attributeType)")
            }
            return XcodeModelXML(name: isRelationship ? "relationship" : "attribute", attributes: attributes, line: 0)
        }

        // MARK: Stereotypes

        /// Core Data's values of an element: each stereotype (`XD_PAtt_Stereotype`,
        /// `XD_PPropStereotype`, ...) owns UML properties whose `_name` is the key
        /// (`XD_PAttK_attributeType`) and whose `_default` is the value.
        private func stereotypeValues(_ object: Object, context: String) throws -> [String: Any?] {
            var result: [String: Any?] = [:]
            for (_, value) in try object.dictionary("XDBucketForStereotypesstorage")?.entries ?? [] {
                guard let stereotype = value as? Object, stereotype.isKind(of: "XDUMLStereotypeImp") else {
                    throw archive.error("\(context): a stereotype is not an XDUMLStereotypeImp")
                }
                for (key, entry) in try stereotype.dictionary("XDBucketForOwnedAttributesstorage")?.entries ?? [] {
                    guard let name = key as? String, let property = entry as? Object else {
                        throw archive.error("\(context): stereotype \(try stereotype.string("_name") ?? "?") holds a malformed value")
                    }
                    result[name] = try property.value("_default")
                }
            }
            return result
        }

        /// The stereotype values named in `known`, spelled as a `contents` file spells them
        /// (`YES` for true; absent for false or nil).
        private func xmlAttributes(_ values: [String: Any?], _ known: [String: String], context: String) throws -> [String: String] {
            var result: [String: String] = [:]
            for (key, xmlName) in known {
                guard let stored = values[key], let value = stored else { continue }
                if flagNames.contains(xmlName) {
                    guard let flag = flag(value) else { throw archive.error("\(context): \(key) is not a Boolean") }
                    if flag { result[xmlName] = "YES" }
                } else if let text = value as? String {
                    if !text.isEmpty { result[xmlName] = text }
                } else if let number = KeyedArchive.integer(value) {
                    result[xmlName] = String(number)
                } else {
                    throw archive.error("\(context): \(key) is a \(type(of: value)), not a string or a number")
                }
            }
            return result
        }

        /// Attributes a `contents` file writes as `YES`.
        private var flagNames: Set<String> {
            ["optional", "transient", "indexed", "spotlightIndexingEnabled", "isAbstract", "toMany", "ordered",
             "allowsExternalBinaryDataStorage"]
        }

        private func flag(_ value: Any?) -> Bool? {
            switch value {
            case let flag as Bool: flag
            case let value?: KeyedArchive.integer(value).map { $0 != 0 }
            case nil: nil
            }
        }

        /// A user info value as plain Foundation values (nested dictionaries included).
        private func plainUserInfo(_ value: Any?, context: String) throws -> [AnyHashable: Any]? {
            guard let value else { return nil }
            guard let dictionary = value as? KeyedArchive.Dictionary else {
                throw archive.error("\(context): its user info is not a dictionary")
            }
            return dictionary.entries.reduce(into: [AnyHashable: Any]()) { result, entry in
                guard let key = entry.key as? AnyHashable else { return }
                result[key] = plain(entry.value)
            }
        }

        private func plain(_ value: Any) -> Any {
            switch value {
            case let dictionary as KeyedArchive.Dictionary:
                dictionary.entries.reduce(into: [AnyHashable: Any]()) { result, entry in
                    if let key = entry.key as? AnyHashable { result[key] = plain(entry.value) }
                }
            case let array as [Any]: array.map(plain)
            default: value
            }
        }

        private mutating func note(unknownKeysOf object: Object, known: Set<String>, in context: String) {
            let unknown = object.fields.keys.filter { !known.contains($0) }.sorted()
            if !unknown.isEmpty { unrecognized.append("\(context): \(unknown.joined(separator: ", "))") }
        }
    }
}
