import Foundation
import OpenCoreData

/// What a store holds, to check that a failed save wrote nothing: the SQLite file and its WAL byte
/// for byte, and every row of every entity as a fresh context reads it (both stores).
public struct StoreFingerprint: Equatable {
    /// The store file and its `-wal` (SQLite); empty for the in-memory store.
    public let bytes: [Data]
    /// One line per object: entity name and every attribute, sorted.
    public let rows: [String]

    public init(_ store: TestStore) throws {
        var bytes: [Data] = []
        if let url = store.url {
            bytes.append(try Data(contentsOf: url))
            let wal = URL(fileURLWithPath: url.path + "-wal")
            if FileManager.default.fileExists(atPath: wal.path) { bytes.append(try Data(contentsOf: wal)) }
        }
        self.bytes = bytes
        let reader = store.newContext()
        var rows: [String] = []
        for entity in store.model.entities where !entity.isAbstract {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
            request.includesSubentities = false
            for object in try reader.fetch(request) {
                let keys = entity.attributesByName.keys.sorted()
                rows.append("\(entity.name!) " + keys.map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }.joined(separator: " "))
            }
        }
        self.rows = rows.sorted()
    }
}
