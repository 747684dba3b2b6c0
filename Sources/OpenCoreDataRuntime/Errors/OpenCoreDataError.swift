import Foundation

/// The one error type OpenCoreData throws, bridged to Cocoa error codes.
///
/// Code written against Core Data's `NSError`s keeps working: the error's domain is
/// `NSCocoaErrorDomain`, its `errorCode` is Apple's numeric code (``Code/rawValue``), and its
/// user info carries Core Data's keys (`NSDetailedErrorsKey`, `NSValidationKeyErrorKey`,
/// `NSAffectedObjectsErrorKey`, ...).
///
/// ```swift
/// do { try context.save() } catch let error as OpenCoreDataError where error.code == .validationMissingMandatoryProperty {
///     print(error.key ?? "?")
/// }
/// ```
///
/// `description` never prints attribute values, only names, codes and SQL with placeholders.
///
/// Related Core Data documentation: [Core Data Constants](https://developer.apple.com/documentation/coredata/core-data-constants)
public struct OpenCoreDataError: Error, CustomNSError, CustomStringConvertible, Sendable {
    /// An error code: one of Apple's Cocoa error codes for Core Data.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// Apple's numeric code (`NSCocoaErrorDomain`).
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let managedObjectValidation = Code(rawValue: 1550)
        public static let managedObjectConstraintValidation = Code(rawValue: 1551)
        public static let validationMultipleErrors = Code(rawValue: 1560)
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        public static let validationRelationshipDeniedDelete = Code(rawValue: 1600)
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        public static let validationNumberTooSmall = Code(rawValue: 1620)
        public static let validationDateTooLate = Code(rawValue: 1630)
        public static let validationDateTooSoon = Code(rawValue: 1640)
        public static let validationInvalidDate = Code(rawValue: 1650)
        public static let validationStringTooLong = Code(rawValue: 1660)
        public static let validationStringTooShort = Code(rawValue: 1670)
        public static let validationStringPatternMatching = Code(rawValue: 1680)
        public static let validationInvalidURI = Code(rawValue: 1690)
        public static let managedObjectContextLocking = Code(rawValue: 132_000)
        public static let persistentStoreCoordinatorLocking = Code(rawValue: 132_010)
        public static let managedObjectReferentialIntegrity = Code(rawValue: 133_000)
        public static let managedObjectExternalRelationship = Code(rawValue: 133_010)
        public static let managedObjectMerge = Code(rawValue: 133_020)
        public static let managedObjectConstraintMerge = Code(rawValue: 133_021)
        public static let persistentStoreInvalidType = Code(rawValue: 134_000)
        public static let persistentStoreTypeMismatch = Code(rawValue: 134_010)
        public static let persistentStoreIncompatibleSchema = Code(rawValue: 134_020)
        public static let persistentStoreSave = Code(rawValue: 134_030)
        public static let persistentStoreIncompleteSave = Code(rawValue: 134_040)
        public static let persistentStoreSaveConflicts = Code(rawValue: 134_050)
        public static let coreDataError = Code(rawValue: 134_060)
        public static let persistentStoreOperation = Code(rawValue: 134_070)
        public static let persistentStoreOpen = Code(rawValue: 134_080)
        public static let persistentStoreTimeout = Code(rawValue: 134_090)
        public static let persistentStoreUnsupportedRequestType = Code(rawValue: 134_091)
        public static let persistentStoreIncompatibleVersionHash = Code(rawValue: 134_100)
        public static let migration = Code(rawValue: 134_110)
        public static let migrationConstraintViolation = Code(rawValue: 134_111)
        public static let migrationCancelled = Code(rawValue: 134_120)
        public static let migrationMissingSourceModel = Code(rawValue: 134_130)
        public static let migrationMissingMappingModel = Code(rawValue: 134_140)
        public static let migrationManagerSourceStore = Code(rawValue: 134_150)
        public static let migrationManagerDestinationStore = Code(rawValue: 134_160)
        public static let entityMigrationPolicy = Code(rawValue: 134_170)
        public static let sqlite = Code(rawValue: 134_180)
        public static let inferredMappingModel = Code(rawValue: 134_190)
        public static let externalRecordImport = Code(rawValue: 134_200)
        public static let persistentHistoryTokenExpired = Code(rawValue: 134_301)
        /// Foundation's `NSFileReadCorruptFileError`: a file (a compiled model, a store's model cache)
        /// is not in the format it should be.
        public static let fileReadCorruptFile = Code(rawValue: 259)
        /// Not one of Apple's codes: a predicate or expression format string did not parse.
        /// Apple raises `NSInvalidArgumentException` instead. Bridged as `coreDataError`'s domain
        /// with `NSFormattingError` (2048), the Cocoa code for malformed format strings.
        public static let invalidFormat = Code(rawValue: 2048)
        /// Not one of Apple's codes: a key that is not a property of the entity. Apple raises
        /// `NSUnknownKeyException`; bridged with Cocoa's `NSKeyValueValidationError` (1024).
        public static let unknownKey = Code(rawValue: 1024)

