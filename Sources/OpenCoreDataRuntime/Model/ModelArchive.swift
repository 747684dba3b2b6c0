import Foundation

/// What the model classes' `NSSecureCoding` shares: the keys of Apple's compiled models
/// (docs/compiled-models.md), read back by ``CompiledModelReader`` as well as by `init?(coder:)`, and
/// the value classes a model archive may hold.
///
/// Two rules come from Foundation on Linux, whose `NSKeyedUnarchiver` traps rather than fails:
/// - every `decodeObject` names the classes it accepts (an object of a class that resolves but is
///   not allowed ends the process), and
/// - nothing that points back up the graph (a property's entity, a relationship's destination or
///   inverse, an entity's superentity or model) is decoded: the unarchiver calls `init?(coder:)`
///   before it caches the object, so a cycle would recurse without end. Those links are written as
///   objects, as Apple's compiled models hold them, and rebuilt from names when a model is decoded.
package enum ModelArchive {
    /// The value classes of property lists and Foundation's value types: what user info, default
    /// values and version identifiers may hold.
    package static let valueClasses: [AnyClass] = [
        NSString.self, NSNumber.self, NSDate.self, NSData.self, NSURL.self, NSUUID.self, NSNull.self,
        NSArray.self, NSDictionary.self, NSSet.self, NSOrderedSet.self,
    ]

    /// The object stored under `key`, of one of `classes`; nil when absent. (Foundation on Linux
    /// fails the whole decoding when `decodeObject` asks for a key that is absent.)
    package static func object(_ coder: NSCoder, _ key: String, _ classes: [AnyClass]) -> Any? {
        guard coder.containsValue(forKey: key) else { return nil }
        return coder.decodeObject(of: classes, forKey: key)
    }

    /// A string field; nil when absent or of another class.
    package static func string(_ coder: NSCoder, _ key: String) -> String? {
        object(coder, key, [NSString.self]) as? String
    }

    /// An array of strings (an `NSArray` or `NSSet` of them); nil when absent.
    package static func strings(_ coder: NSCoder, _ key: String) -> [String]? {
        switch object(coder, key, [NSArray.self, NSSet.self, NSString.self]) {
        case let array as NSArray: array.compactMap { $0 as? String }
        case let set as NSSet: set.allObjects.compactMap { $0 as? String }
        default: nil
        }
    }

    /// A value of one of ``valueClasses`` (or of `extra`), as the Swift value a model holds.
    package static func value(_ coder: NSCoder, _ key: String, extra: [AnyClass] = []) -> Any? {
        object(coder, key, valueClasses + extra).map(NSSecureUnarchiveFromDataTransformer.swiftValue)
    }

    /// Objects of `type` held in an array or set field, in archive order.
    package static func objects<T: AnyObject>(_ coder: NSCoder, _ key: String, of type: T.Type, with classes: [AnyClass]) -> [T] {
        switch object(coder, key, [NSArray.self, NSSet.self] + classes) {
        case let array as NSArray: array.compactMap { $0 as? T }
        case let set as NSSet: set.allObjects.compactMap { $0 as? T }
        default: []
        }
    }

    /// The entries of a dictionary field whose keys are strings and whose values are `T`s.
    package static func entries<T: AnyObject>(_ coder: NSCoder, _ key: String, of type: T.Type, with classes: [AnyClass]) -> [(String, T)] {
        guard let dictionary = object(coder, key, [NSDictionary.self, NSString.self] + classes) as? NSDictionary else {
            return []
        }
        return dictionary.compactMap { key, value in (key as? String).flatMap { name in (value as? T).map { (name, $0) } } }
    }

    /// Writes `value` if it is made of ``valueClasses`` (or `extra`), the classes it is decoded with;
    /// otherwise leaves it out and says so. (Foundation on Linux ends the process on a value without
    /// secure coding when archiving, and on an object of a class not allowed when unarchiving.)
    package static func encode(_ value: Any?, forKey key: String, with coder: NSCoder, extra: [AnyClass] = [],
                               context: @autoclosure () -> String) {
        guard let value = ValueConversion.unwrap(value), !(value is NSNull) else { return }
        guard NSSecureUnarchiveFromDataTransformer.isSecurelyArchivable(value, topLevel: true, allowed: valueClasses + extra, nestedToo: true) else {
            reportMisuse("archiving \(context()): \(key) holds a \(type(of: value)), which would not unarchive securely; left out")
            return
        }
        coder.encode(value, forKey: key)
    }

    /// Writes `string` unless it is nil.
    package static func encode(_ string: String?, forKey key: String, with coder: NSCoder) {
        if let string { coder.encode(string, forKey: key) }
    }

    /// Fails decoding with Cocoa's `NSCoderReadCorruptError` (4864), as Foundation's own classes do
    /// (under `.raiseException`, the unarchiver's answer to the nil the caller returns ends the
    /// process, as Apple's raises).
    ///
    /// Only the root of a model archive fails: Foundation on Linux traps when an object inside an
    /// `NSArray` or `NSDictionary` fails (it builds the collection from fewer objects than keys).
    /// So entities and properties never fail; they keep what is wrong in `_archiveProblem`, and the
    /// model that holds them fails.
    package static func fail(_ coder: NSCoder, _ message: String) {
        guard coder.decodingFailurePolicy == .setErrorAndReturn else { return }
        coder.failWithError(NSError(domain: NSCocoaErrorDomain, code: CocoaError.coderReadCorrupt.rawValue,
                                    userInfo: [NSDebugDescriptionErrorKey: "model archive: \(message)"]))
    }
}

