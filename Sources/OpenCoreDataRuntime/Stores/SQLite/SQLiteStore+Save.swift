import CSQLite
import Foundation

extension SQLiteStore {
    /// Writes a save request in one transaction: deletes, inserts (`Z_OPT` = 1), updates (`Z_OPT` + 1,
    /// checked against the version the context holds: optimistic locking), join-table rows,
    /// ordering keys, and metadata if it changed. Any error rolls everything back.
    func executeSave(_ request: NSSaveChangesRequest) throws {
        let connection = try db()
        let failAfter = testHooks.failAfterRowWrites
        // Rows go entity by entity (by layout: one per entity; the order among entities is any), each
        // entity's in primary-key order (appends to the table's B-tree), so that each entity's rows
        // form one run for the multi-row statements below; keys are read once. (In key order alone,
        // two entities' rows interleaved where their keys overlap: a save of moods and their
        // countries wrote a row a statement, switching statements at every row.)
        let byKey = { (list: [NSManagedObject]) -> [NSManagedObject] in
            guard !list.isEmpty else { return [] }
            // An ID not made yet stays unmade.
            func key(_ object: NSManagedObject) -> (UInt, Int64) {
                (UInt(bitPattern: Int(bitPattern: ObjectIdentifier(object._layout))), object._primaryKey ?? 0)
            }
            // Checked in order before any key is kept: the list of keys made first (16 bytes a row in
            // a new buffer, and its page faults) was about 1 ms of case 5's 100,000 rows (3.4 ms → 2.3).
            var previous = key(list[0])
            var inOrder = true
            list.forEachBorrowed { object in
                guard inOrder else { return }
                let next = key(object)
                if next < previous { inOrder = false }
                previous = next
            }
            if inOrder { return list }  // inserts usually are, and updates of rows fetched in order
            var keys = list.map(key)
            var order = Array(list.indices)
            order.sort { keys[$0] < keys[$1] }
            keys.removeAll()
            return order.map { list[$0] }
        }
        // Partial updates (below) by entity and set of changed columns, prepared once per save.
        struct PartialUpdateKey: Hashable {
            let mapping: ObjectIdentifier
            let entries: [Int]
        }
        let inserted = byKey(request.insertedList)
        let updated = byKey(request.updatedList)
        let deleted = byKey(request.deletedList)
        // A multi-row statement that fails says neither which row failed nor why: the whole save is
        // rolled back and written again a row a statement, which names the object (a uniqueness
        // conflict) or finds the changed row (optimistic locking).
        func write(multiRow: Bool) throws -> NSDictionary? {
            try connection.writeTransaction { () throws -> NSDictionary? in
                testHooks.insideSaveTransaction?()
                // The state below lives in this closure, which does not escape: declared outside it, the
                // variables the nested functions capture were boxed and checked for exclusive access at
                // run time on every row (about 150 instructions an inserted row, callgrind case 1; the
                // last mapping's, below, about 140 an updated row, case 5).
                //
                // Rows of one entity usually come together: the last mapping is reused. Keyed by the
                // object's layout (one per entity, never freed while the entity lives), a plain load, where
                // `entity` is an unowned reference to retain and release per row.
                var last: (layout: ObjectIdentifier, mapping: SQLiteSchema.EntityMapping)?
                func mappingOf(_ object: NSManagedObject) throws -> SQLiteSchema.EntityMapping {
                    let layout = ObjectIdentifier(object._layout)
                    if let last, last.layout == layout { return last.mapping }
                    let found = try mapping(of: object)
                    last = (layout, found)
                    return found
                }
                var rowsWritten = 0
                // Whether an inserted or updated row's entity has to-many relationships (join tables or
                // ordering keys to write after the rows), looked at when the rows' mapping changes.
                var anyToMany = false
                var lastToManyCheck: ObjectIdentifier?
                func hasToMany(_ mapping: SQLiteSchema.EntityMapping) -> Bool {
                    guard ObjectIdentifier(mapping) != lastToManyCheck else { return false }
                    lastToManyCheck = ObjectIdentifier(mapping)
                    return !mapping.toMany.isEmpty
                }
                func rowWritten() throws {
                    rowsWritten += 1
                    if let failAfter, rowsWritten > failAfter {
                        throw OpenCoreDataError(
                            .persistentStoreSave, "injected failure after \(failAfter) rows (test hook)", url: url)
                    }
                }
                // Each statement below is prepared (through the connection's cache) once per run of rows,
                // then rewound for each row without clearing its bindings: every row binds all of its
                // parameters again (see `bindRow`), and clearing freed each row's text copies a second time.
                //
                // A run's whole multi-row statements of `rows` rows (when `multiRow` and the run has that
                // many), each row's parameters bound by `bind` from the given index; returns where the rest
                // of the run, written a row a statement, begins. `checksChanges`: an UPDATE or DELETE, whose
                // statement must match every row it has; `updateFrom`: the SQL is an `UPDATE … FROM`.
                func writeMultiRow(
                    _ objects: [NSManagedObject], _ run: Range<Int>, perRow: Int, checksChanges: Bool,
                    updateFrom: Bool, sql: (Int) -> String,
                    bind: (NSManagedObject, SQLiteStatement, Int32) throws -> Void
                ) throws -> Int {
                    var next = run.lowerBound
                    guard multiRow else { return next }
                    let rows = connection.rowsPerStatement(parameters: perRow, update: updateFrom)
                    guard rows > 0, run.count >= rows else { return next }
                    let statement = try connection.prepare(sql(rows))
                    while run.upperBound - next >= rows {
                        statement.rewind()
                        var first: Int32 = 1
                        for object in objects[next..<next + rows] {
                            try bind(object, statement, first)
                            first += Int32(perRow)
                            try rowWritten()
                        }
                        try runRows(statement, rows, checksChanges: checksChanges, connection)
                        next += rows
                    }
                    return next
                }
                var partialStatements: [PartialUpdateKey: SQLiteStatement] = [:]
                // An updated row's changed entries, gathered into one buffer reused for every row and
                // copied only for a new key: a fresh array a row was an allocation, its growth and its
                // release, about 400 instructions (callgrind case 5).
                var changed: [Int] = []
                // Deleted rows: a run is the rows of one mapping deleted alike (with or without the version
                // check).
                var deleteStart = 0
                while deleteStart < deleted.count {
                    let mapping = try mappingOf(deleted[deleteStart])
                    let checked = deleted[deleteStart]._version > 0
                    var end = deleteStart + 1
                    while end < deleted.count, (deleted[end]._version > 0) == checked,
                        try mappingOf(deleted[end]) === mapping
                    {
                        end += 1
                    }
                    // Entities with join tables delete their join rows a row at a time (`deleteRow`).
                    let next = mapping.hasJoinTables ? deleteStart : try writeMultiRow(
                        deleted, deleteStart..<end, perRow: checked ? 2 : 1, checksChanges: true, updateFrom: false,
                        sql: { mapping.deleteSQL(checked: checked, rows: $0) }
                    ) { object, statement, first in
                        statement.bind(try primaryKey(of: object), first)
                        if checked { statement.bind(object._version, first + 1) }
                    }
                    if next < end {
                        let statement = try connection.prepare(mapping.deleteSQL(checked: checked))
                        try deleted.forEachBorrowed(in: next..<end) { object in
                            statement.rewind()
                            try deleteRow(object, mapping, statement, connection)
                            try rowWritten()
                        }
                    }
                    deleteStart = end
                }
                try releaseConstrainedValues(updated, connection)  // values moving between rows (+Constraints)
                // Rows of one entity (and, updated, with the same changed columns) are written together: as
                // many as fit in multi-row statements (see `writeRun`), the rest one row a statement.
                func writeRun(
                    _ objects: [NSManagedObject], _ run: Range<Int>, _ mapping: SQLiteSchema.EntityMapping,
                    insert: Bool, only: [Int]?, single: () throws -> SQLiteStatement
                ) throws {
                    let perRow = mapping.parametersPerRow(insert: insert, only: only)
                    let next = try writeMultiRow(
                        objects, run, perRow: perRow, checksChanges: !insert, updateFrom: !insert,
                        sql: { insert ? mapping.insertSQL(rows: $0) : mapping.updateSQL(only, rows: $0) }
                    ) { object, statement, first in
                        try bindRow(
                            object, mapping, insert: insert, statement, from: first, to: first + Int32(perRow) - 1,
                            only: only)
                    }
                    guard next < run.upperBound else { return }
                    let statement = try single()
                    try objects.forEachBorrowed(in: next..<run.upperBound) { object in
                        statement.rewind()  // harmless on a statement just prepared: nothing to undo
                        try bindRow(
                            object, mapping, insert: insert, statement, from: 1, to: statement.parameterCount,
                            only: only)
                        try runRow(object, insert: insert, statement, connection)
                        try rowWritten()
                    }
                }
                var runStart = 0
                while runStart < inserted.count {
                    let mapping = try mappingOf(inserted[runStart])
                    if hasToMany(mapping) { anyToMany = true }
                    var runEnd = runStart + 1
                    while runEnd < inserted.count, try mappingOf(inserted[runEnd]) === mapping { runEnd += 1 }
                    try writeRun(inserted, runStart..<runEnd, mapping, insert: true, only: nil) {
                        try connection.prepare(mapping.insertSQL)
                    }
                    runStart = runEnd
                }
                // Updated rows: a run is the rows of one mapping with the same changed columns.
                var runMapping: SQLiteSchema.EntityMapping?
                var runEntries: [Int]?  // nil: every column (`updateSQL`)
                var runBits: UInt64?  // the run's changed slots, when its mapping has `slotBits`
                func endRun(at end: Int) throws {
                    guard let mapping = runMapping else { return }
                    let entries = runEntries
                    try writeRun(updated, runStart..<end, mapping, insert: false, only: entries) {
                        guard let entries else { return try connection.prepare(mapping.updateSQL) }
                        let key = PartialUpdateKey(mapping: ObjectIdentifier(mapping), entries: entries)
                        if let cached = partialStatements[key] { return cached }
                        let partial = try connection.prepare(mapping.updateSQL(entries))
                        partialStatements[key] = partial
                        return partial
                    }
                }
                runStart = 0
                for (position, object) in updated.enumerated() {
                    let mapping = try mappingOf(object)
                    if hasToMany(mapping) { anyToMany = true }
                    // Rows changed alike come together: the same run, most of the time. With every
                    // slot of the mapping below 64, the same mapping and the same changed bits among
                    // its slots make the same columns, told without listing them (listing and
                    // comparing them was about 250 instructions a row, callgrind case 5).
                    let bits = mapping.slotBits.map { object._changedSlotBits(within: $0) }
                    if runMapping === mapping, let bits, bits == runBits { continue }
                    // Only the changed columns (and Z_OPT): rewriting the others would also rewrite
                    // their index entries. Composite columns are written whole.
                    changed.removeAll(keepingCapacity: true)
                    for index in mapping.slots.indices where object._changedSlotsContain(mapping.slots[index].slot) {
                        changed.append(index)
                    }
                    let partial = changed.count < mapping.slots.count && mapping.compositeSlots.isEmpty
                    // (Reached with `bits` only for a new run: within one, rows whose bits differ differ in columns.)
                    if runMapping === mapping, partial ? runEntries == changed : runEntries == nil { continue }
                    try endRun(at: position)
                    runStart = position
                    runMapping = mapping
                    runBits = bits
                    // A copy of its own (`map`), so that `changed` stays this loop's only buffer.
                    runEntries = partial ? changed.map { $0 } : nil
                }
                try endRun(at: updated.count)
                // (Entities without to-many relationships have nothing here: skipped by their mapping,
                // and both loops when no saved row's entity has any: a second pass over every row read
                // its mapping again, about 170 instructions a row, callgrind cases 1 and 5.)
                if anyToMany {
                    for object in inserted {
                        if try mappingOf(object).toMany.isEmpty { continue }
                        try writeToManyRelationships(object, all: true, connection)
                    }
                    for object in updated {
                        if try mappingOf(object).toMany.isEmpty { continue }
                        try writeToManyRelationships(object, all: false, connection)
                    }
                }
                return try writeMetadataIfChanged(connection)
            }
        }
        let written: NSDictionary?
        do {
            written = try write(multiRow: true)
        } catch is MultiRowRefused {
            written = try write(multiRow: false)
        }
        if let written { writtenMetadata = written }
    }

