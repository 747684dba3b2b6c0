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
        let notes = records.compactMap { r in r.note.map { "- case \(r.case), \(r.library): \($0)" } }
        if !notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            lines.append(contentsOf: notes)
        }
        return lines.joined(separator: "\n")
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
