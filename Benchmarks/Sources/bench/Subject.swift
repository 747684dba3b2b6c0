import Foundation

/// The cases. `8p` is case 8 with prefetching; case 9 runs once per row count; c1–c4 are issue 40's
/// many-contexts cases (`Contexts.swift`, `ContextsPeers.swift`).
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
    case importContexts = "c1"
    case readers = "c2"
    case mergeSave = "c3"
    case frcInsert = "c4"

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
        case .importContexts: "4 importers, saves of 1,000, merged into view"
        case .readers: "1 vs 2 readers while a writer saves"
        case .mergeSave: "merge did-save of N/10 updates vs the save"
        case .frcInsert: "one insert into an N-row FRC with sections"
        }
    }

    /// What the case needs in the file before the measured part starts.
    enum Fixture { case none, items, countriesAndMoods }
    var fixture: Fixture {
        switch self {
        case .insert, .findOrCreate, .importContexts: .none
        case .fetchAll, .faults, .lookups, .update, .delete, .memory: .items
        case .migrateAddAttribute, .migrateRenameAttribute, .migrateAddEntity: .items
        case .traverse, .traversePrefetch: .countriesAndMoods
        case .readers, .mergeSave, .frcInsert: .items
        }
    }

    /// Whether the case changes its file (then every repetition needs its own copy).
    var writes: Bool {
        self == .insert || self == .update || self == .delete || self == .findOrCreate || isMigration || isContexts
    }

    /// The lightweight-migration cases (issue 8): the store holds 10N items (1,000,000 at N =
    /// 100,000) written with the first model; the measured part opens it with the second.
    var isMigration: Bool { self == .migrateAddAttribute || self == .migrateRenameAttribute || self == .migrateAddEntity }

    /// Issue 40's cases: several contexts (or connections) at once, merging, and the fetched results
    /// controller. Each reports figures of its own besides its time (``Measurement/metrics``).
    var isContexts: Bool { self == .importContexts || self == .readers || self == .mergeSave || self == .frcInsert }
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

/// The measured part of one run: elapsed time and a checksum the libraries must agree on, and for
/// the contexts cases the figures their targets are stated in (``Metric``).
struct Measurement {
    var milliseconds: Double
    var check: Int64
    var metrics: [String: Double] = [:]
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
    if [.mergeSave, .frcInsert].contains(kind), library != .ocd {
        return kind == .mergeSave
            ? "a context's merge of another's did-save: OpenCoreData only"
            : "NSFetchedResultsController: OpenCoreData only"
    }
    if library == .floor, ![.fetchAll, .lookups, .update].contains(kind) {
        return "the floor measures cases 2, 4 and 5 only"
    }
    return nil
}

/// A note printed and written beside a result that is measured but not what the case means yet.
func caveat(_ kind: CaseKind, _ library: Library) -> String? {
    nil
}
