// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .macCatalyst(.v18)],
    products: [
        // `import OpenCoreData`: Apple's Core Data API on every platform Swift runs on.
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
        // `import OpenCoreDataShim`: Apple's Core Data where it exists, OpenCoreData elsewhere.
        .library(name: "OpenCoreDataShim", targets: ["OpenCoreDataShim"]),
        .executable(name: "moods", targets: ["MoodsExample"]),
        // `ocd`: prints models, inspects stores, generates model classes.
        .executable(name: "ocd", targets: ["ocd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Swift runtime entry points the standard library does not expose (the context's registry).
        .systemLibrary(name: "CSwiftRuntime"),
        // Per-thread slots in C11 thread-local storage (`ThreadLocalReference`).
        .target(name: "COpenCoreDataThreadLocal"),
        // The runtime: model, object graph, queries, coordination, stores.
        .target(
            name: "OpenCoreDataRuntime", dependencies: ["CSQLite", "CZlib", "CSwiftRuntime", "COpenCoreDataThreadLocal"]
        ),
        .macro(
            name: "OpenCoreDataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // The front module users import: re-exports Foundation and the runtime, declares the macros.
        .target(name: "OpenCoreData", dependencies: ["OpenCoreDataRuntime", "OpenCoreDataMacros"]),
        .target(name: "OpenCoreDataShim", dependencies: ["OpenCoreData"]),
        .executableTarget(
            name: "MoodsExample", dependencies: ["OpenCoreData"], path: "Examples/Moods",
            resources: [.copy("Moods.xcdatamodeld")]
        ),
        .executableTarget(
            name: "ocd",
            dependencies: [
                "OpenCoreDataRuntime", "CSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "OpenCoreDataTestSupport",
            dependencies: ["OpenCoreData"],
            path: "Tests/OpenCoreDataTestSupport"
        ),
        // A second process for round-trip tests.
        .executableTarget(
            name: "AttributeRoundTrip",
            dependencies: ["OpenCoreData", "OpenCoreDataTestSupport"],
            path: "Tests/AttributeRoundTrip"
        ),
        .testTarget(
            name: "OpenCoreDataTests",
            dependencies: [
                "OpenCoreData", "OpenCoreDataShim", "OpenCoreDataRuntime", "OpenCoreDataTestSupport", "CSQLite",
                "AttributeRoundTrip", "ocd",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "OpenCoreDataMacrosTests",
            dependencies: [
                "OpenCoreDataMacros",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.define("OCD_INVARIANTS", .when(configuration: .debug)))
    target.swiftSettings = settings
}
