import Foundation

// `swift run -c release --package-path Benchmarks bench [options]`: every case for every library, each
// repetition on a fresh file in a child process of its own; a table of medians, then the same as JSON.

let options = Options.current
if let phase = options.childPhase { runChild(options, phase: phase) }

/// One row of the results: a case at one size.
struct Job {
    var kind: CaseKind
    var n: Int
    var id: String { kind == .memory ? "9@\(n)" : kind.rawValue }
}

struct Record: Codable {
    var `case`: String
    var title: String
    var library: String
    var n: Int
    var status: String
    var median_ms: Double?
    var peak_rss_mb: Double?
    var reps_ms: [Double]
    var check: Int64?
    var note: String?
    /// The contexts cases' figures (``Metric``), each the median over the repetitions.
    var metrics: [String: Double]?
}

func log(_ message: String) { FileHandle.standardError.write(Data("\(message)\n".utf8)) }

func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Copies every file of `template` into the new folder `destination`.
func copyFolder(_ template: URL, to destination: URL) throws {
    let manager = FileManager.default
    try manager.createDirectory(at: destination, withIntermediateDirectories: true)
    for name in try manager.contentsOfDirectory(atPath: template.path) {
        try manager.copyItem(at: template.appendingPathComponent(name), to: destination.appendingPathComponent(name))
    }
}

let jobs: [Job] = options.cases.flatMap { kind -> [Job] in
    if kind == .memory { return [options.n * 5 / 2, options.n * 5, options.n * 10].map { Job(kind: kind, n: $0) } }
    return [Job(kind: kind, n: kind.isMigration ? options.n * 10 : options.n)]
}
let workRoot = FileManager.default.temporaryDirectory.appendingPathComponent(
    "ocd-bench-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: workRoot, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: workRoot) }

let machine = MachineInfo.read()
log(
    "bench: n=\(options.n) reps=\(options.reps) store=\(options.sqliteStore ? "sqlite" : "memory") "
        + "on \(machine.summary)"
)

var records: [Record] = []
let started = Date()
for job in jobs {
    var reps: [Library: [ChildResult]] = [:]
    var status: [Library: String] = [:]
    var notes: [Library: String] = [:]
    var templates: [Library: URL] = [:]
    let jobRoot = workRoot.appendingPathComponent("case-\(job.id)")
    // OpenCoreData's in-memory store cannot outlive a process: set up and run in the same child.
    func sharesProcess(_ library: Library) -> Bool { library == .ocd && !options.sqliteStore }

    for library in options.libraries {
        if let reason = pendingReason(job.kind, library) {
            status[library] = "pending"
            notes[library] = reason
            continue
        }
        if let note = caveat(job.kind, library) { notes[library] = note }
        guard job.kind.fixture != .none, !sharesProcess(library) else { continue }
        let template = jobRoot.appendingPathComponent("\(library.rawValue)-template")
        try FileManager.default.createDirectory(at: template, withIntermediateDirectories: true)
        let clock = ContinuousClock.now
        switch spawnChild(
            phase: "setup", kind: job.kind, library: library, n: job.n, directory: template, options: options)
        {
        case .ok: templates[library] = template
        case .failed(let message):
            status[library] = "failed"
            notes[library] = "set-up failed: \(message)"
        case .timeout:
            status[library] = "timeout"
            notes[library] = "set-up took over \(options.timeoutText) s"
        }
        log("case \(job.id) \(library.rawValue): set-up \(status[library] ?? "ok") in \(ContinuousClock.now - clock)")
    }

    // Repetition-major, so that a slow spell of a shared machine falls on every library alike.
    for rep in 0..<options.reps {
        for library in options.libraries where status[library] == nil {
            let directory = jobRoot.appendingPathComponent("\(library.rawValue)-rep\(rep)")
            if let template = templates[library] {
                try copyFolder(template, to: directory)
            } else {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            let phase = sharesProcess(library) ? "both" : "run"
            let outcome = spawnChild(
                phase: phase, kind: job.kind, library: library, n: job.n, directory: directory, options: options)
            try? FileManager.default.removeItem(at: directory)
            switch outcome {
            case .ok(let result):
                reps[library, default: []].append(result)
                log(
                    "case \(job.id) \(library.rawValue) rep \(rep + 1)/\(options.reps): "
                        + "\(String(format: "%.1f", result.ms)) ms, peak \(String(format: "%.0f", result.peakRSSMB)) MB"
                        + (result.metrics.map { " " + Metric.summary($0) } ?? "")
                )
            case .failed(let message):
                status[library] = "failed"
                notes[library] = message
                log("case \(job.id) \(library.rawValue) rep \(rep + 1): FAILED \(message)")
            case .timeout:
                status[library] = "timeout"
                notes[library] = "a run took over \(options.timeoutText) s and was stopped"
                log("case \(job.id) \(library.rawValue) rep \(rep + 1): TIMEOUT after \(options.timeoutText) s")
            }
        }
    }
    try? FileManager.default.removeItem(at: jobRoot)

    // The answer every library must give: raw SQLite's, or the first other baseline that ran.
    let referenceLibrary = [Library.raw, .grdbSQL, .grdbRecords].first { reps[$0]?.first != nil }
    let reference = referenceLibrary.flatMap { reps[$0]?.first?.check }
    for library in options.libraries {
        let results = reps[library] ?? []
        var note = notes[library]
        var wrong = false
        if Set(results.map(\.check)).count > 1 {
            note = [note, "checksums differ between repetitions"].compactMap { $0 }.joined(separator: "; ")
            wrong = true
        }
        if let reference, let referenceLibrary, let check = results.first?.check, check != reference {
            note = [note, "checksum \(check) differs from \(referenceLibrary.rawValue)'s \(reference): wrong results"]
                .compactMap { $0 }.joined(separator: "; ")
            wrong = true
        }
        records.append(
            Record(
                case: job.id, title: job.kind.title, library: library.rawValue, n: job.n,
                status: status[library] ?? (wrong ? "wrong" : "ok"), median_ms: median(results.map(\.ms)),
                peak_rss_mb: results.map(\.peakRSSMB).max(), reps_ms: results.map(\.ms), check: results.first?.check,
                note: note, metrics: Metric.medians(results.compactMap(\.metrics))))
    }
}

let report = Report(records: records, jobs: jobs, options: options, machine: machine)
print(report.table())
let json = try report.json()
print(json)
if let path = options.jsonPath {
    try Data(json.utf8).write(to: URL(fileURLWithPath: path))
    log("bench: wrote \(path)")
}
if options.strict {
    let bad = records.filter { !["ok", "pending"].contains($0.status) }
    if !bad.isEmpty {
        log("bench: --strict: \(bad.count) result(s) failed, timed out or wrong")
        try? FileManager.default.removeItem(at: workRoot)
        exit(1)
    }
}
log("bench: done in \(String(format: "%.0f", Date().timeIntervalSince(started))) s")
