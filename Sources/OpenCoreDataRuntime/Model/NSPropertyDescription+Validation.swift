import Foundation

/// A validation predicate a value did not satisfy, with the Cocoa code and message it reports.
package struct ValidationPredicateFailure {
    package let predicate: NSPredicate
    package let code: OpenCoreDataError.Code
    package let message: String
}

extension NSPropertyDescription {
    /// The validation predicates `value` (not `nil`: requiredness is checked apart) fails.
    ///
    /// Each predicate is evaluated with the value as `SELF` (`SELF <= 100`, `length >= 3`,
    /// `SELF MATCHES "[a-z]+"`). The warning at the same index decides the error:
    /// - a number (what Xcode's model compiler stores, and what the model reader stores here) is
    ///   the Cocoa code itself;
    /// - otherwise the predicate's shape picks Cocoa's code as for Xcode's bounds (`length >=`:
    ///   `NSValidationStringTooShortError`, `SELF <=` on a date: `NSValidationDateTooLateError`,
    ///   `MATCHES`: `NSValidationStringPatternMatchingError`, ...), and any other predicate reports
    ///   `NSManagedObjectValidationError`; a string warning becomes the error's message.
    package func _failedValidationPredicates(for value: Any) -> [ValidationPredicateFailure] {
        var failures: [ValidationPredicateFailure] = []
        let predicates = validationPredicates
        guard !predicates.isEmpty else { return failures }
        let warnings = validationWarnings
        for (index, predicate) in predicates.enumerated() where !(Self._evaluateBound(predicate, value) ?? predicate.evaluate(with: value)) {
            let warning = index < warnings.count ? warnings[index] : nil
            failures.append(_failure(predicate, warning: warning))
        }
        return failures
    }

    /// The answer of a bound (`SELF <= 100`, `length >= 3`: a plain comparison of the value or its
    /// length with a constant) by the evaluator's own comparison, without walking the expression
    /// trees; `nil` for any other predicate (and for subclasses), which evaluate as usual.
    private static func _evaluateBound(_ predicate: NSPredicate, _ value: Any) -> Bool? {
        guard type(of: predicate) == NSComparisonPredicate.self, let comparison = predicate as? NSComparisonPredicate,
              comparison.comparisonPredicateModifier == .direct,
              case .constant(let bound) = comparison.rightExpression._node else { return nil }
        let lhs: Any?
        switch comparison.leftExpression._node {
        case .evaluatedObject:
            lhs = value
        case .keyPath(let operand, let path) where path == "length" && (operand == nil || operand?.expressionType == .evaluatedObject):
            lhs = PredicateKeyPath.step(value, "length")
        default:
            return nil
        }
        return PredicateEvaluator.test(lhs, comparison.predicateOperatorType, bound, comparison.options)
    }

    private func _failure(_ predicate: NSPredicate, warning: Any?) -> ValidationPredicateFailure {
        if let number = Self._code(from: warning) {
            let code = OpenCoreDataError.Code(rawValue: number)
            return ValidationPredicateFailure(predicate: predicate, code: code, message: _defaultMessage(for: code))
        }
        let code = _code(forShapeOf: predicate)
        let message = (warning as? String).map { $0.isEmpty ? _defaultMessage(for: code) : $0 } ?? _defaultMessage(for: code)
        return ValidationPredicateFailure(predicate: predicate, code: code, message: message)
    }

    private static func _code(from warning: Any?) -> Int? {
        switch warning {
        case let code as Int: code
        case let number as NSNumber: number.intValue
        case let code as OpenCoreDataError.Code: code.rawValue
        default: nil
        }
    }

    /// Cocoa's code for a bound written as a predicate; `managedObjectValidation` for anything else.
    private func _code(forShapeOf predicate: NSPredicate) -> OpenCoreDataError.Code {
        guard let comparison = predicate as? NSComparisonPredicate, comparison.comparisonPredicateModifier == .direct else {
            return .managedObjectValidation
        }
        let operatorType = comparison.predicateOperatorType
        if operatorType == .matches { return .validationStringPatternMatching }
        let isLowerBound = operatorType == .greaterThan || operatorType == .greaterThanOrEqualTo
        let isUpperBound = operatorType == .lessThan || operatorType == .lessThanOrEqualTo
        guard isLowerBound || isUpperBound else { return .managedObjectValidation }
        let left = comparison.leftExpression
        let leftKey = left.expressionType == .keyPath ? left.keyPath : nil
        if leftKey == "length" {
            return isLowerBound ? .validationStringTooShort : .validationStringTooLong
        }
        guard left.expressionType == .evaluatedObject || leftKey == "SELF" || leftKey == "self" else {
            return .managedObjectValidation
        }
        let isDate = (self as? NSAttributeDescription)?.attributeType == .dateAttributeType
            || comparison.rightExpression.expressionType == .constantValue && comparison.rightExpression.constantValue is Date
        if isDate { return isLowerBound ? .validationDateTooSoon : .validationDateTooLate }
        return isLowerBound ? .validationNumberTooSmall : .validationNumberTooLarge
    }

