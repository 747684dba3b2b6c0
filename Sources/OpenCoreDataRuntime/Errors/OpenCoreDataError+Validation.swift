import Foundation

/// What a validation error knows beyond its code and key: the object, the value and the predicate.
///
/// `@unchecked Sendable` invariant: immutable after init. The object and value are not Sendable;
/// like Apple's `NSError` user info they travel with the error, and the object may only be used on
/// its context's queue, as always.
package final class ValidationErrorDetails: @unchecked Sendable {
    let object: NSManagedObject?
    let value: Any?
    let predicate: NSPredicate?

    init(object: NSManagedObject?, value: Any?, predicate: NSPredicate?) {
        self.object = object
        self.value = value
        self.predicate = predicate
    }

    func addUserInfo(to info: inout [String: Any]) {
        if let object { info[NSValidationObjectErrorKey] = object }
        if let value { info[NSValidationValueErrorKey] = value }
        if let predicate { info[NSValidationPredicateErrorKey] = predicate }
    }
}

extension OpenCoreDataError {
    /// A validation error about `key` of `object`, with the offending value and predicate in its
    /// user info (`NSValidationObjectErrorKey`, `NSValidationKeyErrorKey`, `NSValidationValueErrorKey`,
    /// `NSValidationPredicateErrorKey`).
    package init(_ code: Code, _ message: String, object: NSManagedObject, key: String?, value: Any?, predicate: NSPredicate? = nil) {
        self.init(code, message, entityName: object.entity.name, key: key, objectID: object.objectID)
        _validation = ValidationErrorDetails(object: object, value: ValueConversion.unwrap(value), predicate: predicate)
    }

    /// The object that failed validation (`NSValidationObjectErrorKey`), if any.
    ///
    /// Related Core Data documentation: [NSValidationObjectErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationobjecterrorkey)
    public var validationObject: NSManagedObject? { _validation?.object }

    /// The value that failed validation (`NSValidationValueErrorKey`), if any. Never part of `description`.
    ///
    /// Related Core Data documentation: [NSValidationValueErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationvalueerrorkey)
    public var validationValue: Any? { _validation?.value }

    /// The validation predicate that failed (`NSValidationPredicateErrorKey`), if any.
    ///
    /// Related Core Data documentation: [NSValidationPredicateErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationpredicateerrorkey)
    public var validationPredicate: NSPredicate? { _validation?.predicate }

    /// One error for a list of validation errors: the error itself when there is one,
    /// `validationMultipleErrors` with them in ``detailedErrors`` (`NSDetailedErrorsKey`) otherwise.
    /// Errors that are themselves groups are flattened. `nil` for an empty list.
    package static func grouping(_ errors: [OpenCoreDataError]) -> OpenCoreDataError? {
        let flat = errors.flatMap { $0.code == .validationMultipleErrors && !$0.detailedErrors.isEmpty ? $0.detailedErrors : [$0] }
        if flat.count <= 1 { return flat.first }
        return OpenCoreDataError(.validationMultipleErrors, "\(flat.count) validation errors occurred", detailedErrors: flat)
    }
}
