import Foundation

/// The command line. The parent process reads the user's options; a child also gets `--child PHASE`.
struct Options: Sendable {
    var n = 100_000
    var reps = 5
    var cases: [CaseKind] = CaseKind.allCases
    var libraries: [Library] = Library.defaults
    var jsonPath: String?
    var sqliteStore = true
    var astPredicates = false
    /// Case 9 for OpenCoreData: `fetchBatched(_:)` (lazy, default) or `fetch(_:)`'s `[T]` of faults.
    var batchedArray = false
    var timeoutSeconds = 150.0
    var strict = false
    // Child only.
    var childPhase: String?
    var directory: String?

    static let current = parse(Array(CommandLine.arguments.dropFirst()))

    static let usage = """
        usage: bench [--n N] [--reps R] [--cases 1,2,5,8p,9,c2] [--libraries ocd,raw,grdb-records,grdb-sql,floor]
                     [--json FILE] [--store sqlite|memory] [--predicates format|ast] [--batched lazy|array]
                     [--timeout SECONDS]

          --n N          rows per case (default 100000); case 4 does N/10 lookups, case 7 N/10 moods,
                         case 8 N/100 countries of 100 moods, case 9 2.5N, 5N and 10N rows
          --reps R       repetitions per case and library, each on a fresh file (default 5); medians reported
          --cases        which cases (default all: 1,2,3,4,5,6,7,8,8p,9,m1,m2,m3,c1,c2,c3,c4); c1–c4 are
                         issue 40's: 4 importers merged into a view context, 1 vs 2 readers beside a
                         writer, a did-save's merge against the save, one insert into an N-row FRC
          --libraries    which libraries (default ocd,raw,grdb-records,grdb-sql); floor, only by request, is
                         the least an object graph does on Apple's table (cases 2, 4 and 5)
          --json FILE    also write the results as JSON to FILE
          --store        OpenCoreData's store: sqlite (default) or memory (NSInMemoryStoreType)
          --predicates   how OpenCoreData predicates are built: format (NSPredicate(format:), default) or ast
          --batched      OpenCoreData's case 9: lazy (fetchBatched(_:), default) or array (fetch(_:), a
                         fault per row up front)
          --timeout      seconds before one run is stopped and reported as a timeout (default 150)
          --strict       exit with status 1 if a run failed, timed out or gave a wrong result (for CI)
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) -> String {
            guard let value = iterator.next() else { fail("\(flag) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--n", "--only-n": options.n = parsed(value(argument), argument)
            case "--reps": options.reps = max(1, parsed(value(argument), argument))
            case "--cases", "--only-case":
                options.cases = value(argument).split(separator: ",").map {
                    parsed($0.trimmingCharacters(in: .whitespaces).lowercased(), argument)
                }
            case "--libraries", "--library":
                options.libraries = value(argument).split(separator: ",").map { name in
                    switch name.lowercased() {
                    case "ocd", "opencoredata": .ocd
                    case "raw", "sqlite": .raw
                    case "grdb-records", "grdbrecords", "records": .grdbRecords
                    case "grdb-sql", "grdbsql": .grdbSQL
                    case "floor": .floor
                    default: fail("unknown library \(name)")
                    }
                }
            case "--json": options.jsonPath = value(argument)
            case "--store":
                switch value(argument) {
                case "sqlite": options.sqliteStore = true
                case "memory": options.sqliteStore = false
                default: fail("--store is sqlite or memory")
                }
            case "--predicates":
                switch value(argument) {
                case "format": options.astPredicates = false
                case "ast": options.astPredicates = true
                default: fail("--predicates is format or ast")
                }
            case "--batched":
                switch value(argument) {
                case "lazy": options.batchedArray = false
                case "array": options.batchedArray = true
                default: fail("--batched is lazy or array")
                }
            case "--timeout": options.timeoutSeconds = parsed(value(argument), argument)
            case "--strict": options.strict = true
            case "--child": options.childPhase = value(argument)
            case "--dir": options.directory = value(argument)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
        if options.n < 1 { fail("--n must be at least 1") }
        return options
    }

    var timeoutText: String { String(format: "%g", timeoutSeconds) }

    /// The arguments that give a child the same settings as this process.
    var childSettings: [String] {
        [
            "--store", sqliteStore ? "sqlite" : "memory", "--predicates", astPredicates ? "ast" : "format",
            "--batched", batchedArray ? "array" : "lazy",
        ]
    }
}

/// `text` as a `T`, or the usage and exit.
func parsed<T: LosslessStringConvertible>(_ text: some StringProtocol, _ flag: String) -> T {
    guard let value = T(String(text)) else { fail("\(flag): cannot read \(text)") }
    return value
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench: \(message)\n\(Options.usage)\n".utf8))
    exit(2)
}
