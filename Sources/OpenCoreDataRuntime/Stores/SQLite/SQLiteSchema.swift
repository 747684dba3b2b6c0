import Foundation

/// Core Data's SQLite layout for a model (FORMATS.md §1): entity numbers, one table per root
/// entity, column names and types, foreign keys, join tables, indexes, and the SQL the store
/// reuses for every row.
///
/// Choices where Apple's behaviour is unverified (documented in FORMATS.md §1.2/§1.3):
/// - Decimal attributes use a `DECIMAL` column holding the value as text (`"12.5"`), as
///   FreeCoreData's Apple-mirroring table suggests; text keeps every digit a `Decimal` holds.
/// - ObjectID attributes use a `VARCHAR` column holding the object's URI.
/// - Composite attributes are flattened: one column per (nested) element, named
///   `Z<ATTRIBUTE>_<ELEMENT>[_<NESTED>...]` (see `SQLiteSchema+Composites.swift`).
/// - A to-many relationship without an inverse is stored as a many-to-many pair whose other side is
///   named `<relationship>Inverse` (a guess: PL kik's `Z_6BANSINVERSE` suggests Apple synthesizes such
///   a name; FORMATS.md §1.3 marks inverse-less storage unverified).
/// - For a self-referential many-to-many pair, the side whose name sorts first (case-insensitively)
///   names the join table.
/// - Columns of the real, text and blob groups are grouped entity by entity like the integer group
///   (Apple's stores only show single-entity examples for those groups).
///
/// Checked statement for statement against three Apple-written stores (tests in `SQLiteStoreTests`):
/// CoreDataPlus SampleModel_V1 and SampleModel3_V1, contentful's Test.sqlite.
final class SQLiteSchema {
    enum Group: Int {
        case integer = 0
        case real, text, blob
    }

    struct Column {
        var name: String
        var declaredType: String
        var group: Group
        /// Sort key for the cosmetic column order of §1.1.
        var entityOrder: Int
        var subgroup: Int
        var sortName: String
    }

    final class Table {
        let name: String
        let root: NSEntityDescription
        /// Written only while the schema is built, then read for every row a fetch decodes
        /// (``selectedPosition(ofColumn:)``, ``versionPosition``): no run-time exclusivity check
        /// (a `swift_beginAccess` per read, about 60 instructions).
        @exclusivity(unchecked) var columns: [Column] = []
        var entityCount = 0
        /// `t.Z_PK, t.Z_ENT, t.<last column>, t.Z_OPT, t.<column>...` for alias `t0` (see
        /// ``selectedPosition(ofColumn:)``).
        var selectList = "" {
            didSet { selectByPrimaryKey = "SELECT \(selectList) FROM \(name) t0 WHERE t0.Z_PK = ?" }
        }

        /// ``selectList`` with `Z_ENT` given by `entity`, the constant `entityColumn` (Apple's SQL
        /// selects the entity's number when every row is of one entity; `t0.Z_ENT` otherwise).
        func selectList(entity entityColumn: String = "t0.Z_ENT") -> String {
            let last = columns.last.map { ["t0." + $0.name] } ?? []
            return (["t0.Z_PK", entityColumn] + last + ["t0.Z_OPT"] + columns.dropLast().map { "t0." + $0.name })
                .joined(separator: ", ")
        }

        /// Where column `index` of ``columns`` is in a row selected with ``selectList``. The table's
        /// last column comes first, even before `Z_OPT`: SQLite reads a record's header only as far
        /// as the columns asked for so far, one field per column when they are asked for in the
        /// table's order, and asked for the last one first it reads the whole header in one loop (a
        /// row of the benchmarks' entity: about 320 instructions of `sqlite3VdbeExec` fewer, of 1,420;
        /// 40 of them for `Z_OPT` after the last column rather than before; callgrind, case 2). The
        /// order of a `SELECT`'s columns is the store's own business: the file's layout is Apple's
        /// either way.
        func selectedPosition(ofColumn index: Int) -> Int32 {
            index == columns.count - 1 ? 2 : Int32(index + 4)
        }

