// The module users import. It re-exports Foundation and the runtime, and imports the
// five names Foundation on Linux also declares (as unavailable) by scoped imports, so
// that a file with both `import Foundation` and `import OpenCoreData` sees ours without
// ambiguity. See docs/linux-differences.md, "Imports".
@_exported import Foundation
@_exported import OpenCoreDataRuntime
@_exported import class OpenCoreDataRuntime.NSPredicate
@_exported import class OpenCoreDataRuntime.NSComparisonPredicate
@_exported import class OpenCoreDataRuntime.NSCompoundPredicate
@_exported import class OpenCoreDataRuntime.NSExpression
@_exported import class OpenCoreDataRuntime.NSSortDescriptor
