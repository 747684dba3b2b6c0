import Foundation

// Non-generic accessors for the attribute types apps declare most. `@ManagedProperty` expands to
// `_ocdGetValue(key)` / `_ocdSetValue(newValue, key)`; for a property of one of these types Swift's
// overload resolution picks the concrete function below over the generic one, so the value is read
// with one cast to a known type and written with no conversion when the model's attribute type is
// the type's canonical one (any other attribute type goes through the general conversion). The
// generic accessors work for every other type. Measured in the benchmarks' cases 1, 2 and 5.
extension NSManagedObject {
    /// Reads an attribute through a typed accessor: the common case — the key's slot cached for this
    /// entity, no access notifications kept, not a fault, the value in its typed field or the field
    /// empty — in a few loads inline (``_ocdFastValue(_:as:)``), anything else out of line
    /// (``_ocdTypedValueSlow(_:as:)``). One function doing both paid the general path's prologue
    /// (registers saved, a stack guard for its `Any?`) on every read: about 70 instructions a read,
    /// eight a row in the benchmarks' case 2 (callgrind).
    @inline(__always)
    private final func _ocdTypedValue<T>(_ key: borrowing ManagedPropertyKey, as type: T.Type) -> T? {
        if let value = _ocdFastValue(key, as: T.self) { return value }
        return _ocdTypedValueSlow(key, as: T.self)
    }

    /// ``_ocdTypedValue(_:as:)``'s fast path: `nil` when it has no answer.
    @inline(__always)
    private final func _ocdFastValue<T>(_ key: borrowing ManagedPropertyKey, as type: T.Type) -> T?? {
        guard let slot = key.cachedSlot(in: _layout), !_isFault,
            // This class keeps the access notifications (``_keptMethods``, its bit compared in place).
            _layout.keptMethods.load(ordering: .relaxed) & ~UInt(6)
                == UInt(bitPattern: ObjectIdentifier(Swift.type(of: self))) | KeptMethods.access.rawValue
        else { return nil }  // not cached for this entity, a fault, notifications overridden or not looked up yet
        return withUnsafeMutablePointer(to: &_storedValues) { RowValues.typedField(at: $0, slot, as: T.self) }
    }

    /// Reads an attribute through a typed accessor. Relationships and unknown keys take the generic path.
    @inline(never)
    private final func _ocdTypedValueSlow<T>(_ key: borrowing ManagedPropertyKey, as type: T.Type) -> T? {
        // Checked here only: with the concurrency debug switch on, the fast path never answers
        // (``_keptMethods`` is not kept).
        _assertOnQueue("a property's getter")
        guard let slot = key.slot(in: _layout), _layout.relationships[slot] == nil else {
            return _ocdGetOptionalValue(key, as: T.self)
        }
        let notifies = !_keptMethods.contains(.access)  // not called when the class keeps them
        if notifies { willAccessValue(forKey: key.name) }
        if _isFault { _fireFault() }  // what the default does; an override may not call super
        // The common case, a value of exactly `T`, is read in place; anything else is copied out and converted.
        if let exact = withUnsafeMutablePointer(to: &_storedValues, { RowValues.exactly(at: $0, slot, as: T.self) }) {
            if notifies { didAccessValue(forKey: key.name) }
            return exact
        }
        // A nil value, told apart in place from a value of another type: copying the slot out as
        // `Any?` retained and released the storage (about 80 instructions of an optional
        // accessor's nil read, callgrind case 2).
        if withUnsafeMutablePointer(to: &_storedValues, { RowValues.isNil(at: $0, slot) }) {
            if notifies { didAccessValue(forKey: key.name) }
            return nil
        }
        let raw = _values[slot]
        if notifies { didAccessValue(forKey: key.name) }
        guard let raw else { return nil }
        return ValueConversion.convert(raw, to: T.self)
    }

    /// Writes an attribute through a typed accessor: stored as it is, in its typed field and without
    /// boxing it in an `Any` (``RowValues/setTyped(_:_:)``), when `canonical` is the attribute's
    /// type; converted otherwise.
    @inline(__always)
    private final func _ocdSetTyped<T>(_ value: T?, _ canonical: NSAttributeType, _ key: borrowing ManagedPropertyKey) {
        _assertOnQueue("a property's setter")
        guard let slot = key.slot(in: _layout) else {
            return setValue(value.map { $0 as Any }, forUndefinedKey: key.name)
        }
        let notifies = !_keptMethods.contains(.change)  // the defaults do nothing
        if notifies { willChangeValue(forKey: key.name) }
        // Derived attributes are read-only: `_setPublicValue` refuses them.
        if _layout.attributeTypes[slot] == canonical,
            _layout.derivedSlots.isEmpty || !_layout.derivedSlots.contains(slot)
        {
            if _isFault { _fireFault() }
            _values.setTyped(slot, value)
            _noteChange(slot: slot)
        } else {
            _setPublicValue(value.map { $0 as Any }, slot: slot)
        }
        if notifies { didChangeValue(forKey: key.name) }
    }

    // MARK: Int16

