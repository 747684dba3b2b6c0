import Foundation

/// A stored transformable value that its transformer could not turn back into a value.
///
/// It stands in the object's slot so nothing is lost: reading the attribute through an accessor
/// gives nil, ``NSManagedObject/checkedValue(forKey:)`` throws ``error``, and a save writes ``data``
/// back unchanged. A fetch that meets one throws ``error``.
package struct UndecodableTransformedValue: CustomStringConvertible, Sendable {
    /// The bytes the store holds.
    package let data: Data
    /// Why they could not be read.
    package let error: OpenCoreDataError

    package var description: String { "<undecodable transformable value: \(data.count) bytes>" }
}

/// Runs transformable attributes' value transformers for the stores: values become `Data` on the
/// way into a store and come back through the reverse transformation on the way out.
///
/// A transformer that unarchives in its forward direction (``NSSecureUnarchiveFromDataTransformer``,
/// the default when ``NSAttributeDescription/valueTransformerName`` is nil) runs the other way round,
/// as on Apple.
package enum TransformableValues {
    /// The transformer of a transformable attribute, or an error naming the missing transformer
    /// (`persistentStoreSave` when `saving`, else `persistentStoreOperation`).
    package static func transformer(for attribute: NSAttributeDescription, saving: Bool = true) throws -> ValueTransformer {
        let name = attribute.valueTransformerName.map(NSValueTransformerName.init(rawValue:))
            ?? .secureUnarchiveFromDataTransformerName
        guard let transformer = ValueTransformer._registered(forName: name) else {
            throw OpenCoreDataError(
                saving ? .persistentStoreSave : .persistentStoreOperation,
                "no value transformer is registered under the name \"\(name.rawValue)\" (transformable attribute "
                    + "\(attribute.name)); register one with ValueTransformer.setValueTransformer(_:forName:) before "
                    + (saving ? "saving" : "fetching"),
                entityName: attribute.entity?.name, key: attribute.name)
        }
        return transformer
    }

    /// The bytes to store for `value` in a transformable attribute (nil for nil).
    package static func storedData(_ value: Any?, attribute: NSAttributeDescription) throws -> Data? {
        guard let value = ValueConversion.unwrap(value), !(value is NSNull) else { return nil }
        if let undecodable = value as? UndecodableTransformedValue { return undecodable.data }
        let transformer = try transformer(for: attribute)
        let output = transformer._unarchivesForward ? transformer.reverseTransformedValue(value) : transformer.transformedValue(value)
        if let data = output as? Data { return data }
        if let data = output as? NSData { return Data(data) }
        // Core Data also allows the attribute's value class (an app's NSSecureCoding class).
        if let unarchiver = transformer._secureUnarchiver, let valueClass = valueClass(of: attribute, value: value),
           let data = unarchiver._archive(value, alsoAllowing: [valueClass])
        {
            return data
        }
        throw OpenCoreDataError(
            .persistentStoreSave,
            "the value transformer \"\(attribute.valueTransformerName ?? NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue)\" "
                + "did not turn the value of \(attribute.name) (a \(type(of: value))) into Data",
            entityName: attribute.entity?.name, key: attribute.name)
    }

    /// The value read back from stored bytes, or an ``UndecodableTransformedValue`` holding them.
    package static func value(fromStored data: Data, attribute: NSAttributeDescription) -> Any {
        let transformer: ValueTransformer
        do {
            transformer = try self.transformer(for: attribute, saving: false)
        } catch {
            return undecodable(data, error as? OpenCoreDataError
                ?? OpenCoreDataError(.persistentStoreOperation, "\(error)", entityName: attribute.entity?.name, key: attribute.name))
        }
        let output = transformer._unarchivesForward ? transformer.transformedValue(data) : transformer.reverseTransformedValue(data)
        if let output = ValueConversion.unwrap(output), !(output is NSNull) { return output }
        if let unarchiver = transformer._secureUnarchiver, let valueClass = valueClass(of: attribute, archive: data),
           let output = unarchiver._unarchive(data, alsoAllowing: [valueClass])
        {
            return output
        }
        return undecodable(
            data,
            OpenCoreDataError(
                .persistentStoreOperation,
                "the value transformer \"\(attribute.valueTransformerName ?? NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue)\" "
                    + "could not read the stored value of transformable attribute \(attribute.name) (\(data.count) bytes); "
                    + "the stored bytes are kept unchanged",
                entityName: attribute.entity?.name, key: attribute.name))
    }

    // MARK: The attribute's value class

    /// The `NSSecureCoding` class named `name` (module-qualified, or bare as Xcode writes it; see
    /// ``ManagedObjectClassRegistry/type(named:as:)``), or nil.
    package static func secureCodingClass(named name: String) -> AnyClass? {
        guard let found = ManagedObjectClassRegistry.type(named: name, as: NSObject.Type.self) else { return nil }
        return (found as? any NSSecureCoding.Type)?.supportsSecureCoding == true ? found : nil
    }

    /// The class `attribute.attributeValueClassName` names, to archive `value`: found by name, else
    /// the value's own class when its name is that name without a module (`Color` for `App.Color`).
    private static func valueClass(of attribute: NSAttributeDescription, value: Any) -> AnyClass? {
        guard let name = attribute._attributeValueClassName else { return nil }
        if let found = secureCodingClass(named: name) { return found }
        guard let object = value as? NSObject, ManagedObjectClassRegistry.bareName(of: type(of: object)) == bareName(name) else { return nil }
        return secureCodingClass(named: String(reflecting: type(of: object)))
    }

    /// The class `attribute.attributeValueClassName` names, to unarchive `data`: found by name, else
    /// the class of that bare name that the archive names with its module.
    private static func valueClass(of attribute: NSAttributeDescription, archive data: Data) -> AnyClass? {
        guard let name = attribute._attributeValueClassName else { return nil }
        if let found = secureCodingClass(named: name) { return found }
        let archived = NSSecureUnarchiveFromDataTransformer.archivedClasses(data)?.map(\.name) ?? []
        return archived.lazy.filter { $0.contains(".") && bareName($0) == bareName(name) }.compactMap(secureCodingClass(named:)).first
    }

    private static func bareName(_ name: String) -> Substring { name.split(separator: ".").last ?? Substring(name) }

    /// The stand-in for bytes that do not read back; logged, since a fault that meets them has no
    /// other way to report it (a fetch also throws the error).
    private static func undecodable(_ data: Data, _ error: OpenCoreDataError) -> UndecodableTransformedValue {
        reportMisuse(error.description)
        return UndecodableTransformedValue(data: data, error: error)
    }

    /// Replaces the stored bytes of `layout`'s transformable slots in `values` by their values.
    @inline(__always)
    package static func decode(_ values: inout RowValues, layout: EntityLayout) {
        for slot in layout.transformableSlots where slot < values.count {
            guard let data = values[slot] as? Data, let attribute = layout.properties[slot] as? NSAttributeDescription else { continue }
            values[slot] = value(fromStored: data, attribute: attribute)
        }
    }

    /// Replaces the values of `layout`'s transformable slots in `values` by the bytes to store.
    @inline(__always)
    package static func encode(_ values: inout RowValues, layout: EntityLayout, objectID: NSManagedObjectID?) throws {
        for slot in layout.transformableSlots where slot < values.count {
            guard let attribute = layout.properties[slot] as? NSAttributeDescription else { continue }
            do {
                values[slot] = try storedData(values[slot], attribute: attribute)
            } catch var error as OpenCoreDataError {
                error.objectID = objectID
                throw error
            }
        }
    }

    /// Throws the error of the first undecodable transformable value in a fetched row.
    @inline(__always)
    package static func checkDecoded(_ values: RowValues, layout: EntityLayout, objectID: NSManagedObjectID) throws {
        for slot in layout.transformableSlots where slot < values.count {
            if var undecodable = (values[slot] as? UndecodableTransformedValue)?.error {
                undecodable.objectID = objectID
                throw undecodable
            }
        }
    }

    /// Checks, before a save writes anything, that every transformable value of `objects` turns into
    /// `Data`; throws the first failure (unregistered transformer, a value it rejects).
    package static func checkStorable(_ objects: [NSManagedObject]) throws {
        for object in objects where !object._layout.transformableSlots.isEmpty && !object._isFault {
            var values = object._values
            try encode(&values, layout: object._layout, objectID: object.objectID)
        }
    }
}