    private func mapping(of object: NSManagedObject) throws -> SQLiteSchema.EntityMapping {
        guard let mapping = schema.mapping(for: object.entity) else {
            throw OpenCoreDataError(
                .persistentStoreSave, "the store does not hold this entity", entityName: object.entity.name,
                objectID: object.objectID)
        }
        return mapping
    }

    private func primaryKey(of object: NSManagedObject) throws -> Int64 {
        // The coordinator routes objects by store, so only the key is checked here (a weak-reference
        // load of the ID's store per row is measurable at 100k rows). A fetched object whose ID was
        // never asked for has its row's key: making the ID here cost about 650 instructions and 80
        // bytes per saved object (callgrind cases 5 and 6).
        guard let pk = object._primaryKey else {
            throw OpenCoreDataError(
                .persistentStoreSave, "the object has no permanent ID in this store", entityName: object.entity.name,
                objectID: object.objectID)
        }
        return pk
    }

    private func conflict(_ object: NSManagedObject) -> OpenCoreDataError {
        OpenCoreDataError(
            .persistentStoreSaveConflicts,
            "optimistic locking failure: the row was changed or deleted by another coordinator since it was fetched",
            entityName: object.entity.name, objectID: object.objectID, url: url)
    }

    /// Binds one row of an INSERT or UPDATE to parameters `first` through `last` (NULL past what the
    /// row has). `only`: the entries of `mapping.slots` a partial UPDATE writes (all of them when nil).
    ///
    /// Inlined into the save's loops: the optimizer stopped inlining it when the statement's
    /// binding methods grew, and called it cost about 14 instructions a row more (callgrind case 5).
    @inline(__always)
    private func bindRow(
        _ object: NSManagedObject, _ mapping: SQLiteSchema.EntityMapping, insert: Bool, _ statement: SQLiteStatement,
        from first: Int32, to last: Int32, only: [Int]?
    ) throws {
        let pk = try primaryKey(of: object)
        var index = first
        if insert {
            statement.bind(pk, index)
            statement.bind(mapping.number, index + 1)
            statement.bind(Int64(1), index + 2)
            index += 3
        } else {
            statement.bind(object._version + 1, index)
            index += 1
        }
        let values = object._values
        let saveSlots = mapping.saveSlots
        if let only {
            for entry in only { try bindSlot(saveSlots[entry], of: object, values, statement, &index) }
        } else {
            for slot in saveSlots { try bindSlot(slot, of: object, values, statement, &index) }
        }
        if only == nil, !mapping.compositeSlots.isEmpty { index = bindComposites(values, mapping, statement, from: index) }
        if !insert {
            statement.bind(pk, index)
            statement.bind(object._version, index + 1)
            index += 2
        }
        // Every parameter is bound above; should a statement have more, they are NULL, as after a
        // reset that clears bindings (the statements are rewound without clearing).
        while index <= last {
            statement.bindNull(index)
            index += 1
        }
    }

