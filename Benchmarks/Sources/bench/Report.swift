import Foundation

struct MachineInfo: Codable {
    var cpus: Int
    var memory_gib: Double
    var cpu_model: String
    var os: String

    static func read() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown"
        return MachineInfo(
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            memory_gib: (Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824 * 10).rounded() / 10,
            cpu_model: model, os: ProcessInfo.processInfo.operatingSystemVersionString)
    }

    var summary: String { "\(cpus) CPUs, \(memory_gib) GiB, \(cpu_model)" }
}

struct Report {
    var records: [Record]
    var jobs: [Job]
    var options: Options
    var machine: MachineInfo

    func record(_ job: Job, _ library: Library) -> Record? {
        records.first { $0.case == job.id && $0.library == library.rawValue }
    }

    func cell(_ record: Record?) -> String {
        guard let record else { return "—" }
        switch record.status {
        case "ok": return record.median_ms.map(formatMilliseconds) ?? "—"
        case "timeout": return "timeout (>\(options.timeoutText) s)"
        case "wrong": return (record.median_ms.map(formatMilliseconds) ?? "") + " (wrong result)"
        default: return record.status
        }
    }

    func formatMilliseconds(_ ms: Double) -> String {
        ms >= 100 ? String(format: "%.0f", ms) : ms >= 10 ? String(format: "%.1f", ms) : String(format: "%.2f", ms)
    }

    func ratio(_ a: Record?, _ b: Record?) -> String {
        guard let a, let b, a.status == "ok", b.status == "ok", let x = a.median_ms, let y = b.median_ms, y > 0 else {
            return "—"
        }
        return String(format: x / y >= 10 ? "%.0f×" : "%.1f×", x / y)
    }

