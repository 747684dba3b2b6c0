/// Which of `NSManagedObject`'s own hook methods an object's class keeps (neither it nor an
/// ancestor overrides them).
package struct KeptMethods: OptionSet, Sendable {
    package let rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }

    /// `willAccessValue(forKey:)` and `didAccessValue(forKey:)`: the first fires a fault, the second
    /// does nothing.
    package static let access = KeptMethods(rawValue: 1)
    /// `willChangeValue(forKey:)` and `didChangeValue(forKey:)`, which do nothing.
    package static let change = KeptMethods(rawValue: 2)
    /// `validateValue(_:forKey:)`, which applies the property's own rules.
    package static let validation = KeptMethods(rawValue: 4)
}

extension NSManagedObject {
    /// The hook methods this object's class keeps. An accessor whose object keeps a notification
    /// pair does what that pair would do (fire a fault) instead of calling it: the two dynamic
    /// calls were about 40 instructions of every generated property read and write (callgrind
    /// case 2 reads eight a row). A save checks the properties of an object that keeps
    /// `validateValue(_:forKey:)` where they lie (``_validateForSave()``). An app's override, its
    /// own or inherited, is still called every time.
    ///
    /// Found once per class and entity by the Swift runtime's vtable lookup, and kept in the
    /// entity's layout with the class it is for: looked up for each object saved, the
    /// `validateValue(_:forKey:)` entry alone was about 100 instructions (callgrind cases 1 and 5).
    ///
    /// Where the lookup is not used (`OCD_PORTABLE_RUNTIME`, Support/RuntimeInternals) no class
    /// keeps any: every hook is called.
    @inline(__always)
    package final var _keptMethods: KeptMethods {
        let cls = UInt(bitPattern: ObjectIdentifier(type(of: self)))
        let cached = _layout.keptMethods.load(ordering: .relaxed)
        if cached & ~UInt(7) == cls { return KeptMethods(rawValue: cached & 7) }
        return Self._lookUpKeptMethods(type(of: self), layout: _layout)
    }

    /// Looks up what the class `cls` keeps and records it in `layout`, beside the class's metadata
    /// pointer (8-byte aligned, so its three low bits are free). Two threads doing it at once record
    /// the same.
    @inline(never)
    private static func _lookUpKeptMethods(_ cls: NSManagedObject.Type, layout: EntityLayout) -> KeptMethods {
        var kept = _keptNotifications(cls)
        if !_overridesValidateValue(cls) { kept.insert(.validation) }
        // Not kept while the concurrency debug switch is on: a typed accessor's fast path, which
        // needs it kept, then never answers, and the slow path checks the queue (see
        // `_ocdTypedValueSlow`); the fast path pays nothing for the check.
        if !ConcurrencyDebug.isEnabled {
            layout.keptMethods.store(UInt(bitPattern: ObjectIdentifier(cls)) | kept.rawValue, ordering: .relaxed)
        }
        return kept
    }
}
