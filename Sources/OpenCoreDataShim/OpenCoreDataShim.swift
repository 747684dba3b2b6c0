// Cross-platform import: Apple's Core Data where it exists, OpenCoreData everywhere else.
// Model classes still differ in one spot: `@NSManaged` on Apple, `@ManagedProperty` here.
#if canImport(CoreData)
@_exported import CoreData
#else
@_exported import OpenCoreData
#endif
