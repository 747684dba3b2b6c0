import Foundation

/// A token that names a generation of the persistent stores: a snapshot of their contents that
/// the contexts pinned to it keep reading, whatever is saved meanwhile.
///
/// ```swift
/// try viewContext.setQueryGenerationFrom(.current)    // pin to what the store holds now
/// let token = viewContext.queryGenerationToken        // this generation
/// try otherContext.setQueryGenerationFrom(token)      // share it
/// try viewContext.setQueryGenerationFrom(nil)         // unpin: see every save again
/// ```
///
/// A generation holds a read transaction open on each SQLite store (in WAL mode), so it lasts as
/// long as some token for it is held. Tokens of one generation compare equal; ``current`` equals
/// only itself.
///
/// - Note: Linux: archiving a pinned token keeps only that it was a generation, not which: an
///   unarchived one cannot pin a context (``NSManagedObjectContext/setQueryGenerationFrom(_:)``
///   throws 134091). ``current`` archives and unarchives as itself.
///
/// Related Core Data documentation: [NSQueryGenerationToken](https://developer.apple.com/documentation/coredata/nsquerygenerationtoken)
///
/// `@unchecked Sendable` invariant: the generations are written under `generationsLock` only.
open class NSQueryGenerationToken: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// What the token stands for.
    package enum Kind: Sendable {
        /// ``current``: pin to the stores' state when the context is set.
        case current
        /// A generation of the stores.
        case generation
        /// A generation made at its first read (after a pinned context saves, as on Apple, whose
        /// context reports no token until it reads again); becomes `.generation` then.
        case atNextRead
        /// An unarchived generation, which no longer exists.
        case stale
    }

    private let generationsLock = NSLock()
    private var kind: Kind
    /// Each store's generation object (``NSPersistentStore/_newQueryGeneration()``), by store.
    private var generations: [ObjectIdentifier: AnyObject]
    /// The coordinator whose stores the generations are of.
    private weak var coordinator: NSPersistentStoreCoordinator?

    package init(kind: Kind, generations: [ObjectIdentifier: AnyObject] = [:], coordinator: NSPersistentStoreCoordinator? = nil) {
        self.kind = kind
        self.generations = generations
        self.coordinator = coordinator
        super.init()
    }

    private static let currentToken = NSQueryGenerationToken(kind: .current)

    /// The token that asks a context to pin itself to the stores' current generation.
    ///
    /// Related Core Data documentation: [current](https://developer.apple.com/documentation/coredata/nsquerygenerationtoken/current)
    open class var current: NSQueryGenerationToken { currentToken }

    package var _kind: Kind { generationsLock.withLock { kind } }

    /// The generation of `store` this token pins, made now for a token waiting for its first read;
    /// `nil` when the token does not pin `store` (a store added after it was made).
    package func _generation(of store: NSPersistentStore) throws -> AnyObject? {
        try generationsLock.withLock { () throws -> AnyObject? in
            let key = ObjectIdentifier(store)
            if let generation = generations[key] { return generation }
            guard kind == .atNextRead else { return nil }
            // The first store read makes the generation; with several stores, the others are read
            // current until the context is pinned again.
            let made = try store._newQueryGeneration()
            generations[key] = made
            kind = .generation
            return made
        }
    }

    package func _isOf(_ coordinator: NSPersistentStoreCoordinator) -> Bool {
        generationsLock.withLock { self.coordinator === coordinator }
    }

    // MARK: NSObject

    /// Whether `object` is a token of the same generation (``current`` equals only itself).
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        if other === self { return true }
        let (mine, mineKind) = generationsLock.withLock { (generations, kind) }
        let (theirs, theirKind) = other.generationsLock.withLock { (other.generations, other.kind) }
        if mineKind == .current, theirKind == .current { return true }  // (one unarchived)
        guard mineKind == .generation, theirKind == .generation, mine.count == theirs.count else { return false }
        return mine.allSatisfy { key, generation in theirs[key] === generation }
    }

    /// A hash of the generation's identity, equal for equal tokens.
    open override var hash: Int {
        generationsLock.withLock {
            var hasher = Hasher()
            hasher.combine(kind == .current)
            for (key, generation) in generations.sorted(by: { $0.key < $1.key }) {
                hasher.combine(key)
                hasher.combine(ObjectIdentifier(generation))
            }
            return hasher.finalize()
        }
    }

    /// Whether the token is ``current`` or a generation, and of how many stores.
    open override var description: String {
        switch _kind {
        case .current: return "<NSQueryGenerationToken: current>"
        case .stale: return "<NSQueryGenerationToken: unarchived>"
        case .generation, .atNextRead: return "<NSQueryGenerationToken: \(generationsLock.withLock { generations.count }) store(s)>"
        }
    }

    // MARK: NSCopying, NSSecureCoding

    /// The token itself: a token does not change once made.
    ///
    /// Related Core Data documentation: [copy(with:)](https://developer.apple.com/documentation/foundation/nscopying/copy(with:))
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// `true`: tokens decode with secure coding.
    ///
    /// Related Core Data documentation: [supportsSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding/supportssecurecoding)
    public static var supportsSecureCoding: Bool { true }

    /// Archives whether the token is ``current`` (a generation itself cannot be archived).
    ///
    /// Related Core Data documentation: [encode(with:)](https://developer.apple.com/documentation/foundation/nscoding/encode(with:))
    open func encode(with coder: NSCoder) {
        coder.encode(_kind == .current, forKey: "current")
    }

    /// Unarchives ``current`` as itself and a generation as a token that can no longer pin.
    ///
    /// Related Core Data documentation: [init(coder:)](https://developer.apple.com/documentation/foundation/nscoding/init(coder:))
    public required init?(coder: NSCoder) {
        kind = coder.decodeBool(forKey: "current") ? .current : .stale
        generations = [:]
        super.init()
    }
}

