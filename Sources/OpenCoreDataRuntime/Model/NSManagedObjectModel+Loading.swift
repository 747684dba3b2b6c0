import Foundation

extension NSManagedObjectModel {
    /// Loads a model from a compiled model (a `.momd` bundle's current version, or a `.mom` file)
    /// or an Xcode model file: a `.xcdatamodeld` bundle (its current version), a `.xcdatamodel`
    /// directory, or its `contents` XML file. Returns `nil` if the file is missing or malformed;
    /// ``load(contentsOf:)`` says why.
    ///
    /// ```swift
    /// let url = Bundle.module.url(forResource: "Moods", withExtension: "xcdatamodeld")!
    /// let model = NSManagedObjectModel(contentsOf: url)!
    /// ```
    ///
    /// Entities get `managedObjectClassName` from the file's `representedClassName`
    /// (`"NSManagedObject"` when absent).
    ///
    /// - Note: Linux: Apple loads the *compiled* model (`.momd`/`.mom`) that Xcode builds into the
    ///   app. Both are read here, and so is the Xcode source model, since Linux has no model
    ///   compiler. A `.momd`'s optimized `.omo` is ignored (the `.mom` beside it is read), and fetched
    ///   properties of compiled models are left out of their entities. Pre-Xcode 4 models (a
    ///   `.xcdatamodel` holding a binary `elements` archive instead of `contents`) are read too;
    ///   superentities in them are not supported (no example to learn their encoding from).
    ///
    /// Related Core Data documentation: [init(contentsOf:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/init(contentsof:))
    public convenience init?(contentsOf url: URL) {
        self.init()
        do {
            try Self._load(contentsOf: url, into: self)
        } catch {
            return nil
        }
    }

    /// Loads a model like ``init(contentsOf:)`` but throws an ``OpenCoreDataError`` that names the
    /// file, and the line for malformed or inconsistent XML (`fileReadCorruptFile`, 259, for a
    /// compiled model that is not a model archive).
    package static func load(contentsOf url: URL) throws -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        try _load(contentsOf: url, into: model)
        return model
    }

    private static func _load(contentsOf url: URL, into model: NSManagedObjectModel) throws {
        if CompiledModelReader.isCompiledModel(url) {
            try CompiledModelReader.load(contentsOf: url, into: model)
        } else {
            try XcodeModelReader.load(contentsOf: url, into: model)
        }
    }
}
