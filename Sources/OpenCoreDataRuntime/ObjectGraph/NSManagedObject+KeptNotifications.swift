import CSwiftRuntime

/// Which of `NSManagedObject`'s own accessor notification methods an object's class keeps (neither
/// it nor an ancestor overrides them).
package struct KeptNotifications: OptionSet, Sendable {
    package let rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }

    /// `willAccessValue(forKey:)` and `didAccessValue(forKey:)`: the first fires a fault, the second
    /// does nothing.
    package static let access = KeptNotifications(rawValue: 1)
    /// `willChangeValue(forKey:)` and `didChangeValue(forKey:)`, which do nothing.
    package static let change = KeptNotifications(rawValue: 2)
}

extension NSManagedObject {
    /// The notification methods this object's class keeps. An accessor whose object keeps a pair
    /// does what that pair would do (fire a fault) instead of calling it: the two dynamic calls
    /// were about 40 instructions of every generated property read and write (callgrind case 2
    /// reads eight a row). An app's override, its own or inherited, is still called every time.
    ///
    /// Found once per class and entity by the Swift runtime's vtable lookup (as for
    /// `validateValue(_:forKey:)`), and kept in the entity's layout with the class it is for.
    @inline(__always)
    package final var _keptNotifications: KeptNotifications {
        let cls = unsafeBitCast(type(of: self), to: UInt.self)
        let cached = _layout.keptNotifications.load(ordering: .relaxed)
        if cached & ~UInt(3) == cls { return KeptNotifications(rawValue: cached & 3) }
        return Self._lookUpKeptNotifications(cls, layout: _layout)
    }

    /// Looks up what the class `cls` (a metadata pointer: 8-byte aligned, so its two low bits are
    /// free) keeps and records it in `layout`. Two threads doing it at once record the same thing.
    @inline(never)
    private static func _lookUpKeptNotifications(_ cls: UInt, layout: EntityLayout) -> KeptNotifications {
        let metadata = UnsafeRawPointer(bitPattern: cls).unsafelyUnwrapped
        let base = unsafeBitCast(NSManagedObject.self, to: UnsafeRawPointer.self)
        var kept: KeptNotifications = []
        if cswiftruntime_keepsAccessNotifications(metadata, base) { kept.insert(.access) }
        if cswiftruntime_keepsChangeNotifications(metadata, base) { kept.insert(.change) }
        layout.keptNotifications.store(cls | kept.rawValue, ordering: .relaxed)
        return kept
    }
}
