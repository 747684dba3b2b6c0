import Testing
@Test func macrosPlaceholder() { #expect(Bool(true)) }
