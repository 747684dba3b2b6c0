import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
@testable import OpenCoreDataRuntime
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An object's values are stored in typed fields (`RowValues`) but read and written as `Any?`, as
/// the `ContiguousArray<Any?>` they replace was: these check that nothing a slot is given changes
/// type, that copies are independent, and that references are released.
@Suite("Row values in typed fields")
struct RowValuesTests {
    /// int64, string, int16, double, bool, date, decimal (an `Any` field), float, int32.
    private static let layout = RowLayout(attributeTypes: [
        .integer64AttributeType, .stringAttributeType, .integer16AttributeType, .doubleAttributeType,
        .booleanAttributeType, .dateAttributeType, .decimalAttributeType, .floatAttributeType, .integer32AttributeType, nil,
    ])

    private final class Marker {}

    @Test func valuesOfTheSlotsTypesReadBackExactly() {
        var values = RowValues(for: Self.layout)
        #expect(values.count == 10)
        #expect(values.allSatisfy { $0 == nil })
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        values[0] = Int64(-7)
        values[1] = "a string longer than fifteen bytes, so it lives on the heap"
        values[2] = Int16(3)
        values[3] = 2.5
        values[4] = true
        values[5] = date
        values[6] = Decimal(string: "1.25")!
        values[7] = Float(0.5)
        values[8] = Int32(9)
        #expect(values[0] as? Int64 == -7 && type(of: values[0]!) == Int64.self)
        #expect(values[1] as? String == "a string longer than fifteen bytes, so it lives on the heap")
        #expect(type(of: values[2]!) == Int16.self && values[2] as? Int16 == 3)
        #expect(values[3] as? Double == 2.5 && values[4] as? Bool == true && values[5] as? Date == date)
        #expect(values[6] as? Decimal == Decimal(string: "1.25"))
        #expect(type(of: values[7]!) == Float.self && type(of: values[8]!) == Int32.self)
        #expect(values.exactly(0, as: Int64.self) == -7)
        #expect(values.exactly(0, as: Int.self) == nil)  // no answer for another type: the caller converts
        #expect(values.exactly(2, as: Int16.self) == 3)
        #expect(values.exactly(5, as: Date.self) == date)
        values[0] = nil
        #expect(values[0] == nil && values.isNil(0) && values.exactly(0, as: Int64.self) == nil)
    }

