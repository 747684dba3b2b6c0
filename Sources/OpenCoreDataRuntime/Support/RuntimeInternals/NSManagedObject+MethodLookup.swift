// Whether a class overrides one of `NSManagedObject`'s hook methods, asked of the Swift runtime's
// vtable lookup; see docs/runtime-internals.md, "swift_lookUpClassMethod". `OCD_PORTABLE_RUNTIME`
// (Package.swift) selects the plain-Swift answer: every class is taken to override every hook, so
// the hooks are always called, which is what they would do anyway, only slower.
#if !OCD_PORTABLE_RUNTIME
import CSwiftRuntime
#endif

extension NSManagedObject {
    /// Which of the notification pairs (``KeptMethods/access``, ``KeptMethods/change``) instances of
    /// `cls` call `NSManagedObject`'s own implementations of.
    static func _keptNotifications(_ cls: NSManagedObject.Type) -> KeptMethods {
        #if OCD_PORTABLE_RUNTIME
        return []
        #else
        let metadata = _metadata(of: cls), base = _metadata(of: NSManagedObject.self)
        var kept: KeptMethods = []
        if cswiftruntime_keepsAccessNotifications(metadata, base) { kept.insert(.access) }
        if cswiftruntime_keepsChangeNotifications(metadata, base) { kept.insert(.change) }
        return kept
        #endif
    }

    /// Whether instances of `cls` call an override of `validateValue(_:forKey:)` (the class's own or
    /// an ancestor's) rather than `NSManagedObject`'s: the implementations in their vtable entries,
    /// looked up by the Swift runtime (about 100 instructions a lookup; the default's is looked up
    /// once). A save asks ``_keptMethods``, which keeps the answer per class and entity.
    package static func _overridesValidateValue(_ cls: NSManagedObject.Type) -> Bool {
        #if OCD_PORTABLE_RUNTIME
        return true
        #else
        return _validateValueImplementation(of: cls) != _defaultValidateValue
        #endif
    }

    #if !OCD_PORTABLE_RUNTIME
    private static let _defaultValidateValue = _validateValueImplementation(of: NSManagedObject.self)

    /// The implementation's address, as an integer (a pointer is not `Sendable`).
    private static func _validateValueImplementation(of cls: NSManagedObject.Type) -> UInt {
        UInt(bitPattern: cswiftruntime_validateValueImplementation(_metadata(of: cls)))
    }

    /// A class's metadata, as the runtime's C entry points take it (a metatype's bits).
    private static func _metadata(of cls: NSManagedObject.Type) -> UnsafeRawPointer {
        UnsafeRawPointer(bitPattern: UInt(bitPattern: ObjectIdentifier(cls))).unsafelyUnwrapped
    }
    #endif
}
