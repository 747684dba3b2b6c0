import CSQLite
import Foundation

extension SQLiteStore {
    /// Runs a fetch: the entity filter, the compilable part of the predicate, the sort and (when
    /// everything else ran in SQL) the limit and offset go to SQL; the rest runs in memory on the
    /// fetched objects, so nothing is silently dropped.
    ///
    /// `request` is of the class itself, not a subclass (a context's copy, or ``execute(_:with:)``'s):
    /// the hot path reads its stored settings (``NSFetchRequest/_settings``) without the overridable
    /// accessors' dynamic calls, and borrows its entity (about 60 instructions a lookup, callgrind
    /// case 4).
    func executeFetch(_ request: NSFetchRequest<any NSFetchRequestResult>, context: NSManagedObjectContext) throws
        -> FetchResults
    {
        let connection = try db()
        guard
            let mapping = request._settings.entity.map(Unmanaged.passUnretained).flatMap({ entity in
                entity._withUnsafeGuaranteedRef { connection.fetchMapping(of: $0, in: schema) }
            })
        else {
            throw OpenCoreDataError(
                .coreDataError,
                "the SQLite store does not hold entity \(request.entity?.name ?? request.entityName ?? "nil")",
                entityName: request.entity?.name ?? request.entityName)
        }
        let resultType = request._settings.resultType
        if resultType == .dictionaryResultType, FetchDictionaryResults.applies(to: request) {
            return .values(try executeDictionaryFetch(request, context: context))
        }
        // IDs, and objects without property values (faults that load when first used), need only keys.
        let keysOnly =
            resultType == .managedObjectIDResultType
            || (resultType == .managedObjectResultType && !request._settings.includesPropertyValues)

        // An instance of a format template fetched before in the same way: its plan has the SQL.
        // The settings lent where they are stored: passed as a value, they were copied.
        let lookup = withUnsafeMutablePointer(to: &request._settings) {
            planLookup(UnsafePointer($0), mapping: mapping, connection: connection, keysOnly: keysOnly)
        }
        defer { withExtendedLifetime(lookup.predicate) {} }
        let (originRef, slots, found) = (lookup.origin, lookup.slots, lookup.plan)

        // Objects by a plan whose statement is prepared (a lookup in a loop): straight to the rows.
        if let found, let slots, !keysOnly, resultType == .managedObjectResultType,
            let objects = try withUnsafeMutablePointer(to: &request._settings, { settings in
                try plannedObjects(
                    found, slots: slots, request: UnsafePointer(settings), mapping: mapping, connection: connection,
                    context: context)
            })
        {
            return objects
        }
        let origin = originRef?.takeUnretainedValue()
        let table = mapping.table  // read here, not before the planned path, which does not use it
        // `nil` when a value cannot be bound as the plan's first instance was: compile afresh.
        var planBindings = slots.flatMap { slots in found?.bindings(for: slots) }
        let plan = planBindings != nil ? found : nil

        var conditions: [String] = []
        var joins: [String] = []
        var bindings: [SQLiteValue] = []
        var residual: [NSPredicate] = []
        let sorts = request.sortDescriptors ?? []
        let order: [String]?
        var newPlan: FetchPlan?
        if let plan, planBindings != nil {
            conditions = plan.conditions
            joins = plan.joins
            order = plan.order
            bindings = planBindings ?? []
            planBindings = nil  // `bindings` is then the array's only owner
            assert(planMatchesCompiler(plan, request, mapping: mapping, slots: slots, bindings: bindings))
        } else {
            let compiled = compiledConditions(request, mapping: mapping, slots: slots.map(Array.init) ?? [])
            (conditions, residual, order) = (compiled.conditions, compiled.residual, compiled.order)
            joins = compiled.query.joins
            bindings = compiled.query.bindings
            // Keep a plan when the whole fetch ran in SQL and nothing in it depends on a value.
            if found == nil, let origin, let slots, residual.isEmpty, order != nil, compiled.query.reusable,
                let kinds = FetchPlan.kinds(of: slots),
                let requestShape = RequestShape(request._settings, keysOnly: keysOnly)
            {
                newPlan = FetchPlan(
                    template: origin.template, mapping: mapping, request: requestShape, kinds: kinds,
                    recipe: compiled.query.recipe, conditions: conditions, joins: joins, order: order ?? [])
                connection.fetchPlans.insert(newPlan!)
            }
        }
        let sortInMemory = !sorts.isEmpty && order == nil
        let allInSQL = residual.isEmpty && !sortInMemory

        let paging = allInSQL ? Paging(request._settings) : .none
        let limited = paging != .none
        // Appended to in place: a plan's bindings have room for the offset (a copy of the array here,
        // still shared with the plan's result, was reallocated: about 280 instructions a fetch,
        // callgrind case 4).
        if paging.bindsOffset { bindings.append(.integer(Int64(request.fetchOffset))) }
        // The SQL text, built only when the statement for this shape is not cached yet.
        func from() -> String {
            var from = "FROM \(table.name) t0"
            if !joins.isEmpty { from += " " + joins.joined(separator: " ") }
            if !conditions.isEmpty { from += " WHERE " + conditions.joined(separator: " AND ") }
            return from
        }
        func tail() -> String {
            " ORDER BY " + ((order ?? []) + ["t0.Z_PK"]).joined(separator: ", ") + paging.sql
        }
        // With the limit in SQL, no step after the last row it allows: SQLite's step to its end cost
        // about 3,000 instructions, a third of a one-row lookup's SQLite time (callgrind case 4).
        let rowLimit = limited && request.fetchLimit > 0 ? request.fetchLimit : Int.max
        var rowCount = 0
        func shape(_ columns: FetchShape.Columns) -> FetchShape {
            FetchShape(
                mapping: mapping, columns: columns, conditions: conditions, joins: joins, order: order ?? [], paging: paging)
        }

        // Counts and IDs need no row values when everything ran in SQL.
        if allInSQL, request.resultType == .countResultType {
            let sql = limited ? "SELECT COUNT(*) FROM (SELECT t0.Z_PK \(from())\(tail()))" : "SELECT COUNT(*) \(from())"
            guard case .integer(let count)? = try connection.column(sql, bindings).first else { return .values([0]) }
            return .values([Int(count)])
        }
        if allInSQL, keysOnly {
            let statement = try planned(plan, newPlan, connection) {
                try connection.prepare(shape: shape(.keys)) { "SELECT t0.Z_PK, t0.Z_ENT \(from())\(tail())" }
            }
            defer { statement.reset() }
            statement.bind(bindings)
            if request.resultType == .managedObjectIDResultType, request._wantsObjectReferences {
                var references = ObjectReferences()
                while rowCount < rowLimit, try statement.step() {
                    rowCount += 1
                    guard let rowEntity = schema.entitiesByNumber[statement.int64(1)] else { continue }
                    references.append(entity: rowEntity, store: self, key: statement.int64(0))
                }
                return .values([references])
            }
            var ids: [NSManagedObjectID] = []
            while rowCount < rowLimit, try statement.step() {
                rowCount += 1
                guard let rowEntity = schema.entitiesByNumber[statement.int64(1)] else { continue }
                ids.append(rowID(entity: rowEntity, pk: statement.int64(0)))
            }
            if request.resultType == .managedObjectIDResultType { return .values(ids) }
            return .objects(ids.map { context.object(with: $0) })
        }

        let statement = try planned(plan, newPlan, connection) {
            try connection.prepare(shape: shape(.rows)) {
                // Rows of an entity without subentities are all of that entity: its number is
                // selected as a constant, as Apple does, not read from each row (about 90
                // instructions a row, callgrind case 2).
                let oneEntity = mapping.subentityRange.count == 1
                let columns = oneEntity ? table.selectList(entity: String(mapping.number)) : table.selectList
                return "SELECT \(columns) \(from())\(tail())"
            }
        }
        defer { statement.reset() }
        statement.bind(bindings)

        if allInSQL, request.resultType == .dictionaryResultType {
            var rows: [Any] = []
            while try statement.step() {
                guard let rowMapping = schema.mapping(forNumber: statement.int64(1)) else { continue }
                let values = decodeRow(statement, mapping: rowMapping, offset: 0)
                try TransformableValues.checkDecoded(
                    values, layout: rowMapping.entity.layout, objectID: rowID(entity: rowMapping.entity, pk: statement.int64(0)))
                rows.append(dictionary(values, entity: rowMapping.entity, request: request))
            }
            return .values(rows)
        }

        // When SQL did everything, the objects are the results (``FetchResults/objects(_:ofClass:)``).
        let (fetched, objectClass) = try fetchedObjects(
            statement, mapping: mapping, connection: connection, asFault: request.returnsObjectsAsFaults && allInSQL,
            rowLimit: rowLimit, context: context)
        if allInSQL && request.resultType == .managedObjectResultType { return .objects(fetched, ofClass: objectClass) }
        var objects = fetched
        // Freed before the in-memory steps, which can fire faults and fetch again (the deferred
        // reset then has nothing to undo).
        statement.reset()

        if !residual.isEmpty {
            objects = objects.filter { object in residual.allSatisfy { Self.evaluate($0, object) } }
        }
        if sortInMemory { request.sortInMemory(&objects) }
        let slice = allInSQL ? ArraySlice(objects) : request.page(objects)
        switch request.resultType {
        case .countResultType: return .values([slice.count])
        case .managedObjectIDResultType: return .values(slice.map { $0._objectID })
        case .dictionaryResultType:
            return .values(slice.map { object in
                if object._isFault { object._fireFault() }
                // Dictionaries hold the store's values, as when the whole fetch runs in SQL.
                return dictionary(
                    object._snapshot ?? object._committedSnapshot(), entity: object.entity, request: request)
            })
        default:
            if !request.returnsObjectsAsFaults { for object in slice { object._fireFault() } }
            return .objects(Array(slice))
        }
    }

