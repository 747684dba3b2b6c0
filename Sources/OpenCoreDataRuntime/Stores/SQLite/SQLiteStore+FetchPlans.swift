import Foundation

extension SQLiteStore {
    /// What the SQLite store compiled for one fetch of a predicate made from a format template
    /// (`NSPredicate(format: "id == %lld", id)` in a loop, the seeds' `findOrFetch`), kept so that
    /// later instances of the same template skip the compiler: their SQL is the same, and only the
    /// bindings are made again from their slot values.
    ///
    /// A plan is found by the template's identity, and holds only when everything else the SQL
    /// depends on is the same: the entity mapping, the request's shape (subentities, limit or
    /// offset, sorts, the columns fetched), and each slot's kind: its key path for `%K`; nil; or
    /// the value's type, and for strings whether they are ASCII (non-ASCII equality runs through
    /// `ocd_strop`). Where the SQL depends on a value beyond that (a temporary object ID compiles to
    /// `0`), the compiler marks the query not reusable and no plan is kept. Where a later value
    /// cannot be bound the way the first was (NaN, an integer beyond `Int64`, a string that is not a
    /// UUID), the fetch compiles from scratch, so a plan never changes a result.
    final class FetchPlan {
        /// How a binding is made from a slot's value: as ``SQLiteQuery`` made it.
        enum Role {
            /// A string pattern for `ocd_strop`.
            case text
            /// The value compared with an attribute of this type.
            case value(NSAttributeType)
            /// An object's (or object ID's) primary key.
            case primaryKey
            /// An integer compared with a to-many count.
            case count
        }

        /// One binding: a slot's value made into a parameter, or a constant the template fixes.
        enum Binding {
            case slot(Int, Role)
            case fixed(SQLiteValue)
        }

        /// What a slot holds, as far as the SQL text depends on it.
        enum SlotKind: Equatable {
            case keyPath(String)
            case null
            /// A value of this type; for strings (`String`, `NSString`), whether it is ASCII.
            case value(ObjectIdentifier, Text)
        }

        enum Text { case none, ascii, other }

        /// Held strongly, so that no later template can take its identity.
        let template: NSPredicate
        let mapping: SQLiteSchema.EntityMapping
        let request: RequestShape
        let kinds: [SlotKind]
        let recipe: [Binding]
        /// The compiled parts, as ``SQLiteStore/executeFetch(_:context:)`` builds the statement.
        let conditions: [String]
        let joins: [String]
        let order: [String]
        /// The prepared statement, once the first fetch has prepared it; owned by the connection,
        /// which drops its plans when it finalizes its statements.
        var statement: SQLiteStatement?

        init(
            template: NSPredicate, mapping: SQLiteSchema.EntityMapping, request: RequestShape, kinds: [SlotKind],
            recipe: [Binding], conditions: [String], joins: [String], order: [String]
        ) {
            self.template = template
            self.mapping = mapping
            self.request = request
            self.kinds = kinds
            self.recipe = recipe
            self.conditions = conditions
            self.joins = joins
            self.order = order
        }

        /// The bindings for an instance with `slots`, or `nil` if one cannot be made as the first
        /// instance's was (the fetch then compiles from scratch).
        func bindings(for slots: TemplateSlots) -> [SQLiteValue]? {
            var bindings: [SQLiteValue] = []
            bindings.reserveCapacity(recipe.count + 1)
            for binding in recipe {
                guard let value = value(of: binding, slots) else { return nil }
                bindings.append(value)
            }
            return bindings
        }

        /// ``bindings(for:)`` bound straight into `statement`, from parameter 1 on: the index of the
        /// next parameter, or `nil` where `bindings(for:)` gives `nil` (parameters bound by then are
        /// cleared by the statement's reset). The array was allocated and freed on every planned
        /// fetch (about 300 instructions a lookup, callgrind case 4).
        func bind(_ slots: TemplateSlots, into statement: SQLiteStatement) -> Int32? {
            var index: Int32 = 1
            for binding in recipe {
                // An integer constant compared with an integer or Boolean column is bound as the
                // number itself (as `SQLiteQuery.sqlValue` binds it), read without boxing: about 390
                // instructions a lookup (callgrind case 4).
                if case .slot(let slot, .value(let type)) = binding, Self.bindsNumbers(type), slot < slots.count,
                    let integer = slots.constantInteger(at: slot)
                {
                    statement.bind(integer, index)
                    index += 1
                    continue
                }
                guard let value = value(of: binding, slots) else { return nil }
                statement.bind(value, index)
                index += 1
            }
            return index
        }

        /// Whether a number compared with a column of `type` is bound as it is (integral values as
        /// integers): integer and Boolean columns (see `SQLiteQuery.sqlValue(_:_:)`).
        @inline(__always)
        private static func bindsNumbers(_ type: NSAttributeType) -> Bool {
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: true
            default: false
            }
        }

