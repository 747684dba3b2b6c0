import Foundation
import OpenCoreData

/// Edge values of every attribute type, for round trips through a store (in this process or another).
///
/// The rows use `TestModels.company()`'s `Item` entity; `int64` orders them.
public enum AttributeSamples {
    /// The sample rows, as key-value pairs (a missing key stays nil).
    public static var rows: [[String: Any]] {
        [
            [
                "int16": Int16.min, "int32": Int32.min, "int64": Int64.min,
                "decimal": Decimal(string: "-12345678901234567890.123456789")!,
                "double": -Double.greatestFiniteMagnitude, "float": -Float.greatestFiniteMagnitude,
                "string": "", "bool": false,
                "date": Date(timeIntervalSinceReferenceDate: -978_307_200.25),  // 1969-12-31T23:59:59.75Z
                "binary": Data(), "uuid": UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                "uri": URL(string: "file:///tmp/a%20b")!,
            ],
            ["int64": Int64(0)],  // every other attribute nil
            [
                "int16": Int16.max, "int32": Int32.max, "int64": Int64(1),
                "decimal": Decimal(string: "0.1")!, "double": Double.pi, "float": Float.pi,
                "string": "Łódź 🙂 한국어 \"quoted\" 'single' \\ back\nnew line, NUL:\u{0}:end",
                "bool": true, "date": Date(timeIntervalSinceReferenceDate: 1_234_567.123_456),
                "binary": Data((0..<(10 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }),
                "uuid": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
                "uri": URL(string: "https://example.com/%C3%BC?q=1#frag")!,
            ],
            [
                "int64": Int64.max, "double": Double.leastNonzeroMagnitude, "float": Float.leastNormalMagnitude,
                "decimal": Decimal(string: "340282366920938463463374607431768211455")!,
                "date": Date(timeIntervalSinceReferenceDate: 0.000_001), "string": String(repeating: "x", count: 100_000),
            ],
        ]
    }

    /// Inserts the rows as `Item` objects.
    public static func insert(into context: NSManagedObjectContext) {
        for row in rows {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            for (key, value) in row { item.setValue(value, forKey: key) }
        }
    }

    /// An exact text description of `Item` objects (bit patterns for floating point, a digest for data).
    public static func describe(_ items: [NSManagedObject]) -> String {
        items.sorted { ($0.value(forKey: "int64") as? Int64 ?? 0) < ($1.value(forKey: "int64") as? Int64 ?? 0) }
            .map(describe).joined(separator: "\n")
    }

    /// The description the samples must have after any round trip.
    public static var expected: String {
        rows.sorted { ($0["int64"] as? Int64 ?? 0) < ($1["int64"] as? Int64 ?? 0) }
            .map { row in describe { row[$0] } }.joined(separator: "\n")
    }

    private static let keys = ["int16", "int32", "int64", "decimal", "double", "float", "string", "bool", "date", "binary", "uuid", "uri"]

    private static func describe(_ item: NSManagedObject) -> String { describe { item.value(forKey: $0) } }

    private static func describe(_ value: (String) -> Any?) -> String {
        keys.map { key in
            let text: String
            switch value(key) {
            case nil: text = "nil"
            case let v as Double: text = "0x" + String(v.bitPattern, radix: 16)
            case let v as Float: text = "0x" + String(v.bitPattern, radix: 16)
            case let v as Date: text = "0x" + String(v.timeIntervalSinceReferenceDate.bitPattern, radix: 16)
            case let v as String: text = "\(v.utf8.count):\(v.debugDescription.prefix(80))"
            case let v as Data: text = "\(v.count):\(v.reduce(UInt64(1_469_598_103_934_665_603)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })"
            case let v as URL: text = v.absoluteString
            case let v?: text = "\(v)"
            }
            return "\(key)=\(text)"
        }.joined(separator: " ")
    }
}