/// A fetch request as a model archive holds it (fetch request templates, fetched properties), under
/// the class name `NSFetchRequest` and the keys of Apple's compiled models. The entity is written as
/// an object, for the model reader, and by name, for `init?(coder:)` (see ``ModelArchive``); the
/// predicate as its format string, which the model reader accepts too.
final class ArchivedFetchRequest: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    override class func classFallbacksForKeyedArchiver() -> [String] { ["NSFetchRequest"] }

    let request: NSFetchRequest<any NSFetchRequestResult>

    init(_ request: NSFetchRequest<any NSFetchRequestResult>) {
        self.request = request
        super.init()
    }

    func encode(with coder: NSCoder) {
        if let entity = request.entity { coder.encode(entity, forKey: "NSEntity") }
        ModelArchive.encode(request.entityName ?? request.entity?.name, forKey: "NSEntityName", with: coder)
        ModelArchive.encode(request.predicate?.predicateFormat, forKey: "NSPredicate", with: coder)
        if let sorts = request.sortDescriptors, !sorts.isEmpty {
            coder.encode(sorts.map(ArchivedSortDescriptor.init), forKey: "NSSortDescriptors")
        }
        coder.encode(request.fetchLimit, forKey: "NSFetchLimit")
        coder.encode(request.fetchOffset, forKey: "NSFetchOffset")
        coder.encode(request.fetchBatchSize, forKey: "NSBatchSize")
        coder.encode(Int(request.resultType.rawValue), forKey: "NSResultType")
    }

    /// What is wrong with the archived request (it sits in a collection, so it does not fail: see
    /// ``ModelArchive/fail(_:_:)``).
    private(set) var problem: String?

    init?(coder: NSCoder) {
        let entityName = ModelArchive.string(coder, "NSEntityName")
        if entityName == nil { problem = "a fetch request has no NSEntityName" }
        let request = NSFetchRequest<any NSFetchRequestResult>(entityName: entityName ?? "")
        if let format = ModelArchive.string(coder, "NSPredicate") {
            request.predicate = try? NSPredicate(validatingFormat: format)
            if request.predicate == nil { problem = "the predicate of a fetch request does not parse: \(format)" }
        }
        let sorts = ModelArchive.objects(coder, "NSSortDescriptors", of: ArchivedSortDescriptor.self, with: [ArchivedSortDescriptor.self])
        if !sorts.isEmpty { request.sortDescriptors = sorts.map(\.descriptor) }
        request.fetchLimit = coder.decodeInteger(forKey: "NSFetchLimit")
        request.fetchOffset = coder.decodeInteger(forKey: "NSFetchOffset")
        request.fetchBatchSize = coder.decodeInteger(forKey: "NSBatchSize")
        request.resultType = NSFetchRequestResultType(rawValue: UInt(clamping: max(coder.decodeInteger(forKey: "NSResultType"), 0)))
        self.request = request
        super.init()
    }
}

/// A sort descriptor as a model archive holds it: class name `NSSortDescriptor`, keys `NSKey`,
/// `NSAscending`, `NSSelector` (docs/compiled-models.md). A comparator block is not archived.
final class ArchivedSortDescriptor: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    override class func classFallbacksForKeyedArchiver() -> [String] { ["NSSortDescriptor"] }

    let descriptor: NSSortDescriptor

    init(_ descriptor: NSSortDescriptor) {
        self.descriptor = descriptor
        super.init()
    }

    func encode(with coder: NSCoder) {
        ModelArchive.encode(descriptor.key, forKey: "NSKey", with: coder)
        coder.encode(descriptor.ascending, forKey: "NSAscending")
        ModelArchive.encode(descriptor.selector?.name, forKey: "NSSelector", with: coder)
    }

    init?(coder: NSCoder) {
        let ascending = coder.containsValue(forKey: "NSAscending") ? coder.decodeBool(forKey: "NSAscending") : true
        descriptor = NSSortDescriptor(key: ModelArchive.string(coder, "NSKey"), ascending: ascending,
                                      selector: ModelArchive.string(coder, "NSSelector").map { Selector($0) })
        super.init()
    }
}