        /// Where `Z_OPT` is in a row selected with ``selectList``.
        var versionPosition: Int32 { columns.isEmpty ? 2 : 3 }

        /// The row with a given `Z_PK`, as a firing fault loads it: built once, not per fault (its
        /// interpolation was about a third of a fault's cost, callgrind case 8).
        private(set) var selectByPrimaryKey = ""

        init(name: String, root: NSEntityDescription) {
            self.name = name
            self.root = root
        }

        func index(of column: String) -> Int? { columns.firstIndex { $0.name == column } }
    }

    final class JoinTable {
        let name: String
        /// Holds the PKs of the lower-numbered side (A).
        let columnA: String
        /// Holds the PKs of B.
        let columnB: String
        /// Position of A within B's relationship (when ordered).
        let orderA: String?
        /// Position of B within A's relationship (when ordered).
        let orderB: String?
        let entityA: NSEntityDescription
        let entityB: NSEntityDescription

        init(
            name: String, columnA: String, columnB: String, orderA: String?, orderB: String?,
            entityA: NSEntityDescription, entityB: NSEntityDescription
        ) {
            self.name = name
            self.columnA = columnA
            self.columnB = columnB
            self.orderA = orderA
            self.orderB = orderB
            self.entityA = entityA
            self.entityB = entityB
        }
    }

    /// How one slot of an entity maps to columns.
    enum SlotKind {
        case attribute(NSAttributeType)
        /// `entityColumn` holds the destination's `Z_ENT` when the destination has subentities.
        case toOne(destination: NSEntityDescription, entityColumn: Int?)
    }

    struct SlotMapping {
        var slot: Int
        /// Index into the table's `columns`.
        var column: Int
        var kind: SlotKind
    }

    /// Where the destinations of a to-many relationship are found.
    enum ToMany {
        /// The destination table's foreign key to this object (the inverse to-one), with its ordering column.
        case inverseForeignKey(table: Table, column: String, order: String?, destination: NSEntityDescription)
        /// A join table: `mine` holds this object's PKs, `other` the destinations'; `otherOrder` orders them.
        case join(JoinTable, mine: String, other: String, otherOrder: String?, destination: NSEntityDescription)
    }

    final class EntityMapping {
        let entity: NSEntityDescription
        let number: Int64
        let table: Table
        /// Z_ENT values of this entity and its subentities (contiguous in DFS pre-order).
        var subentityRange: ClosedRange<Int64>
        // Set while the schema is built, then only read (the save reads them for every row): they
        // opt out of run-time exclusivity checks (about 76 instructions per read, callgrind case 5).
        @exclusivity(unchecked) var slots: [SlotMapping] = [] {
            didSet {
                slotBits = slots.allSatisfy { (0..<64).contains($0.slot) }
                    ? slots.reduce(0) { $0 | 1 << UInt64($1.slot) } : nil
                saveSlots = slots.map { slot in
                    switch slot.kind {
                    case .attribute(let type): .attribute(slot: slot.slot, type: type)
                    case .toOne(_, let entityColumn): .toOne(slot: slot.slot, entityColumn: entityColumn != nil)
                    }
                }
            }
        }
        @exclusivity(unchecked) var toMany: [Int: ToMany] = [:]
        /// To-one slots whose inverse is an ordered to-many: the ordering column (`Z_FOK_...`).
        @exclusivity(unchecked) var orderColumns: [Int: String] = [:]
        /// Composite attributes: their flattened columns, bound after `slots` in the statements.
        @exclusivity(unchecked) var compositeSlots: [CompositeSlot] = []
        /// The columns an INSERT writes, in binding order: `Z_PK`, `Z_ENT`, `Z_OPT`, then `slots`' and the composites'.
        var insertColumns: [String] = [] {
            didSet {
                insertSQL = insertSQL(rows: 1)
                updateSQL = updateSQL(nil)
            }
        }
        private(set) var insertSQL = ""
        private(set) var updateSQL = ""