    /// ``planMatchesCompiler(_:_:mapping:slots:bindings:)`` for a planned fetch, with a request made
    /// from its settings (debug builds only).
    private func planMatchesCompiler(
        _ plan: FetchPlan, _ settings: borrowing FetchRequestSettings, mapping: SQLiteSchema.EntityMapping,
        slots: TemplateSlots
    ) -> Bool {
        let request = NSFetchRequest<any NSFetchRequestResult>()
        request._settings = copy settings
        let bindings = plan.bindings(for: slots) ?? []
        return planMatchesCompiler(plan, request, mapping: mapping, slots: slots, bindings: bindings)
    }

    /// Whether `plan` has what the compiler makes of `request` now (debug builds check each use).
    private func planMatchesCompiler(
        _ plan: FetchPlan, _ request: NSFetchRequest<any NSFetchRequestResult>, mapping: SQLiteSchema.EntityMapping,
        slots: TemplateSlots?, bindings: [SQLiteValue]
    ) -> Bool {
        let fresh = compiledConditions(request, mapping: mapping, slots: slots.map(Array.init) ?? [])
        return fresh.conditions == plan.conditions && fresh.query.joins == plan.joins && fresh.order == plan.order
            && fresh.query.bindings == bindings && fresh.residual.isEmpty
    }