        public var description: String {
            Self.names[rawValue].map { "\($0) (\(rawValue))" } ?? "\(rawValue)"
        }

        private static let names: [Int: String] = [
            1550: "managedObjectValidation", 1551: "managedObjectConstraintValidation",
            1560: "validationMultipleErrors", 1570: "validationMissingMandatoryProperty",
            1580: "validationRelationshipLacksMinimumCount", 1590: "validationRelationshipExceedsMaximumCount",
            1600: "validationRelationshipDeniedDelete", 1610: "validationNumberTooLarge",
            1620: "validationNumberTooSmall", 1630: "validationDateTooLate", 1640: "validationDateTooSoon",
            1650: "validationInvalidDate", 1660: "validationStringTooLong", 1670: "validationStringTooShort",
            1680: "validationStringPatternMatching", 1690: "validationInvalidURI",
            132_000: "managedObjectContextLocking", 132_010: "persistentStoreCoordinatorLocking",
            133_000: "managedObjectReferentialIntegrity", 133_010: "managedObjectExternalRelationship",
            133_020: "managedObjectMerge", 133_021: "managedObjectConstraintMerge",
            134_000: "persistentStoreInvalidType", 134_010: "persistentStoreTypeMismatch",
            134_020: "persistentStoreIncompatibleSchema", 134_030: "persistentStoreSave",
            134_040: "persistentStoreIncompleteSave", 134_050: "persistentStoreSaveConflicts",
            134_060: "coreDataError", 134_070: "persistentStoreOperation", 134_080: "persistentStoreOpen",
            134_090: "persistentStoreTimeout", 134_091: "persistentStoreUnsupportedRequestType",
            134_100: "persistentStoreIncompatibleVersionHash", 134_110: "migration",
            134_111: "migrationConstraintViolation", 134_120: "migrationCancelled",
            134_130: "migrationMissingSourceModel", 134_140: "migrationMissingMappingModel",
            134_150: "migrationManagerSourceStore", 134_160: "migrationManagerDestinationStore",
            134_170: "entityMigrationPolicy", 134_180: "sqlite", 134_190: "inferredMappingModel",
            134_200: "externalRecordImport", 134_301: "persistentHistoryTokenExpired",
            2048: "invalidFormat", 1024: "unknownKey", 259: "fileReadCorruptFile",
        ]
    }

    /// What went wrong, as a Cocoa code.
    public var code: Code
    /// A human-readable explanation; never contains attribute values.
    public var message: String
    /// The entity involved, if any.
    public var entityName: String?
    /// The property key involved, if any (`NSValidationKeyErrorKey`).
    public var key: String?
    /// The object involved, if any.
    public var objectID: NSManagedObjectID?
    /// The SQL statement involved, with `?` placeholders, never bound values.
    public var sql: String?
    /// The store file involved, if any (`NSPersistentStoreErrorKey`'s URL).
    public var url: URL?
    /// The SQLite result code, when the error comes from SQLite (`NSSQLiteErrorDomain`).
    public var sqliteCode: Int32?
    /// Errors this one groups (`NSDetailedErrorsKey`), for `validationMultipleErrors`.
    public var detailedErrors: [OpenCoreDataError]
    /// An underlying error (`NSUnderlyingErrorKey`).
    public var underlyingError: (any Error & Sendable)?
    /// The conflicts a save could not resolve (`conflictList`, ``NSPersistentStoreSaveConflictsErrorKey``):
    /// ``NSConstraintConflict``s for `managedObjectConstraintMerge`, ``NSMergeConflict``s for
    /// `persistentStoreSaveConflicts`. Read them on the saving context's queue: they hold its objects.
    public var conflictList: [Any] {
        get { _conflictList?.value ?? [] }
        set { _conflictList = newValue.isEmpty ? nil : UncheckedSendable(newValue) }
    }
    /// `@unchecked Sendable` box: the conflicts hold managed objects, which (as with the `NSError`s
    /// Apple throws) are only used on their context's queue.
    private var _conflictList: UncheckedSendable<[Any]>?
    /// The object, value and predicate of a validation error (see `OpenCoreDataError+Validation.swift`).
    package var _validation: ValidationErrorDetails?

    public init(
        _ code: Code, _ message: String, entityName: String? = nil, key: String? = nil,
        objectID: NSManagedObjectID? = nil, sql: String? = nil, url: URL? = nil, sqliteCode: Int32? = nil,
        detailedErrors: [OpenCoreDataError] = [], underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.entityName = entityName
        self.key = key
        self.objectID = objectID
        self.sql = sql
        self.url = url
        self.sqliteCode = sqliteCode
        self.detailedErrors = detailedErrors
        self.underlyingError = underlyingError
    }

    public static var errorDomain: String { NSCocoaErrorDomain }
    public var errorCode: Int { code.rawValue }

    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let key { info[NSValidationKeyErrorKey] = key }
        if let entityName { info["entity"] = entityName }
        if let objectID { info["objectID"] = objectID }
        if let url { info[NSURLErrorKey] = url; info[NSFilePathErrorKey] = url.path }
        if let sql { info["SQL"] = sql }
        if let sqliteCode { info[NSSQLiteErrorDomain] = Int(sqliteCode) }
        if !detailedErrors.isEmpty { info[NSDetailedErrorsKey] = detailedErrors.map { $0 as NSError } }
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError as NSError }
        if let _conflictList { info[NSPersistentStoreSaveConflictsErrorKey] = _conflictList.value }
        if let _validation { _validation.addUserInfo(to: &info) }
        return info
    }

    public var description: String {
        var parts = ["OpenCoreDataError \(code): \(message)"]
        if let entityName { parts.append("entity: \(entityName)") }
        if let key { parts.append("key: \(key)") }
        if let url { parts.append("file: \(url.path)") }
        if let sql { parts.append("SQL: \(sql)") }
        if let sqliteCode { parts.append("SQLite code: \(sqliteCode)") }
        if !detailedErrors.isEmpty { parts.append("errors: [\(detailedErrors.map(\.description).joined(separator: "; "))]") }
        if let underlyingError { parts.append("underlying: \(underlyingError)") }
        if let _conflictList { parts.append("conflicts: \(_conflictList.value.count)") }
        return parts.joined(separator: ", ")
    }
}