        /// An attribute column `decodeRow` reads without looking at the model (not transformable).
        struct PlainAttributeColumn {
            let slot: Int
            /// The column's position in a selected row (``Table/selectedPosition(ofColumn:)``).
            let position: Int32
            let type: NSAttributeType
        }

        /// How a save binds `slots[i]`: the entries without their references (a to-one's destination
        /// entity), kept with `slots`. Reading a `SlotMapping` copied its `SlotKind` through an
        /// outlined copy and destroy, per slot of every saved row (about 640 instructions a row,
        /// callgrind case 1).
        enum SaveSlot {
            case attribute(slot: Int, type: NSAttributeType)
            /// `entityColumn`: the destination has subentities, and its `Z_ENT` is bound after the key.
            case toOne(slot: Int, entityColumn: Bool)
        }

        @exclusivity(unchecked) private(set) var saveSlots: [SaveSlot] = []

        /// The bits of `slots`' slots, when every one is below 64 (else `nil`): which of them changed
        /// is then one mask (``NSManagedObject/_changedSlotBits(within:)``). Set with `slots`.
        @exclusivity(unchecked) private(set) var slotBits: UInt64?

        /// `slots` split for decoding rows (see `SQLiteStore+RowDecoding.swift`), built on first use
        /// (the schema is complete by then).
        private(set) lazy var rowPlan = RowPlan(
            plainColumns: slots.compactMap { slot in
                guard case .attribute(let type) = slot.kind, type != .transformableAttributeType else { return nil }
                return PlainAttributeColumn(
                    slot: slot.slot, position: table.selectedPosition(ofColumn: slot.column), type: type)
            },
            otherSlots: slots.filter { slot in
                if case .attribute(let type) = slot.kind { return type == .transformableAttributeType }
                return true
            },
            slotCount: entity.layout.properties.count, hasComposites: !compositeSlots.isEmpty,
            hasTransformables: !entity.layout.transformableSlots.isEmpty, rowLayout: entity.layout.rowLayout,
            root: ObjectIdentifier(entity.rootEntity))

        /// An UPDATE that writes `Z_OPT` and the columns of the given `slots` entries only (for an
        /// object whose other columns did not change); all of them (``updateSQL``) when `indices` is nil.
        /// With `rows` > 1, an `UPDATE … FROM (VALUES …)` of that many rows, each bound as the one-row
        /// statement is (`Z_OPT`, the columns, `Z_PK`, the old `Z_OPT`), one after the other.
        func updateSQL(_ indices: [Int]?, rows: Int = 1) -> String {
            var columns: [String] = []
            if let indices {
                for index in indices {
                    let slot = slots[index]
                    columns.append(table.columns[slot.column].name)
                    if case .toOne(_, let entityColumn?) = slot.kind {
                        columns.append(table.columns[entityColumn].name)
                    }
                }
            } else {
                columns = Array(insertColumns.dropFirst(3))
            }
            columns.insert("Z_OPT", at: 0)
            guard rows > 1 else {
                return "UPDATE \(table.name) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) "
                    + "WHERE Z_PK = ? AND Z_OPT = ?"
            }
            // A VALUES clause names its columns column1, column2, … (SQLite's documented names).
            let sets = columns.enumerated().map { "\($1) = v.column\($0 + 1)" }
            let tuple = "(" + Array(repeating: "?", count: columns.count + 2).joined(separator: ", ") + ")"
            return "UPDATE \(table.name) SET \(sets.joined(separator: ", ")) FROM (VALUES "
                + Array(repeating: tuple, count: rows).joined(separator: ", ") + ") AS v "
                + "WHERE \(table.name).Z_PK = v.column\(columns.count + 1) "
                + "AND \(table.name).Z_OPT = v.column\(columns.count + 2)"
        }

        /// How many parameters a row of an INSERT, or of an UPDATE of the given `slots` entries (all
        /// of them when nil), binds: `Z_OPT`, the columns (a to-one to an entity with subentities
        /// writes two: the key and the entity), `Z_PK` and the old `Z_OPT`.
        func parametersPerRow(insert: Bool, only indices: [Int]?) -> Int {
            guard !insert, let indices else { return insertColumns.count }
            return indices.reduce(3) { count, index in
                if case .toOne(_, _?) = slots[index].kind { return count + 2 }
                return count + 1
            }
        }

