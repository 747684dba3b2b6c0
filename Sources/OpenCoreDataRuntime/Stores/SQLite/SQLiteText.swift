extension String {
    /// A string from the UTF-8 bytes SQLite hands out for a text value (`sqlite3_column_text`,
    /// `sqlite3_value_text`), with ill-formed sequences replaced by U+FFFD, as
    /// `String(decoding:as: UTF8.self)` does.
    ///
    /// SQLite does not check that text is UTF-8, so it must be validated. The standard library's
    /// `init(unsafeUninitializedCapacity:initializingUTF8With:)` skips that for a small
    /// (at most 15-byte) ASCII string, which it checks a word at a time, and validates a larger one
    /// in the storage it fills. `String(decoding:as:)` validates byte by byte before it copies: about
    /// 300 instructions for a 10-byte string against about 100 here (callgrind, benchmark case 2).
    @inline(__always)
    init(sqliteText pointer: UnsafeRawPointer, count: Int) {
        guard count > 0 else {
            self = ""
            return
        }
        self.init(unsafeUninitializedCapacity: count) { buffer in
            buffer.baseAddress!.initialize(from: pointer.assumingMemoryBound(to: UInt8.self), count: count)
            return count
        }
    }
}