        /// One binding's value for an instance with `slots`; `nil` if it cannot be made.
        private func value(of binding: Binding, _ slots: TemplateSlots) -> SQLiteValue? {
            switch binding {
            case .fixed(let value):
                return value
            case .slot(let index, let role):
                guard index < slots.count, let value = Self.value(of: slots[index], kind: kinds[index]) else {
                    return nil
                }
                return Self.bind(value, role)
            }
        }

        private static func bind(_ value: Any, _ role: Role) -> SQLiteValue? {
            switch role {
            case .text: return (value as? String).map(SQLiteValue.text)
            case .value(let type): return SQLiteQuery.sqlValue(value, type)
            case .primaryKey:
                let id = (value as? NSManagedObject)?.objectID ?? value as? NSManagedObjectID
                return id?.primaryKey.map(SQLiteValue.integer)
            case .count: return ValueConversion.int64(value).map(SQLiteValue.integer)
            }
        }

        /// The kinds of `slots`, or `nil` when one cannot be reused (a collection, whose size
        /// changes the SQL; an expression other than a constant or key path).
        static func kinds(of slots: TemplateSlots) -> [SlotKind]? {
            var kinds: [SlotKind] = []
            kinds.reserveCapacity(slots.count)
            for slot in slots {
                guard let kind = kind(of: slot) else { return nil }
                kinds.append(kind)
            }
            return kinds
        }

        /// Whether `slots` have exactly `kinds`, without building an array. A constant of exactly
        /// the expected type (not a string) matches without being read further.
        static func slots(_ slots: TemplateSlots, haveKinds kinds: [SlotKind]) -> Bool {
            guard slots.count == kinds.count else { return false }
            for index in 0..<slots.count {
                // One look at the slot's node for the common kinds: matching a tuple of the kind and
                // the node copied the node once per pattern tried (about 270 instructions a fetch,
                // callgrind case 4).
                switch kinds[index] {
                case .keyPath(let expected):
                    // Any other node has another kind.
                    guard let path = slots.plainKeyPath(at: index), path == expected else { return false }
                case .value(let type, .none):
                    if slots.constantType(at: index) == type { continue }
                    if kind(of: slots[index]) != kinds[index] { return false }
                default:
                    if kind(of: slots[index]) != kinds[index] { return false }
                }
            }
            return true
        }

        /// The value of a slot that has `kind` (checked by ``slots(_:haveKinds:)``).
        private static func value(of slot: NSExpression, kind: SlotKind) -> Any? {
            if case .value(let type, _) = kind, case .constant(let constant?) = slot._node,
                ObjectIdentifier(Swift.type(of: constant)) == type
            {
                return constant  // not an optional or NSNull: the value itself
            }
            return read(slot)?.value
        }

        private static func kind(of slot: NSExpression) -> SlotKind? { read(slot)?.kind }

        /// A slot's kind and its value as ``SQLiteQuery`` reads a constant (unwrapped, `NSNull` as
        /// nil); `nil` when the slot cannot be reused. The values format specifiers give (`Int`,
        /// `Double`, `String`, ...) are recognized by their type alone.
        private static func read(_ slot: NSExpression) -> (kind: SlotKind, value: Any?)? {
            switch slot._node {
            case .keyPath(nil, let path):
                return (.keyPath(path), nil)
            case .constant(let constant?):
                let type = ObjectIdentifier(Swift.type(of: constant))
                if type == stringType { return (.value(type, text(constant as! String)), constant) }
                if scalarTypes.contains(type) { return (.value(type, .none), constant) }
                guard case .some(let unwrapped) = SQLiteQuery.constant(slot) else { return nil }
                guard let value = unwrapped else { return (.null, nil) }
                let valueType = ObjectIdentifier(Swift.type(of: value))
                if value is NSManagedObject || value is NSManagedObjectID { return (.value(valueType, .none), value) }
                if let string = value as? NSString { return (.value(valueType, text(string as String)), value) }
                if SQLiteQuery.isCollection(value) { return nil }
                return (.value(valueType, .none), value)
            case .constant(nil):
                return (.null, nil)
            default:
                return nil
            }
        }

        private static func text(_ string: String) -> Text { string.utf8.allSatisfy { $0 < 0x80 } ? .ascii : .other }