        /// The DELETE of `rows` rows by primary key, with each row's `Z_OPT` checked when `checked`: bound
        /// `Z_PK` (then `Z_OPT`) a row, one row after the other.
        func deleteSQL(checked: Bool, rows: Int = 1) -> String {
            let name = table.name
            guard rows > 1 else { return "DELETE FROM \(name) WHERE Z_PK = ?" + (checked ? " AND Z_OPT = ?" : "") }
            guard checked else {
                return "DELETE FROM \(name) WHERE Z_PK IN ("
                    + Array(repeating: "?", count: rows).joined(separator: ", ") + ")"
            }
            return "DELETE FROM \(name) WHERE Z_PK IN (SELECT \(name).Z_PK FROM (VALUES "
                + Array(repeating: "(?, ?)", count: rows).joined(separator: ", ")
                + ") AS v JOIN \(name) ON \(name).Z_PK = v.column1 AND \(name).Z_OPT = v.column2)"
        }

        /// Whether the entity's to-many relationships include join tables (many-to-many), whose rows
        /// a deleted object's row takes with it.
        var hasJoinTables: Bool {
            toMany.values.contains { if case .join = $0 { true } else { false } }
        }

        /// The INSERT of `rows` rows, each bound as the one-row ``insertSQL`` is, one after the other.
        func insertSQL(rows: Int) -> String {
            let tuple = "(" + Array(repeating: "?", count: insertColumns.count).joined(separator: ", ") + ")"
            return "INSERT INTO \(table.name) (\(insertColumns.joined(separator: ", "))) VALUES "
                + Array(repeating: tuple, count: rows).joined(separator: ", ")
        }

        init(entity: NSEntityDescription, number: Int64, table: Table) {
            self.entity = entity
            self.number = number
            self.table = table
            subentityRange = number...number
        }
    }

    // Written only while `init` builds the schema and read-only after, so no two accesses overlap:
    // no run-time exclusivity checks (one cost about 80 instructions a fetch, callgrind case 4).
    let entitiesInOrder: [NSEntityDescription]
    @exclusivity(unchecked) private(set) var tables: [Table] = []
    @exclusivity(unchecked) private(set) var joinTables: [JoinTable] = []
    @exclusivity(unchecked) private var mappings: [ObjectIdentifier: EntityMapping] = [:]
    @exclusivity(unchecked) private(set) var entitiesByNumber: [Int64: NSEntityDescription] = [:]
    /// The column of each stored attribute and to-one relationship, by property identity.
    @exclusivity(unchecked) private(set) var columnByProperty: [ObjectIdentifier: String] = [:]
    /// The flattened columns of each stored composite attribute, by property identity.
    @exclusivity(unchecked) private(set) var compositeColumnsByProperty: [ObjectIdentifier: [CompositeColumn]] = [:]
    /// Secondary indexes (`CREATE INDEX ...`), in creation order.
    @exclusivity(unchecked) private(set) var indexStatements: [String] = []
    /// Whether any entity declares uniqueness constraints (a subentity inherits its ancestors', and
    /// they are among the entities): a save of a model without any skips the pass over its updated
    /// objects that looks for constrained values (`releaseConstrainedValues`).
    @exclusivity(unchecked) private(set) var hasUniquenessConstraints = false

    /// Builds the layout of `model`. `numbers` (entity name → Z_ENT, from an existing store's
    /// Z_PRIMARYKEY) overrides the computed numbering.
    init(model: NSManagedObjectModel, numbers: [String: Int64]? = nil) {
        entitiesInOrder = Self.numberingOrder(model.entities)
        var numberOf: [ObjectIdentifier: Int64] = [:]
        for (i, entity) in entitiesInOrder.enumerated() {
            numberOf[ObjectIdentifier(entity)] = Self.storedNumber(of: entity, in: numbers) ?? Int64(i + 1)
        }
        for entity in entitiesInOrder { entitiesByNumber[numberOf[ObjectIdentifier(entity)]!] = entity }
        build(numberOf: numberOf)
    }

