import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

/// Every attribute type, with edge values, survives save → another process → fetch, both ways.
@Suite("Round trips through another process")
struct CrossProcessRoundTripTests {
    /// The helper tool SwiftPM builds beside the test bundle (the test target depends on it).
    private var tool: URL {
        get throws {
            let directory = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
            let url = directory.appendingPathComponent("AttributeRoundTrip")
            try #require(FileManager.default.isExecutableFile(atPath: url.path), "AttributeRoundTrip not built at \(url.path)")
            return url
        }
    }

    private func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = try tool
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    @Test func writtenHereReadThere() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("Here.sqlite")
        do {
            let context = try makeContext(model: TestModels.company(), storeType: NSSQLiteStoreType, at: url)
            try context.performAndWait {
                AttributeSamples.insert(into: context)
                try context.save()
            }
        }
        #expect(try run(["read", url.path]) == AttributeSamples.expected)
    }

    @Test func writtenThereReadHere() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("There.sqlite")
        _ = try run(["write", url.path])
        let context = try makeContext(model: TestModels.company(), storeType: NSSQLiteStoreType, at: url)
        let items = try context.performAndWait { try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")) }
        #expect(items.count == AttributeSamples.rows.count)
        #expect(AttributeSamples.describe(items) == AttributeSamples.expected)
    }
}