    func table() -> String {
        var lines: [String] = []
        lines.append(
            "OpenCoreData benchmarks: N = \(options.n), medians of \(options.reps) repetitions (ms), "
                + "OpenCoreData store: \(options.sqliteStore ? "SQLite" : "in-memory")")
        lines.append("Machine: \(machine.summary); \(machine.os)")
        lines.append("")
        // The floor's columns only when it ran (`--libraries ...,floor`).
        let floor = options.libraries.contains(.floor)
        lines.append(
            "| case | rows | OpenCoreData ms | raw ms | GRDB records ms | GRDB SQL ms | "
                + (floor ? "floor ms | " : "") + "OCD/raw | OCD/GRDB-records |" + (floor ? " floor/raw |" : ""))
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|" + (floor ? "---:|---:|" : ""))
        for job in jobs {
            let ocd = record(job, .ocd)
            let raw = record(job, .raw)
            let records = record(job, .grdbRecords)
            let sql = record(job, .grdbSQL)
            let least = record(job, .floor)
            lines.append(
                "| \(job.id) \(job.kind.title) | \(job.n) | \(cell(ocd)) | \(cell(raw)) | \(cell(records)) "
                    + "| \(cell(sql)) " + (floor ? "| \(cell(least)) " : "")
                    + "| \(ratio(ocd, raw)) | \(ratio(ocd, records)) |" + (floor ? " \(ratio(least, raw)) |" : ""))
        }
        lines.append("")
        lines.append(
            "Peak resident memory of the measuring process (MB, max over repetitions; "
                + "it includes the process's own baseline, not the file's set-up):"
        )
        lines.append("")
        let libraries = Library.defaults + (floor ? [.floor] : [])
        lines.append("| case | rows | OpenCoreData | raw | GRDB records | GRDB SQL |" + (floor ? " floor |" : ""))
        lines.append("|---|---:|---:|---:|---:|---:|" + (floor ? "---:|" : ""))
        for job in jobs {
            let cells = libraries.map { library -> String in
                guard let r = record(job, library), r.status == "ok", let mb = r.peak_rss_mb else { return "—" }
                return String(format: "%.0f", mb)
            }
            lines.append("| \(job.id) | \(job.n) | " + cells.joined(separator: " | ") + " |")
        }
        lines += contextsTable()
        let notes = records.compactMap { r in r.note.map { "- case \(r.case), \(r.library): \($0)" } }
        if !notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            lines.append(contentsOf: notes)
        }
        return lines.joined(separator: "\n")
    }

    /// Issue 40's targets for the contexts cases (c1–c4), from each run's ``Metric``s (medians over
    /// the repetitions); empty when none of them ran.
    func contextsTable() -> [String] {
        let rows = records.filter { $0.status == "ok" && $0.metrics != nil }
        guard !rows.isEmpty else { return [] }
        func f(_ value: Double?, _ digits: Int = 2) -> String {
            value.map { String(format: "%.\(digits)f", $0) } ?? "—"
        }
        var lines = ["", "Issue 40's contexts cases (medians of the repetitions' figures):", ""]
        lines.append("| case | library | figures | target | met |")
        lines.append("|---|---|---|---|---|")
        for r in rows {
            let m = r.metrics ?? [:]
            var figures = ""
            var target = ""
            var met = ""
            switch r.case {
            case CaseKind.importContexts.rawValue:
                figures = "\(f(m[Metric.rowsPerSecond], 0)) rows/s"
                    + (m[Metric.mergeLag].map { ", view context done merging \(f($0)) ms after the last save" } ?? "")
                target = "all rows imported and merged"
                met = "yes"
            case CaseKind.readers.rawValue:
                figures = "1 reader \(f(m[Metric.oneReader], 0))/s, 2 readers \(f(m[Metric.twoReaders], 0))/s; "
                    + "read median \(f(m[Metric.readMedian])) ms, max \(f(m[Metric.readMax])) ms, "
                    + "started during a save (\(f(m[Metric.readsInSave], 0))) \(f(m[Metric.readInSaveMedian])) ms; "
                    + "save median \(f(m[Metric.saveMedian])) ms"
                let ratio = m[Metric.readersRatio] ?? 0
                // A read held up by a save waits for half the save on average.
                // Judged only on 20 reads or more that started during a save (a preempted read
                // or two would decide it otherwise).
                let waited = (m[Metric.readInSaveMedian] ?? 0) - (m[Metric.readMedian] ?? 0)
                    > 0.25 * (m[Metric.saveMedian] ?? 0)
                let verdict = (m[Metric.readsInSave] ?? 0) < 20
                    ? "too few reads during saves to tell" : waited ? "reads waited" : "no wait seen"
                target = "2 readers ≥ 1.7× 1 reader; reads do not wait for the writer"
                met = "\(f(ratio))× \(ratio >= 1.7 ? "yes" : "no"); " + verdict
            case CaseKind.mergeSave.rawValue:
                figures = "save \(f(m[Metric.save])) ms, merge \(f(m[Metric.merge])) ms"
                let ratio = m[Metric.mergeOverSave] ?? .infinity
                target = "merge ≤ 0.5 × save"
                met = "\(f(ratio))× \(ratio <= 0.5 ? "yes" : "no")"
            case CaseKind.frcInsert.rawValue:
                figures = "delivery median \(f(m[Metric.deliveryMedian], 3)) ms, max \(f(m[Metric.deliveryMax], 3)) ms; "
                    + "\(f(m[Metric.statements], 0)) SQL statements while delivering; performFetch \(f(m[Metric.fetch], 0)) ms"
                let delivery = m[Metric.deliveryMedian] ?? .infinity
                target = "< 1 ms, no re-fetch"
                met = delivery < 1 && m[Metric.statements] == 0 ? "yes" : "no"
            default:
                continue
            }
            lines.append("| \(r.case) | \(r.library) | \(figures) | \(target) | \(met) |")
        }
        return lines
    }

    struct Document: Codable {
        var machine: MachineInfo
        var n: Int
        var reps: Int
        var store: String
        var date: String
        var records: [Record]
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let document = Document(
            machine: machine, n: options.n, reps: options.reps, store: options.sqliteStore ? "sqlite" : "memory",
            date: ISO8601DateFormatter().string(from: Date()), records: records)
        return String(decoding: try encoder.encode(document), as: UTF8.self)
    }
}