        private static let stringType = ObjectIdentifier(String.self)
        /// Types that are never collections or strings: classified without a cast.
        private static let scalarTypes: Set<ObjectIdentifier> = [
            ObjectIdentifier(Int.self), ObjectIdentifier(Int64.self), ObjectIdentifier(Int32.self),
            ObjectIdentifier(Int16.self), ObjectIdentifier(Int8.self), ObjectIdentifier(UInt.self),
            ObjectIdentifier(UInt64.self), ObjectIdentifier(UInt32.self), ObjectIdentifier(UInt16.self),
            ObjectIdentifier(UInt8.self), ObjectIdentifier(Double.self), ObjectIdentifier(Float.self),
            ObjectIdentifier(Bool.self), ObjectIdentifier(Date.self), ObjectIdentifier(UUID.self),
            ObjectIdentifier(Data.self), ObjectIdentifier(URL.self), ObjectIdentifier(Decimal.self),
        ]
    }

    /// The parts of a fetch request that shape its SQL besides the predicate.
    struct RequestShape: Equatable {
        let includesSubentities: Bool
        let paging: Paging
        let keysOnly: Bool
        let sorts: [Sort]

        struct Sort: Equatable {
            let key: String
            let ascending: Bool
            let selector: SortSelector
        }

        /// `nil` when a sort descriptor has a comparator or no key (it is sorted in memory, and such
        /// fetches are not planned).
        /// The request is borrowed: an initializer's parameters are otherwise taken owned, a retain
        /// and a release a fetch.
        init?(_ request: borrowing FetchRequestSettings, keysOnly: Bool) {
            includesSubentities = request.includesSubentities
            paging = Paging(request)
            self.keysOnly = keysOnly
            var sorts: [Sort] = []
            if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
                sorts.reserveCapacity(descriptors.count)
                for sort in descriptors {
                    guard !SQLiteQuery.hasComparator(sort), let key = sort.key else { return nil }
                    sorts.append(Sort(key: key, ascending: sort.ascending, selector: sort._ocdSortSelector))
                }
            }
            self.sorts = sorts
        }

        /// Whether `RequestShape(request, keysOnly: keysOnly)` is this shape, found without making
        /// one: a planned lookup made one only to compare it (about 60 instructions a lookup,
        /// callgrind case 4).
        func matches(_ request: UnsafePointer<FetchRequestSettings>, keysOnly: Bool) -> Bool {
            guard self.keysOnly == keysOnly, includesSubentities == request.pointee.includesSubentities,
                paging == Paging(limit: request.pointee.fetchLimit, offset: request.pointee.fetchOffset)
            else { return false }
            guard let descriptors = request.pointee.sortDescriptors, !descriptors.isEmpty else {
                return sorts.isEmpty
            }
            guard descriptors.count == sorts.count else { return false }
            for (sort, descriptor) in zip(sorts, descriptors) {
                guard !SQLiteQuery.hasComparator(descriptor), descriptor.key == sort.key,
                    descriptor.ascending == sort.ascending, descriptor._ocdSortSelector == sort.selector
                else { return false }
            }
            return true
        }
    }

    /// A connection's fetch plans, by template. Bounded: when full it is emptied.
    struct FetchPlans {
        private var plans: [ObjectIdentifier: [FetchPlan]] = [:]
        /// The plan found or inserted last, tried before the dictionary: a lookup in a loop asks for
        /// the same plan each time, and hashing the template's identity and walking its candidates
        /// cost about 250 instructions a fetch (callgrind case 4).
        private var last: FetchPlan?
        private(set) var count = 0
        static let limit = 512

        /// The plan for an instance of `origin`'s template, with `slots`, fetching from `mapping` with
        /// `shape`.
        mutating func plan(
            for origin: PredicateTemplateOrigin, slots: TemplateSlots, mapping: SQLiteSchema.EntityMapping,
            request: UnsafePointer<FetchRequestSettings>, keysOnly: Bool
        ) -> FetchPlan? {
            if let last, Self.plan(last, serves: origin, slots, mapping, request, keysOnly) { return last }
            guard let candidates = plans[ObjectIdentifier(origin.template)] else { return nil }
            for plan in candidates where Self.plan(plan, serves: origin, slots, mapping, request, keysOnly) {
                last = plan
                return plan
            }
            return nil
        }

        private static func plan(
            _ plan: FetchPlan, serves origin: PredicateTemplateOrigin, _ slots: TemplateSlots,
            _ mapping: SQLiteSchema.EntityMapping, _ request: UnsafePointer<FetchRequestSettings>, _ keysOnly: Bool
        ) -> Bool {
            plan.template === origin.template && plan.mapping === mapping
                && plan.request.matches(request, keysOnly: keysOnly) && FetchPlan.slots(slots, haveKinds: plan.kinds)
        }

        mutating func insert(_ plan: FetchPlan) {
            if count >= Self.limit {
                plans.removeAll(keepingCapacity: true)
                count = 0
            }
            plans[ObjectIdentifier(plan.template), default: []].append(plan)
            last = plan
            count += 1
        }

        mutating func removeAll() {
            plans.removeAll()
            last = nil
            count = 0
        }
    }
}