    /// Runs a one-row INSERT or UPDATE bound by ``bindRow``: a uniqueness constraint's refusal is
    /// Core Data's constraint conflict, an UPDATE that matched no row an optimistic locking failure.
    @inline(__always)
    private func runRow(
        _ object: NSManagedObject, insert: Bool, _ statement: SQLiteStatement, _ connection: SQLiteConnection
    ) throws {
        do {
            try statement.run()
        } catch var error as OpenCoreDataError where error.sqliteCode == SQLITE_CONSTRAINT | (8 << 8) {  // SQLITE_CONSTRAINT_UNIQUE
            // A uniqueness constraint's index refused the row: Core Data reports a constraint conflict.
            error.code = .managedObjectConstraintMerge
            error.message = "the object violates a uniqueness constraint of its entity"
            error.entityName = object.entity.name
            error.objectID = object.objectID
            throw error
        }
        if !insert, connection.changes == 0 { throw conflict(object) }
    }

    /// Runs a multi-row INSERT, UPDATE or DELETE of `rows` rows. A constraint's refusal (the statement
    /// is undone, but which row it was is not said) or, when `checksChanges` (an UPDATE or DELETE), a
    /// statement that matched fewer rows than it has throws ``MultiRowRefused``, for the save to be
    /// written again a row a statement.
    private func runRows(
        _ statement: SQLiteStatement, _ rows: Int, checksChanges: Bool, _ connection: SQLiteConnection
    ) throws {
        do {
            try statement.run()
        } catch let error as OpenCoreDataError where (error.sqliteCode ?? 0) & 0xFF == SQLITE_CONSTRAINT {
            throw MultiRowRefused()
        }
        if checksChanges, connection.changes != rows { throw MultiRowRefused() }
    }

