import Foundation
import OpenCoreData

/// What a child process prints on its last line of standard output.
struct ChildResult: Codable {
    var ms: Double
    var check: Int64
    var peakRSSMB: Double
    /// The contexts cases' own figures (``Metric``); nil for the other cases.
    var metrics: [String: Double]?
}

func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // kilobytes on Linux
}

func subject(_ library: Library, _ options: Options) -> any Subject {
    switch library {
    case .ocd: OpenCoreDataSubject(storeType: options.sqliteStore ? NSSQLiteStoreType : NSInMemoryStoreType)
    case .raw: RawSubject()
    case .grdbRecords: GRDBRecordsSubject()
    case .grdbSQL: GRDBSQLSubject()
    case .floor: FloorSubject()
    }
}

/// The child side: one phase of one case for one library, in its own process, so that peak memory
/// belongs to that run alone.
func runChild(_ options: Options, phase: String) -> Never {
    guard let kind = options.cases.first, let library = options.libraries.first, let directory = options.directory
    else {
        fail("a child needs --only-case, --library and --dir")
    }
    let sizes = Sizes(n: options.n)
    let url = URL(fileURLWithPath: directory, isDirectory: true)
    let target = subject(library, options)
    do {
        if phase == "setup" || phase == "both" { try target.setUp(kind, sizes: sizes, directory: url) }
        if phase == "run" || phase == "both" {
            let measurement = try target.run(kind, sizes: sizes, directory: url)
            let result = ChildResult(
                ms: measurement.milliseconds, check: measurement.check, peakRSSMB: peakRSSMegabytes(),
                metrics: measurement.metrics.isEmpty ? nil : measurement.metrics)
            let json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
            print("RESULT \(json)")
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(
            Data("bench child (case \(kind.rawValue), \(library.rawValue)): \(error)\n".utf8))
        print("ERROR \(error)".replacingOccurrences(of: "\n", with: " "))
        exit(1)
    }
}

enum ChildOutcome {
    case ok(ChildResult)
    case failed(String)
    case timeout
}

/// Runs this executable again as a child and waits for it, at most `timeout` seconds.
func spawnChild(
    phase: String, kind: CaseKind, library: Library, n: Int, directory: URL, options: Options
) -> ChildOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments =
        [
            "--child", phase, "--only-case", kind.rawValue, "--library", library.rawValue, "--n", String(n),
            "--dir", directory.path,
        ] + options.childSettings
    let output = Pipe()
    process.standardOutput = output
    let finished = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in finished.signal() }
    do { try process.run() } catch { return .failed("could not start a child: \(error)") }
    // Read while the child runs so that it never blocks on a full pipe.
    let collected = Collected()
    let reader = Thread {
        collected.set(output.fileHandleForReading.readDataToEndOfFile())
    }
    reader.start()
    if finished.wait(timeout: .now() + options.timeoutSeconds) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        finished.wait()
        return .timeout
    }
    let data = collected.wait()
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
    if let line = lines.last(where: { $0.hasPrefix("RESULT ") }),
        let result = try? JSONDecoder().decode(ChildResult.self, from: Data(line.dropFirst(7).utf8))
    {
        return .ok(result)
    }
    if process.terminationStatus == 0 && phase == "setup" { return .ok(ChildResult(ms: 0, check: 0, peakRSSMB: 0)) }
    if let line = lines.last(where: { $0.hasPrefix("ERROR ") }) { return .failed(String(line.dropFirst(6))) }
    return .failed(
        process.terminationReason == .uncaughtSignal
            ? "child killed by signal \(process.terminationStatus)"
            : "child exited with status \(process.terminationStatus)"
    )
}

/// Data handed from the reader thread.
final class Collected: @unchecked Sendable {
    private let lock = NSCondition()
    private var data: Data?
    func set(_ value: Data) {
        lock.lock()
        data = value
        lock.signal()
        lock.unlock()
    }
    func wait() -> Data {
        lock.lock()
        while data == nil { lock.wait() }
        defer { lock.unlock() }
        return data!
    }
}
