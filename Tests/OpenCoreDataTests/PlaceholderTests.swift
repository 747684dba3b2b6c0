import Testing
@testable import OpenCoreDataRuntime
@Test func placeholder() { #expect(Bool(true)) }
