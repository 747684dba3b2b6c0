import Foundation
import Synchronization

/// A compact, universal identifier for a managed object.
///
/// An ID is temporary until the object is saved (or ``NSManagedObjectContext/obtainPermanentIDs(for:)``
/// is called), then permanent: `x-coredata://<store UUID>/<Entity>/p<primary key>`.
///
/// ```swift
/// let id = mood.objectID
/// let again = try context.existingObject(with: id)
/// ```
///
/// Related Core Data documentation: [NSManagedObjectID](https://developer.apple.com/documentation/coredata/nsmanagedobjectid)
///
/// `@unchecked Sendable` invariant: immutable; the store is held weakly and only read.
public final class NSManagedObjectID: NSObject, @unchecked Sendable {
    /// The reference object a store gave the ID: Core Data's primary key for our stores.
    package enum Reference: Hashable, Sendable {
        case temporary(UInt64)
        case int64(Int64)
        case string(String)
        /// Boxed: an `AnyHashable` inline would make every ID 24 bytes larger, and our stores use
        /// `int64` (a 1,000,000-row batched fetch holds one ID per row).
        indirect case other(UncheckedHashable)
    }

    /// The entity of the object.
    public let entity: NSEntityDescription
    /// The store that holds the object (`nil` while the ID is temporary).
    // Written once, in `init`: no run-time exclusivity check needed (one per ID made).
    @exclusivity(unchecked) public private(set) weak var persistentStore: NSPersistentStore?
    package let reference: Reference
    /// The store's identity, or the ID class's for a temporary ID (no store): not optional, which
    /// keeps an ID in a smaller allocation (one per row of a large fetch).
    private let storeKey: ObjectIdentifier
    /// The identity of `entity.rootEntity`: IDs of one root and store share a key space.
    ///
    /// Kept instead of a cached hash (same size): the context's registry files an object under its
    /// store, root and key, and ``hash`` is one multiply for the keys our stores use.
    private let root: ObjectIdentifier
    /// The store's identity (the ID class's for a temporary ID), for the context's registry.
    package var _storeKey: ObjectIdentifier { storeKey }
    /// The root entity's identity, for the context's registry.
    package var _root: ObjectIdentifier { root }

    private static let temporaryCounter = Atomic<UInt64>(0)
    private static let temporaryPrefix = UUID().uuidString

    /// `root` is `entity.rootEntity`'s identity when the caller knows it (a store decoding rows
    /// finds it once per fetch): walking up the weak `superentity` links cost about 450
    /// instructions per ID (callgrind, benchmark case 2).
    package init(entity: NSEntityDescription, store: NSPersistentStore?, reference: Reference, root: ObjectIdentifier? = nil) {
        self.entity = entity
        self.persistentStore = store
        self.reference = reference
        self.storeKey = store.map(ObjectIdentifier.init) ?? Self.temporaryStoreKey
        self.root = root ?? ObjectIdentifier(entity.rootEntity)
        super.init()
    }

    /// The hash of an ID: for a primary key (every row of a fetch makes one) or a temporary ID's
    /// number, the number and the root entity folded by one full-width multiply, as wyhash mixes
    /// (a `Hasher` round cost about 250 instructions per row, callgrind case 2); a `Hasher` for
    /// the other references.
    private static func hash(root: ObjectIdentifier, reference: Reference) -> Int {
        let number: UInt64
        switch reference {
        case .int64(let pk): number = UInt64(bitPattern: pk) ^ 0xA076_1D64_78BD_642F
        case .temporary(let n): number = n ^ 0x8EBC_6AF0_9C88_C6E3
        case .string, .other:
            var hasher = Hasher()
            hasher.combine(root)
            hasher.combine(reference)
            return hasher.finalize()
        }
        let product = number.multipliedFullWidth(by: UInt64(UInt(bitPattern: root)) ^ 0xE703_7ED1_A0B4_28DB)
        return Int(bitPattern: UInt(product.high ^ product.low))
    }