    /// Binds one slot's column(s) of a row from the object's values, from `index` on, and moves
    /// `index` past them. (A method with `inout`, not a nested function capturing the index: a
    /// captured `var` is boxed and checked for exclusive access at run time on every use.)
    private func bindSlot(
        _ slot: SQLiteSchema.EntityMapping.SaveSlot, of object: NSManagedObject, _ values: RowValues,
        _ statement: SQLiteStatement, _ index: inout Int32
    ) throws {
        switch slot {
        case .attribute(let slot, .transformableAttributeType):
            let value = slot < values.count ? values[slot] : nil
            let attribute = object._layout.properties[slot] as! NSAttributeDescription
            bindAttribute(try TransformableValues.storedData(value, attribute: attribute), .binaryDataAttributeType, statement, index)
            index += 1
        case .attribute(let slot, let type):
            if slot >= values.count {
                statement.bindNull(index)
            } else if !Self.bindInPlace(values, slot, type, statement, index) {
                bindAttribute(values[slot], type, statement, index)
            }
            index += 1
        case .toOne(let slot, let entityColumn):
            let value = slot < values.count ? values[slot] : nil
            // A destination object's key is read without making its ID (a new object saved in
            // the same save has none yet).
            let destinationKey: Int64?
            let destinationEntity: NSEntityDescription?
            if let object = value as? NSManagedObject {
                (destinationKey, destinationEntity) = (object._primaryKey, object.entity)
            } else if let id = value as? NSManagedObjectID {
                (destinationKey, destinationEntity) = (id.primaryKey, id.entity)
            } else {
                (destinationKey, destinationEntity) = (nil, nil)
            }
            if let destinationKey, let destinationEntity {
                statement.bind(destinationKey, index)
                if entityColumn { statement.bind(schema.number(of: destinationEntity) ?? 0, index + 1) }
            } else {
                statement.bindNull(index)
                if entityColumn { statement.bindNull(index + 1) }
            }
            index += entityColumn ? 2 : 1
        }
    }

