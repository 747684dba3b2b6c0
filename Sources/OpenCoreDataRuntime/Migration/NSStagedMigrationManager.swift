import Foundation

/// Option: an ``NSStagedMigrationManager`` whose stages take the store to the coordinator's model.
///
/// Related Core Data documentation: [NSPersistentStoreStagedMigrationManagerOptionKey](https://developer.apple.com/documentation/coredata/nspersistentstorestagedmigrationmanageroptionkey)
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

/// A promise of a model version, identified by its version checksum, resolved when a staged
/// migration needs it.
///
/// ```swift
/// let v1 = NSManagedObjectModelReference(model: modelV1, versionChecksum: modelV1.versionChecksum)
/// let v2 = NSManagedObjectModelReference(fileURL: bundleURL.appendingPathComponent("ModelV2.xcdatamodel"),
///                                        versionChecksum: "PA0Gbxs46liWKg7/aZMCBtu9vVIF6MlskbhhjrCd7ms=")
/// ```
///
/// - Note: Linux: a reference by name looks for the model version `<name>` in the bundle's
///   resources: a top-level `<name>.mom` or `<name>.xcdatamodel`, else `<name>.mom` inside a compiled
///   `.momd` or `<name>.xcdatamodel` inside a `.xcdatamodeld`, at any depth. A file URL names a
///   compiled model (a `.mom`, also one inside a `.momd`, or a `.momd`'s current version) or an Xcode
///   model (`.xcdatamodel` or `.xcdatamodeld`).
///
/// Related Core Data documentation: [NSManagedObjectModelReference](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodelreference)
///
/// `@unchecked Sendable` invariant: resolved once, under the staged migration that uses it.
open class NSManagedObjectModelReference: NSObject, @unchecked Sendable {
    /// The checksum the resolved model must have.
    ///
    /// Related Core Data documentation: [versionChecksum](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodelreference/versionchecksum)
    open private(set) var versionChecksum: String
    private let loader: () throws -> NSManagedObjectModel
    private var resolved: NSManagedObjectModel?

    /// A reference to a model in memory.
    public init(model: NSManagedObjectModel, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        loader = { model }
    }

    /// A reference to the model file at `fileURL`.
    public init(fileURL: URL, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        loader = { try NSManagedObjectModel.load(contentsOf: fileURL) }
    }

    /// A reference to the model version named `modelName` in `bundle` (the main bundle if `nil`).
    public init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        let bundle = UncheckedSendable(bundle ?? Bundle.main)
        loader = { try Self.find(modelName, in: bundle.value) }
    }

    /// The model, or `nil` if it cannot be loaded or its checksum differs from ``versionChecksum``.
    ///
    /// Related Core Data documentation: [resolvedModel](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodelreference/resolvedmodel)
    open var resolvedModel: NSManagedObjectModel! { try? resolve() }

    /// The model, checked against the checksum.
    package func resolve() throws -> NSManagedObjectModel {
        if let resolved { return resolved }
        let model = try loader()
        guard model.versionChecksum == versionChecksum else {
            throw OpenCoreDataError(
                .migration,
                "a model reference's version checksum \(versionChecksum) does not match its model's (\(model.versionChecksum))")
        }
        resolved = model
        return model
    }

    private static func find(_ name: String, in bundle: Bundle) throws -> NSManagedObjectModel {
        for ext in ["mom", "xcdatamodel"] {
            if let url = bundle.url(forResource: name, withExtension: ext) { return try .load(contentsOf: url) }
        }
        for root in [bundle.resourceURL, bundle.bundleURL].compactMap({ $0 }) {
            let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                if let version = ModelVersionBundle.versionURL(named: name, inBundle: url) { return try .load(contentsOf: version) }
            }
        }
        throw OpenCoreDataError(.migration, "no model version named \(name) in bundle \(bundle.bundleURL.path)")
    }
}

/// One step of a staged migration.
///
/// Related Core Data documentation: [NSMigrationStage](https://developer.apple.com/documentation/coredata/nsmigrationstage)
///
/// `@unchecked Sendable` invariant: configured before the migration, read while it runs.
open class NSMigrationStage: NSObject, @unchecked Sendable {
    /// A name for the stage, used in errors.
    ///
    /// Related Core Data documentation: [label](https://developer.apple.com/documentation/coredata/nsmigrationstage/label)
    open var label: String?
}

/// Model versions, by version checksum, between which lightweight migration suffices.
///
/// ```swift
/// let stage = NSLightweightMigrationStage([v1Checksum])
/// stage.label = "V1 to V2: Add flightData attribute"
/// ```
///
/// Related Core Data documentation: [NSLightweightMigrationStage](https://developer.apple.com/documentation/coredata/nslightweightmigrationstage)
open class NSLightweightMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The checksums of the model versions, in order.
    ///
    /// Related Core Data documentation: [versionChecksums](https://developer.apple.com/documentation/coredata/nslightweightmigrationstage/versionchecksums)
    open private(set) var versionChecksums: [String]

    /// A stage through the model versions with these checksums.
    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
    }
}