// MARK: - Apple's user-info keys and numeric codes

/// Related Core Data documentation: [NSDetailedErrorsKey](https://developer.apple.com/documentation/coredata/nsdetailederrorskey)
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// Related Core Data documentation: [NSValidationKeyErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationkeyerrorkey)
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// Related Core Data documentation: [NSValidationObjectErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationobjecterrorkey)
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
/// Related Core Data documentation: [NSValidationValueErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationvalueerrorkey)
public let NSValidationValueErrorKey = "NSValidationErrorValue"
/// Related Core Data documentation: [NSValidationPredicateErrorKey](https://developer.apple.com/documentation/coredata/nsvalidationpredicateerrorkey)
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
/// Related Core Data documentation: [NSAffectedStoresErrorKey](https://developer.apple.com/documentation/coredata/nsaffectedstoreserrorkey)
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
/// Related Core Data documentation: [NSAffectedObjectsErrorKey](https://developer.apple.com/documentation/coredata/nsaffectedobjectserrorkey)
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
/// Related Core Data documentation: [NSPersistentStoreSaveConflictsErrorKey](https://developer.apple.com/documentation/coredata/nspersistentstoresaveconflictserrorkey)
public let NSPersistentStoreSaveConflictsErrorKey = "conflictList"
/// Related Core Data documentation: [NSSQLiteErrorDomain](https://developer.apple.com/documentation/coredata/nssqliteerrordomain)
public let NSSQLiteErrorDomain = "NSSQLiteErrorDomain"

