import Foundation

// PLACEHOLDER: the model subsystem replaces these bodies with FORMATS.md §2's algorithm.
extension NSManagedObjectModel {
    /// The version hash of each entity, by name.
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(entities.compactMap { e in e.name.map { ($0, e.versionHash) } }, uniquingKeysWith: { a, _ in a })
    }
    /// The model's version checksum (base64 of SHA-256 over the sorted entity hashes).
    public var versionChecksum: String { "" }
    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over name + hash pairs.
    package var versionHashesDigest: String { "" }
}

extension NSEntityDescription {
    /// The entity's version hash.
    public var versionHash: Data { Data(count: 32) }
}

extension NSPropertyDescription {
    /// The property's version hash.
    public var versionHash: Data { Data(count: 32) }
}