    /// Typed accessors read an object's values in place (`RowValues.exactly(at:_:as:)`), loading
    /// the storage reference's bits from the values' address and the row offset's after them: that
    /// needs the values to be that reference and a 16-bit offset (10 bytes, which an object's
    /// layout counts on), and the answers to be `exactly(_:as:)`'s.
    @Test func valuesReadInPlaceAnswerAsACopyDoes() {
        #expect(MemoryLayout<RowValues>.size == MemoryLayout<UnsafeRawPointer>.size + MemoryLayout<UInt16>.size)
        #expect(MemoryLayout<RowValues?>.size == MemoryLayout<RowValues>.size)
        #expect(MemoryLayout<RowStorage.Header>.offset(of: \RowStorage.Header.layout) == 0, "read by address")
        var values = RowValues(for: Self.layout)
        values[0] = Int64(42)
        values[1] = "in place"
        values[3] = 2.5
        values[6] = Decimal(7)
        values[8] = Int(5)  // another type than the slot's: kept aside, no exact Int32 answer
        withUnsafePointer(to: &values) { address in
            #expect(RowValues.exactly(at: address, 0, as: Int64.self) == 42)
            #expect(RowValues.exactly(at: address, 0, as: Int.self) == nil)
            #expect(RowValues.exactly(at: address, 1, as: String.self) == "in place")
            #expect(RowValues.exactly(at: address, 3, as: Double.self) == 2.5)
            #expect(RowValues.exactly(at: address, 6, as: Decimal.self) == address.pointee.exactly(6, as: Decimal.self))
            #expect(RowValues.exactly(at: address, 8, as: Int32.self) == nil)
            #expect(RowValues.exactly(at: address, 8, as: Int.self) == 5)
            #expect(RowValues.exactly(at: address, 2, as: Int16.self) == nil, "an empty slot")
            #expect(RowValues.exactly(at: address, 10, as: Int16.self) == nil, "past the last slot")
        }
        var empty = RowValues()  // a fault's: no storage
        withUnsafePointer(to: &empty) { #expect(RowValues.exactly(at: $0, 0, as: Int64.self) == nil) }
    }

    @Test func aValueOfAnotherTypeIsKeptAsItWasGiven() {
        var values = RowValues(for: Self.layout)
        values[0] = 42  // an Int in an Int64 attribute's slot
        values[1] = NSNumber(value: 5)  // not a String at all
        values[3] = NSNull()
        #expect(type(of: values[0]!) == Int.self && values[0] as? Int == 42)
        #expect(values.exactly(0, as: Int64.self) == nil)
        #expect(values.exactly(0, as: Int.self) == 42)
        #expect(values[1] is NSNumber && values[3] is NSNull)
        // Replacing it with a value of the slot's type, then nil, leaves nothing on the side.
        values[0] = Int64(1)
        #expect(type(of: values[0]!) == Int64.self)
        values[1] = nil
        #expect(values[1] == nil)
    }

    @Test func aCopyIsIndependentOfTheOriginal() {
        var original = RowValues(for: Self.layout)
        original[1] = "before, and long enough to be a heap string"
        original[9] = [1, 2, 3]
        original[0] = 7  // Int, on the side
        var copy = original
        copy[1] = "after"
        copy[9] = nil
        copy[0] = Int64(8)
        #expect(original[1] as? String == "before, and long enough to be a heap string")
        #expect(original[9] as? [Int] == [1, 2, 3])
        #expect(original[0] as? Int == 7)
        #expect(copy[1] as? String == "after" && copy[9] == nil && copy[0] as? Int64 == 8)
    }

    @Test func referencesAreReleasedWithTheLastCopy() {
        weak var watched: Marker?
        do {
            var values = RowValues(for: Self.layout)
            let marker = Marker()
            watched = marker
            values[9] = marker
            values[0] = marker  // on the side: not an Int64
            var copy = values
            copy[2] = Int16(1)  // forces a copy of the storage holding the reference
            values = RowValues()
            #expect(watched != nil)
            #expect(copy[9] as AnyObject? === marker)
        }
        #expect(watched == nil)
    }

    @Test func aFetchedObjectsValuesReadAsTheyWereSaved() throws {
        let store = try TestStore(NSSQLiteStoreType, model: TestModels.graph())
        let context = store.newContext()
        insertObject("Item", ["uid": Int64(3)], into: context)
        try context.save()
        let reader = store.newContext()
        let item = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).first)
        #expect(item.value(forKey: "uid") as? Int64 == 3)
        // The fetched row's storage is shared with its snapshot until the object changes.
        item.setValue(Int64(4), forKey: "uid")
        #expect(item.value(forKey: "uid") as? Int64 == 4)
        #expect(item.committedValues(forKeys: ["uid"])["uid"] as? Int64 == 3)
    }

    /// A save makes the values it wrote the committed snapshot: the values themselves when the
    /// entity has no relationships (as after a fetch), held apart when it has some (to-ones as IDs).
    /// Either way a later change leaves the snapshot as saved, and `rollback()` returns to it.
    @Test(arguments: [false, true])
    func aSavedObjectsSnapshotIsWhatItWrote(withRelationships: Bool) throws {
        let model: NSManagedObjectModel
        if withRelationships {
            model = TestModels.graph()
        } else {
            model = NSManagedObjectModel()
            model.entities = [NSEntityDescription(name: "Item", properties: [
                NSAttributeDescription(name: "uid", type: .integer64AttributeType, isOptional: false),
                NSAttributeDescription(name: "value", type: .integer32AttributeType),
            ])]
        }
        let store = try TestStore(NSSQLiteStoreType, model: model)
        let context = store.newContext()
        let item = insertObject("Item", ["uid": Int64(1), "value": Int32(10)], into: context)
        func committed() -> Int32? { item.committedValues(forKeys: ["value"])["value"] as? Int32 }
        try context.save()  // inserted
        #expect(committed() == 10)
        #expect(item.changedValues().isEmpty)
        #expect((item._snapshot?.storageForTesting === item._values.storageForTesting) == !withRelationships)

        item.setValue(Int32(11), forKey: "value")
        #expect(committed() == 10)
        #expect(item.changedValues()["value"] as? Int32 == 11)
        try context.save()  // updated
        #expect(committed() == 11)
        #expect(item.changedValues().isEmpty)

        item.setValue(Int32(12), forKey: "value")
        #expect(committed() == 11, "the change copies the values before it writes")
        context.rollback()
        #expect(item.value(forKey: "value") as? Int32 == 11)
        let stored = try store.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        #expect(stored.map { $0.value(forKey: "value") as? Int32 } == [11])
    }

    /// A fetch's rows share storages (`RowChunks`), and a row's values keep its byte offset in 16
    /// bits: rows so wide that 64 of them pass 65,535 bytes share a storage with fewer others (a
    /// row of 300 strings, about 5 KB: 12 a storage), and a row wider than that has one of its own.
    @Test(arguments: [300, 5_000])
    func wideRowsOfAFetchKeepTheirOwnValues(strings: Int) {
        let layout = RowLayout(attributeTypes: Array(repeating: .stringAttributeType, count: strings))
        var chunks = RowChunks()
        let rows = (0..<100).map { row in
            RowValues(for: layout, in: &chunks) { writer in
                writer.initialize(0, to: "first \(row)")
                writer.initialize(strings - 1, to: "last \(row)")
            }
        }
        for (row, values) in rows.enumerated() {
            #expect(values[0] as? String == "first \(row)" && values[strings - 1] as? String == "last \(row)")
            #expect(values[1] == nil)
        }
    }
}