    /// Binds the attribute value in slot `slot` where it lies, in the common cases: `nil`, or a value
    /// of the attribute's own type in its typed field (``RowValues``). Binds as
    /// ``bindAttribute(_:_:_:_:)`` would and returns `true`; returns `false` for anything else, for
    /// the caller to bind as usual.
    ///
    /// Copying each value out as `Any?` and into `bindAttribute` (and destroying both copies) was
    /// most of the save's per-attribute cost.
    @inline(__always)
    private static func bindInPlace(
        _ values: RowValues, _ slot: Int, _ type: NSAttributeType, _ statement: SQLiteStatement, _ index: Int32
    ) -> Bool {
        if values.isNil(slot) {
            statement.bindNull(index)
            return true
        }
        func value<T>(_: T.Type) -> T? { values.exactly(slot, as: T.self) }
        switch type {
        case .integer64AttributeType: guard let v = value(Int64.self) else { return false }; statement.bind(v, index)
        case .integer32AttributeType: guard let v = value(Int32.self) else { return false }; statement.bind(Int64(v), index)
        case .integer16AttributeType: guard let v = value(Int16.self) else { return false }; statement.bind(Int64(v), index)
        case .booleanAttributeType: guard let v = value(Bool.self) else { return false }; statement.bind(Int64(v ? 1 : 0), index)
        case .doubleAttributeType: guard let v = value(Double.self) else { return false }; statement.bind(v, index)
        case .dateAttributeType:
            guard let v = value(Date.self) else { return false }
            statement.bind(v.timeIntervalSinceReferenceDate, index)
        case .stringAttributeType: guard let v = value(String.self) else { return false }; statement.bind(v, index)
        default: return false
        }
        return true
    }