    /// ``planLookup(_:mapping:connection:keysOnly:)``'s findings.
    private typealias PlanLookup = (
        predicate: NSPredicate?, origin: Unmanaged<PredicateTemplateOrigin>?, slots: TemplateSlots?, plan: FetchPlan?
    )

    /// What a fetch with `settings` from `mapping` finds before it runs: its predicate (held for the
    /// fetch), and when that is an instance of a format template, its origin (set once, before the
    /// predicate was returned to its creator, and read through it unretained), its slot expressions
    /// (a view, valid while the predicate is held) and the plan an earlier instance fetched in the
    /// same way left.
    private func planLookup(
        _ settings: UnsafePointer<FetchRequestSettings>, mapping: SQLiteSchema.EntityMapping,
        connection: SQLiteConnection, keysOnly: Bool
    ) -> PlanLookup {
        let predicate = settings.pointee.resultType == .countResultType ? nil : settings.pointee.predicate
        let originRef = predicate.flatMap { predicate in predicate._templateOrigin.map(Unmanaged.passUnretained) }
        let slots = originRef.map { ref in ref._withUnsafeGuaranteedRef { $0.slots(of: predicate.unsafelyUnwrapped) } }
        let found = originRef.flatMap { ref in
            ref._withUnsafeGuaranteedRef { origin in
                slots.flatMap {
                    connection.fetchPlans.plan(
                        for: origin, slots: $0, mapping: mapping, request: settings, keysOnly: keysOnly)
                }
            }
        }
        return (predicate, originRef, slots, found)
    }