/// The changed-slot set keeps slots below 64 in a word of its own and the others in an array.
@Suite("Changed-slot sets")
struct SlotSetTests {
    @Test func slotsOnBothSidesOfTheInlineWordAreKeptInOrder() {
        var set = SlotSet()
        #expect(set.isEmpty && Array(set).isEmpty)
        for slot in [200, 3, 63, 64, 0, 130, 3] { set.insert(slot) }
        #expect(Array(set) == [0, 3, 63, 64, 130, 200])
        #expect(set.contains(63) && set.contains(64) && set.contains(200) && !set.contains(65) && !set.contains(1))
        #expect(!set.contains(-1) && !set.contains(10_000))
        set.removeAll()
        #expect(set.isEmpty && Array(set).isEmpty && !set.contains(64))
        set.insert(70)
        #expect(Array(set) == [70] && !set.isEmpty)
        set.insert(-1)  // no slot: not added (it trapped)
        #expect(Array(set) == [70] && !set.contains(-1))
    }

    /// An object keeps its changed slots 0 to 63 in a word of its own and any others aside, by
    /// object: an entity of 70 attributes tracks, saves and forgets changes on both sides, and the
    /// aside entry goes with the save, the rollback and the object.
    @Test func anEntityOfMoreThan64PropertiesTracksItsChanges() throws {
        let names = (0..<70).map { "a\($0)" }
        let (model, entity) = TestModels.wide(attributes: names.count)
        let store = try TestStore(NSSQLiteStoreType, model: model)
        func aside(_ object: NSManagedObject) -> [UInt64]? {
            NSManagedObject._wideChangedSlotsForTesting(ObjectIdentifier(object))
        }
        let freed: ObjectIdentifier
        do {
            let context = store.newContext()
            let object = NSManagedObject(entity: entity, insertInto: context)
            for (i, name) in names.enumerated() { object.setValue(Int64(i), forKey: name) }
            try context.save()
            #expect(!object.hasChanges && object.changedValues().isEmpty && aside(object) == nil)

            object.setValue(Int64(1_000), forKey: "a69")
            #expect(object.isUpdated && object.hasChanges)
            #expect(Set(object.changedValues().keys) == ["a69"])
            #expect(aside(object) == [1 << 5])
            object.setValue(Int64(2_000), forKey: "a3")
            #expect(Set(object.changedValues().keys) == ["a3", "a69"])
            try context.save()
            #expect(!object.hasChanges && aside(object) == nil)

            let reader = store.newContext()
            let fetched = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Wide")).first)
            #expect(fetched.value(forKey: "a69") as? Int64 == 1_000 && fetched.value(forKey: "a3") as? Int64 == 2_000)
            #expect(fetched.value(forKey: "a68") as? Int64 == 68)
            fetched.setValue(Int64(5), forKey: "a65")
            #expect(Set(fetched.changedValues().keys) == ["a65"] && aside(fetched) == [1 << 1])
            reader.rollback()
            #expect(!fetched.hasChanges && fetched.value(forKey: "a65") as? Int64 == 65 && aside(fetched) == nil)
            fetched.setValue(Int64(6), forKey: "a66")
            #expect(aside(fetched) == [1 << 2])
            reader.reset()
            // An object of no context, freed with its changes.
            let loose = NSManagedObject(entity: entity, insertInto: nil)
            loose.setValue(Int64(7), forKey: "a67")
            #expect(aside(loose) == [1 << 3])
            freed = ObjectIdentifier(loose)
        }
        #expect(NSManagedObject._wideChangedSlotsForTesting(freed) == nil, "an object freed with changes leaves none")
    }
}

