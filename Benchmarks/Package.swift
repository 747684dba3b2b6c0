// swift-tools-version:6.1
import PackageDescription

// Benchmarks for OpenCoreData beside raw SQLite (the C API) and GRDB.swift, in one run.
// A nested package so that the library itself never depends on GRDB.
let package = Package(
    name: "OpenCoreDataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, so the dependency resolves whatever the checkout folder is called.
        .package(name: "OpenCoreData", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // Raw SQLite for the baseline; its own module name so it cannot clash with the library's `CSQLite`.
        .systemLibrary(
            name: "CSQLiteBench",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                "CSQLiteBench",
                .product(name: "OpenCoreData", package: "OpenCoreData"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