    /// DELETE one row (checked against its version when the context knows it) and its join rows.
    /// `statement`: the entity's prepared DELETE, with `AND Z_OPT = ?` when `object._version > 0`, bound
    /// here (its bindings are all set again for each row).
    private func deleteRow(
        _ object: NSManagedObject, _ mapping: SQLiteSchema.EntityMapping, _ statement: SQLiteStatement,
        _ connection: SQLiteConnection
    ) throws {
        let pk = try primaryKey(of: object)
        statement.bind(pk, 1)
        if object._version > 0 {
            statement.bind(object._version, 2)
            try statement.run()
            if connection.changes == 0 { throw conflict(object) }
        } else {
            try statement.run()
        }
        for case .join(let join, let mine, _, _, _) in mapping.toMany.values {
            try connection.run("DELETE FROM \(join.name) WHERE \(mine) = ?", [.integer(pk)])
        }
    }

    /// Join-table rows and ordering keys of loaded to-many relationships (all of them for inserted
    /// objects, the changed ones for updated objects).
    private func writeToManyRelationships(_ object: NSManagedObject, all: Bool, _ connection: SQLiteConnection) throws {
        let mapping = try mapping(of: object)
        guard !mapping.toMany.isEmpty else { return }
        let pk = try primaryKey(of: object)
        for (slot, toMany) in mapping.toMany where all || object._changedSlotsContain(slot) {
            guard slot < object._values.count, let list = object._values[slot] as? ManagedObjectList else { continue }
            let members = list.objects.filter { !$0._isDeleted }
            switch toMany {
            case .inverseForeignKey(let table, _, let order?, _):
                // The destinations hold the foreign key; write their positions (1-based).
                for (position, member) in members.enumerated() {
                    guard let key = member._primaryKey else { continue }
                    try connection.run(
                        "UPDATE \(table.name) SET \(order) = ? WHERE Z_PK = ?",
                        [.integer(Int64(position + 1)), .integer(key)])
                }
            case .inverseForeignKey:
                continue  // the inverse to-one column is written with the destination rows
            case .join(let join, let mine, let other, let otherOrder, _):
                let wanted = members.compactMap(\._primaryKey)
                let existing = Set(
                    try connection.column("SELECT \(other) FROM \(join.name) WHERE \(mine) = ?", [.integer(pk)])
                        .compactMap { value -> Int64? in
                            if case .integer(let key) = value { return key }
                            return nil
                        })
                let wantedSet = Set(wanted)
                for key in existing.subtracting(wantedSet).sorted() {
                    try connection.run(
                        "DELETE FROM \(join.name) WHERE \(mine) = ? AND \(other) = ?", [.integer(pk), .integer(key)])
                }
                for key in wanted where !existing.contains(key) {
                    try connection.run(
                        "INSERT OR IGNORE INTO \(join.name) (\(mine), \(other)) VALUES (?, ?)",
                        [.integer(pk), .integer(key)])
                }
                if let otherOrder {
                    for (position, key) in wanted.enumerated() {
                        try connection.run(
                            "UPDATE \(join.name) SET \(otherOrder) = ? WHERE \(mine) = ? AND \(other) = ?",
                            [.integer(Int64(position + 1)), .integer(pk), .integer(key)])
                    }
                }
            }
        }
    }
}

/// A multi-row statement of a save was refused (see ``SQLiteStore/executeSave(_:)``).
private struct MultiRowRefused: Error {}

extension SQLiteStatement {
    /// Makes the statement ready to run again, keeping its bindings: for a caller that binds every
    /// parameter again (``reset()`` also clears them).
    fileprivate func rewind() { sqlite3_reset(handle) }

    /// The number of parameters (the largest `?` index).
    fileprivate var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }
}