    /// Reads a `Int16` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Int16.Type = Int16.self) -> Int16 {
        _ocdTypedValue(key, as: Int16.self) ?? Int16._ocdEmpty
    }

    /// Reads an optional `Int16` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Int16.Type = Int16.self)
        -> Int16?
    {
        _ocdTypedValue(key, as: Int16.self)
    }

    /// Writes a `Int16` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Int16, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .integer16AttributeType, key)
    }

    /// Writes an optional `Int16` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Int16?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .integer16AttributeType, key)
    }

    // MARK: Int32

    /// Reads a `Int32` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Int32.Type = Int32.self) -> Int32 {
        _ocdTypedValue(key, as: Int32.self) ?? Int32._ocdEmpty
    }

    /// Reads an optional `Int32` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Int32.Type = Int32.self)
        -> Int32?
    {
        _ocdTypedValue(key, as: Int32.self)
    }

    /// Writes a `Int32` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Int32, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .integer32AttributeType, key)
    }

    /// Writes an optional `Int32` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Int32?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .integer32AttributeType, key)
    }

    // MARK: Int64

    /// Reads a `Int64` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Int64.Type = Int64.self) -> Int64 {
        _ocdTypedValue(key, as: Int64.self) ?? Int64._ocdEmpty
    }

    /// Reads an optional `Int64` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Int64.Type = Int64.self)
        -> Int64?
    {
        _ocdTypedValue(key, as: Int64.self)
    }

    /// Writes a `Int64` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Int64, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .integer64AttributeType, key)
    }

    /// Writes an optional `Int64` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Int64?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .integer64AttributeType, key)
    }

    // MARK: Double

    /// Reads a `Double` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Double.Type = Double.self) -> Double {
        _ocdTypedValue(key, as: Double.self) ?? Double._ocdEmpty
    }

    /// Reads an optional `Double` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Double.Type = Double.self)
        -> Double?
    {
        _ocdTypedValue(key, as: Double.self)
    }

    /// Writes a `Double` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Double, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .doubleAttributeType, key)
    }

    /// Writes an optional `Double` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Double?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .doubleAttributeType, key)
    }

    // MARK: Float

    /// Reads a `Float` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Float.Type = Float.self) -> Float {
        _ocdTypedValue(key, as: Float.self) ?? Float._ocdEmpty
    }

    /// Reads an optional `Float` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Float.Type = Float.self)
        -> Float?
    {
        _ocdTypedValue(key, as: Float.self)
    }

    /// Writes a `Float` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Float, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .floatAttributeType, key)
    }

    /// Writes an optional `Float` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Float?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .floatAttributeType, key)
    }

    // MARK: Bool

    /// Reads a `Bool` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Bool.Type = Bool.self) -> Bool {
        _ocdTypedValue(key, as: Bool.self) ?? Bool._ocdEmpty
    }

    /// Reads an optional `Bool` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Bool.Type = Bool.self) -> Bool?
    {
        _ocdTypedValue(key, as: Bool.self)
    }

    /// Writes a `Bool` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Bool, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .booleanAttributeType, key)
    }

    /// Writes an optional `Bool` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Bool?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .booleanAttributeType, key)
    }

    // MARK: String

    /// Reads a `String` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: String.Type = String.self) -> String {
        _ocdTypedValue(key, as: String.self) ?? String._ocdEmpty
    }

    /// Reads an optional `String` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: String.Type = String.self)
        -> String?
    {
        _ocdTypedValue(key, as: String.self)
    }

    /// Writes a `String` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: String, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .stringAttributeType, key)
    }

    /// Writes an optional `String` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: String?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .stringAttributeType, key)
    }

    // MARK: Date

    /// Reads a `Date` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Date.Type = Date.self) -> Date {
        _ocdTypedValue(key, as: Date.self) ?? Date._ocdEmpty
    }

    /// Reads an optional `Date` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Date.Type = Date.self) -> Date?
    {
        _ocdTypedValue(key, as: Date.self)
    }

    /// Writes a `Date` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Date, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .dateAttributeType, key)
    }

    /// Writes an optional `Date` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Date?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .dateAttributeType, key)
    }

    // MARK: Data

    /// Reads a `Data` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Data.Type = Data.self) -> Data {
        _ocdTypedValue(key, as: Data.self) ?? Data._ocdEmpty
    }

    /// Reads an optional `Data` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Data.Type = Data.self) -> Data?
    {
        _ocdTypedValue(key, as: Data.self)
    }

    /// Writes a `Data` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Data, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .binaryDataAttributeType, key)
    }

    /// Writes an optional `Data` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Data?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .binaryDataAttributeType, key)
    }

    // MARK: UUID

    /// Reads a `UUID` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: UUID.Type = UUID.self) -> UUID {
        _ocdTypedValue(key, as: UUID.self) ?? UUID._ocdEmpty
    }

    /// Reads an optional `UUID` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: UUID.Type = UUID.self) -> UUID?
    {
        _ocdTypedValue(key, as: UUID.self)
    }

    /// Writes a `UUID` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: UUID, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .UUIDAttributeType, key)
    }

    /// Writes an optional `UUID` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: UUID?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .UUIDAttributeType, key)
    }

    // MARK: Decimal

    /// Reads a `Decimal` property. Public for macro expansion only.
    public final func _ocdGetValue(_ key: borrowing ManagedPropertyKey, as type: Decimal.Type = Decimal.self) -> Decimal
    {
        _ocdTypedValue(key, as: Decimal.self) ?? Decimal._ocdEmpty
    }

    /// Reads an optional `Decimal` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: Decimal.Type = Decimal.self)
        -> Decimal?
    {
        _ocdTypedValue(key, as: Decimal.self)
    }

    /// Writes a `Decimal` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Decimal, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .decimalAttributeType, key)
    }

    /// Writes an optional `Decimal` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: Decimal?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .decimalAttributeType, key)
    }

    // MARK: URL

    /// Reads an optional `URL` property. Public for macro expansion only.
    public final func _ocdGetOptionalValue(_ key: borrowing ManagedPropertyKey, as type: URL.Type = URL.self) -> URL? {
        _ocdTypedValue(key, as: URL.self)
    }

    /// Writes a `URL` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: URL, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .URIAttributeType, key)
    }

    /// Writes an optional `URL` property. Public for macro expansion only.
    public final func _ocdSetValue(_ value: URL?, _ key: borrowing ManagedPropertyKey) {
        _ocdSetTyped(value, .URIAttributeType, key)
    }
}