    /// An entity's Z_ENT in a store's Z_PRIMARYKEY: by name, else by renaming identifier. Apple's
    /// lightweight migration keeps Z_NAME when an entity is renamed (CoreDataPlus `SampleModel_V2.sqlite`,
    /// migrated by Apple from V1, lists `ExpensiveSportCar` for the entity renamed `LuxuryCar`).
    static func storedNumber(of entity: NSEntityDescription, in numbers: [String: Int64]?) -> Int64? {
        guard let numbers else { return nil }
        if let number = numbers[entity.name ?? ""] { return number }
        return entity.renamingIdentifier.flatMap { numbers[$0] }
    }

    /// Entities in Z_ENT order: a depth-first pre-order walk of the inheritance forest, siblings
    /// sorted case-insensitively by name (FORMATS.md §1.4).
    static func numberingOrder(_ entities: [NSEntityDescription]) -> [NSEntityDescription] {
        let members = Set(entities.map(ObjectIdentifier.init))
        func sorted(_ list: [NSEntityDescription]) -> [NSEntityDescription] {
            list.sorted { a, b in
                let (x, y) = ((a.name ?? "").lowercased(), (b.name ?? "").lowercased())
                return x != y ? x < y : (a.name ?? "") < (b.name ?? "")
            }
        }
        var result: [NSEntityDescription] = []
        func visit(_ entity: NSEntityDescription) {
            result.append(entity)
            for child in sorted(entity.subentities.filter { members.contains(ObjectIdentifier($0)) }) { visit(child) }
        }
        for root in sorted(
            entities.filter { $0.superentity == nil || !members.contains(ObjectIdentifier($0.superentity!)) })
        { visit(root) }
        return result
    }

    func mapping(for entity: NSEntityDescription) -> EntityMapping? { mappings[ObjectIdentifier(entity)] }

    /// The mapping of the entity whose Z_ENT is `number`.
    func mapping(forNumber number: Int64) -> EntityMapping? { entitiesByNumber[number].flatMap { mapping(for: $0) } }

    /// The table of a join, or of an entity, by name.
    func table(for entity: NSEntityDescription) -> Table? { mapping(for: entity)?.table }

    func number(of entity: NSEntityDescription) -> Int64? { mappings[ObjectIdentifier(entity)]?.number }

    // MARK: Building

