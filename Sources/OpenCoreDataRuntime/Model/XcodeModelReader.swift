import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads Xcode model files (docs/FORMATS.md §3.1): a `.xcdatamodeld` bundle, a `.xcdatamodel`
/// directory, or a bare `contents` XML file.
///
/// Reading is two steps: ``XcodeModelXML`` turns the XML into a small element tree that remembers
/// line numbers, then `XcodeModelReader+Build.swift` turns the tree into an `NSManagedObjectModel`.
/// Every error names the file, and the line when the problem is in the XML.
///
/// Pre-Xcode 4 models (a binary `elements` archive instead of `contents`) are read by
/// ``LegacyElementsModelReader``. Compiled `.mom`/`.momd` models are read by ``CompiledModelReader``.
package enum XcodeModelReader {
    /// Finds the `contents` file a model URL stands for (the `elements` file of a pre-Xcode 4 model).
    package static func contentsURL(for url: URL) throws -> URL {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw error("no model file at this path", url: url)
        }
        let ext = url.pathExtension.lowercased()
        if ext == "mom" || ext == "momd" || ext == "omo" {
            throw error("compiled models are read by NSManagedObjectModel(contentsOf:), not as Xcode model files; an optimized .omo is not supported (load the .mom or .momd)", url: url)
        }
        guard isDirectory.boolValue else { return url }  // a bare `contents` (or other XML) file

        if ext == "xcdatamodeld" {
            return try contentsURL(for: currentVersionURL(inBundle: url))
        }
        let contents = url.appendingPathComponent("contents")
        if fileManager.fileExists(atPath: contents.path) { return contents }
        // A pre-Xcode 4 model: a binary `elements` archive, read by LegacyElementsModelReader.
        let elements = url.appendingPathComponent("elements")
        if fileManager.fileExists(atPath: elements.path) { return elements }
        throw error("model directory has no `contents` file", url: url)
    }

    /// The `.xcdatamodel` a `.xcdatamodeld` bundle names as current: `_XCCurrentVersionName` in
    /// `.xccurrentversion`, else the only version, else the last version by name.
    package static func currentVersionURL(inBundle bundle: URL) throws -> URL {
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if let data = FileManager.default.contents(atPath: marker.path) {
            let plist: Any
            do {
                plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch {
                throw Self.error("`.xccurrentversion` is not a property list: \(error)", url: marker)
            }
            if let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String, !name.isEmpty {
                let version = bundle.appendingPathComponent(name)
                guard FileManager.default.fileExists(atPath: version.path) else {
                    throw Self.error("`.xccurrentversion` names \(name), which is not in the bundle", url: marker)
                }
                return version
            }
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
                .filter { $0.hasSuffix(".xcdatamodel") }
                .sorted { $0.compare($1, options: [.numeric]) == .orderedAscending }
        } catch {
            throw Self.error("cannot list the model bundle: \(error)", url: bundle)
        }
        guard let last = names.last else { throw error("model bundle holds no .xcdatamodel version", url: bundle) }
        return bundle.appendingPathComponent(last)
    }

    /// Loads and builds the model a URL stands for.
    package static func load(contentsOf url: URL, into model: NSManagedObjectModel) throws {
        let contents = try contentsURL(for: url)
        if LegacyElementsModelReader.isElementsFile(contents) {
            return try LegacyElementsModelReader.load(contentsOf: contents, into: model)
        }
        guard let data = FileManager.default.contents(atPath: contents.path) else {
            throw error("cannot read the model file", url: contents)
        }
        let root = try XcodeModelXML.parse(data, url: contents)
        try XcodeModelBuilder(url: contents).build(root, into: model)
    }

    /// An error whose message starts with `path:line:` (and `column:` when known), as compilers print.
    static func error(_ message: String, url: URL, line: Int? = nil, column: Int? = nil) -> OpenCoreDataError {
        var place = url.path
        if let line {
            place += ":\(line)"
            if let column, column > 0 { place += ":\(column)" }
        }
        return OpenCoreDataError(.fileReadCorruptFile, "\(place): \(message)", url: url)
    }
}

/// An XML element with its attributes, children and the line it starts on.
package final class XcodeModelXML {
    package let name: String
    package let attributes: [String: String]
    package let line: Int
    /// Set by the parser, and by ``LegacyElementsModelReader`` for the tree it translates an
    /// `elements` archive into.
    package internal(set) var children: [XcodeModelXML] = []
    /// The element's character data (an `xcmapping.xml` attribute's value).
    package fileprivate(set) var text = ""

    init(name: String, attributes: [String: String], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    package subscript(_ attribute: String) -> String? { attributes[attribute] }

    /// Whether the attribute is `YES` (Xcode's spelling of true).
    package func flag(_ attribute: String) -> Bool { attributes[attribute] == "YES" }

    package func children(named name: String) -> [XcodeModelXML] { children.filter { $0.name == name } }

    package func child(named name: String) -> XcodeModelXML? { children.first { $0.name == name } }

    /// Parses XML data into a tree; the error for malformed XML names the file and the line.
    package static func parse(_ data: Data, url: URL) throws -> XcodeModelXML {
        let parser = XMLParser(data: data)
        let delegate = TreeBuilder(parser: parser)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let ok = parser.parse()
        if !ok || delegate.failure != nil {
            let line = delegate.failure?.line ?? parser.lineNumber
            let column = delegate.failure?.column ?? parser.columnNumber
            let reason = delegate.failure?.message ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "unknown error"
            throw XcodeModelReader.error("malformed XML: \(reason)", url: url, line: max(line, 1), column: column)
        }
        guard let root = delegate.root else { throw XcodeModelReader.error("empty XML document", url: url, line: 1) }
        return root
    }

    /// Builds the tree from parser events. Used on one thread, for one parse.
    private final class TreeBuilder: NSObject, XMLParserDelegate {
        unowned let parser: XMLParser
        var root: XcodeModelXML?
        var stack: [XcodeModelXML] = []
        var failure: (message: String, line: Int, column: Int)?

        init(parser: XMLParser) { self.parser = parser }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            let element = XcodeModelXML(name: elementName, attributes: attributeDict, line: parser.lineNumber)
            if let parent = stack.last {
                parent.children.append(element)
            } else if root == nil {
                root = element
            }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil {
                failure = (describe(parseError), parser.lineNumber, parser.columnNumber)
            }
        }

        func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
            if failure == nil {
                failure = (describe(validationError), parser.lineNumber, parser.columnNumber)
            }
        }

        private func describe(_ error: any Error) -> String {
            let code = (error as NSError).code
            return Self.reasons[code].map { "\($0) (XML parser error \(code))" } ?? "XML parser error \(code)"
        }

        /// The common parser error codes (libxml2's `xmlParserErrors`, which `NSXMLParserError` mirrors).
        private static let reasons: [Int: String] = [
            4: "the document is empty", 5: "the document ends early, or has content after its root element", 9: "invalid character",
            23: "entity reference without ';'", 26: "undeclared entity", 33: "string not started",
            34: "string not closed", 38: "'<' in an attribute value", 39: "attribute value not started",
            40: "attribute value not finished", 41: "attribute without a value", 42: "attribute given twice",
            45: "comment not finished", 57: "XML declaration not finished", 65: "space required",
            68: "name required", 73: "'>' required", 74: "'</' required", 76: "end tag does not match the open element",
            77: "element not closed at the end of the data",
        ]
    }
}
