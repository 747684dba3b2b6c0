import CSQLiteBench
import Foundation
import Synchronization

// What the contexts cases (c1–c4) share across libraries: threads that are joined, a clock every
// thread reads alike, the readers case's driver and its analysis, and a count of SQL statements.

/// Sizes of the contexts cases, from `--n`: at N = 100,000 they are the issue's figures (saves of
/// 1,000, 10,000 merged objects, a 100,000-row controller); at the smoke run's N = 1,000 they stay
/// small so every case runs in well under a second.
extension Sizes {
    /// c1: rows a save of an importer holds (1,000 at N = 100,000).
    var importSave: Int { max(1, min(1000, n / 40)) }
    /// c1: the importers (4), each importing its share of N.
    static let importers = 4
    /// c2: rows a read fetches and a writer's save changes: a block of ids (1,000 at N = 100,000).
    var readBlock: Int { max(1, min(1000, n / 100)) }
    var readBlocks: Int { max(1, n / readBlock) }
    /// c2: the writer starts a save every 20 ms (50 saves of 1,000 rows a second). A writer that
    /// never paused would keep one of this machine's two cores, and no store could then give two
    /// readers more than 1.33× one reader's throughput.
    static let writerPeriod = 0.020
    /// c2: reads each reader makes in each phase (500 at N = 100,000).
    var readsPerReader: Int { max(10, n / 200) }
    /// c3: objects saved and merged (10,000 at N = 100,000), and the rounds whose medians are taken.
    var mergeObjects: Int { max(1, n / 10) }
    static let mergeRounds = 5
    /// c4: single inserts timed (200 at N = 100,000).
    var frcInserts: Int { max(10, min(200, n / 500)) }
    /// c4: the sections (`rank`, 0..<1000, as `ItemValues` makes it).
    var frcSections: Int { min(n, 1000) }
    /// c4: rows the fixture has in section `rank`.
    func frcRows(inSection rank: Int) -> Int { n / 1000 + (rank < n % 1000 ? 1 : 0) }

    /// c2: the block the `j`th read of reader `r` fetches, spread over the table.
    func readBlock(reader r: Int, read j: Int) -> Int { (j &* 7 &+ r &* 13) % readBlocks }
}

/// The keys of ``Measurement/metrics``, with the target each is held to.
enum Metric {
    static let rowsPerSecond = "rows_per_s"
    /// c1: from the last importer's last save to the view context's having merged every row.
    static let mergeLag = "merge_lag_ms"
    static let oneReader = "one_reader_reads_per_s"
    static let twoReaders = "two_readers_reads_per_s"
    /// c2: two readers' throughput over one's (target ≥ 1.7).
    static let readersRatio = "readers_ratio"
    static let readMedian = "read_median_ms"
    static let readMax = "read_max_ms"
    /// c2: the median of the reads that started while the writer was saving.
    static let readInSaveMedian = "read_in_save_median_ms"
    static let readsInSave = "reads_in_save"
    static let saveMedian = "save_median_ms"
    static let saveMax = "save_max_ms"
    /// c3: medians over the rounds; their ratio (target ≤ 0.5).
    static let save = "save_ms"
    static let merge = "merge_ms"
    static let mergeOverSave = "merge_over_save"
    /// c4: from `processPendingChanges()` to the delegate's `didChange` (target < 1 ms).
    static let deliveryMedian = "delivery_median_ms"
    static let deliveryMax = "delivery_max_ms"
    /// c4: SQL statements run while the change was delivered (0: no re-fetch).
    static let statements = "statements_in_delivery"
    static let fetch = "perform_fetch_ms"

    /// The median of each key over the repetitions.
    static func medians(_ runs: [[String: Double]]) -> [String: Double]? {
        guard !runs.isEmpty else { return nil }
        var result: [String: Double] = [:]
        for key in Set(runs.flatMap(\.keys)) { result[key] = median(runs.compactMap { $0[key] }) }
        return result
    }

    /// One line for the log.
    static func summary(_ metrics: [String: Double]) -> String {
        metrics.keys.sorted().map { "\($0)=\(String(format: "%.3g", metrics[$0]!))" }.joined(separator: " ")
    }
}

