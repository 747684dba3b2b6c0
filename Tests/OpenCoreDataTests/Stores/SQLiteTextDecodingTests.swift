import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Text read from a SQLite store becomes a `String` as `String(decoding:as: UTF8.self)` makes it:
/// the store reads small ASCII strings without a byte-by-byte check and validates the rest in place
/// (`String(sqliteText:count:)`), so these cover each side of the 15-byte small-string limit, with
/// and without non-ASCII bytes, and text another program wrote that is not UTF-8.
@Suite("SQLite text decoding")
struct SQLiteTextDecodingTests {
    static let strings = [
        "", "a", "item 12345", String(repeating: "x", count: 15), String(repeating: "y", count: 16),
        "café", String(repeating: "é", count: 7) + "z", String(repeating: "é", count: 8), "한국어 😀 e\u{301}",
        "nul\u{0}inside", String(repeating: "long text ", count: 40),
    ]

    @Test func stringsOfEveryLengthAndScriptRoundTrip() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        for (index, string) in Self.strings.enumerated() {
            insertObject("Item", ["int64": Int64(index), "string": string], into: context)
        }
        try context.save()
        try store.reopen()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "int64", ascending: true)]
        request.returnsObjectsAsFaults = false
        let fetched = try store.newContext().fetch(request).map { $0.value(forKey: "string") as? String }
        #expect(fetched == Self.strings)
        // The same text through a dictionary fetch and a predicate the store evaluates in SQL.
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Item")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["string"]
        dictionaries.sortDescriptors = [NSSortDescriptor(key: "int64", ascending: true)]
        let rows = try store.newContext().fetch(dictionaries).map { $0["string"] as? String }
        #expect(rows == Self.strings)
        let matching = NSFetchRequest<NSManagedObject>(entityName: "Item")
        matching.predicate = NSPredicate(format: "string BEGINSWITH[c] %@", "CAF")
        #expect(try store.newContext().fetch(matching).map { $0.value(forKey: "string") as? String } == ["café"])
    }

    /// SQLite stores whatever bytes it is given as text. Ill-formed UTF-8 reads with each bad
    /// sequence replaced by U+FFFD, as `String(decoding:as:)` does, small strings and large.
    @Test(arguments: ["61FF62", "C3", "E282", String(repeating: "41", count: 20) + "FE" + String(repeating: "42", count: 20)])
    func illFormedUTF8IsRepairedAsStringDecodingDoes(hex: String) throws {
        let store = try TestStore(NSSQLiteStoreType)
        let context = store.newContext()
        insertObject("Item", ["int64": Int64(1), "string": "placeholder"], into: context)
        try context.save()
        let url = try #require(store.url)
        StoreHarness.close(store.coordinator)
        try RawDatabase(url, readOnly: false).execute("UPDATE ZITEM SET ZSTRING = CAST(X'\(hex)' AS TEXT)")
        try store.reopen()
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        let expected = String(decoding: bytes, as: UTF8.self)
        #expect(expected.unicodeScalars.contains("\u{FFFD}"))
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.returnsObjectsAsFaults = false
        let object = try #require(try store.newContext().fetch(request).first)
        #expect(object.value(forKey: "string") as? String == expected)
    }
}