/// A migration from one model version to the next that runs your code before and after the
/// (lightweight) schema change.
///
/// ```swift
/// let stage = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
/// stage.willMigrateHandler = { manager, stage in
///     let context = manager.container!.newBackgroundContext()
///     try context.performAndWait { /* move data while both shapes exist */ try context.save() }
/// }
/// ```
///
/// Related Core Data documentation: [NSCustomMigrationStage](https://developer.apple.com/documentation/coredata/nscustommigrationstage)
open class NSCustomMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The model the stage starts from.
    open private(set) var currentModel: NSManagedObjectModelReference
    /// The model the stage ends at.
    open private(set) var nextModel: NSManagedObjectModelReference
    /// Runs before the schema changes, with ``NSStagedMigrationManager/container`` on the current model.
    ///
    /// Related Core Data documentation: [willMigrateHandler](https://developer.apple.com/documentation/coredata/nscustommigrationstage/willmigratehandler)
    open var willMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?
    /// Runs after the schema changed, with ``NSStagedMigrationManager/container`` on the next model.
    ///
    /// Related Core Data documentation: [didMigrateHandler](https://developer.apple.com/documentation/coredata/nscustommigrationstage/didmigratehandler)
    open var didMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    /// A stage from `currentModel` to `nextModel`.
    ///
    /// Related Core Data documentation: [init(migratingFrom:to:)](https://developer.apple.com/documentation/coredata/nscustommigrationstage/init(migratingfrom:to:))
    public init(migratingFrom currentModel: NSManagedObjectModelReference, to nextModel: NSManagedObjectModelReference) {
        self.currentModel = currentModel
        self.nextModel = nextModel
    }
}

/// Runs migration stages in order, from the version a store was written with to the coordinator's
/// model. Pass it with ``NSPersistentStoreStagedMigrationManagerOptionKey``.
///
/// ```swift
/// let manager = NSStagedMigrationManager([lightweightStage, customStage])
/// description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
/// ```
///
/// All or nothing: the stages run on a copy of the store, which replaces the store only when every
/// stage succeeded. A failing stage (a handler that throws, a schema step that fails) leaves the
/// store as it was, and the error names the stage.
///
/// - Note: Linux: model versions of lightweight stages are found by checksum among the custom
///   stages' references, the coordinator's model, the versions of the `.xcdatamodeld` or `.momd`
///   bundle it was loaded from and `OpenCoreDataMigrationSourceModelsOption`. Only store types that migrate themselves (SQLite)
///   can run staged migrations.
///
/// Related Core Data documentation: [NSStagedMigrationManager](https://developer.apple.com/documentation/coredata/nsstagedmigrationmanager)
///
/// `@unchecked Sendable` invariant: one migration at a time, run inside `addPersistentStore`.
open class NSStagedMigrationManager: NSObject, @unchecked Sendable {
    /// The stages, in order.
    ///
    /// Related Core Data documentation: [stages](https://developer.apple.com/documentation/coredata/nsstagedmigrationmanager/stages)
    open private(set) var stages: [NSMigrationStage]
    /// A container on the store being migrated, with the model of the current step (set while a
    /// custom stage's handler runs).
    ///
    /// Related Core Data documentation: [container](https://developer.apple.com/documentation/coredata/nsstagedmigrationmanager/container)
    open private(set) var container: NSPersistentContainer?

    /// A manager that runs `stages` in order.
    ///
    /// Related Core Data documentation: [init(_:)](https://developer.apple.com/documentation/coredata/nsstagedmigrationmanager/init(_:))
    public init(_ stages: [NSMigrationStage]) {
        self.stages = stages
    }

    /// One step of the ordered version chain.
    private struct Step {
        var from: NSManagedObjectModel
        var to: NSManagedObjectModel
        var custom: NSCustomMigrationStage?
        var label: String
    }