    /// A message that names the property, never the value.
    package func _defaultMessage(for code: OpenCoreDataError.Code) -> String {
        switch code {
        case .validationNumberTooSmall: "\(name) is too small"
        case .validationNumberTooLarge: "\(name) is too large"
        case .validationDateTooSoon: "\(name) is too soon"
        case .validationDateTooLate: "\(name) is too late"
        case .validationStringTooShort: "\(name) is too short"
        case .validationStringTooLong: "\(name) is too long"
        case .validationStringPatternMatching: "\(name) does not match its regular expression"
        case .validationMissingMandatoryProperty: "\(name) is a required value"
        default: "\(name) failed a validation predicate"
        }
    }
}

extension NSAttributeDescription {
    /// Turns the bounds an Xcode model file gives (`minValueString`, `maxValueString`,
    /// `minDateTimeInterval`, `maxDateTimeInterval`, `regularExpressionString`) into validation
    /// predicates, as Xcode's model compiler does, with Cocoa's codes as warnings:
    ///
    /// | attribute | predicate | code |
    /// |---|---|---|
    /// | Integer, Decimal, Double, Float | `SELF >= min`, `SELF <= max` | 1620, 1610 |
    /// | Date | `SELF >= min`, `SELF <= max` (dates) | 1640, 1630 |
    /// | String, Binary | `length >= min`, `length <= max` | 1670, 1660 |
    /// | String | `SELF MATCHES regex` | 1680 |
    ///
    /// Text that does not convert to the attribute's type is ignored, as a bound Xcode could not
    /// have written; the text stays in the model file info.
    package func _setValidationPredicates(fromXcode extras: XcodeModelPropertyExtras) {
        var predicates: [NSPredicate] = []
        var warnings: [Any] = []
        func add(_ format: String, _ bound: Any, _ code: OpenCoreDataError.Code) {
            predicates.append(NSPredicate(format: format, argumentArray: [bound]))
            warnings.append(code.rawValue)
        }
        func bound(_ text: String?, interval: Double?) -> Any? {
            switch attributeType {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
                 .decimalAttributeType, .doubleAttributeType, .floatAttributeType:
                guard let text else { return nil }
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                if attributeType == .decimalAttributeType { return Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")) }
                return Int64(trimmed).map { $0 as Any } ?? Double(trimmed)
            case .dateAttributeType:
                guard text != nil || interval != nil else { return nil }
                return XcodeModelBuilder.defaultValue(
                    string: text, dateTimeInterval: interval.map { String($0) }, type: .dateAttributeType)
            case .stringAttributeType, .binaryDataAttributeType:
                return text.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            default:
                return nil
            }
        }
        let isLength = attributeType == .stringAttributeType || attributeType == .binaryDataAttributeType
        let isDate = attributeType == .dateAttributeType
        if let minimum = bound(extras.minValueString, interval: extras.minDateTimeInterval) {
            add(isLength ? "length >= %@" : "SELF >= %@", minimum,
                isLength ? .validationStringTooShort : isDate ? .validationDateTooSoon : .validationNumberTooSmall)
        }
        if let maximum = bound(extras.maxValueString, interval: extras.maxDateTimeInterval) {
            add(isLength ? "length <= %@" : "SELF <= %@", maximum,
                isLength ? .validationStringTooLong : isDate ? .validationDateTooLate : .validationNumberTooLarge)
        }
        if attributeType == .stringAttributeType, let pattern = extras.regularExpressionString, !pattern.isEmpty {
            add("SELF MATCHES %@", pattern, .validationStringPatternMatching)
        }
        guard !predicates.isEmpty else { return }
        _setValidationPredicates(predicates, warnings: warnings)
    }
}
