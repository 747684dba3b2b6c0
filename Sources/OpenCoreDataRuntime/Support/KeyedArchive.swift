import Foundation

/// A read-only view of an `NSKeyedArchiver` archive: the property list Foundation's keyed archiver
/// writes (`$archiver`, `$version`, `$top`, `$objects`), walked by hand instead of unarchived.
///
/// Core Data's compiled models (`.mom`, `.cdm`) and the model a store caches (`Z_MODELCACHE`) are
/// such archives. Unarchiving them with `NSKeyedUnarchiver` would need Apple's private classes
/// (`NSKnownKeysDictionary1`, `NSKeyPathExpression`, ...); here every object stays a
/// ``KeyedArchive/Object`` (its class name and its encoded fields) that callers interpret.
///
/// Objects refer to each other by UID (an index into `$objects`). In a binary property list a UID
/// has its own type, which Foundation on Linux returns as an internal `_NSKeyedArchiverUID` object
/// (read here through its `value` field) and on Apple platforms as a `CFKeyedArchiverUID`; in an
/// XML property list it is a `{CF$UID = n}` dictionary. All three are accepted.
///
/// Nothing here traps on bad input: a missing key, a UID out of range, a cycle or a value of the
/// wrong type throws an ``OpenCoreDataError`` with Cocoa's `NSFileReadCorruptFileError` (259)
/// naming the file.
package struct KeyedArchive {
    /// The file the archive came from, named in errors (a `.mom`, or a store for `Z_MODELCACHE`).
    package let url: URL?
    /// What the file is, for error messages ("compiled model", "model cache of the store").
    package let what: String
    private let objects: [Any]
    private let top: [String: Any]

    /// How deep containers may nest before the archive is taken as malformed (cycles end here too).
    private static let maximumDepth = 200

    /// Parses `data` (a binary or XML property list) and checks the archive's envelope.
    package init(data: Data, url: URL?, what: String) throws {
        self.url = url
        self.what = what
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw Self.error("is not a property list", url: url, what: what)
        }
        guard let dictionary = plist as? [String: Any] else {
            throw Self.error("is a property list but not a keyed archive (its root is not a dictionary)", url: url, what: what)
        }
        guard let archiver = dictionary["$archiver"] as? String else {
            throw Self.error("is a property list but not a keyed archive (no $archiver)", url: url, what: what)
        }
        guard archiver == "NSKeyedArchiver" else {
            throw Self.error("was written by \(archiver), not NSKeyedArchiver", url: url, what: what)
        }
        guard let objects = dictionary["$objects"] as? [Any], let top = dictionary["$top"] as? [String: Any] else {
            throw Self.error("is a keyed archive without $objects or $top", url: url, what: what)
        }
        self.objects = objects
        self.top = top
    }

    /// The object stored under `key` in `$top` (`root` for archives made with `archivedData(withRootObject:)`).
    package func topObject(_ key: String = "root") throws -> Object {
        guard let reference = top[key] else { throw error("has no \(key) object in $top") }
        guard let uid = Self.uid(reference) else { throw error("$top.\(key) is not an object reference") }
        guard let object = try decode(uid: uid, depth: 0) as? Object else {
            throw error("$top.\(key) is not an archived object")
        }
        return object
    }

    /// The value stored under `key` in `$top`, whatever it is (a root dictionary comes back as
    /// ``KeyedArchive/Dictionary``, a root string as `String`).
    package func topValue(_ key: String = "root") throws -> Any? {
        guard let reference = top[key] else { throw error("has no \(key) object in $top") }
        return try decode(reference, depth: 0)
    }

    // MARK: Values

    /// One archived object: its class (`$classname`), the classes it descends from (`$classes`) and
    /// its encoded fields, whose values are decoded on demand.
    package struct Object: CustomStringConvertible {
        package let archive: KeyedArchive
        /// The object's index in `$objects`: equal UIDs are the same object.
        package let uid: Int
        package let className: String
        package let classHierarchy: [String]
        package let fields: [String: Any]
        fileprivate let depth: Int

        package var description: String { "\(className) #\(uid)" }

        /// Whether the object is of `name` or a subclass of it.
        package func isKind(of name: String) -> Bool { className == name || classHierarchy.contains(name) }

        /// Whether a field is present (even as nil).
        package func contains(_ key: String) -> Bool { fields[key] != nil }

        /// The decoded value of a field: `nil` for absent or `$null`; strings, numbers, data, dates,
        /// UUIDs and URLs as Swift values; arrays, sets and ordered sets as `[Any]`; dictionaries as
        /// ``KeyedArchive/Dictionary``; other objects as ``KeyedArchive/Object``.
        package func value(_ key: String) throws -> Any? {
            guard let raw = fields[key] else { return nil }
            return try archive.decode(raw, depth: depth + 1)
        }

        package func string(_ key: String) throws -> String? {
            guard let value = try value(key) else { return nil }
            guard let string = value as? String else { throw archive.error("\(self): \(key) is not a string") }
            return string
        }

        /// A number field as an `Int`; `nil` when absent.
        package func int(_ key: String) throws -> Int? {
            guard let value = try value(key) else { return nil }
            if let number = KeyedArchive.integer(value) { return number }
            throw archive.error("\(self): \(key) is not an integer")
        }

        /// A Boolean field; `false` when absent (the keyed archiver's default for `decodeBool`).
        package func bool(_ key: String) throws -> Bool {
            guard let value = try value(key) else { return false }
            if let flag = value as? Bool { return flag }
            if let number = KeyedArchive.integer(value) { return number != 0 }
            throw archive.error("\(self): \(key) is not a Boolean")
        }

        package func object(_ key: String) throws -> Object? {
            guard let value = try value(key) else { return nil }
            guard let object = value as? Object else { throw archive.error("\(self): \(key) is not an archived object") }
            return object
        }

        /// An array, set or ordered set field; `nil` when absent.
        package func array(_ key: String) throws -> [Any]? {
            guard let value = try value(key) else { return nil }
            guard let array = value as? [Any] else { throw archive.error("\(self): \(key) is not an array or set") }
            return array
        }

        package func dictionary(_ key: String) throws -> Dictionary? {
            guard let value = try value(key) else { return nil }
            guard let dictionary = value as? Dictionary else { throw archive.error("\(self): \(key) is not a dictionary") }
            return dictionary
        }
    }

    /// An archived dictionary, its entries in archive order (keys need not be hashable in Swift).
    package struct Dictionary {
        package var entries: [(key: Any, value: Any)]

        /// The entries whose keys are hashable, as a `userInfo` dictionary (later duplicates ignored).
        package var userInfo: [AnyHashable: Any] {
            var result: [AnyHashable: Any] = [:]
            for (key, value) in entries { if let key = key as? AnyHashable, result[key] == nil { result[key] = value } }
            return result
        }

        /// The entries whose keys are strings, as a Swift dictionary (later duplicates ignored).
        package var stringKeyed: [String: Any] {
            var result: [String: Any] = [:]
            for (key, value) in entries { if let key = key as? String, result[key] == nil { result[key] = value } }
            return result
        }
    }

    // MARK: Decoding

    /// Resolves a field's raw value: a UID is followed, other property-list values are returned as they are.
    private func decode(_ raw: Any, depth: Int) throws -> Any? {
        if let uid = Self.uid(raw) { return try decode(uid: uid, depth: depth) }
        return raw
    }

    private func decode(uid: Int, depth: Int) throws -> Any? {
        guard depth < Self.maximumDepth else { throw error("nests objects more than \(Self.maximumDepth) deep (a cycle?)") }
        guard uid >= 0, uid < objects.count else { throw error("refers to object \(uid), but $objects has \(objects.count)") }
        let stored = objects[uid]
        if let string = stored as? String { return string == "$null" ? nil : string }
        guard let fields = stored as? [String: Any] else { return stored }  // number, Boolean, data, date
        guard let classReference = fields["$class"] else {
            // A dictionary without $class is not something NSKeyedArchiver writes as an object.
            throw error("object \(uid) is a dictionary without $class")
        }
        guard let classUID = Self.uid(classReference), classUID >= 0, classUID < objects.count,
              let classInfo = objects[classUID] as? [String: Any], let archivedName = classInfo["$classname"] as? String
        else {
            throw error("object \(uid) has a $class that is not a class description")
        }
        let hints = (classInfo["$classhints"] as? [Any])?.compactMap { $0 as? String } ?? []
        let hierarchy = ((classInfo["$classes"] as? [Any])?.compactMap { $0 as? String } ?? [archivedName])
            .map { Self.appleClassName($0, hints: []) }
        let className = Self.appleClassName(archivedName, hints: hints)
        let next = depth + 1
        /// A field holding an array inline (`NS.objects`) or a reference to an archived array (`values`).
        func elements(_ key: String) throws -> [Any] {
            guard let raw = fields[key] else { return [] }
            if let items = raw as? [Any] { return try items.compactMap { try decode($0, depth: next) } }
            if Self.uid(raw) != nil, let items = try decode(raw, depth: next) as? [Any] { return items }
            throw error("\(className) #\(uid): \(key) is not an array")
        }
        switch className {
        case "NSString", "NSMutableString":
            if let string = fields["NS.string"] as? String { return string }
            if let bytes = fields["NS.bytes"] as? Data, let string = String(data: bytes, encoding: .utf8) { return string }
            throw error("\(className) #\(uid) has no NS.string")
        case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
            return try elements("NS.objects")
        case "NSDictionary", "NSMutableDictionary":
            let keys = try elements("NS.keys")
            let values = try elements("NS.objects")
            guard keys.count == values.count else { throw error("\(className) #\(uid) has \(keys.count) keys but \(values.count) values") }
            return Dictionary(entries: Array(zip(keys, values)))
        case "NSKnownKeysDictionary1":
            // Core Data's fixed-key dictionary: keys in searchMapping.keys, values (same order) in values.
            guard let mapping = try decode(fields["searchMapping"] ?? "$null", depth: next) as? Object else {
                throw error("NSKnownKeysDictionary1 #\(uid) has no searchMapping")
            }
            let keys = try mapping.array("keys") ?? []
            let values = try elements("values")
            guard keys.count == values.count else { throw error("NSKnownKeysDictionary1 #\(uid) has \(keys.count) keys but \(values.count) values") }
            return Dictionary(entries: Array(zip(keys, values)))
        case "NSData", "NSMutableData":
            guard let data = fields["NS.data"] as? Data else { throw error("\(className) #\(uid) has no NS.data") }
            return data
        case "NSDate":
            guard let time = Self.double(fields["NS.time"]) else { throw error("NSDate #\(uid) has no NS.time") }
            return Date(timeIntervalSinceReferenceDate: time)
        case "NSUUID":
            guard let bytes = fields["NS.uuidbytes"] as? Data, bytes.count == 16 else { throw error("NSUUID #\(uid) has no 16 NS.uuidbytes") }
            return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
        case "NSURL":
            let relative = try decode(fields["NS.relative"] ?? "$null", depth: next) as? String
            let base = try decode(fields["NS.base"] ?? "$null", depth: next).flatMap { $0 as? URL }
            guard let relative, let url = URL(string: relative, relativeTo: base) else { throw error("NSURL #\(uid) has no NS.relative") }
            return url
        case "NSNull":
            return nil
        default:
            return Object(archive: self, uid: uid, className: className, classHierarchy: hierarchy, fields: fields, depth: depth)
        }
    }

    /// The name Apple's archives give an archived class. Foundation on Linux archives this module's
    /// classes under their module-qualified names (`OpenCoreDataRuntime.NSEntityDescription`), and
    /// lists the names to fall back to in `$classhints` (`classFallbacksForKeyedArchiver()`): the first
    /// hint, else the name without this module. An app's class (`App.Cover`) keeps its module.
    package static func appleClassName(_ name: String, hints: [String]) -> String {
        guard name.contains(".") else { return name }
        if let hint = hints.first { return hint }
        return name.hasPrefix(ownModulePrefix) ? String(name.dropFirst(ownModulePrefix.count)) : name
    }

    /// `OpenCoreDataRuntime.`, as Foundation on Linux prefixes this module's class names.
    private static let ownModulePrefix: String = {
        let qualified = String(reflecting: KeyedArchiveModuleMarker.self)
        return String(qualified.prefix { $0 != "." }) + "."
    }()

    /// The object index a UID value stands for, in any of its three spellings (see the type's docs).
    package static func uid(_ value: Any) -> Int? {
        if let dictionary = value as? [String: Any] {
            guard dictionary.count == 1, let number = dictionary["CF$UID"] else { return nil }
            return integer(number)
        }
        guard String(describing: type(of: value)).contains("KeyedArchiverUID") else { return nil }
        // corelibs Foundation: `_NSKeyedArchiverUID.value` (internal), read by reflection.
        for child in Mirror(reflecting: value).children where child.label == "value" {
            return integer(child.value)
        }
        // Apple platforms: CFKeyedArchiverUID describes itself as `<CFKeyedArchiverUID 0x…>{value = 3}`.
        let text = String(describing: value)
        if let range = text.range(of: "value = ") {
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        return nil
    }

    /// An integer of any property-list number spelling.
    package static func integer(_ value: Any) -> Int? {
        switch value {
        case let number as Int: number
        case let number as UInt32: Int(number)
        case let number as Int64: Int(exactly: number)
        case let number as UInt64: Int(exactly: number)
        case let number as Double: number.rounded() == number && abs(number) < 1e15 ? Int(number) : nil
        case let number as NSNumber: Int(exactly: number.doubleValue)
        default: nil
        }
    }

    private static func double(_ value: Any?) -> Double? {
        switch value {
        case let number as Double: number
        case let number as Int: Double(number)
        case let number as NSNumber: number.doubleValue
        default: nil
        }
    }

    // MARK: Errors

    package func error(_ message: String) -> OpenCoreDataError { Self.error(message, url: url, what: what) }

    package static func error(_ message: String, url: URL?, what: String) -> OpenCoreDataError {
        let place = url.map { "\($0.path): " } ?? ""
        return OpenCoreDataError(.fileReadCorruptFile, "\(place)\(what) \(message)", url: url)
    }
}

/// A class whose qualified name gives this module's name (see ``KeyedArchive/appleClassName(_:hints:)``).
private final class KeyedArchiveModuleMarker {}
