import Foundation

// Composite attributes in Core Data's SQLite layout: flattened into the entity's table, one column
// per (nested) element.
//
// [unverified] Apple's column names for composite elements are not known (FORMATS.md §1.2 found no
// source). We name them `Z` + the attribute's and the elements' names joined with `_`, upper-cased:
// `colorScheme.primary` is `ZCOLORSCHEME_PRIMARY`, a nested `location.position.x` is
// `ZLOCATION_POSITION_X`; a clash gets a numeric suffix like any column. Each column has the
// element type's declared type and group (§1.2). docs/linux-differences.md says so.

extension SQLiteSchema {
    /// One flattened element of a composite attribute.
    struct CompositeColumn {
        var name: String
        /// Element names below the composite (`["primary"]`, `["position", "x"]`).
        var path: [String]
        var type: NSAttributeType
    }

    /// A composite attribute's slot and where its columns sit in the table's select list.
    struct CompositeSlot {
        var slot: Int
        var columns: [CompositeColumn]
        /// Index of each column in the table's `columns`.
        var indexes: [Int]

        init(slot: Int, columns: [CompositeColumn], table: Table) {
            self.slot = slot
            self.columns = columns
            indexes = columns.map { table.index(of: $0.name) ?? 0 }
        }
    }

    /// The column name a composite element gets, before clashes are resolved.
    static func compositeColumnName(attribute: String, path: [String]) -> String {
        "Z" + ([attribute] + path).joined(separator: "_").uppercased()
    }

    /// Adds the columns of `composite`'s (nested) elements to `table`.
    static func addColumns(
        of composite: NSCompositeAttributeDescription, to table: Table, entityOrder: Int, unique: (String) -> String
    ) -> [CompositeColumn] {
        var result: [CompositeColumn] = []
        for leaf in composite._leaves {
            guard let (declared, group) = columnType(leaf.attribute.attributeType) else { continue }
            let name = unique(compositeColumnName(attribute: composite.name, path: leaf.path))
            table.columns.append(
                Column(name: name, declaredType: declared, group: group, entityOrder: entityOrder, subgroup: 0, sortName: name))
            result.append(CompositeColumn(name: name, path: leaf.path, type: leaf.attribute.attributeType))
        }
        return result
    }

    /// The column of the element at `path` below the composite attribute `property`, or nil when the
    /// path does not end on a stored element (a nested composite as a whole, an unknown name).
    func compositeColumn(of property: NSPropertyDescription, path: ArraySlice<String>) -> CompositeColumn? {
        compositeColumnsByProperty[ObjectIdentifier(property)]?.first { $0.path.elementsEqual(path) }
    }
}

extension SQLiteStore {
    /// Reads the composite attributes of a row selected with the table's `selectList` (starting at
    /// column `offset`) into their slots: a dictionary per composite, nil when every column is NULL.
    func decodeComposites(
        _ statement: SQLiteStatement, _ mapping: SQLiteSchema.EntityMapping, offset: Int32, into values: inout RowValues
    ) {
        for composite in mapping.compositeSlots {
            var dictionary: [String: Any] = [:]
            dictionary.reserveCapacity(composite.columns.count)
            for (column, index) in zip(composite.columns, composite.indexes) {
                let position = offset + mapping.table.selectedPosition(ofColumn: index)
                guard !statement.isNull(position), let value = decodeAttribute(statement, position, column.type) else { continue }
                if column.path.count == 1 {
                    dictionary[column.path[0]] = value
                } else {
                    CompositeValues.set(value, at: column.path[...], in: &dictionary)
                }
            }
            values[composite.slot] = dictionary.isEmpty ? nil : dictionary
        }
    }

    /// Binds the flattened columns of `values`' composite attributes from parameter `index` on;
    /// returns the next parameter index.
    func bindComposites(
        _ values: RowValues, _ mapping: SQLiteSchema.EntityMapping, _ statement: SQLiteStatement, from index: Int32
    ) -> Int32 {
        var index = index
        for composite in mapping.compositeSlots {
            // One cast of the slot's value to a dictionary; nested paths cast again below it.
            let dictionary = composite.slot < values.count ? CompositeValues.dictionary(values[composite.slot]) : nil
            for column in composite.columns {
                let value: Any?
                if let dictionary, let first = column.path.first {
                    value = column.path.count == 1
                        ? dictionary[first] : CompositeValues.value(at: column.path.dropFirst(), in: dictionary[first])
                } else {
                    value = nil
                }
                bindAttribute(value.flatMap(ValueConversion.unwrap), column.type, statement, index)
                index += 1
            }
        }
        return index
    }
}

// MARK: Indexes and uniqueness constraints over composites

extension SQLiteSchema {
    /// The columns a uniqueness constraint's or index's property `name` covers: a property's column,
    /// a composite element's (`colorScheme.primary`), or every element column of a (nested)
    /// composite (`colorScheme`). Nil if the name leads to no stored column.
    static func indexedColumns(
        named name: String, in entity: NSEntityDescription, propertyColumns: [ObjectIdentifier: String],
        compositeColumns: [ObjectIdentifier: [CompositeColumn]]
    ) -> [String]? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let property = entity.propertiesByName[parts[0]] else { return nil }
        if parts.count == 1, let column = propertyColumns[ObjectIdentifier(property)] { return [column] }
        let path = parts.dropFirst()
        let columns = (compositeColumns[ObjectIdentifier(property)] ?? []).filter { $0.path.starts(with: path) }
        return columns.isEmpty ? nil : columns.map(\.name)
    }

    /// The columns a fetch index element's `property` covers: the entity's own property (as
    /// ``indexedColumns(named:in:propertyColumns:compositeColumns:)``), or an element description
    /// of one of its composites (`NSFetchIndexElementDescription(property: primaryElement, ...)`).
    static func indexedColumns(
        of property: NSPropertyDescription, in entity: NSEntityDescription, propertyColumns: [ObjectIdentifier: String],
        compositeColumns: [ObjectIdentifier: [CompositeColumn]]
    ) -> [String]? {
        if let own = entity.propertiesByName[property.name], own === property {
            return indexedColumns(named: property.name, in: entity, propertyColumns: propertyColumns, compositeColumns: compositeColumns)
        }
        for case let composite as NSCompositeAttributeDescription in entity.properties {
            guard let leaf = composite._leaves.first(where: { $0.attribute === property }),
                  let column = compositeColumns[ObjectIdentifier(composite)]?.first(where: { $0.path == leaf.path })
            else { continue }
            return [column.name]
        }
        // Another description with the name of one of the entity's properties.
        return indexedColumns(named: property.name, in: entity, propertyColumns: propertyColumns, compositeColumns: compositeColumns)
    }
}