    /// A context's fetch of managed objects with `settings` and the entity they resolve to, when a
    /// plan serves it (a lookup in a loop): ``executeFetch(_:context:)``'s planned path, reached
    /// without the type-erasing request copy the context otherwise makes; `nil` when no plan does.
    func plannedFetch(
        _ settings: UnsafePointer<FetchRequestSettings>, entity: NSEntityDescription, context: NSManagedObjectContext
    ) throws -> FetchResults? {
        let connection = try db()
        guard settings.pointee.resultType == .managedObjectResultType, settings.pointee.includesPropertyValues,
            let mapping = connection.fetchMapping(of: entity, in: schema)
        else { return nil }
        let lookup = planLookup(settings, mapping: mapping, connection: connection, keysOnly: false)
        defer { withExtendedLifetime(lookup.predicate) {} }
        guard let plan = lookup.plan, let slots = lookup.slots else { return nil }
        return try plannedObjects(
            plan, slots: slots, request: settings, mapping: mapping, connection: connection, context: context)
    }

    /// The objects of a fetch by `plan`, whose statement is prepared, with the instance's values
    /// bound as they are made; `nil` when the plan has no statement or a value cannot be bound as
    /// its first instance's was (the caller compiles afresh). A plan is kept only when the whole
    /// fetch runs in SQL, so its limit and offset do too. The general path copied the plan's SQL
    /// parts and the sorts, and set up what only a statement still to prepare or an in-memory step
    /// needs (about 260 instructions a lookup, callgrind case 4). Its own function, taking what it
    /// uses borrowed: in `executeFetch`, the plan, its statement and the origin were retained for
    /// the optional bindings and released after, and the origin again for the plan's lookup (with
    /// `RequestShape` taking the request borrowed, ten retains and eight releases fewer a lookup,
    /// about 520 instructions).
    private func plannedObjects(
        _ plan: FetchPlan, slots: TemplateSlots, request: UnsafePointer<FetchRequestSettings>,
        mapping: SQLiteSchema.EntityMapping, connection: SQLiteConnection, context: NSManagedObjectContext
    ) throws -> FetchResults? {
        guard let prepared = plan.statement else { return nil }
        let statement = try connection.reuse(prepared, observed: false)
        defer { statement.reset() }
        guard let next = plan.bind(slots, into: statement) else { return nil }
        connection.statementObserver?(statement.sql)
        assert(planMatchesCompiler(plan, request.pointee, mapping: mapping, slots: slots))
        if plan.request.paging.bindsOffset { statement.bind(Int64(request.pointee.fetchOffset), next) }
        let limit = request.pointee.fetchLimit
        let (objects, objectClass) = try fetchedObjects(
            statement, mapping: mapping, connection: connection, asFault: request.pointee.returnsObjectsAsFaults,
            rowLimit: limit > 0 ? limit : Int.max, context: context)
        return .objects(objects, ofClass: objectClass)
    }

