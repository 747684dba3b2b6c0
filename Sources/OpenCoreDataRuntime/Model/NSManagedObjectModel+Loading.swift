import Foundation

// PLACEHOLDER: the model-file subsystem replaces this with the Xcode model loader.
extension NSManagedObjectModel {
    /// Loads a model from a `.xcdatamodeld`, `.xcdatamodel`, `.momd` or `.mom`.
    ///
    /// Related Core Data documentation: [init(contentsOf:)](https://developer.apple.com/documentation/coredata/nsmanagedobjectmodel/init(contentsof:))
    public convenience init?(contentsOf url: URL) {
        return nil
    }
}