    /// Migrates the store at `url` (of `storeClass`) to `model`, if it exists and does not match it.
    package func migrateStore(
        at url: URL, storeClass: NSPersistentStore.Type, type: String, to model: NSManagedObjectModel,
        options: [AnyHashable: Any]?
    ) throws {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let metadata = try storeClass.metadataForPersistentStore(with: url)
        if model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return }
        guard let migrating = storeClass as? any MigratingPersistentStore.Type else {
            throw OpenCoreDataError(.migration, "the \(type) store cannot run a staged migration", url: url)
        }
        let steps = try plan(to: model, options: options)
        guard let start = steps.firstIndex(where: { $0.from.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) })
        else {
            throw OpenCoreDataError(
                .migrationMissingSourceModel,
                "no migration stage starts from the model the store was written with; the store is left as it is", url: url)
        }
        // Work on a copy; it replaces the store only when every stage succeeded.
        let work = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).staged-\(UUID().uuidString)")
        try migrating.copyStoreForMigration(from: url, to: work)
        defer {
            container = nil
            try? storeClass.destroyStore(at: work, options: nil)
        }
        for step in steps[start...] {
            do {
                try run(step, at: work, type: type, migrating: migrating)
            } catch var error as OpenCoreDataError where (134_110...134_190).contains(error.errorCode) {
                error.message = "staged migration failed in stage \"\(step.label)\"; the store is unchanged: \(error.message)"
                error.url = url
                throw error
            } catch {
                throw OpenCoreDataError(
                    .migration, "staged migration failed in stage \"\(step.label)\"; the store is unchanged: \(error)",
                    url: url, underlyingError: error as NSError)
            }
        }
        try storeClass.destroyStore(at: url, options: nil)
        try FileManager.default.moveItem(at: work, to: url)
    }

    private func run(_ step: Step, at url: URL, type: String, migrating: any MigratingPersistentStore.Type) throws {
        if let stage = step.custom, let handler = stage.willMigrateHandler {
            try withContainer(step.from, at: url, type: type) { try handler(self, stage) }
        }
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: step.from, destinationModel: step.to)
        try migrating.migrateStoreInPlace(
            at: url, plan: LightweightMigrationPlan(sourceModel: step.from, destinationModel: step.to, mapping: mapping))
        if let stage = step.custom, let handler = stage.didMigrateHandler {
            try withContainer(step.to, at: url, type: type) { try handler(self, stage) }
        }
    }

    private func withContainer(_ model: NSManagedObjectModel, at url: URL, type: String, _ body: () throws -> Void) throws {
        let container = NSPersistentContainer(name: url.deletingPathExtension().lastPathComponent, managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        description.shouldMigrateStoreAutomatically = false
        container.persistentStoreDescriptions = [description]
        var failure: (any Error)?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        self.container = container
        defer {
            self.container = nil
            for store in container.persistentStoreCoordinator.persistentStores {
                try? container.persistentStoreCoordinator.remove(store)
            }
        }
        try body()
    }

    /// The total order of model versions the stages describe, ending at `model`.
    private func plan(to model: NSManagedObjectModel, options: [AnyHashable: Any]?) throws -> [Step] {
        var known: [String: NSManagedObjectModel] = [:]
        for candidate in LightweightMigration.sourceModelCandidates(for: model, options: options) + [model] {
            known[candidate.versionChecksum] = known[candidate.versionChecksum] ?? candidate
        }
        var chain: [(checksum: String, model: NSManagedObjectModel?, custom: NSCustomMigrationStage?, label: String)] = []
        func append(_ checksum: String, _ resolved: NSManagedObjectModel?, custom: NSCustomMigrationStage?, label: String) {
            if chain.last?.checksum == checksum {
                if chain[chain.count - 1].model == nil { chain[chain.count - 1].model = resolved }
                return
            }
            chain.append((checksum, resolved, custom, label))
        }
        for (index, stage) in stages.enumerated() {
            let label = stage.label ?? "stage \(index + 1)"
            switch stage {
            case let custom as NSCustomMigrationStage:
                let from = try custom.currentModel.resolve()
                let to = try custom.nextModel.resolve()
                known[from.versionChecksum] = from
                known[to.versionChecksum] = to
                append(from.versionChecksum, from, custom: nil, label: label)
                append(to.versionChecksum, to, custom: custom, label: label)
            case let lightweight as NSLightweightMigrationStage:
                for checksum in lightweight.versionChecksums { append(checksum, nil, custom: nil, label: label) }
            default:
                throw OpenCoreDataError(.migration, "\(label) is neither a lightweight nor a custom migration stage")
            }
        }
        append(model.versionChecksum, model, custom: nil, label: "to the current model")
        var steps: [Step] = []
        for i in chain.indices.dropFirst() {
            guard let from = chain[i - 1].model ?? known[chain[i - 1].checksum],
                let to = chain[i].model ?? known[chain[i].checksum]
            else {
                let missing = (chain[i - 1].model ?? known[chain[i - 1].checksum]) == nil ? chain[i - 1] : chain[i]
                throw OpenCoreDataError(
                    .migrationMissingSourceModel,
                    "no model with version checksum \(missing.checksum) (\(missing.label)) was found")
            }
            steps.append(Step(from: from, to: to, custom: chain[i].custom, label: chain[i].custom != nil ? chain[i].label : chain[i - 1].label))
        }
        return steps
    }
}
