import Foundation

// Values read where they lie in their `Any` (or `Any?`) existential container, by its type metadata
// word, instead of through the runtime's general casts; see docs/runtime-internals.md, "Existential
// container words". `OCD_PORTABLE_RUNTIME` (Package.swift) selects the plain-Swift version below
// each: `type(of:) ==` and `as?`, with the same answers.
//
// The layout: an `Any` is an opaque existential container, whose layout is part of Swift's stable
// ABI (docs/ABI/TypeLayout.rst, "Existential Container Layout"): a three-word value buffer and then
// the type's metadata pointer; a value of at most three words, word-aligned and bitwise takable (the
// scalars, `Date`, `String`, a class reference) is stored inline at the start of the buffer. So
// when the metadata pointer is `T`'s, the value can be loaded in place. `Optional<Any>` has `Any`'s
// layout: its `nil` is an extra inhabitant of the metadata pointer, a null word.
extension ValueConversion {
    /// `value` if its dynamic type is exactly `T` and `T` is stored inline in an `Any`, else `nil`
    /// (no answer: the caller tries `as?` next).
    ///
    /// The runtime's general cast (`as?` from `Any`) looks through optionals, existentials, classes
    /// and bridging: about 250 instructions for an `Int64`, paid for every attribute a save binds or
    /// an accessor reads.
    @inline(__always)
    package static func exactly<T>(_ value: Any, as type: T.Type) -> T? {
        #if OCD_PORTABLE_RUNTIME
        guard Swift.type(of: value) == T.self, InlineStorage.isInline(T.self) else { return nil }
        return value as? T
        #else
        withUnsafePointer(to: value) { exactly(inContainerAt: UnsafeRawPointer($0), as: T.self) }
        #endif
    }

    /// ``exactly(_:as:)`` for the `Any?` at `container`, read in place: copying the value out first
    /// went through its generic copy and destroy (about 400 instructions per typed accessor read,
    /// callgrind case 2).
    @inline(__always)
    package static func exactly<T>(at container: UnsafePointer<Any?>, as type: T.Type) -> T? {
        #if OCD_PORTABLE_RUNTIME
        guard let value = container.pointee else { return nil }
        return exactly(value, as: T.self)
        #else
        exactly(inContainerAt: UnsafeRawPointer(container), as: T.self)
        #endif
    }

    /// ``exactly(at:as:)`` for the `Any` at `container`.
    @inline(__always)
    package static func exactly<T>(at container: UnsafePointer<Any>, as type: T.Type) -> T? {
        #if OCD_PORTABLE_RUNTIME
        exactly(container.pointee, as: T.self)
        #else
        exactly(inContainerAt: UnsafeRawPointer(container), as: T.self)
        #endif
    }

