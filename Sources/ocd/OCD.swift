import ArgumentParser
import Foundation
import OpenCoreDataRuntime

/// `ocd`: OpenCoreData's command-line tool. Prints Xcode models, inspects Core Data SQLite stores
/// (Apple's or ours) and generates `@ManagedProperty` model classes from a model file.
@main
struct OCD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocd",
        abstract: "Inspect Core Data model files and SQLite stores; generate Swift model classes.",
        subcommands: [ModelCommand.self, StoreCommand.self, GenerateCommand.self])
}

/// A failure the tool reports as one line (`Error: <message>`) with exit status 1.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// The one-line message of any error: an `OpenCoreDataError`'s message already names the file.
    init(_ error: any Error, path: String) {
        let message: String
        if let error = error as? OpenCoreDataError {
            message = error.message
        } else {
            message = "\(error)"
        }
        let line = message.replacingOccurrences(of: "\n", with: " ")
        description = line.contains(path) ? line : "\(path): \(line)"
    }
}

/// Loading a model file with an error that says what is wrong with it.
enum ModelFile {
    static func load(_ path: String) throws -> NSManagedObjectModel {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ToolError("\(path): no such file or directory")
        }
        if !isDirectory.boolValue, url.lastPathComponent != "contents", url.pathExtension != "xml", url.pathExtension != "mom" {
            throw ToolError(
                "\(path): not a Core Data model (expected a .xcdatamodeld bundle, a .xcdatamodel directory or its contents file, or a compiled .momd or .mom)")
        }
        do {
            return try NSManagedObjectModel.load(contentsOf: url)
        } catch {
            throw ToolError(error, path: path)
        }
    }
}

extension NSAttributeType {
    /// The type as Xcode's model editor names it (`Integer 16`, `String`, ...).
    var xcodeName: String {
        switch self {
        case .undefinedAttributeType: "Undefined"
        case .integer16AttributeType: "Integer 16"
        case .integer32AttributeType: "Integer 32"
        case .integer64AttributeType: "Integer 64"
        case .decimalAttributeType: "Decimal"
        case .doubleAttributeType: "Double"
        case .floatAttributeType: "Float"
        case .stringAttributeType: "String"
        case .booleanAttributeType: "Boolean"
        case .dateAttributeType: "Date"
        case .binaryDataAttributeType: "Binary"
        case .UUIDAttributeType: "UUID"
        case .URIAttributeType: "URI"
        case .transformableAttributeType: "Transformable"
        case .objectIDAttributeType: "Object ID"
        case .compositeAttributeType: "Composite"
        }
    }
}

extension NSDeleteRule {
    var xcodeName: String {
        switch self {
        case .noActionDeleteRule: "No Action"
        case .nullifyDeleteRule: "Nullify"
        case .cascadeDeleteRule: "Cascade"
        case .denyDeleteRule: "Deny"
        }
    }
}

extension NSManagedObjectModel {
    /// Entities sorted by name, the order every subcommand prints them in.
    var sortedEntities: [NSEntityDescription] { entities.sorted { ($0.name ?? "") < ($1.name ?? "") } }
}