#if canImport(Glibc) && !OCD_PORTABLE_RUNTIME
/// Memory per object: the object and its values' storage stay in the allocation sizes measured for
/// the benchmarks (glibc's `malloc_usable_size`; Swift allocates objects with `malloc`). Not with
/// `OCD_PORTABLE_RUNTIME`, whose objects hold a weak reference more (docs/runtime-internals.md).
@Suite("Object allocation sizes")
struct ObjectAllocationSizeTests {
    /// glibc's `malloc_usable_size`, which Swift's Glibc module does not export.
    private func usableSize(_ object: AnyObject) throws -> Int {
        typealias Function = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"))
        return unsafeBitCast(symbol, to: Function.self)(Unmanaged.passUnretained(object).toOpaque())
    }

    @Test func anObjectAndItsValuesStayInTheirAllocations() throws {
        let entity = NSEntityDescription(name: "Row", managedObjectClassName: "NSManagedObject", properties: [
            NSAttributeDescription(name: "id", type: .integer64AttributeType),
            NSAttributeDescription(name: "name", type: .stringAttributeType),
            NSAttributeDescription(name: "rank", type: .integer16AttributeType),
            NSAttributeDescription(name: "score", type: .doubleAttributeType),
            NSAttributeDescription(name: "weight", type: .doubleAttributeType),
            NSAttributeDescription(name: "createdAt", type: .dateAttributeType),
            NSAttributeDescription(name: "flag", type: .booleanAttributeType),
            NSAttributeDescription(name: "note", type: .stringAttributeType),
        ])
        let model = NSManagedObjectModel()
        model.entities = [entity]
        // The smallest of many: malloc serves a request from a larger free chunk when one leaves too
        // little to split off, so one allocation's usable size depends on what the process (its other
        // tests, running in parallel) freed before. Sixteen were all served so once in CI; a thousand
        // use up such chunks, while a larger object makes every allocation larger.
        let objects = (0..<1024).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
        for object in objects { object.setValue(Int64(1), forKey: "id") }  // values of its own
        // 104 usable bytes: a 112-byte chunk, with the object's places in its context's object
        // tables (12 bytes), its values' and snapshot's row offsets (16 bits each, in padding) and
        // its flags in one byte; the snapshot's reference also holds a fault's fetch batch, the
        // identity reference its ID or its row's store, and its changed slots one word. With a
        // field for each and 32-bit row offsets it was a 144-byte chunk. Two bytes are left.
        #expect(try objects.map(usableSize).min()! <= 104)
        let storages = try objects.map { try #require($0._values.storageForTesting) }
        // Eight attributes in typed fields, widest first (the Int16 and the Bool last, not
        // padded out between 8-byte fields): 120 bytes with the header, a 128-byte chunk. In the
        // model's order they took 128 (a 144-byte chunk); with the layout's count and tables
        // copied into the header 144 (a 160-byte chunk), as `Any?` slots 288.
        #expect(try storages.map(usableSize).min()! <= 120)
    }
}
#endif

/// `ValueConversion.clear(containerAt:)`, which empties validation's one value box per property
/// without `Optional<Any>`'s generic value witnesses: every kind of value must end as `nil`, and a
/// reference it held must be released (the fast paths skip destroying only trivial values).
@Suite("Clearing value boxes")
struct ValueBoxClearingTests {
    final class Token {}

    @Test func everyKindOfValueEndsAsNilAndReferencesAreReleased() {
        let box = UnsafeMutablePointer<Any?>.allocate(capacity: 1)
        defer { box.deallocate() }
        let values: [Any?] = [
            nil, Int64(7), 3.5, Int16(2), Int32(5), true, Float(1.5), 9, Date(timeIntervalSinceReferenceDate: 60),
            "short", String(repeating: "a long string on the heap ", count: 4), Data([1, 2, 3]), [1, 2, 3], UUID(),
        ]
        for value in values {
            box.initialize(to: value)
            ValueConversion.clear(containerAt: box)
            #expect(box.pointee == nil, "\(String(describing: value))")
        }
        weak var released: Token?
        do {
            let token = Token()
            released = token
            box.initialize(to: token)
        }
        #expect(released != nil)
        ValueConversion.clear(containerAt: box)
        #expect(box.pointee == nil)
        #expect(released == nil, "the box's reference was not released")
    }
}
