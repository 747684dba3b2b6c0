import ArgumentParser
import Foundation
import OpenCoreDataRuntime

/// `ocd model <path>`: prints a model's entities, properties, version hashes and checksum.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print a model: entities, attributes, relationships, version hashes and the model's checksum.")

    @Argument(help: "A .xcdatamodeld bundle (its current version), a .xcdatamodel directory or its contents file, or a compiled .momd (its current version) or .mom.")
    var path: String

    func run() throws {
        let model = try ModelFile.load(path)
        print(ModelPrinter.describe(model, path: path), terminator: "")
    }
}

/// The text `ocd model` prints.
enum ModelPrinter {
    static func describe(_ model: NSManagedObjectModel, path: String) -> String {
        var out = "model: \(path)\n"
        if let file = model._xcodeModelFile?.url.deletingLastPathComponent().lastPathComponent,
            URL(fileURLWithPath: path).pathExtension == "xcdatamodeld"
        {
            out += "current version: \(file)\n"
        }
        let identifiers = model.versionIdentifiers.map { "\($0)" }.filter { !$0.isEmpty }.sorted()
        if !identifiers.isEmpty { out += "version identifiers: \(identifiers.joined(separator: ", "))\n" }
        out += "versionChecksum: \(model.versionChecksum)\n"
        out += "entities: \(model.entities.count)\n"
        let hashes = model.entityVersionHashesByName
        for entity in model.sortedEntities {
            let name = entity.name ?? "?"
            var flags: [String] = []
            if entity.isAbstract { flags.append("abstract") }
            if let parent = entity.superentity?.name { flags.append("parent \(parent)") }
            if entity.managedObjectClassName != "NSManagedObject" { flags.append("class \(entity.managedObjectClassName ?? "")") }
            out += "\nentity \(name)\(flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")\n"
            out += "  versionHash: \(hashes[name]?.base64EncodedString() ?? "-")\n"
            let own = entity.ownProperties.sorted { $0.name < $1.name }
            for attribute in own.compactMap({ $0 as? NSAttributeDescription }) {
                out += "  attribute \(attribute.name): \(attribute.attributeType.xcodeName)\(attributeFlags(attribute))\n"
            }
            for relationship in own.compactMap({ $0 as? NSRelationshipDescription }) {
                out += "  relationship \(relationship.name) -> \(relationship.destinationEntity?.name ?? "?")\(relationshipFlags(relationship))\n"
            }
            let constraints = entity.uniquenessConstraints.map { $0.map { "\($0)" }.joined(separator: ",") }
            if !constraints.isEmpty { out += "  uniqueness: \(constraints.joined(separator: "; "))\n" }
            for index in entity.indexes {
                let elements = index.elements.map { ($0.property?.name ?? "?") + ($0.isAscending ? "" : " desc") }
                out += "  index \(index.name): \(elements.joined(separator: ", "))\n"
            }
            for fetched in model._xcodeModelFile?.fetchedPropertiesByEntity[name] ?? [] {
                out += "  fetched property \(fetched.name)"
                if let request = fetched.fetchRequest {
                    out += " -> \(request.entityName)\(request.predicateString.map { " where \($0)" } ?? "")"
                }
                out += "\n"
            }
        }
        let configurations = model.configurations
        if !configurations.isEmpty {
            out += "\nconfigurations:\n"
            for name in configurations {
                let members = (model.entities(forConfigurationName: name) ?? []).compactMap(\.name).sorted()
                out += "  \(name): \(members.joined(separator: ", "))\n"
            }
        }
        let templates = model.fetchRequestTemplatesByName.sorted { $0.key < $1.key }
        if !templates.isEmpty {
            out += "\nfetch request templates:\n"
            for (name, request) in templates {
                out += "  \(name): \(request.entityName ?? "?")\(request.predicate.map { " where \($0.predicateFormat)" } ?? "")\n"
            }
        }
        let notes = model._xcodeModelFile?.unrecognizedElements ?? []
        if !notes.isEmpty {
            out += "\nnot understood (kept out of the model):\n"
            for note in notes { out += "  \(note)\n" }
        }
        return out
    }

    private static func attributeFlags(_ attribute: NSAttributeDescription) -> String {
        var flags: [String] = []
        if attribute.isOptional { flags.append("optional") }
        if attribute.isTransient { flags.append("transient") }
        if attribute is NSDerivedAttributeDescription { flags.append("derived") }
        if let value = attribute.defaultValue { flags.append("default \(value)") }
        if let transformer = attribute.valueTransformerName { flags.append("transformer \(transformer)") }
        if let renaming = attribute.renamingIdentifier { flags.append("renamingIdentifier \(renaming)") }
        return flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))"
    }

    private static func relationshipFlags(_ relationship: NSRelationshipDescription) -> String {
        var flags: [String] = [relationship.isToMany ? (relationship.isOrdered ? "to-many ordered" : "to-many") : "to-one"]
        flags.append("inverse \(relationship.inverseRelationship?.name ?? "none")")
        flags.append("delete \(relationship.deleteRule.xcodeName)")
        if relationship.isOptional { flags.append("optional") }
        if relationship.isTransient { flags.append("transient") }
        if relationship.isToMany, relationship.minCount > 0 || relationship.maxCount > 0 {
            flags.append("count \(relationship.minCount)...\(relationship.maxCount == 0 ? "" : "\(relationship.maxCount)")")
        }
        return " (\(flags.joined(separator: ", ")))"
    }
}