    private func build(numberOf: [ObjectIdentifier: Int64]) {
        func number(_ e: NSEntityDescription) -> Int64 { numberOf[ObjectIdentifier(e)] ?? 0 }
        var propertyColumns: [ObjectIdentifier: String] = [:]
        var entityColumns: [ObjectIdentifier: String] = [:]
        var orderColumns: [ObjectIdentifier: String] = [:]
        var tableOf: [ObjectIdentifier: Table] = [:]

        // Tables and columns, one table per root, entities in numbering order.
        var used: [ObjectIdentifier: Set<String>] = [:]
        for (order, entity) in entitiesInOrder.enumerated() {
            let root = entity.rootEntity
            let rootKey = ObjectIdentifier(root)
            let table: Table
            if let existing = tableOf[rootKey] {
                table = existing
            } else {
                table = Table(name: "Z" + (root.name ?? "").uppercased(), root: root)
                tables.append(table)
                tableOf[rootKey] = table
                used[rootKey] = ["Z_PK", "Z_ENT", "Z_OPT"]
            }
            tableOf[ObjectIdentifier(entity)] = table
            table.entityCount += 1
            func unique(_ base: String) -> String {
                var name = base
                var n = 1
                while used[rootKey]!.contains(name) {
                    name = base + String(n)
                    n += 1
                }
                used[rootKey]!.insert(name)
                return name
            }
            for property in entity.ownProperties where !property.isTransient {
                let upper = property.name.uppercased()
                if let attribute = property as? NSAttributeDescription {
                    if let composite = attribute as? NSCompositeAttributeDescription {
                        compositeColumnsByProperty[ObjectIdentifier(property)] = Self.addColumns(
                            of: composite, to: table, entityOrder: order, unique: unique)
                        continue
                    }
                    guard let (type, group) = Self.columnType(attribute.attributeType) else { continue }
                    let name = unique("Z" + upper)
                    propertyColumns[ObjectIdentifier(property)] = name
                    table.columns.append(
                        Column(
                            name: name, declaredType: type, group: group, entityOrder: order, subgroup: 0,
                            sortName: name))
                } else if let relationship = property as? NSRelationshipDescription, !relationship.isToMany {
                    let name = unique("Z" + upper)
                    propertyColumns[ObjectIdentifier(property)] = name
                    table.columns.append(
                        Column(
                            name: name, declaredType: "INTEGER", group: .integer, entityOrder: order, subgroup: 1,
                            sortName: name + "\u{0}0"))
                    if let destination = relationship.destinationEntity, !destination.subentities.isEmpty {
                        let entityColumn = unique("Z\(number(destination))_" + upper)
                        entityColumns[ObjectIdentifier(property)] = entityColumn
                        table.columns.append(
                            Column(
                                name: entityColumn, declaredType: "INTEGER", group: .integer, entityOrder: order,
                                subgroup: 1, sortName: name + "\u{0}1"))
                    }
                    if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered {
                        let orderColumn = unique("Z_FOK_" + name.dropFirst())
                        orderColumns[ObjectIdentifier(property)] = orderColumn
                        table.columns.append(
                            Column(
                                name: orderColumn, declaredType: "INTEGER", group: .integer, entityOrder: order,
                                subgroup: 1, sortName: name + "\u{0}2"))
                    }
                }
            }
        }
        for table in tables {
            table.columns.sort { a, b in
                (a.group.rawValue, a.entityOrder, a.subgroup, a.sortName) < (
                    b.group.rawValue, b.entityOrder, b.subgroup, b.sortName
                )
            }
            table.selectList = table.selectList()
        }

        // Join tables for many-to-many pairs (and to-many relationships without an inverse).
        var joins: [ObjectIdentifier: (JoinTable, isA: Bool)] = [:]
        for entity in entitiesInOrder {
            for case let relationship as NSRelationshipDescription in entity.ownProperties
            where relationship.isToMany && !relationship.isTransient {
                guard joins[ObjectIdentifier(relationship)] == nil, let destination = relationship.destinationEntity
                else { continue }
                let inverse = relationship.inverseRelationship
                if let inverse, !inverse.isToMany { continue }
                let inverseName = inverse?.name ?? relationship.name + "Inverse"
                let inverseEntity = inverse?.entity ?? destination
                var selfIsA = number(entity) < number(inverseEntity)
                if number(entity) == number(inverseEntity) {
                    selfIsA = relationship.name.lowercased() <= inverseName.lowercased()
                }
                let (nA, nB) =
                    selfIsA ? (number(entity), number(inverseEntity)) : (number(inverseEntity), number(entity))
                let (relA, relB) = selfIsA ? (relationship.name, inverseName) : (inverseName, relationship.name)
                let orderedA = selfIsA ? relationship.isOrdered : (inverse?.isOrdered ?? false)
                let orderedB = selfIsA ? (inverse?.isOrdered ?? false) : relationship.isOrdered
                let columnA = "Z_\(nA)\(relB.uppercased())"
                var columnB = "Z_\(nB)\(relA.uppercased())"
                if columnB == columnA { columnB += "1" }
                let join = JoinTable(
                    name: "Z_\(nA)\(relA.uppercased())", columnA: columnA, columnB: columnB,
                    orderA: orderedB ? "Z_FOK_" + columnA.dropFirst(2) : nil,
                    orderB: orderedA ? "Z_FOK_" + columnB.dropFirst(2) : nil,
                    entityA: selfIsA ? entity : inverseEntity, entityB: selfIsA ? inverseEntity : entity)
                joinTables.append(join)
                joins[ObjectIdentifier(relationship)] = (join, selfIsA)
                if let inverse { joins[ObjectIdentifier(inverse)] = (join, !selfIsA) }
            }
        }

        // Per-entity slot mappings and statements.
        for entity in entitiesInOrder {
            let table = tableOf[ObjectIdentifier(entity)]!
            let mapping = EntityMapping(entity: entity, number: number(entity), table: table)
            let layout = entity.layout
            var insertColumns = ["Z_PK", "Z_ENT", "Z_OPT"]
            var slots: [SlotMapping] = []  // set on the mapping once, which derives its save plan from them
            for (slot, property) in layout.properties.enumerated() where !property.isTransient {
                let key = ObjectIdentifier(property)
                if let attribute = property as? NSAttributeDescription {
                    if let columns = compositeColumnsByProperty[key] {
                        mapping.compositeSlots.append(CompositeSlot(slot: slot, columns: columns, table: table))
                        continue
                    }
                    guard let name = propertyColumns[key], let column = table.index(of: name) else { continue }
                    slots.append(SlotMapping(slot: slot, column: column, kind: .attribute(attribute.attributeType)))
                    insertColumns.append(name)
                } else if let relationship = property as? NSRelationshipDescription,
                    let destination = relationship.destinationEntity
                {
                    if !relationship.isToMany {
                        guard let name = propertyColumns[key], let column = table.index(of: name) else { continue }
                        let entityColumn = entityColumns[key].flatMap { table.index(of: $0) }
                        slots.append(
                            SlotMapping(
                                slot: slot, column: column,
                                kind: .toOne(destination: destination, entityColumn: entityColumn)))
                        insertColumns.append(name)
                        if let entityName = entityColumns[key] { insertColumns.append(entityName) }
                        if let order = orderColumns[key] { mapping.orderColumns[slot] = order }
                    } else if let (join, isA) = joins[key] {
                        mapping.toMany[slot] = .join(
                            join, mine: isA ? join.columnA : join.columnB, other: isA ? join.columnB : join.columnA,
                            otherOrder: isA ? join.orderB : join.orderA, destination: destination)
                    } else if let inverse = relationship.inverseRelationship,
                        let fk = propertyColumns[ObjectIdentifier(inverse)],
                        let destinationTable = tableOf[ObjectIdentifier(destination)]
                    {
                        mapping.toMany[slot] = .inverseForeignKey(
                            table: destinationTable, column: fk, order: orderColumns[ObjectIdentifier(inverse)],
                            destination: destination)
                    }
                }
            }
            mapping.slots = slots
            insertColumns += mapping.compositeSlots.flatMap { $0.columns.map(\.name) }
            mapping.insertColumns = insertColumns
            mappings[ObjectIdentifier(entity)] = mapping
        }
        // Subentity ranges (contiguous in pre-order numbering; fall back to the own number otherwise).
        for entity in entitiesInOrder {
            let numbers = entitiesInOrder.filter { $0.isKindOf(entity: entity) }.map { number($0) }
            if let low = numbers.min(), let high = numbers.max(), high - low + 1 == Int64(numbers.count) {
                mappings[ObjectIdentifier(entity)]!.subentityRange = low...high
            }
        }

        // Indexes (FORMATS.md §1.8).
        for table in tables {
            for entity in entitiesInOrder where tableOf[ObjectIdentifier(entity)] === table {
                for property in entity.ownProperties where !property.isTransient {
                    guard let column = propertyColumns[ObjectIdentifier(property)] else { continue }
                    if property is NSRelationshipDescription || property.isIndexed {
                        indexStatements.append(
                            "CREATE INDEX \(table.name)_\(column)_INDEX ON \(table.name) (\(column))")
                    }
                }
            }
            if table.entityCount > 1 {
                indexStatements.append("CREATE INDEX \(table.name)_Z_ENT_INDEX ON \(table.name) (Z_ENT)")
            }
        }
        for join in joinTables {
            indexStatements.append(
                "CREATE INDEX \(join.name)_\(join.columnB)_INDEX ON \(join.name) (\(join.columnB), \(join.columnA))")
        }
        columnByProperty = propertyColumns
        for entity in entitiesInOrder {
            let table = tableOf[ObjectIdentifier(entity)]!
            if !entity.uniquenessConstraints.isEmpty { hasUniquenessConstraints = true }
            for constraint in entity.uniquenessConstraints {
                let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                // A name may be a composite or one of its elements (`colorScheme.primary`).
                let columns = names.compactMap {
                    Self.indexedColumns(named: $0, in: entity, propertyColumns: propertyColumns, compositeColumns: compositeColumnsByProperty)
                }
                guard !columns.isEmpty, columns.count == names.count else { continue }
                let list = columns.joined().map { "\($0) COLLATE BINARY ASC" }.joined(separator: ", ")
                let indexName = names.joined(separator: "_").replacingOccurrences(of: ".", with: "_")
                indexStatements.append(
                    "CREATE UNIQUE INDEX Z_\(entity.name ?? "")_UNIQUE_\(indexName) ON \(table.name) (\(list))"
                )
            }
            // Fetch indexes (binary elements only; see NSFetchIndexDescription).
            for index in entity.indexes where !index.elements.isEmpty {
                guard index.elements.allSatisfy({ $0.collationType == .binary }) else { continue }
                let columns = index.elements.compactMap { element -> String? in
                    guard let property = element.property,
                        let columns = Self.indexedColumns(
                            of: property, in: entity, propertyColumns: propertyColumns, compositeColumns: compositeColumnsByProperty)
                    else { return nil }
                    return columns.map { "\($0) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")" }.joined(separator: ", ")
                }
                guard columns.count == index.elements.count else { continue }
                indexStatements.append(
                    "CREATE INDEX Z_\(entity.name ?? "")_\(index.name) ON \(table.name) (\(columns.joined(separator: ", ")))")
            }
        }
    }

