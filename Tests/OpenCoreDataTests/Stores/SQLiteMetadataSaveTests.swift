import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// A save writes the store's metadata to `Z_METADATA` when it changed since it was last written or
/// read, however it was changed (the coordinator's `setMetadata(_:for:)`, the store's `metadata`
/// assigned or changed in place), and leaves the row alone otherwise.
@Suite("SQLite metadata at save")
struct SQLiteMetadataSaveTests {
    @Test func onlyChangedMetadataIsWrittenAndEveryChangeIs() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let url = try #require(store.url)
        let persistent = try #require(store.coordinator.persistentStores.first)
        nonisolated(unsafe) var statements: [String] = []
        try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        let context = store.newContext()
        var saves = 0
        func save() throws -> Bool {
            statements.removeAll()
            saves += 1
            insertObject("Department", ["name": "D\(saves)"], into: context)
            try context.save()
            return statements.contains { $0.hasPrefix("UPDATE Z_METADATA") }
        }
        func stored(_ key: String) throws -> String? {
            try RawDatabase(url).value("SELECT Z_PLIST FROM Z_METADATA").flatMap { $0 as? Data }.flatMap {
                try PropertyListSerialization.propertyList(from: $0, format: nil) as? [String: Any]
            }?[key] as? String
        }

        #expect(try !save(), "nothing changed since the store was opened")
        #expect(try !save())

        var metadata = store.coordinator.metadata(for: persistent)
        metadata["AppVersion"] = "1"
        store.coordinator.setMetadata(metadata, for: persistent)
        #expect(try save(), "set through the coordinator")
        #expect(try stored("AppVersion") == "1")
        #expect(try !save(), "written once")

        persistent.metadata["AppVersion"] = "2"
        #expect(try save(), "changed in place")
        #expect(try stored("AppVersion") == "2")

        let same = persistent.metadata
        persistent.metadata = same  // assigned, equal: compared, not written
        #expect(try !save())
        #expect(try !save())
    }
}
