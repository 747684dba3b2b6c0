import Foundation

/// The cases. `8p` is case 8 with prefetching; case 9 runs once per row count.
enum CaseKind: String, CaseIterable, Sendable, LosslessStringConvertible {
    init?(_ description: String) { self.init(rawValue: description) }
    var description: String { rawValue }

    case insert = "1"
    case fetchAll = "2"
    case faults = "3"
    case lookups = "4"
    case update = "5"
    case delete = "6"
    case findOrCreate = "7"
    case traverse = "8"
    case traversePrefetch = "8p"
    case memory = "9"
    case migrateAddAttribute = "m1"
    case migrateRenameAttribute = "m2"
    case migrateAddEntity = "m3"

    var title: String {
        switch self {
        case .insert: "insert N, save once"
        case .fetchAll: "fetch N materialized, read all"
        case .faults: "fetch N faults, touch one attr"
        case .lookups: "N/10 lookups by indexed attr"
        case .update: "change one attr of N, save"
        case .delete: "delete N, save"
        case .findOrCreate: "seed 004: N/10 moods findOrCreate"
        case .traverse: "N/100 countries → 100 moods each"
        case .traversePrefetch: "same, with prefetching"
        case .memory: "fetch rows as faults, batched"
        case .migrateAddAttribute: "migrate 10N rows: add an attribute"
        case .migrateRenameAttribute: "migrate 10N rows: rename an attribute"
        case .migrateAddEntity: "migrate 10N rows: add an entity with a relationship"
        }
    }

    /// What the case needs in the file before the measured part starts.
    enum Fixture { case none, items, countriesAndMoods }
    var fixture: Fixture {
        switch self {
        case .insert, .findOrCreate: .none
        case .fetchAll, .faults, .lookups, .update, .delete, .memory: .items
        case .migrateAddAttribute, .migrateRenameAttribute, .migrateAddEntity: .items
        case .traverse, .traversePrefetch: .countriesAndMoods
        }
    }

    /// Whether the case changes its file (then every repetition needs its own copy).
    var writes: Bool { self == .insert || self == .update || self == .delete || self == .findOrCreate || isMigration }

    /// The lightweight-migration cases (issue 8): the store holds 10N items (1,000,000 at N =
    /// 100,000) written with the first model; the measured part opens it with the second.
    var isMigration: Bool { self == .migrateAddAttribute || self == .migrateRenameAttribute || self == .migrateAddEntity }
}

enum Library: String, CaseIterable, Sendable {
    case ocd = "OpenCoreData"
    case raw = "raw"
    case grdbRecords = "GRDB-records"
    case grdbSQL = "GRDB-SQL"
    /// The least an object graph does on Apple's table (``FloorSubject``): cases 2, 4 and 5, by
    /// request.
    case floor = "floor"

    /// What runs when `--libraries` is not given.
    static let defaults: [Library] = [.ocd, .raw, .grdbRecords, .grdbSQL]
}

/// The measured part of one run: elapsed time and a checksum the libraries must agree on.
struct Measurement {
    var milliseconds: Double
    var check: Int64
}

/// Times `body`, which returns the run's checksum.
func measure(_ body: () throws -> Int64) rethrows -> Measurement {
    let clock = ContinuousClock()
    let start = clock.now
    let check = try body()
    let elapsed = start.duration(to: clock.now)
    let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    return Measurement(milliseconds: ms, check: check)
}

/// One library's implementation of the cases.
protocol Subject {
    /// Fills `directory` with what `kind` reads (untimed). Runs in its own process.
    func setUp(_ kind: CaseKind, sizes: Sizes, directory: URL) throws
    /// Opens the file (untimed), then runs and times the measured part.
    func run(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement
}

/// Why a library has no result for a case, when it has none by design.
func pendingReason(_ kind: CaseKind, _ library: Library) -> String? {
    // The libraries have every case since prefetching (8p) and fetchBatchSize (9) landed (issue 5).
    if library == .floor, ![.fetchAll, .lookups, .update].contains(kind) {
        return "the floor measures cases 2, 4 and 5 only"
    }
    return nil
}

/// A note printed and written beside a result that is measured but not what the case means yet.
func caveat(_ kind: CaseKind, _ library: Library) -> String? {
    nil
}
