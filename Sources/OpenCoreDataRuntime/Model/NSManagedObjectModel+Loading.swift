import Foundation

extension NSManagedObjectModel {
    /// Loads a model from an Xcode model file: a `.xcdatamodeld` bundle (its current version), a
    /// `.xcdatamodel` directory, or its `contents` XML file. Returns `nil` if the file is missing or
    /// malformed; ``load(contentsOf:)`` says why.
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
    ///   app; here the Xcode source model is read directly, since there is no model compiler. Compiled
    ///   models and pre-Xcode-4 binary models (`elements`) are not supported and return `nil`.
    ///
    /// Related Core Data documentation: [init(contentsOf:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/init(contentsof:))
    public convenience init?(contentsOf url: URL) {
        self.init()
        do {
            try XcodeModelReader.load(contentsOf: url, into: self)
        } catch {
            return nil
        }
    }

    /// Loads a model like ``init(contentsOf:)`` but throws an ``OpenCoreDataError`` that names the
    /// file, and the line for malformed or inconsistent XML.
    package static func load(contentsOf url: URL) throws -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        try XcodeModelReader.load(contentsOf: url, into: model)
        return model
    }
}