    /// An ID for a row of the store `store` identifies (which may be gone: the ID then has no
    /// store, but stays equal to the IDs made while it was there).
    package init(entity: NSEntityDescription, store: ObjectIDStore, reference: Reference, root: ObjectIdentifier) {
        self.entity = entity
        self.persistentStore = store.store
        self.reference = reference
        self.storeKey = store.key
        self.root = root
        super.init()
    }

    package static func makeTemporary(for entity: NSEntityDescription) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, store: nil, reference: .temporary(nextTemporaryNumber()))
    }

    /// The number of the next temporary ID (a new object takes one at insert and makes its ID
    /// from it only when asked, see `NSManagedObject._madeObjectID`).
    package static func nextTemporaryNumber() -> UInt64 {
        temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The registry's store identity of temporary IDs (they have no store).
    package static var temporaryStoreKey: ObjectIdentifier { ObjectIdentifier(NSManagedObjectID.self) }

    /// Whether the ID will change when the object is saved.
    public var isTemporaryID: Bool {
        if case .temporary = reference { return true }
        return false
    }

    /// The primary key, for IDs of our SQLite and in-memory stores.
    package var primaryKey: Int64? {
        if case .int64(let pk) = reference { return pk }
        return nil
    }

    /// The store's reference object, as `NSIncrementalStore.referenceObject(for:)` returns it: a
    /// string, `Data` or other value as the store gave it; an integer as an `NSNumber`, as on Apple,
    /// so that it casts to whichever integer type the store used (`as? Int`, `as? Int64`).
    package var referenceObject: Any {
        switch reference {
        case .temporary(let n): return n
        case .int64(let v): return NSNumber(value: v)
        case .string(let s): return s
        case .other(let h): return h.base
        }
    }

    /// A URI that identifies the object in Core Data's form.
    ///
    /// Permanent: `x-coredata://<store UUID>/<Entity>/p<key>` for an integer key (Apple's form);
    /// temporary: `x-coredata:///<Entity>/t<UUID><n>`. Other reference objects of an incremental
    /// store, whose form Apple does not document, are written so that
    /// ``NSPersistentStoreCoordinator/managedObjectID(forURIRepresentation:)`` gives the store back
    /// the same value: `s<string>` with every byte but RFC 3986's unreserved characters
    /// percent-escaped, `d<hex bytes>` for `Data`, `u<UUID>` for a `UUID` (see
    /// docs/linux-differences.md).
    public func uriRepresentation() -> URL {
        let entityName = entity.name ?? "?"
        if case .temporary(let n) = reference {
            return URL(string: "x-coredata:///\(entityName)/t\(Self.temporaryPrefix)\(n)")!
        }
        let key: String
        switch reference {
        case .temporary: key = ""  // handled above
        case .int64(let pk): key = "p\(pk)"
        case .string(let s): key = "s" + URIKey.escaped(s)
        case .other(let h): key = URIKey.component(for: h.base)
        }
        let base = "x-coredata://\(persistentStore?.identifier ?? "")/\(URIKey.escaped(entityName))/"
        return URL(string: base + key) ?? URL(string: base + "o")!
    }

    /// The parts of a permanent ID's `uriRepresentation()`: the store's identifier, the entity's
    /// name and the reference object, as the store gave it; `nil` for a URI of another form (or a
    /// temporary ID's, which no store resolves).
    package static func _parseURIRepresentation(_ url: URL) -> (storeIdentifier: String, entityName: String, referenceObject: Any)? {
        guard url.scheme == "x-coredata", let host = url.host, !host.isEmpty,
              let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath
        else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, let entityName = String(parts[0]).removingPercentEncoding,
              let reference = URIKey.referenceObject(in: parts[1])
        else { return nil }
        return (host, entityName, reference)
    }

    public override var hash: Int { Self.hash(root: root, reference: reference) }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = Self.classReference(in: object) ?? object as? NSManagedObjectID else { return false }
        return _isSameID(as: other)
    }

    /// The ID `value` holds as a class reference (as `NSObject`'s `==`, which dictionaries and sets
    /// of IDs use, boxes it), read where it lies: the runtime's general cast from `Any?` was most of
    /// a comparison, about 1,000 instructions (callgrind case 8p). `nil` for anything else.
    @inline(__always)
    private static func classReference(in value: Any?) -> NSManagedObjectID? {
        ValueConversion.classInstance(in: value) as? NSManagedObjectID
    }

    /// `isEqual(_:)` without the cast, for the context's registry.
    @inline(__always)
    package func _isSameID(as other: NSManagedObjectID) -> Bool {
        if other === self { return true }
        return other.root == root && other.storeKey == storeKey && other.reference == reference
    }

    public override var description: String { "<\(uriRepresentation().absoluteString)>" }
}