extension NSManagedObjectContext {
    /// The token of the generation this context is pinned to; `nil` when it is not pinned (and,
    /// after a pinned context saves, until its next read pins it to the generation of that save).
    ///
    /// Related Core Data documentation: [queryGenerationToken](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/querygenerationtoken)
    public var queryGenerationToken: NSQueryGenerationToken? {
        performAndWait { () -> NSQueryGenerationToken? in  // (the pin is the queue's state)
            guard let token = _link.queryGeneration, token._kind == .generation else { return nil }
            return token
        }
    }

    /// Pins this context to a generation of its stores: `.current` for what they hold now, a token
    /// of another context of this coordinator for that context's generation, or `nil` to unpin.
    ///
    /// A pinned context's fetches, counts and faults (and `refresh(_:mergeChanges:)`, and
    /// `refreshAllObjects()`, which fault from it) read the generation, not saves made after it,
    /// until it is set again or the context saves: a save moves it to the generation after the
    /// save. Objects already registered keep their values until they are refreshed.
    ///
    /// Throws `NSPersistentStoreUnsupportedRequestTypeError` (134091) unless every store of the
    /// coordinator is a SQLite store in WAL mode, and `NSPersistentStoreOperationError` (134070)
    /// for a token of another coordinator or one that was unarchived; the context's pin is then
    /// unchanged.
    ///
    /// - Note: Linux: Apple does not document the error code for stores without generations;
    ///   134091 is our choice.
    ///
    /// Related Core Data documentation: [setQueryGenerationFrom(_:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectcontext/setquerygenerationfrom(_:))
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        try performAndWait { () throws(any Error) in
            guard let generation else {
                _link.queryGeneration = nil
                return
            }
            guard let coordinator = _rootCoordinator else { throw noCoordinator() }
            switch generation._kind {
            case .current:
                var generations: [ObjectIdentifier: AnyObject] = [:]
                for store in coordinator.persistentStores {
                    generations[ObjectIdentifier(store)] = try store._newQueryGeneration()
                }
                _link.queryGeneration = NSQueryGenerationToken(
                    kind: .generation, generations: generations, coordinator: coordinator)
            case .generation where generation._isOf(coordinator):
                _link.queryGeneration = generation
            case .generation, .atNextRead, .stale:
                throw OpenCoreDataError(
                    .persistentStoreOperation, "the query generation token is not one of this context's coordinator")
            }
        }
    }

    /// A pinned context's save moves it on: its next read pins it to the generation then.
    package func _advanceQueryGenerationAfterSave(_ pinned: NSQueryGenerationToken?, saved: Bool) {
        guard let pinned else { return }
        _link.queryGeneration =
            saved ? NSQueryGenerationToken(kind: .atNextRead, coordinator: _rootCoordinator) : pinned
    }

    /// The coordinator at the root of this context's chain of parents.
    private var _rootCoordinator: NSPersistentStoreCoordinator? { persistentStoreCoordinator }
}