    /// The declared column type and cosmetic group for an attribute type (FORMATS.md §1.2).
    static func columnType(_ type: NSAttributeType) -> (String, Group)? {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
            ("INTEGER", .integer)
        case .doubleAttributeType, .floatAttributeType: ("FLOAT", .real)
        case .dateAttributeType: ("TIMESTAMP", .real)
        case .decimalAttributeType: ("DECIMAL", .real)
        case .stringAttributeType, .URIAttributeType, .objectIDAttributeType: ("VARCHAR", .text)
        case .binaryDataAttributeType, .UUIDAttributeType, .transformableAttributeType: ("BLOB", .blob)
        case .compositeAttributeType, .undefinedAttributeType: nil
        }
    }

    // MARK: DDL

    /// Every statement that creates the schema of a new store, in order.
    var createStatements: [String] {
        var statements = tables.map { Self.createStatement($0) } + joinTables.map { Self.createStatement($0) }
        statements.append(contentsOf: indexStatements)
        statements.append(
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        statements.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        statements.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return statements
    }

    /// `CREATE TABLE` for an entity table (named `name`, default its own name).
    static func createStatement(_ table: Table, name: String? = nil) -> String {
        let columns =
            ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            + table.columns.map { "\($0.name) \($0.declaredType)" }
        return "CREATE TABLE \(name ?? table.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// `CREATE TABLE` for a join table (named `name`, default its own name).
    static func createStatement(_ join: JoinTable, name: String? = nil) -> String {
        var columns = ["\(join.columnA) INTEGER", "\(join.columnB) INTEGER"]
        if let order = join.orderA { columns.append("\(order) INTEGER") }
        if let order = join.orderB { columns.append("\(order) INTEGER") }
        columns.append("PRIMARY KEY (\(join.columnA), \(join.columnB))")
        return "CREATE TABLE \(name ?? join.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// The rows of Z_PRIMARYKEY for a new store: (Z_ENT, Z_NAME, Z_SUPER), Z_MAX starting at 0.
    var primaryKeyRows: [(Int64, String, Int64)] {
        entitiesInOrder.map { entity in
            (number(of: entity)!, entity.name ?? "", entity.superentity.flatMap { number(of: $0) } ?? 0)
        }
    }
}
