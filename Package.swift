// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

// Where the Swift runtime internals the package uses are known to hold (docs/runtime-internals.md):
// Linux and Apple's platforms. Elsewhere (Windows, Android, WASI, ...) `OCD_PORTABLE_RUNTIME` is
// defined and plain Swift takes their place; it can be defined by hand too, with
// `swift build -Xswiftc -DOCD_PORTABLE_RUNTIME`, or with the environment variable
// `OCD_PORTABLE_RUNTIME=1` (which leaves the dependencies' build settings alone).
let runtimeInternalsPlatforms: [Platform] = [.linux, .macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS]
let portableRuntimePlatforms: [Platform] = [.windows, .android, .wasi, .openbsd]
let portableRuntimeRequested = Context.environment["OCD_PORTABLE_RUNTIME"].map { !$0.isEmpty && $0 != "0" } ?? false
// ThreadSanitizer runs (`swift test --sanitize=thread`) set `OCD_TSAN=1` (or `-Xswiftc -DOCD_TSAN`):
// the package's lock becomes one ThreadSanitizer sees (Support/Locked.swift, docs/runtime-internals.md).
let threadSanitizerBuild = Context.environment["OCD_TSAN"].map { !$0.isEmpty && $0 != "0" } ?? false

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
        // Swift runtime entry points the standard library does not expose (docs/runtime-internals.md).
        .systemLibrary(name: "CSwiftRuntime"),
        // Per-thread slots in C11 thread-local storage (`ThreadLocalReference`).
        .target(name: "COpenCoreDataThreadLocal"),
        // The runtime: model, object graph, queries, coordination, stores.
        .target(
            name: "OpenCoreDataRuntime",
            dependencies: [
                "CSQLite", "CZlib", "COpenCoreDataThreadLocal",
                .target(name: "CSwiftRuntime", condition: .when(platforms: runtimeInternalsPlatforms)),
            ]
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
            dependencies: ["OpenCoreData", "OpenCoreDataRuntime"],
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
    settings.append(
        portableRuntimeRequested
            ? .define("OCD_PORTABLE_RUNTIME") : .define("OCD_PORTABLE_RUNTIME", .when(platforms: portableRuntimePlatforms)))
    if threadSanitizerBuild { settings.append(.define("OCD_TSAN")) }
    target.swiftSettings = settings
}