    /// The objects of the rows `statement` steps through, at most `rowLimit` of them, registered in
    /// `context` (as faults if `asFault`); `ofClass` is their class when they all share one.
    private func fetchedObjects(
        _ statement: SQLiteStatement, mapping: SQLiteSchema.EntityMapping, connection: SQLiteConnection, asFault: Bool,
        rowLimit: Int, context: NSManagedObjectContext
    ) throws -> (objects: [NSManagedObject], ofClass: ObjectIdentifier?) {
        var objects: [NSManagedObject] = []
        var rowCount = 0
        var lastNumber: Int64 = -1
        // The current rows' entity: separate variables, not an optional tuple, which was copied out
        // (a retain and a release of each part) for every row.
        var rowMapping: SQLiteSchema.EntityMapping?
        var rowPlan: SQLiteSchema.EntityMapping.RowPlan?
        var layout: EntityLayout!
        // The rows' identities: their objects make their IDs only if asked for. A constant, made
        // once per fetch: read per row from an optional variable, it was retained and released.
        let offer = connection.rowOffer(store: _objectIDStore, entity: mapping.entity)
        defer { connection.recycle(offer) }
        // The objects' class while they all share one, read from each object as it is made (its
        // class word is then in the cache); `nil` once they differ.
        var objectClass: ObjectIdentifier?
        var mixedClasses = false
        // An entity without subentities has only rows of its own here (the entity filter, or a table
        // of its own): Z_ENT is not read, as Apple's SQL selects a constant in its place (about 45
        // instructions a row, callgrind case 2).
        let onlyNumber = mapping.subentityRange.count == 1 ? mapping.number : nil
        // Every row is of the fetched entity's table (its subentities share it).
        let versionPosition = mapping.table.versionPosition
        var registration = context._beginFetchRegistration()
        // The rows' values, in storages of several rows each.
        var chunks = RowChunks()
        while try statement.step() {
            // Rows mostly share one entity: look its mapping and decoding plan up only when Z_ENT changes.
            let number = onlyNumber ?? statement.int64(1)
            if number != lastNumber {
                lastNumber = number
                // The fetched entity's own rows need no lookup by number (two hashes, about 270
                // instructions a fetch, callgrind case 4).
                rowMapping = number == mapping.number ? mapping : schema.mapping(forNumber: number)
                rowPlan = rowMapping?.rowPlan
                layout = rowMapping?.entity.layout
                // Set when the entity changes, not per row: a retain and a release of the entity per
                // row otherwise.
                if let rowMapping { offer.entity = rowMapping.entity }
            }
            // Borrowed for the row, not copied from `rowMapping` and `rowPlan` (which hold them): a
            // retain and a release of each per row.
            guard let rowMappingRef = rowMapping.map({ Unmanaged.passUnretained($0) }),
                let rowPlanRef = rowPlan.map({ Unmanaged.passUnretained($0) })
            else { continue }
            let values = rowMappingRef._withUnsafeGuaranteedRef { mapping in
                rowPlanRef._withUnsafeGuaranteedRef { decodeRow(statement, mapping: mapping, plan: $0, offset: 0, in: &chunks) }
            }
            let key = statement.int64(0)
            let object: NSManagedObject
            if !rowPlanRef._withUnsafeGuaranteedRef({ $0.hasTransformables }) {
                offer.key = key
                object = context._registerFetchedRow(
                    offer, layout: layout, values: consume values, version: statement.int64(versionPosition),
                    asFault: asFault, registration: &registration)
            } else {
                // The transformable check names the row's ID in its error.
                let id = rowID(
                    entity: rowMappingRef.takeUnretainedValue().entity, pk: key,
                    root: rowPlanRef.takeUnretainedValue().root)
                try TransformableValues.checkDecoded(values, layout: layout, objectID: id)
                object = context._registerFetchedObject(
                    objectID: id, values: consume values, version: statement.int64(versionPosition), asFault: asFault)
            }
            let cls = ObjectIdentifier(Swift.type(of: object))
            if objectClass == nil { objectClass = cls } else if cls != objectClass { mixedClasses = true }
            // The first object makes the array as a one-element literal: the first `append` to an
            // empty array took the general growth path (about 110 instructions more a lookup,
            // callgrind case 4).
            if rowCount == 0 { objects = [consume object] } else { objects.append(consume object) }
            rowCount += 1
            if rowCount == rowLimit { break }
        }
        return (objects, mixedClasses ? nil : objectClass)
    }

    /// The statement of a planned fetch: the plan's own when it has one (no shape to hash), else
    /// `prepare()`'s, which `newPlan` then keeps.
    private func planned(
        _ plan: FetchPlan?, _ newPlan: FetchPlan?, _ connection: SQLiteConnection,
        prepare: () throws -> SQLiteStatement
    ) throws -> SQLiteStatement {
        if let statement = plan?.statement { return try connection.reuse(statement) }
        let statement = try prepare()
        if !statement.finalizesWhenReleased { (plan ?? newPlan)?.statement = statement }  // not a one-use copy
        return statement
    }

    /// The SQL conditions of a fetch: the entity filter and the compilable conjuncts of its
    /// predicate (the others are `residual`, evaluated in memory), and its `ORDER BY` terms (`nil`
    /// when a sort runs in memory). `slots` are a template instance's slot expressions.
    private func compiledConditions(
        _ request: NSFetchRequest<any NSFetchRequestResult>, mapping: SQLiteSchema.EntityMapping, slots: [NSExpression]
    ) -> (conditions: [String], residual: [NSPredicate], order: [String]?, query: SQLiteQuery) {
        let query = SQLiteQuery(schema: schema, mapping: mapping, slots: slots)
        var conditions: [String] = []
        // Entity filter: subentities have contiguous numbers in pre-order.
        if !request.includesSubentities || mapping.subentityRange.count == 1 {
            if mapping.table.entityCount > 1 { conditions.append("t0.Z_ENT = \(mapping.number)") }
        } else if mapping.entity.superentity != nil {
            conditions.append(
                "(t0.Z_ENT >= \(mapping.subentityRange.lowerBound) AND t0.Z_ENT <= \(mapping.subentityRange.upperBound))")
        }
        // Conjuncts that do not compile are evaluated in memory on the rows the others select.
        var residual: [NSPredicate] = []
        if let predicate = request.predicate {
            for part in Self.conjuncts(of: predicate) {
                if let sql = query.compile(part) { conditions.append(sql) } else { residual.append(part) }
            }
        }
        let order = query.orderBy(request.sortDescriptors ?? [])
        return (conditions, residual, order, query)
    }

