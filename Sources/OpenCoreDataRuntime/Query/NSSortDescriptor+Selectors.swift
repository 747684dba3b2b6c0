import Foundation

/// The comparison methods a sort descriptor's selector may name, and how each orders strings.
///
/// Strings compare as the `NSString` method of that name does; other values (numbers, dates, nil)
/// compare as `compare:` does, so a descriptor with `caseInsensitiveCompare:` on a number attribute
/// sorts numerically instead of raising as on Apple platforms.
package enum SortSelector: Int32, CaseIterable, Sendable {
    case compare = 0
    case caseInsensitiveCompare = 1
    case localizedCompare = 2
    case localizedCaseInsensitiveCompare = 3
    case localizedStandardCompare = 4

    package init?(name: String) {
        switch name {
        case "compare:": self = .compare
        case "caseInsensitiveCompare:": self = .caseInsensitiveCompare
        case "localizedCompare:": self = .localizedCompare
        case "localizedCaseInsensitiveCompare:": self = .localizedCaseInsensitiveCompare
        case "localizedStandardCompare:": self = .localizedStandardCompare
        default: return nil
        }
    }

    package var name: String {
        switch self {
        case .compare: "compare:"
        case .caseInsensitiveCompare: "caseInsensitiveCompare:"
        case .localizedCompare: "localizedCompare:"
        case .localizedCaseInsensitiveCompare: "localizedCaseInsensitiveCompare:"
        case .localizedStandardCompare: "localizedStandardCompare:"
        }
    }

    /// The name of the SQLite collation that orders text as this selector does (`nil` for `compare:`,
    /// which is SQLite's BINARY order).
    package var collationName: String? {
        switch self {
        case .compare: nil
        case .caseInsensitiveCompare: "OCD_CASEINSENSITIVE"
        case .localizedCompare: "OCD_LOCALIZED"
        case .localizedCaseInsensitiveCompare: "OCD_LOCALIZED_CASEINSENSITIVE"
        case .localizedStandardCompare: "OCD_LOCALIZED_STANDARD"
        }
    }

    /// The order of two strings by this selector.
    package func compare(_ a: String, _ b: String) -> ComparisonResult {
        switch self {
        case .compare: a < b ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
        case .caseInsensitiveCompare: a.compare(b, options: .caseInsensitive)
        case .localizedCompare: a.localizedCompare(b)
        case .localizedCaseInsensitiveCompare: a.localizedCaseInsensitiveCompare(b)
        case .localizedStandardCompare: a.localizedStandardCompare(b)
        }
    }

    /// The order of two values (nil first), strings by this selector, others by `compare:`.
    package func order(_ a: Any?, _ b: Any?) -> ComparisonResult {
        guard self != .compare,
            let x = PredicateValues.normalize(a).flatMap(PredicateValues.string),
            let y = PredicateValues.normalize(b).flatMap(PredicateValues.string)
        else { return NSSortDescriptor.defaultOrder(a, b) }
        return compare(x, y)
    }
}
