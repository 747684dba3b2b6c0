import Foundation
import Synchronization

/// The common comparison `key op constant` (`code == 5`, `name == "Ann"`, `age > 30`) evaluated on a
/// managed object without the general walk: the attribute is read through the object's slot (with
/// `willAccessValue`/`didAccessValue`, as the walk does), and compared with the constant, which was
/// classified once, at the predicate's first evaluation.
///
/// It gives the general evaluation's answer or none: it decides only when the attribute's value is
/// nil (equal to no constant, ordered against none), or a number and the constant a number
/// (``PredicateValues/number(_:)`` and ``PredicateValues/compareNumbers(_:_:)``, NaN comparing
/// false), or both are `String`s compared for (in)equality without folding. Anything else (a value
/// of another kind than the constant, other keys, other objects than managed objects) goes to
/// ``PredicateEvaluator``, which reads the value again. The seeds' `materializedObject` check runs
/// such a predicate on every registered object.
struct DirectComparison {
    private enum Constant {
        case number(PredicateNumber)
        case string(String)
    }

    private let key: String
    private let constant: Constant
    private let type: NSComparisonPredicate.Operator

    /// The direct form of a comparison, or `nil` when it has none.
    init?(
        left: NSExpression, right: NSExpression, modifier: NSComparisonPredicate.Modifier,
        type: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options
    ) {
        guard modifier == .direct, case .keyPath(nil, let key) = left._node, !key.isEmpty,
            !PredicateKeyPath.isCompound(key), key.utf8.first != UInt8(ascii: "@"), key != "self", key != "SELF",
            case .constant(let value?) = right._node
        else { return nil }
        switch type {
        case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo: break
        default: return nil
        }
        if let string = ValueConversion.exactly(value, as: String.self) {
            // Unfolded equality only: `[n]` does not fold either.
            guard type == .equalTo || type == .notEqualTo, options.subtracting(.normalized).isEmpty else { return nil }
            constant = .string(string)
        } else if let number = PredicateValues.number(value) {
            constant = .number(number)
        } else {
            return nil
        }
        self.key = key
        self.type = type
    }

    /// A predicate's direct form once worked out (`nil` when it has none), as one reference that
    /// can be published atomically.
    final class Form: Sendable {
        let direct: DirectComparison?
        init(_ direct: DirectComparison?) { self.direct = direct }

        /// ``DirectComparison/evaluate(_:hint:)`` on the comparison in place: reading `direct` out
        /// copied it for every evaluation, which cost about as much as the evaluation (callgrind
        /// case 7).
        func evaluate(_ object: Any?, hint: borrowing Atomic<UInt64>) -> Bool? {
            direct?.evaluate(object, hint: hint)
        }
    }

    /// `hint`'s value before any evaluation.
    static let noHint = UInt64.max

    /// The comparison's result on `object`, or `nil` to leave it to the general evaluation.
    ///
    /// `hint` remembers the key's slot in the last entity layout read, as the layout's unique `id`
    /// and the slot in one word, so that evaluating the predicate on many objects of one entity (the
    /// seeds' `materializedObject` scan) finds the slot without hashing the key each time (a third
    /// of the evaluation, callgrind case 7). Layout IDs are never reused; a stale or raced hint only
    /// means a lookup.
    func evaluate(_ object: Any?, hint: borrowing Atomic<UInt64>) -> Bool? {
        guard let managed = ValueConversion.managedObject(in: object) else { return nil }
        let layout = managed._layout
        let remembered = hint.load(ordering: .relaxed)
        let slot: Int
        if remembered != Self.noHint, UInt32(truncatingIfNeeded: remembered >> 32) == layout.id {
            slot = Int(UInt32(truncatingIfNeeded: remembered))
        } else {
            guard let found = layout.indexByName[key] else { return nil }
            slot = found
            hint.store(UInt64(layout.id) << 32 | UInt64(UInt32(truncatingIfNeeded: found)), ordering: .relaxed)
        }
        // A number in its typed field is compared where it lies: boxing it and finding its type
        // again was most of an evaluation, about 700 instructions (callgrind case 7).
        let value: Any
        switch managed._comparableValue(forKey: key, slot: slot) {
        case .none: return type == .notEqualTo  // nil equals no constant and has no order
        case .number(let x):
            guard case .number(let y) = constant else { return nil }
            return compare(x, y)
        case .value(let read): value = read
        }
        switch constant {
        case .number(let y):
            guard let x = PredicateValues.number(value) else { return nil }
            return compare(x, y)
        case .string(let y):
            guard let x = ValueConversion.exactly(value, as: String.self) else { return nil }
            return (x == y) == (type == .equalTo)
        }
    }

    /// The comparison of the numbers `x` (the attribute's) and `y` (the constant).
    private func compare(_ x: PredicateNumber, _ y: PredicateNumber) -> Bool {
        if x.doubleValue.isNaN || y.doubleValue.isNaN { return type == .notEqualTo }  // NaN: no order, not equal
        let order = PredicateValues.compareNumbers(x, y)
        switch type {
        case .equalTo: return order == .orderedSame
        case .notEqualTo: return order != .orderedSame
        case .lessThan: return order == .orderedAscending
        case .lessThanOrEqualTo: return order != .orderedDescending
        case .greaterThan: return order == .orderedDescending
        default: return order != .orderedAscending
        }
    }
}