/// Related Core Data documentation: [Core Data error codes](https://developer.apple.com/documentation/coredata/1535452-validation_error_codes)
public let NSManagedObjectValidationError = 1550
public let NSManagedObjectConstraintValidationError = 1551
public let NSValidationMultipleErrorsError = 1560
public let NSValidationMissingMandatoryPropertyError = 1570
public let NSValidationRelationshipLacksMinimumCountError = 1580
public let NSValidationRelationshipExceedsMaximumCountError = 1590
public let NSValidationRelationshipDeniedDeleteError = 1600
public let NSValidationNumberTooLargeError = 1610
public let NSValidationNumberTooSmallError = 1620
public let NSValidationDateTooLateError = 1630
public let NSValidationDateTooSoonError = 1640
public let NSValidationInvalidDateError = 1650
public let NSValidationStringTooLongError = 1660
public let NSValidationStringTooShortError = 1670
public let NSValidationStringPatternMatchingError = 1680
public let NSValidationInvalidURIError = 1690
public let NSManagedObjectContextLockingError = 132_000
public let NSPersistentStoreCoordinatorLockingError = 132_010
public let NSManagedObjectReferentialIntegrityError = 133_000
public let NSManagedObjectExternalRelationshipError = 133_010
public let NSManagedObjectMergeError = 133_020
public let NSManagedObjectConstraintMergeError = 133_021
public let NSPersistentStoreInvalidTypeError = 134_000
public let NSPersistentStoreTypeMismatchError = 134_010
public let NSPersistentStoreIncompatibleSchemaError = 134_020
public let NSPersistentStoreSaveError = 134_030
public let NSPersistentStoreIncompleteSaveError = 134_040
public let NSPersistentStoreSaveConflictsError = 134_050
public let NSCoreDataError = 134_060
public let NSPersistentStoreOperationError = 134_070
public let NSPersistentStoreOpenError = 134_080
public let NSPersistentStoreTimeoutError = 134_090
public let NSPersistentStoreUnsupportedRequestTypeError = 134_091
public let NSPersistentStoreIncompatibleVersionHashError = 134_100
public let NSMigrationError = 134_110
public let NSMigrationConstraintViolationError = 134_111
public let NSMigrationCancelledError = 134_120
public let NSMigrationMissingSourceModelError = 134_130
public let NSMigrationMissingMappingModelError = 134_140
public let NSMigrationManagerSourceStoreError = 134_150
public let NSMigrationManagerDestinationStoreError = 134_160
public let NSEntityMigrationPolicyError = 134_170
public let NSSQLiteError = 134_180
public let NSInferredMappingModelError = 134_190
public let NSExternalRecordImportError = 134_200
public let NSPersistentHistoryTokenExpiredError = 134_301
