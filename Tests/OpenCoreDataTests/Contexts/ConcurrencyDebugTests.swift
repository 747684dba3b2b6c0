import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing

/// The concurrency debug switch, Apple's `-com.apple.CoreData.ConcurrencyDebug 1`
/// (`OCD_CONCURRENCY_DEBUG=1` here). Apple's rule: a private-queue context is used only inside its
/// `perform`/`performAndWait` blocks, a main-queue context on the main thread or inside them; with
/// the switch on, a use elsewhere stops the program. A trap cannot be caught in this process, so
/// the rule is tested through its predicate (`_isOnItsQueue`), and the trap in a child process:
/// this test binary run again on one test of ``ConcurrencyDebugChild``, with the switch on.
@Suite("Concurrency debug switch")
struct ConcurrencyDebugTests {
    /// Whether this is CI's ThreadSanitizer build (`OCD_TSAN`, docs/runtime-internals.md).
    #if OCD_TSAN
    private static let underThreadSanitizer = true
    #else
    private static let underThreadSanitizer = false
    #endif
    /// Why the child-process tests do not run there: they start no threads of their own, and a
    /// child of a ThreadSanitizer build was once left unreaped, so `waitUntilExit()` never returned.
    private static let childProcessesUnderThreadSanitizer: Comment =
        "a child of a ThreadSanitizer build was once never reaped"

    @Test func aPrivateQueueContextIsOnItsQueueOnlyInsideItsBlocks() async throws {
        let store = try TestStore(NSInMemoryStoreType)
        let context = store.newContext(), other = store.newContext()
        #expect(!context._isOnItsQueue)
        #expect(context.performAndWait { context._isOnItsQueue })
        #expect(await context.perform { context._isOnItsQueue })
        // Inside another context's block (Apple: still a violation), and inside a nested block.
        #expect(!other.performAndWait { context._isOnItsQueue })
        #expect(other.performAndWait { context.performAndWait { context._isOnItsQueue } })
        #expect(context.performAndWait { other.performAndWait { !context._isOnItsQueue } })
    }

    @Test func aMainQueueContextIsOnItsQueueInsideItsBlocksOrOnTheMainThread() throws {
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        #expect(context.performAndWait { context._isOnItsQueue })
        // A thread of its own, surely not the main one.
        let answer = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            answer.withLock { $0 = context._isOnItsQueue }
            done.signal()
        }.start()
        done.wait()
        #expect(answer.withLock { $0 } == false)
        #expect(ConcurrencyDebug.isEnabled == false)  // this process runs with the switch off
    }

    @Test(.disabled(if: Self.underThreadSanitizer, Self.childProcessesUnderThreadSanitizer))
    func withTheSwitchOnAFetchOutsidePerformTrapsNamingTheCall() throws {
        let child = try runChild("fetchOutsidePerform", environment: ["OCD_CONCURRENCY_DEBUG": "1"])
        // Stopped: by the trap's signal, or, under ThreadSanitizer (whose runtime handles the
        // signal and exits), with a failing status.
        #expect(child.reason == .uncaughtSignal || child.status != 0)
        #expect(child.error.contains("CoreData: annotation: Core Data multi-threading assertions enabled."))
        #expect(child.error.contains("multithreading violation"))
        #expect(child.error.contains("fetch(_:) on context"))
        #expect(child.error.contains("a private-queue context"))
        #expect(!child.output.contains("fetched outside perform"))  // it stopped before
    }

    @Test(.disabled(if: Self.underThreadSanitizer, Self.childProcessesUnderThreadSanitizer))
    func withApplesNameAPropertyReadOutsidePerformTrapsNamingTheObject() throws {
        let child = try runChild("propertyOutsidePerform", environment: ["com.apple.CoreData.ConcurrencyDebug": "1"])
        #expect(child.reason == .uncaughtSignal || child.status != 0)
        #expect(child.error.contains("value(forKey:) on NSManagedObject x-coredata://"))
    }

    @Test(.disabled(if: Self.underThreadSanitizer, Self.childProcessesUnderThreadSanitizer))
    func withTheSwitchOnUseInsideBlocksRunsThrough() throws {
        let child = try runChild("useInsideBlocks", environment: ["OCD_CONCURRENCY_DEBUG": "1"])
        #expect(child.status == 0, "\(child.error)")
        #expect(child.reason == .exit)
        #expect(child.output.contains("used inside blocks: 3 departments"))
        #expect(!child.error.contains("multithreading violation"))
    }

    @Test(.disabled(if: Self.underThreadSanitizer, Self.childProcessesUnderThreadSanitizer))
    func withTheSwitchOffAFetchOutsidePerformRunsThrough() throws {
        let child = try runChild("fetchOutsidePerform", environment: ["OCD_CONCURRENCY_DEBUG": "0"])
        #expect(child.status == 0, "\(child.error)")
        #expect(child.output.contains("fetched outside perform"))
        #expect(!child.error.contains("multi-threading assertions enabled"))
    }

    /// Runs this test binary on ``ConcurrencyDebugChild/scenario()`` with `scenario` chosen.
    private func runChild(_ scenario: String, environment: [String: String]) throws -> OCDToolTests.Result {
        try OCDToolTests.run(
            URL(fileURLWithPath: CommandLine.arguments[0]),
            ["--testing-library", "swift-testing", "--filter", "ConcurrencyDebugChild"],
            // No crash backtracer in the child: it inherits the pipes, and under a sanitizer it
            // outlived the trapped child, so the pipes never reached end of file.
            environment: environment.merging([ConcurrencyDebugChild.scenarioVariable: scenario, "SWIFT_BACKTRACE": "enable=no"]) { $1 })
    }
}

/// What ``ConcurrencyDebugTests`` runs in a child process; does nothing in a normal test run.
@Suite("Concurrency debug switch: child process")
struct ConcurrencyDebugChild {
    static let scenarioVariable = "OCD_TEST_CONCURRENCY_DEBUG_SCENARIO"

    @Test func scenario() throws {
        guard let scenario = ProcessInfo.processInfo.environment[Self.scenarioVariable] else { return }
        let store = try TestStore(NSInMemoryStoreType)
        let context = store.newContext()
        switch scenario {
        case "fetchOutsidePerform":
            _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))
            print("fetched outside perform")
        case "propertyOutsidePerform":
            let department = try context.performAndWait {
                let department = insertObject("Department", ["name": "D"], into: context)
                try context.save()
                return department
            }
            print("read outside perform: \(department.value(forKey: "name") ?? "nil")")
        case "useInsideBlocks":
            // A day's ordinary use: blocks of a context and of its child, a save through both, and
            // an object ID passed between them (readable from any thread).
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = context
            let id = try child.performAndWait {
                let department = insertObject("Department", ["name": "A"], into: child)
                _ = insertObject("Department", ["name": "B"], into: child)
                try child.save()
                return department.objectID
            }
            let done = DispatchSemaphore(value: 0)
            context.perform {
                _ = insertObject("Department", ["name": "C"], into: context)
                done.signal()
            }
            done.wait()
            let count = try context.performAndWait {
                _ = try context.existingObject(with: id).value(forKey: "name")
                try context.save()
                return try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department"))
            }
            print("used inside blocks: \(count) departments")
        default:
            Issue.record("unknown scenario \(scenario)")
        }
    }
}
