import Foundation

// A model archives under the keys of Apple's compiled models (docs/compiled-models.md), so the
// archive is a `.mom` that `CompiledModelReader` loads; `init?(coder:)` reads the same keys.

extension NSManagedObjectModel: NSSecureCoding {
    /// `true`: models decode with secure coding.
    ///
    /// Related Core Data documentation: [supportsSecureCoding](https://developer.apple.com/documentation/foundation/nssecurecoding/supportssecurecoding)
    public static var supportsSecureCoding: Bool { true }

    func _encodeModelFields(with coder: NSCoder) {
        coder.encode(entitiesByName, forKey: "NSEntities")
        if !versionIdentifiers.isEmpty {
            ModelArchive.encode(versionIdentifiers, forKey: "NSVersionIdentifiers", with: coder, context: "the model")
        }
        let byConfiguration = Dictionary(uniqueKeysWithValues: configurations.map { ($0, entities(forConfigurationName: $0) ?? []) })
        if !byConfiguration.isEmpty { coder.encode(byConfiguration, forKey: "NSConfigurations") }
        let templates = fetchRequestTemplatesByName.mapValues(ArchivedFetchRequest.init)
        if !templates.isEmpty { coder.encode(templates, forKey: "NSFetchRequestTemplates") }
    }

    func _decodeModelFields(from coder: NSCoder) -> Bool {
        let classes = NSEntityDescription.archivedClasses + [NSArray.self, ArchivedFetchRequest.self, ArchivedSortDescriptor.self]
        let named = ModelArchive.entries(coder, "NSEntities", of: NSEntityDescription.self, with: classes)
        if let problem = named.lazy.compactMap(\.1._archiveProblem).first {
            ModelArchive.fail(coder, problem)
            return false
        }
        if let misnamed = named.first(where: { $0.0 != $0.1.name }) {
            ModelArchive.fail(coder, "NSEntities lists entity \(misnamed.1.name ?? "?") under the name \(misnamed.0)")
            return false
        }
        // In order of name, as the compiled-model reader and Xcode list them.
        entities = named.map(\.1).sorted { _utf8Precedes($0.name ?? "", $1.name ?? "") }
        if let problem = _linkDecodedEntities() {
            ModelArchive.fail(coder, problem)
            return false
        }
        for (configuration, members) in ModelArchive.entries(coder, "NSConfigurations", of: NSArray.self, with: classes) {
            let chosen = members.compactMap { $0 as? NSEntityDescription }
            setEntities(chosen.sorted { _utf8Precedes($0.name ?? "", $1.name ?? "") }, forConfigurationName: configuration)
        }
        for (name, template) in ModelArchive.entries(coder, "NSFetchRequestTemplates", of: ArchivedFetchRequest.self, with: classes) {
            let request = template.request
            if let problem = template.problem {
                ModelArchive.fail(coder, "fetch request template \(name): \(problem)")
                return false
            }
            guard let entityName = request.entityName, let entity = _entity(named: entityName) else {
                ModelArchive.fail(coder, "fetch request template \(name): its entity is not an entity of the model")
                return false
            }
            request.entity = entity
            setFetchRequestTemplate(request, forName: name)
        }
        if let identifiers = ModelArchive.value(coder, "NSVersionIdentifiers") {
            let members: [Any] = (identifiers as? Set<AnyHashable>).map { Array($0) } ?? (identifiers as? NSSet)?.allObjects
                ?? identifiers as? [Any] ?? []
            versionIdentifiers = Set(members.compactMap { $0 as? AnyHashable })
        }
        return true
    }