/// The last path component of a permanent ID's URI: the reference object, tagged by kind.
private enum URIKey {
    /// RFC 3986's unreserved characters: everything else is percent-escaped, `/` and spaces too.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// The component for a reference object that is neither an integer nor a string.
    static func component(for value: AnyHashable) -> String {
        switch value.base {
        case let data as Data: return "d" + data.map { String(format: "%02x", $0) }.joined()
        case let uuid as UUID: return "u" + uuid.uuidString
        default: return "o" + escaped("\(value.base)")  // written for reading only: resolves to nothing
        }
    }

    /// The reference object `component` stands for.
    static func referenceObject(in component: Substring) -> Any? {
        guard let kind = component.first else { return nil }
        let body = component.dropFirst()
        switch kind {
        // Apple writes any reference object after `p`, as text: one that is not an integer is read
        // as the string it most likely was.
        case "p": return Int64(body).map { $0 as Any } ?? String(body).removingPercentEncoding
        case "s": return String(body).removingPercentEncoding
        case "u": return UUID(uuidString: String(body))
        case "d":
            guard body.count % 2 == 0 else { return nil }
            var bytes = [UInt8]()
            bytes.reserveCapacity(body.count / 2)
            var index = body.startIndex
            while index < body.endIndex {
                let next = body.index(index, offsetBy: 2)
                guard let byte = UInt8(body[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return Data(bytes)
        default: return nil
        }
    }
}

/// An `AnyHashable` that is declared `Sendable`.
///
/// `@unchecked Sendable` invariant: stores hand out immutable reference objects (Apple requires it).
package struct UncheckedHashable: Hashable, @unchecked Sendable {
    package let base: AnyHashable
    package init(_ base: AnyHashable) { self.base = base }
}

/// A store's side of its objects' IDs: the store (held weakly) and its identity, which IDs and
/// objects not yet given an ID (``NSManagedObject``'s lazily made IDs) share instead of each
/// holding a weak reference of their own.
///
/// `@unchecked Sendable` invariant: both properties are written once, by the store's initializer,
/// before the store is used.
package final class ObjectIDStore: @unchecked Sendable {
    // Written once before any read (see above): no run-time exclusivity checks, read on every row.
    @exclusivity(unchecked) package private(set) weak var store: NSPersistentStore?
    @exclusivity(unchecked) package private(set) var key = ObjectIdentifier(ObjectIDStore.self)

    init() {}

    /// Called once, by `store`'s initializer.
    func attach(_ store: NSPersistentStore) {
        self.store = store
        key = ObjectIdentifier(store)
    }
}

/// An object ID as a dictionary key, compared with ``NSManagedObjectID/_isSameID(as:)`` and hashed
/// by its `hash`: `NSObject`'s `==`, which `[NSManagedObjectID: V]` uses, boxes the other ID as an
/// `Any?` and casts it back, and hashes through `Hasher` (about 1,100 instructions a lookup,
/// callgrind case 8p).
package struct ObjectIDKey: Hashable {
    package let id: NSManagedObjectID
    package init(_ id: NSManagedObjectID) { self.id = id }
    package func hash(into hasher: inout Hasher) { hasher.combine(id.hash) }
    package static func == (lhs: ObjectIDKey, rhs: ObjectIDKey) -> Bool { lhs.id._isSameID(as: rhs.id) }
}
