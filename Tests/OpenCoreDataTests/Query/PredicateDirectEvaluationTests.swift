import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// `key op constant` on a managed object takes a direct path (`DirectComparison`); it must answer as
/// the general evaluation does, which a dictionary of the same values takes. Every operator runs
/// against attributes of each numeric type, strings, nils and NaN, with constants of several types.
@Suite("Direct evaluation of key-constant comparisons")
struct PredicateDirectEvaluationTests {
    static let keys = ["int16", "int32", "int64", "double", "float", "bool", "string", "decimal", "date"]

    @Test func managedObjectsAnswerAsDictionaries() throws {
        let store = try TestStore(NSInMemoryStoreType)
        let context = store.newContext()
        let rows: [[String: Any]] = [
            ["int16": Int16(5), "int32": Int32(-7), "int64": Int64(1) << 40, "double": 5.0, "float": Float(2.5),
             "bool": true, "string": "Zoë", "decimal": Decimal(5), "date": Date(timeIntervalSinceReferenceDate: 5)],
            ["int16": Int16(0), "double": Double.nan, "bool": false, "string": "5"],
            ["string": "zoë", "float": Float.nan],
            [:],
        ]
        let constants: [Any] = [
            5, Int64(1) << 40, -7, 0, 5.0, 2.5, 1, Double.nan, true, false, "Zoë", "Zoe\u{308}", "5",
            NSNumber(value: 5), Decimal(5),
        ]
        let operators = ["==", "!=", "<", "<=", ">", ">="]
        context.performAndWait {
            for row in rows {
                let object = insertObject("Item", row, into: context)
                for key in Self.keys {
                    for op in operators {
                        for constant in constants {
                            for options in ["", "[n]", "[c]"] {
                                let predicate = NSPredicate(format: "%K \(op)\(options) %@", key, constant)
                                let direct = predicate.evaluate(with: object)
                                let general = predicate.evaluate(with: row)
                                #expect(direct == general, "\(key) \(op)\(options) \(constant) on \(row[key] ?? "nil")")
                            }
                        }
                    }
                }
            }
        }
    }

    /// The direct path reads the attribute as the walk does: a fault fires.
    @Test func faultsFire() throws {
        let store = try TestStore(NSSQLiteStoreType)
        let writer = store.newContext()
        try writer.performAndWait {
            insertObject("Item", ["int16": Int16(3)], into: writer)
            try writer.save()
        }
        let reader = store.newContext()
        try reader.performAndWait {
            let item = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).first)
            #expect(item.isFault)
            #expect(NSPredicate(format: "int16 == %d", 3).evaluate(with: item))
            #expect(!item.isFault)
        }
    }

    /// A number read in place for the comparison is still an access: `willAccessValue(forKey:)` and
    /// `didAccessValue(forKey:)` run once each per evaluation, as for any read.
    final class Counted: NSManagedObject {
        var will = 0, did = 0
        override func willAccessValue(forKey key: String?) { will += 1; super.willAccessValue(forKey: key) }
        override func didAccessValue(forKey key: String?) { did += 1; super.didAccessValue(forKey: key) }
    }

    @Test func aNumberReadInPlaceIsStillAnAccess() throws {
        let entity = NSEntityDescription(name: "Gauge", properties: [
            NSAttributeDescription(name: "level", type: .integer16AttributeType),
            NSAttributeDescription(name: "ratio", type: .floatAttributeType),
        ])
        entity.managedObjectClassName = String(reflecting: Counted.self)
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let store = try TestStore(NSInMemoryStoreType, model: model)
        let context = store.newContext()
        context.performAndWait {
            let gauge = Counted(context: context)
            gauge.setValue(Int16(7), forKey: "level")
            gauge.setValue(Float(0.5), forKey: "ratio")
            (gauge.will, gauge.did) = (0, 0)
            #expect(NSPredicate(format: "level == 7").evaluate(with: gauge))
            #expect(NSPredicate(format: "ratio < %f", 0.75).evaluate(with: gauge))
            #expect(!NSPredicate(format: "level > %d", 7).evaluate(with: gauge))
            #expect(gauge.will == 3 && gauge.did == 3)
        }
    }

    /// One predicate evaluated on objects of entities that keep its key in different slots, or not
    /// at all, in turn: the slot it remembers from one entity is never used for another.
    @Test func onePredicateAcrossEntities() throws {
        let first = NSEntityDescription(name: "First", properties: [
            NSAttributeDescription(name: "code", type: .integer16AttributeType),
            NSAttributeDescription(name: "other", type: .integer16AttributeType),
        ])
        let second = NSEntityDescription(name: "Second", properties: [
            NSAttributeDescription(name: "other", type: .integer16AttributeType),
            NSAttributeDescription(name: "code", type: .integer16AttributeType),
        ])
        let third = NSEntityDescription(name: "Third", properties: [
            NSAttributeDescription(name: "other", type: .integer16AttributeType)
        ])
        let model = NSManagedObjectModel()
        model.entities = [first, second, third]
        let store = try TestStore(NSInMemoryStoreType, model: model)
        let context = store.newContext()
        context.performAndWait {
            let a = insertObject("First", ["code": Int16(7), "other": Int16(1)], into: context)
            let b = insertObject("Second", ["code": Int16(1), "other": Int16(7)], into: context)
            let c = insertObject("Third", ["other": Int16(7)], into: context)
            let predicate = NSPredicate(format: "code == 7")
            for _ in 0..<3 {
                #expect(predicate.evaluate(with: a))
                #expect(!predicate.evaluate(with: b))
                #expect(!predicate.evaluate(with: c), "no such key: not equal (Apple raises; the general path says false)")
                #expect(predicate.evaluate(with: ["code": 7]))
            }
        }
    }
}
