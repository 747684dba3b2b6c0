import Foundation

// What an Xcode model file says that the model classes do not (yet) hold. The loader fills these in
// so later subsystems (validation, fetch request templates, fetched properties, indexes) can use
// them without reparsing the file.

/// Model-file facts about a whole model (`NSManagedObjectModel._xcodeModelFile`).
package struct XcodeModelFileInfo: Sendable {
    /// The `contents` file the model came from.
    package var url: URL
    /// `<model>` attributes: `lastSavedToolsVersion`, `sourceLanguage`, `minimumToolsVersion`, ...
    package var modelAttributes: [String: String] = [:]
    /// Top-level `<fetchRequest>` templates, in file order, as written; the loader also registers
    /// them as fetch requests with `setFetchRequestTemplate(_:forName:)`.
    package var fetchRequestTemplates: [XcodeFetchRequestInfo] = []
    /// `<fetchedProperty>` elements by entity name, in file order.
    package var fetchedPropertiesByEntity: [String: [XcodeFetchedPropertyInfo]] = [:]
    /// `<fetchIndex>` elements by entity name.
    package var fetchIndexesByEntity: [String: [XcodeFetchIndexInfo]] = [:]
    /// Legacy `<compoundIndexes>` by entity name: each index is a list of property names.
    package var compoundIndexesByEntity: [String: [[String]]] = [:]
    /// `<composite>` definitions by name: their element attributes.
    package var composites: [String: [NSAttributeDescription]] = [:]
    /// Elements the reader does not understand, as `line N: <name> in ...`; left out of the model.
    package var unrecognizedElements: [String] = []

    package init(url: URL) { self.url = url }
}

/// A `<fetchRequest>`: a model's fetch request template or a fetched property's request.
package struct XcodeFetchRequestInfo: Sendable, Equatable {
    package var name: String
    package var entityName: String
    /// The predicate in NSPredicate format syntax, as written (`predicateString`).
    package var predicateString: String?
    package var fetchLimit: Int?
    package var fetchBatchSize: Int?
    /// `resultType`: 0 objects, 1 object IDs, 2 dictionaries, 4 count (Apple's NSFetchRequestResultType).
    package var resultType: Int?
    /// Every attribute as written, for the flags not broken out above (`includeSubentities`, ...).
    package var attributes: [String: String]
}

/// A `<fetchedProperty>`.
package struct XcodeFetchedPropertyInfo: Sendable, Equatable {
    package var name: String
    package var isOptional: Bool
    package var fetchRequest: XcodeFetchRequestInfo?
    package var userInfo: [String: String]
}

/// A `<fetchIndex>` and its `<fetchIndexElement property type order>` elements.
package struct XcodeFetchIndexInfo: Sendable, Equatable {
    package struct Element: Sendable, Equatable {
        package var property: String?
        package var expression: String?
        /// `Binary` or `RTree`.
        package var type: String?
        /// `ascending` or `descending`.
        package var order: String?
    }
    package var name: String
    package var elements: [Element]
}

/// Model-file facts about one property (`NSPropertyDescription._xcodeModelExtras`).
package struct XcodeModelPropertyExtras: Sendable, Equatable {
    /// `minValueString` / `maxValueString`: the validation bounds as typed in Xcode. For strings and
    /// binary data they bound the length; for numbers and dates, the value.
    package var minValueString: String?
    package var maxValueString: String?
    /// `minDateTimeInterval` / `maxDateTimeInterval` (seconds since 2001, date attributes).
    package var minDateTimeInterval: Double?
    package var maxDateTimeInterval: Double?
    /// `regularExpressionString` (string attributes).
    package var regularExpressionString: String?
    /// `defaultValueString` as written, before conversion to the attribute's type.
    package var defaultValueString: String?
    /// `customClassName` (transformable attributes).
    package var customClassName: String?
    /// `usesScalarValueType` (code generation only).
    package var usesScalarValueType: Bool?
    /// `composite="Name"` of a composite attribute.
    package var compositeName: String?
    /// The line of the element in the model file.
    package var line: Int?

    package init() {}
}
