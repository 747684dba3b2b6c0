// This file imports Foundation AND OpenCoreData, as seed code does (`import Foundation` plus
// `import CoreData` becomes `import OpenCoreData`). Foundation on Linux declares NSPredicate,
// NSComparisonPredicate, NSCompoundPredicate, NSExpression and NSSortDescriptor too (as
// unavailable): if this file compiles, naming them as types is not ambiguous.
import Foundation
import OpenCoreData
import Testing

private protocol SeedStyleManaged {
    static var defaultSortDescriptors: [NSSortDescriptor] { get }
}

private func seedStyleFind(matching predicate: NSPredicate, sortedBy sorts: [NSSortDescriptor]) -> (NSPredicate, [NSSortDescriptor]) {
    (predicate, sorts)
}

private func allPredicateTypes(_ c: NSComparisonPredicate?, _ p: NSCompoundPredicate?, _ e: NSExpression?) -> Int {
    [c as Any?, p as Any?, e as Any?].compactMap { $0 }.count
}

@Suite("Imports")
struct ImportTests {
    @Test func foundationAndOpenCoreDataTogetherResolveToOurTypes() {
        let (predicate, sorts) = seedStyleFind(
            matching: NSPredicate(format: "%K == %d", "numericISO3166Code", 616),
            sortedBy: [NSSortDescriptor(key: "updatedAt", ascending: false)])
        #expect(String(reflecting: type(of: predicate)).hasPrefix("OpenCoreDataRuntime."))
        #expect(sorts.first?.key == "updatedAt")
        #expect(allPredicateTypes(nil, nil, NSExpression(forKeyPath: "a")) == 1)
    }
}