/// Seconds on one monotonic clock since the run started, comparable between threads.
struct Timeline: Sendable {
    let origin = ContinuousClock.now
    func now() -> Double {
        let d = origin.duration(to: ContinuousClock.now)
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

/// A start and an end on a ``Timeline``, in seconds.
struct Span: Sendable {
    var start: Double
    var end: Double
    var milliseconds: Double { (end - start) * 1000 }
}

/// Threads started at once and joined: `body(i)` runs on thread `i`; the first error is rethrown.
final class Workers: Sendable {
    private let group = DispatchGroup()
    private let errors = Mutex<[String]>([])

    init(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) {
        for i in 0..<count {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                do { try body(i) } catch { errors.withLock { $0.append("thread \(i): \(error)") } }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    var finished: Bool { group.wait(timeout: .now()) == .success }

    func join() throws {
        group.wait()
        if let first = errors.withLock({ $0.first }) { throw BenchError(first) }
    }
}

/// What each side of the readers case (c2) does, on a thread of its own: `makeReader` and
/// `makeWriter` are called on that thread and return the work it then repeats (so that a
/// connection or context never crosses threads).
struct ReadersSides: Sendable {
    /// Returns a read of block `b`: the rows it read, and whether they were consistent (every row
    /// of the block carries the same number of the writer's saves).
    var makeReader: @Sendable () throws -> (_ block: Int) throws -> (rows: Int, consistent: Bool)
    /// Returns one save of the writer: block `b`'s `score` each + 1, in one transaction; it returns
    /// the span of the save itself (what a reader could wait on).
    var makeWriter: @Sendable () throws -> (_ block: Int, _ timeline: Timeline) throws -> Span
}

/// The readers case: a writer saves block after block the whole time (one every
/// ``Sizes/writerPeriod``); first one reader makes its
/// reads, then two readers make theirs each. Throughput is reads per second of each phase; every
/// read is timed, and so is every save, to tell whether reads that started during a save took
/// longer (they waited for it).
func runReadersCase(_ sides: ReadersSides, sizes: Sizes) throws -> Measurement {
    /// What the threads share.
    final class Shared: Sendable {
        let stop = Atomic<Bool>(false)
        let saves = Mutex<[Span]>([])
        let reads = Mutex<[Span]>([])
        let rows = Atomic<Int>(0)
        let inconsistent = Atomic<Int>(0)
        let writerStarted = DispatchSemaphore(value: 0)
    }
    let shared = Shared()
    let timeline = Timeline()
    let writer = Workers(1) { _ in
        let save = try sides.makeWriter()
        var s = 0
        repeat {
            let step = timeline.now()
            let span = try save(s % sizes.readBlocks, timeline)
            shared.saves.withLock { $0.append(span) }
            if s == 0 { shared.writerStarted.signal() }
            s += 1
            // Paced, so that the writer leaves the readers the cores a parallel store could give them.
            let pause = step + Sizes.writerPeriod - timeline.now()
            if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        } while !shared.stop.load(ordering: .relaxed)
    }
    // The readers start against a writer already at work (or one that failed: join reports it).
    while shared.writerStarted.wait(timeout: .now() + 0.1) == .timedOut {
        if writer.finished { try writer.join() }
    }
    func phase(_ readers: Int) throws -> Double {
        let start = timeline.now()
        try Workers(readers) { r in
            let read = try sides.makeReader()
            var spans: [Span] = []
            spans.reserveCapacity(sizes.readsPerReader)
            for j in 0..<sizes.readsPerReader {
                let begin = timeline.now()
                let result = try read(sizes.readBlock(reader: r, read: j))
                spans.append(Span(start: begin, end: timeline.now()))
                shared.rows.add(result.rows, ordering: .relaxed)
                if !result.consistent { shared.inconsistent.add(1, ordering: .relaxed) }
            }
            shared.reads.withLock { $0 += spans }
        }.join()
        return timeline.now() - start
    }
    let started = ContinuousClock.now
    let oneSeconds: Double
    let twoSeconds: Double
    do {
        oneSeconds = try phase(1)
        twoSeconds = try phase(2)
    } catch {
        shared.stop.store(true, ordering: .relaxed)
        try? writer.join()
        throw error
    }
    shared.stop.store(true, ordering: .relaxed)
    try writer.join()
    let elapsed = started.duration(to: ContinuousClock.now)
    let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15

    let expectedRows = 3 * sizes.readsPerReader * sizes.readBlock
    let rows = shared.rows.load(ordering: .relaxed)
    guard rows == expectedRows else { throw BenchError("the readers read \(rows) rows, expected \(expectedRows)") }
    let inconsistent = shared.inconsistent.load(ordering: .relaxed)
    guard inconsistent == 0 else { throw BenchError("\(inconsistent) reads saw a block half saved") }
    let saveSpans = shared.saves.withLock { $0 }.sorted { $0.start < $1.start }
    let readSpans = shared.reads.withLock { $0 }
    // A read started during a save if the last save that started before it had not ended.
    let duringSave = readSpans.filter { read in
        var low = 0
        var high = saveSpans.count
        while low < high {
            let mid = (low + high) / 2
            if saveSpans[mid].start <= read.start { low = mid + 1 } else { high = mid }
        }
        return low > 0 && saveSpans[low - 1].end > read.start
    }
    let one = Double(sizes.readsPerReader) / oneSeconds
    let two = Double(2 * sizes.readsPerReader) / twoSeconds
    var metrics: [String: Double] = [
        Metric.oneReader: one, Metric.twoReaders: two, Metric.readersRatio: two / one,
        Metric.readMedian: median(readSpans.map(\.milliseconds)) ?? 0,
        Metric.readMax: readSpans.map(\.milliseconds).max() ?? 0,
        Metric.readsInSave: Double(duringSave.count),
        Metric.saveMedian: median(saveSpans.map(\.milliseconds)) ?? 0,
        Metric.saveMax: saveSpans.map(\.milliseconds).max() ?? 0,
    ]
    if let inSave = median(duringSave.map(\.milliseconds)) { metrics[Metric.readInSaveMedian] = inSave }
    return Measurement(milliseconds: ms, check: Int64(expectedRows), metrics: metrics)
}

/// Counts the SQL statements that start on every SQLite connection opened after ``install()`` in
/// this process (an auto extension turns `sqlite3_trace_v2` on for each), the library's included:
/// it links the same `libsqlite3`. The FRC case (c4) checks with it that a change reaches the
/// delegate without a query.
enum StatementCounter {
    static let count = Atomic<Int>(0)

    static func install() {
        typealias EntryPoint = @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, OpaquePointer?
        ) -> Int32
        let entry: EntryPoint = { db, _, _ in
            sqlite3_trace_v2(
                db, UInt32(SQLITE_TRACE_STMT),
                { _, _, _, _ in
                    StatementCounter.count.add(1, ordering: .relaxed)
                    return 0
                }, nil)
            return SQLITE_OK
        }
        // SQLite declares the entry point `void (*)(void)` and calls it with the three arguments.
        sqlite3_auto_extension(unsafeBitCast(entry, to: (@convention(c) () -> Void).self))
    }
}
