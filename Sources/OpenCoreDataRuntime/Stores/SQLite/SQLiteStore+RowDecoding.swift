import CSQLite
import Foundation

extension SQLiteSchema.EntityMapping {
    /// What decoding a row of this entity needs, read from the mapping once per fetch rather than
    /// per row (each lazy property read cost an exclusivity check and a call, about 110
    /// instructions per row, callgrind case 2).
    ///
    /// A class, borrowed by the fetch loop for each row: as a struct of three references it was
    /// copied into every `decodeRow` call, three retains and three releases a row (callgrind case 2).
    final class RowPlan {
        /// Attribute columns decoded without looking at the model (not transformable).
        let plainColumns: [PlainAttributeColumn]
        /// Transformable attributes and to-one relationships.
        let otherSlots: [SQLiteSchema.SlotMapping]
        let slotCount: Int
        let hasComposites: Bool
        let hasTransformables: Bool
        /// The entity's layout of a row's values.
        let rowLayout: RowLayout
        /// The root entity's identity, for the rows' object IDs.
        let root: ObjectIdentifier

        init(
            plainColumns: [PlainAttributeColumn], otherSlots: [SQLiteSchema.SlotMapping], slotCount: Int,
            hasComposites: Bool, hasTransformables: Bool, rowLayout: RowLayout, root: ObjectIdentifier
        ) {
            self.plainColumns = plainColumns
            self.otherSlots = otherSlots
            self.slotCount = slotCount
            self.hasComposites = hasComposites
            self.hasTransformables = hasTransformables
            self.rowLayout = rowLayout
            self.root = root
        }
    }
}

extension SQLiteStore {
    /// Decodes a row selected with the table's `selectList` (starting at column `offset`) into slots,
    /// with the mapping's `rowPlan` read once by the caller, in storage of its own.
    func decodeRow(
        _ statement: SQLiteStatement, mapping: SQLiteSchema.EntityMapping, plan: SQLiteSchema.EntityMapping.RowPlan,
        offset: Int32
    ) -> RowValues {
        // Into storage made for this row: it needs no uniqueness check, and is not retained for the
        // loop (making the values unique and then writing did both, a retain and a release a row,
        // callgrind case 2).
        var values = RowValues(for: plan.rowLayout) { row in
            decodeColumns(statement, mapping: mapping, plan: plan, offset: offset, into: row)
        }
        if plan.hasComposites { decodeComposites(statement, mapping, offset: offset, into: &values) }
        return values
    }

    /// ``decodeRow(_:mapping:plan:offset:)`` into a row of `chunks` (a fetch's rows): no allocation
    /// of its own for most rows. Composite attributes are written after the row is made, which a
    /// shared storage would copy for: their rows get storage of their own.
    @inline(__always)
    func decodeRow(
        _ statement: SQLiteStatement, mapping: SQLiteSchema.EntityMapping, plan: SQLiteSchema.EntityMapping.RowPlan,
        offset: Int32, in chunks: inout RowChunks
    ) -> RowValues {
        if plan.hasComposites { return decodeRow(statement, mapping: mapping, plan: plan, offset: offset) }
        return RowValues(for: plan.rowLayout, in: &chunks) { row in
            decodeColumns(statement, mapping: mapping, plan: plan, offset: offset, into: row)
        }
    }

    /// Writes a row's columns but the composite attributes' into `row`, whose slots hold nil: the
    /// plain columns straight into their typed fields (``RowWriter/initialize(_:to:)``).
    @inline(__always)
    private func decodeColumns(
        _ statement: SQLiteStatement, mapping: SQLiteSchema.EntityMapping, plan: SQLiteSchema.EntityMapping.RowPlan,
        offset: Int32, into row: RowWriter
    ) {
        for plain in plan.plainColumns {
            decodePlain(statement, offset + plain.position, plain.type, into: row, slot: plain.slot)
        }
        for slot in plan.otherSlots {
            let column = offset + mapping.table.selectedPosition(ofColumn: slot.column)
            if statement.isNull(column) { continue }
            switch slot.kind {
            case .attribute(.transformableAttributeType):
                let attribute = mapping.entity.layout.properties[slot.slot] as! NSAttributeDescription
                row.setValue(TransformableValues.value(fromStored: statement.blob(column), attribute: attribute), at: slot.slot)
            case .attribute(let type):
                row.setValue(decodeAttribute(statement, column, type), at: slot.slot)
            case .toOne(let destination, let entityColumn):
                var entity = destination
                if let entityColumn,
                    let concrete = schema.entitiesByNumber[
                        statement.int64(offset + mapping.table.selectedPosition(ofColumn: entityColumn))]
                {
                    entity = concrete
                }
                row.setValue(rowID(entity: entity, pk: statement.int64(column)), at: slot.slot)
            }
        }
    }

    /// Decodes a plain attribute column into `slot`, which holds `nil` (left as it is for NULL).
    /// The types of the benchmark's entity (the common ones) are written in place; the others go
    /// through `decodeAttribute`.
    ///
    /// The column's value is taken once with `sqlite3_column_value` and read with the value's own
    /// accessors: each `sqlite3_column_*` call checks the statement and column again (about 56
    /// instructions for a type check and as many for a read; this saved about 300 per row of
    /// case 2). SQLite calls such a value unprotected: it is read here on the connection's only
    /// user (`SQLITE_OPEN_NOMUTEX`; the store serializes its use), before the next step.
    @inline(__always)
    private func decodePlain(
        _ statement: SQLiteStatement, _ column: Int32, _ type: NSAttributeType, into storage: RowWriter, slot: Int
    ) {
        guard let value = sqlite3_column_value(statement.handle, column) else { return }
        if type == .stringAttributeType {
            // SQLite has no text for NULL: one call instead of a type check and a read. A missing
            // text that is not NULL (out of memory) reads as empty, as `text(_:)` does.
            if let pointer = sqlite3_value_text(value) {
                let count = Int(sqlite3_value_bytes(value))
                storage.initialize(slot, to: String(sqliteText: pointer, count: count))
            } else if sqlite3_value_type(value) != SQLITE_NULL {
                storage.initialize(slot, to: "")
            }
            return
        }
        if sqlite3_value_type(value) == SQLITE_NULL { return }
        switch type {
        case .integer64AttributeType: storage.initialize(slot, to: sqlite3_value_int64(value))
        case .integer16AttributeType: storage.initialize(slot, to: Int16(truncatingIfNeeded: sqlite3_value_int64(value)))
        case .integer32AttributeType: storage.initialize(slot, to: Int32(truncatingIfNeeded: sqlite3_value_int64(value)))
        case .booleanAttributeType: storage.initialize(slot, to: sqlite3_value_int64(value) != 0)
        case .doubleAttributeType: storage.initialize(slot, to: sqlite3_value_double(value))
        case .dateAttributeType: storage.initialize(slot, to: Date(timeIntervalSinceReferenceDate: sqlite3_value_double(value)))
        default: storage.setValue(decodeAttribute(statement, column, type), at: slot)
        }
    }
}
