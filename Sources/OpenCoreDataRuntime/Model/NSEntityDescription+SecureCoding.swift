import Foundation

// Entities archive under the keys of Apple's compiled models (docs/compiled-models.md): the
// compiled-model reader reads what `encode(with:)` writes, and `init?(coder:)` reads the same keys.

extension NSEntityDescription: NSSecureCoding {
    /// `true`: entities decode with secure coding.
    ///
    /// Related Core Data documentation: [supportsSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding/supportssecurecoding)
    public static var supportsSecureCoding: Bool { true }

    /// The classes an entity's fields hold.
    static let archivedClasses: [AnyClass] = [
        NSEntityDescription.self, NSPropertyDescription.self, NSFetchIndexDescription.self, NSFetchIndexElementDescription.self,
    ]

    func _encodeEntityFields(with coder: NSCoder) {
        coder.encode(name ?? "", forKey: "NSEntityName")
        ModelArchive.encode(managedObjectClassName, forKey: "NSClassNameForEntity", with: coder)
        coder.encode(isAbstract, forKey: "NSIsAbstract")
        if let superentity { coder.encode(superentity, forKey: "NSSuperentity") }
        if !subentities.isEmpty { coder.encode(subentities, forKey: "NSSubentities") }
        // Own properties only, as in a compiled model (a store's cached model repeats inherited ones).
        coder.encode(Dictionary(ownProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }), forKey: "NSProperties")
        ModelArchive.encode(userInfo, forKey: "NSUserInfo", with: coder, context: "entity \(name ?? "?")")
        ModelArchive.encode(versionHashModifier, forKey: "NSVersionHashModifier", with: coder)
        ModelArchive.encode(renamingIdentifier, forKey: "NSRenamingIdentifier", with: coder)
        let tuples = uniquenessConstraints.map { tuple in
            tuple.map { ($0 as? NSPropertyDescription)?.name ?? ($0 as? String) ?? "\($0)" }
        }
        if !tuples.isEmpty { coder.encode(tuples, forKey: "NSUniqueTuples") }
        if !indexes.isEmpty { coder.encode(indexes, forKey: "NSFetchIndexDescriptions") }
        if let managedObjectModel { coder.encodeConditionalObject(managedObjectModel, forKey: "NSManagedObjectModel") }
    }

    /// Reads the entity's fields; what is wrong with them or with its properties, or nil.
    func _decodeEntityFields(from coder: NSCoder) -> String? {
        guard let name = ModelArchive.string(coder, "NSEntityName"), !name.isEmpty else { return "an entity has no NSEntityName" }
        self.name = name
        managedObjectClassName = ModelArchive.string(coder, "NSClassNameForEntity") ?? "NSManagedObject"
        isAbstract = coder.decodeBool(forKey: "NSIsAbstract")
        userInfo = ModelArchive.value(coder, "NSUserInfo") as? [AnyHashable: Any]
        versionHashModifier = ModelArchive.string(coder, "NSVersionHashModifier")
        renamingIdentifier = ModelArchive.string(coder, "NSRenamingIdentifier")
        uniquenessConstraints = (ModelArchive.value(coder, "NSUniqueTuples") as? [Any] ?? []).compactMap { $0 as? [Any] }

        let properties = ModelArchive.entries(coder, "NSProperties", of: NSPropertyDescription.self, with: Self.archivedClasses)
        if let problem = properties.lazy.compactMap(\.1._archiveProblem).first { return "entity \(name): \(problem)" }
        if properties.contains(where: { $0.0 != $0.1.name }) { return "entity \(name): NSProperties lists a property under another name" }
        self.properties = properties.map(\.1).sorted { _utf8Precedes($0.name, $1.name) }
        let subentities = ModelArchive.objects(coder, "NSSubentities", of: NSEntityDescription.self, with: Self.archivedClasses)
        if !subentities.isEmpty { self.subentities = subentities.sorted { _utf8Precedes($0.name ?? "", $1.name ?? "") } }
        let indexes = ModelArchive.objects(coder, "NSFetchIndexDescriptions", of: NSFetchIndexDescription.self, with: Self.archivedClasses)
        if !indexes.isEmpty {
            self.indexes = indexes
            // Elements on inherited properties are found when the model links its entities.
            _ = _resolveDecodedIndexElements()
        }
        return nil
    }

    /// Finds the properties of decoded index elements; false if one names no property of the entity.
    func _resolveDecodedIndexElements() -> Bool {
        indexes.allSatisfy { index in index.elements.allSatisfy { $0._resolveDecodedProperty(in: self) } }
    }
}