    /// What a fetch's SQL is made of, short of its text: the key of its cached statement.
    struct FetchShape: Hashable {
        enum Columns: Hashable { case rows, keys }
        /// The fetched entity's mapping, compared by identity: it fixes the table and its select list.
        /// Held strongly, so a mapping of a later schema can never take its identity.
        let mapping: SQLiteSchema.EntityMapping
        let columns: Columns
        let conditions: [String]
        let joins: [String]
        let order: [String]
        let paging: Paging

        static func == (a: Self, b: Self) -> Bool {
            a.mapping === b.mapping && a.columns == b.columns && a.paging == b.paging && a.conditions == b.conditions
                && a.joins == b.joins && a.order == b.order
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(mapping))
            hasher.combine(columns)
            hasher.combine(conditions)
            hasher.combine(joins)
            hasher.combine(order)
            hasher.combine(paging)
        }
    }

    /// How a fetch's SQL ends for its limit and offset: nothing, `LIMIT n`, or `LIMIT n OFFSET ?`
    /// (`n` is -1, no limit, for an offset alone). The limit is written into the SQL, as Apple's
    /// store writes it: bound, it cost about 110 instructions a lookup (callgrind case 4), and a
    /// fetch request's limit seldom changes between runs (each limit has a statement of its own
    /// in the connection's bounded cache). The offset, which a paging loop changes every time, is
    /// bound; an offset of 0 is left out: bound and skipped every time, it cost about 255
    /// instructions a lookup.
    enum Paging: Hashable {
        case none
        case limit(Int)
        case limitAndOffset(Int)

        /// The paging of `request`'s limit and offset, when they run in SQL.
        init(_ request: borrowing FetchRequestSettings) {
            self.init(limit: request.fetchLimit, offset: request.fetchOffset)
        }

        init(limit: Int, offset: Int) {
            if offset > 0 {
                self = .limitAndOffset(limit > 0 ? limit : -1)
            } else {
                self = limit > 0 ? .limit(limit) : .none
            }
        }

        /// Whether the SQL ends with `OFFSET ?`, bound to the request's offset.
        var bindsOffset: Bool {
            if case .limitAndOffset = self { return true }
            return false
        }

        var sql: String {
            switch self {
            case .none: ""
            case .limit(let limit): " LIMIT \(limit)"
            case .limitAndOffset(let limit): " LIMIT \(limit) OFFSET ?"
            }
        }
    }

    /// The conjuncts of a predicate: the flattened subpredicates of nested ANDs, or the predicate itself.
    static func conjuncts(of predicate: NSPredicate) -> [NSPredicate] {
        guard let compound = predicate as? NSCompoundPredicate, compound.compoundPredicateType == .and else {
            return [predicate]
        }
        return compound.subpredicates.flatMap { ($0 as? NSPredicate).map(conjuncts(of:)) ?? [] }
    }

    /// Evaluates a predicate in memory, combining compound predicates here and asking every other
    /// predicate to evaluate itself.
    static func evaluate(_ predicate: NSPredicate, _ object: NSManagedObject) -> Bool {
        guard let compound = predicate as? NSCompoundPredicate else { return predicate.evaluate(with: object) }
        let parts = compound.subpredicates.compactMap { $0 as? NSPredicate }
        switch compound.compoundPredicateType {
        case .and: return parts.allSatisfy { evaluate($0, object) }
        case .or: return parts.contains { evaluate($0, object) }
        case .not: return !(parts.first.map { evaluate($0, object) } ?? true)
        }
    }

    /// A dictionary result: the requested attributes (and to-one IDs) that are not nil.
    private func dictionary(
        _ values: RowValues, entity: NSEntityDescription, request: NSFetchRequest<any NSFetchRequestResult>
    ) -> NSDictionary {
        let layout = entity.layout
        let names =
            request.propertiesToFetch?.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
            ?? layout.properties.filter { !(($0 as? NSRelationshipDescription)?.isToMany ?? false) }.map(\.name)
        var result: [String: Any] = [:]
        for name in names {
            guard let slot = layout.indexByName[name], slot < values.count, let value = values[slot] else { continue }
            result[name] = value
        }
        return NSDictionary(dictionary: result)
    }
}