    /// Links decoded relationships to their destinations and inverses by name, and index elements
    /// to their properties; the problem found, or nil.
    private func _linkDecodedEntities() -> String? {
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                let context = "entity \(entity.name ?? "?"): relationship \(relationship.name)"
                guard let destinationName = relationship._destinationEntityName, let destination = _entity(named: destinationName) else {
                    return "\(context) has no destination entity of the model"
                }
                relationship.destinationEntity = destination
                if let inverseName = relationship._inverseName {
                    guard let inverse = destination.relationshipsByName[inverseName] else {
                        return "\(context): inverse \(inverseName) does not exist"
                    }
                    relationship.inverseRelationship = inverse
                }
            }
            guard entity._resolveDecodedIndexElements() else {
                return "entity \(entity.name ?? "?"): an index names a property the entity does not have"
            }
        }
        return nil
    }
}

// MARK: Compiled model files

extension NSManagedObjectModel {
    /// Writes the model as a compiled model file (`.mom`): its secure keyed archive, which
    /// ``init(contentsOf:)`` loads back with the same entity version hashes.
    ///
    /// ```swift
    /// try model.writeCompiledModel(to: URL(fileURLWithPath: "Shop.mom"))
    /// let loaded = NSManagedObjectModel(contentsOf: URL(fileURLWithPath: "Shop.mom"))
    /// ```
    ///
    /// - Note: Linux: not Apple API (Apple's compiled models come from Xcode's model compiler); the
    ///   same as writing `NSKeyedArchiver.archivedData(withRootObject: model, requiringSecureCoding: true)`.
    public func writeCompiledModel(to url: URL) throws {
        try NSKeyedArchiver.archivedData(withRootObject: self, requiringSecureCoding: true).write(to: url, options: .atomic)
    }

    /// Writes a compiled model bundle (`.momd`) as Xcode's model compiler lays it out: a
    /// `<version>.mom` for each model version and a `VersionInfo.plist` naming the current version
    /// (`NSManagedObjectModel_CurrentVersionName`) with each version's entity version hashes
    /// (`NSManagedObjectModel_VersionHashes`) and checksum (`NSManagedObjectModel_VersionChecksums`).
    /// ``init(contentsOf:)`` loads the current version, and migration finds the others.
    ///
    /// ```swift
    /// try NSManagedObjectModel.writeCompiledModelBundle(["Shop": v1, "Shop 2": v2], currentVersionName: "Shop 2",
    ///                                                   to: URL(fileURLWithPath: "Shop.momd"))
    /// ```
    ///
    /// Throws `NSFileWriteInvalidFileNameError` (642) when `currentVersionName` is not one of the
    /// versions or a version name cannot be a file name; the folder is created if needed.
    ///
    /// - Note: Linux: not Apple API (Xcode writes `.momd` bundles). The optimized `.omo` file Xcode adds
    ///   is not written: Core Data reads the `.mom` when it is absent.
    public static func writeCompiledModelBundle(_ versions: [String: NSManagedObjectModel], currentVersionName: String, to url: URL) throws {
        guard versions[currentVersionName] != nil else {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [
                NSFilePathErrorKey: url.path,
                NSDebugDescriptionErrorKey: "the current version \(currentVersionName) is not one of the versions to write",
            ])
        }
        if let bad = versions.keys.first(where: { $0.isEmpty || $0.contains("/") || $0.hasPrefix(".") }) {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [
                NSFilePathErrorKey: url.path, NSDebugDescriptionErrorKey: "\"\(bad)\" cannot name a .mom file",
            ])
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        var hashes: [String: [String: Data]] = [:]
        var checksums: [String: String] = [:]
        for (name, model) in versions {
            try model.writeCompiledModel(to: url.appendingPathComponent(name + ".mom"))
            hashes[name] = model.entityVersionHashesByName
            checksums[name] = model.versionChecksum
        }
        let info: [String: Any] = [
            "NSManagedObjectModel_CurrentVersionName": currentVersionName,
            "NSManagedObjectModel_VersionHashes": hashes,
            "NSManagedObjectModel_VersionChecksums": checksums,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0)
        try data.write(to: url.appendingPathComponent("VersionInfo.plist"), options: .atomic)
    }
}