    /// ``exactly(at:as:)`` for element `index` of an array, as `NSPredicate(format:_:)`'s variadic
    /// arguments come, read in place.
    @inline(__always)
    package static func exactly<T>(in values: [Any?], at index: Int, as type: T.Type) -> T? {
        values.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, index >= 0, index < buffer.count else { return nil }
            return exactly(at: base + index, as: T.self)
        }
    }

    /// Whether the `Any?` at `container` is `nil`, read in place (a null metadata word).
    @inline(__always)
    package static func isNil(at container: UnsafePointer<Any?>) -> Bool {
        #if OCD_PORTABLE_RUNTIME
        container.pointee == nil
        #else
        metadata(ofContainerAt: UnsafeRawPointer(container)) == nil
        #endif
    }

    /// Whether the `Any?` at `container` holds a value whose dynamic type is exactly `type`, a value
    /// type (a class instance's container holds the type it was boxed as), read in place.
    @inline(__always)
    package static func holds(at container: UnsafePointer<Any?>, valueOfType type: any Any.Type) -> Bool {
        #if OCD_PORTABLE_RUNTIME
        guard let value = container.pointee else { return false }
        return Swift.type(of: value) == type
        #else
        self.container(at: UnsafeRawPointer(container), holds: type)
        #endif
    }

    /// Sets the `Any?` at `container` to `nil`, destroying its value. The common attribute values
    /// are destroyed without the generic `Optional<Any>` value witness (about 60 instructions, per
    /// property of every validated object): the trivial scalars and `Date` need nothing destroyed,
    /// and a `String` (inline) is released as one.
    @inline(__always)
    package static func clear(containerAt container: UnsafeMutablePointer<Any?>) {
        #if OCD_PORTABLE_RUNTIME
        container.pointee = nil
        #else
        let raw = UnsafeMutableRawPointer(container)
        guard let metadata = self.metadata(ofContainerAt: raw) else { return }
        if InlineStorage.isTrivial(metadata: metadata) {
            raw.storeBytes(of: nil, toByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
        } else if metadata == ValueConversion.metadata(of: String.self) {
            raw.assumingMemoryBound(to: String.self).deinitialize(count: 1)
            raw.storeBytes(of: nil, toByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
        } else {
            container.pointee = nil
        }
        #endif
    }

    /// `value` if it is a managed object boxed as `NSManagedObject` (as a store's `[NSManagedObject]`
    /// results are when seen as `[Any]`), without the runtime's general cast; else `nil` (no answer).
    @inline(__always)
    package static func boxedManagedObject(_ value: Any) -> NSManagedObject? {
        boxedReference(value, as: NSManagedObject.self)
    }

    /// `value` if it holds a reference boxed with static type `T` (its container's metadata is `T`'s),
    /// loaded in place; else `nil` (no answer: the caller casts). The portable version answers for
    /// any instance of `T`.
    @inline(__always)
    package static func boxedReference<T: AnyObject>(_ value: Any, as type: T.Type) -> T? {
        #if OCD_PORTABLE_RUNTIME
        value as? T
        #else
        withUnsafePointer(to: value) { loadExactly(UnsafeRawPointer($0), as: T.self) }
        #endif
    }

    /// ``boxedReference(_:as:)`` for an optional, read in place (its `nil` a null metadata pointer,
    /// which matches no type).
    @inline(__always)
    package static func boxedReference<T: AnyObject>(in value: Any?, as type: T.Type) -> T? {
        #if OCD_PORTABLE_RUNTIME
        value as? T
        #else
        guard MemoryLayout<Any?>.size == MemoryLayout<Any>.size else { return nil }
        return withUnsafePointer(to: value) { loadExactly(UnsafeRawPointer($0), as: T.self) }
        #endif
    }

    /// `value` if it holds a managed object of any class, without the runtime's general cast: the
    /// dynamic type is checked with a metatype cast (tens of instructions, not hundreds), and a class
    /// instance is stored inline in the container, so the reference is loaded in place.
    @inline(__always)
    package static func managedObject(_ value: Any) -> NSManagedObject? {
        #if OCD_PORTABLE_RUNTIME
        value as? NSManagedObject
        #else
        guard Swift.type(of: value) is NSManagedObject.Type else { return nil }
        return withUnsafePointer(to: value) { UnsafeRawPointer($0).load(as: NSManagedObject.self) }
        #endif
    }

    /// ``managedObject(_:)`` for an optional, read in place: the container's type (its metadata word,
    /// null for `nil`) is checked with a metatype cast, and the reference loaded. Unwrapping the
    /// optional first copied the container, and `type(of:)` looked the class up again (about 300
    /// instructions of an in-memory predicate evaluation, callgrind case 7). A reference boxed as
    /// another existential (`AnyObject`) is not recognized: `nil`, for the caller's general path.
    @inline(__always)
    package static func managedObject(in value: Any?) -> NSManagedObject? {
        #if OCD_PORTABLE_RUNTIME
        value as? NSManagedObject
        #else
        withUnsafePointer(to: value) { pointer in
            let container = UnsafeRawPointer(pointer)
            guard let metadata = metadata(ofContainerAt: container),
                type(ofMetadata: metadata) is NSManagedObject.Type
            else { return nil }
            return container.load(as: NSManagedObject.self)
        }
        #endif
    }

    /// The class instance `value` holds, read in place: the container's type is checked with a
    /// metatype cast, and the reference loaded; `nil` for a value of another kind. The runtime's
    /// general cast from `Any?` to a class was about 1,000 instructions (callgrind case 8p).
    @inline(__always)
    package static func classInstance(in value: Any?) -> AnyObject? {
        #if OCD_PORTABLE_RUNTIME
        guard let value, Swift.type(of: value) is AnyObject.Type else { return nil }
        return value as AnyObject
        #else
        withUnsafePointer(to: value) { pointer in
            let container = UnsafeRawPointer(pointer)
            guard let metadata = metadata(ofContainerAt: container), type(ofMetadata: metadata) is AnyObject.Type
            else { return nil }
            return container.load(as: AnyObject.self)
        }
        #endif
    }


    #if !OCD_PORTABLE_RUNTIME
    /// ``exactly(_:as:)`` for the `Any` (or `Any?`) container at `container`, read in place.
    @inline(__always)
    private static func exactly<T>(inContainerAt container: UnsafeRawPointer, as type: T.Type) -> T? {
        guard MemoryLayout<T>.size <= 3 * MemoryLayout<Int>.size, MemoryLayout<T>.alignment <= MemoryLayout<Int>.alignment,
            MemoryLayout<T>.size > 0, InlineStorage.isInline(T.self)
        else { return nil }
        return loadExactly(container, as: T.self)
    }

    /// The type metadata word of the `Any` (or `Any?`) container at `container`: `nil` for an
    /// `Any?` holding `nil`. The one place that knows where the word lies.
    @inline(__always)
    package static func metadata(ofContainerAt container: UnsafeRawPointer) -> UnsafeRawPointer? {
        container.load(fromByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
    }

    /// A type's metadata pointer (a metatype's bits, as `ObjectIdentifier` holds them).
    @inline(__always)
    static func metadata(of type: any Any.Type) -> UnsafeRawPointer {
        UnsafeRawPointer(bitPattern: UInt(bitPattern: ObjectIdentifier(type))).unsafelyUnwrapped
    }

    /// The type whose metadata pointer is `metadata` (read from a container).
    @inline(__always)
    private static func type(ofMetadata metadata: UnsafeRawPointer) -> any Any.Type {
        unsafeBitCast(metadata, to: Any.Type.self)
    }

    /// Whether the container at `container` holds a value boxed as exactly `type`.
    @inline(__always)
    package static func container(at container: UnsafeRawPointer, holds type: any Any.Type) -> Bool {
        metadata(ofContainerAt: container) == metadata(of: type)
    }

    /// The `T` in the existential container at `container` if its metadata is `T`'s, else `nil`.
    /// `T` must be a type stored inline (``InlineStorage``) or a class.
    @inline(__always)
    private static func loadExactly<T>(_ container: UnsafeRawPointer, as type: T.Type) -> T? {
        guard self.container(at: container, holds: T.self) else { return nil }
        return container.load(as: T.self)
    }
    #endif
}

/// The types ``ValueConversion/exactly(_:as:)`` loads in place: known to be bitwise takable, so an
/// `Any` stores them inline (a type with a weak reference, say, is not, and would be boxed).
private enum InlineStorage {
    @inline(__always)
    static func isInline<T>(_ type: T.Type) -> Bool {
        T.self == Int64.self || T.self == Int.self || T.self == Int32.self || T.self == Int16.self
            || T.self == Double.self || T.self == Float.self || T.self == Bool.self || T.self == Date.self
            || T.self == String.self
    }

    #if !OCD_PORTABLE_RUNTIME
    /// Whether `metadata` is one of the inline types above that need nothing destroyed (all but
    /// `String`), for ``ValueConversion/clear(containerAt:)``, which has a container's metadata word,
    /// not a static type.
    @inline(__always)
    static func isTrivial(metadata: UnsafeRawPointer) -> Bool {
        func `is`(_ type: any Any.Type) -> Bool { metadata == ValueConversion.metadata(of: type) }
        return `is`(Int64.self) || `is`(Double.self) || `is`(Int16.self) || `is`(Int32.self) || `is`(Bool.self)
            || `is`(Date.self) || `is`(Float.self) || `is`(Int.self)
    }
    #endif
}
