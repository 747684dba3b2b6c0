import Foundation
import GRDB
import OpenCoreData

// The lightweight-migration cases (m1–m3): each library changes the schema of a store that holds
// 10N items, the way it is meant to. Raw SQLite and GRDB's plain SQL run the statements a person
// would write; GRDB records uses its DatabaseMigrator and schema builder; OpenCoreData opens the
// store with the next model version and infers the mapping (NSMigratePersistentStoresAutomatically-
// Option, NSInferMappingModelAutomaticallyOption). Adding an attribute must not rewrite the rows.
// Every library reports the number of items afterwards.

/// The SQL a person writes for each change (raw SQLite and GRDB's plain SQL).
func migrationSQL(_ kind: CaseKind) -> String {
    switch kind {
    case .migrateAddAttribute: "ALTER TABLE item ADD COLUMN extra TEXT"
    case .migrateRenameAttribute: "ALTER TABLE item RENAME COLUMN note TO comment"
    case .migrateAddEntity:
        """
        CREATE TABLE tag(pk INTEGER PRIMARY KEY, name TEXT);
        ALTER TABLE item ADD COLUMN tag INTEGER REFERENCES tag(pk);
        CREATE INDEX item_tag ON item(tag)
        """
    default: ""
    }
}

extension RawSubject {
    func runMigration(_ kind: CaseKind, directory: URL) throws -> Measurement {
        let db = try open(directory, create: false)
        return try measure {
            try db.execute("BEGIN")
            try db.execute(migrationSQL(kind))
            try db.execute("COMMIT")
            let count = try db.prepare("SELECT COUNT(*) FROM item")
            _ = try count.step()
            return count.int64(0)
        }
    }
}

extension GRDBSQLSubject {
    func runMigration(_ kind: CaseKind, directory: URL) throws -> Measurement {
        let queue = try open(directory, create: false)
        return try measure {
            try queue.write { db in try db.execute(sql: migrationSQL(kind)) }
            return try queue.read { db in try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0 }
        }
    }
}

extension GRDBRecordsSubject {
    func runMigration(_ kind: CaseKind, directory: URL) throws -> Measurement {
        let queue = try open(directory, create: false)
        return try measure {
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v2") { db in
                switch kind {
                case .migrateAddAttribute:
                    try db.alter(table: "item") { t in t.add(column: "extra", .text) }
                case .migrateRenameAttribute:
                    try db.alter(table: "item") { t in t.rename(column: "note", to: "comment") }
                case .migrateAddEntity:
                    try db.create(table: "tag") { t in
                        t.primaryKey("pk", .integer)
                        t.column("name", .text)
                    }
                    try db.alter(table: "item") { t in t.add(column: "tag", .integer).references("tag") }
                    try db.create(index: "item_tag", on: "item", columns: ["tag"])
                default: break
                }
            }
            try migrator.migrate(queue)
            return try queue.read { db in try Int64(ItemRecord.fetchCount(db)) }
        }
    }
}

extension OCDModel {
    /// The second model version for a migration case: the benchmark's model with one change.
    static func next(for kind: CaseKind) -> NSManagedObjectModel {
        let model = make()
        let item = model.entitiesByName["Item"]!
        switch kind {
        case .migrateAddAttribute:
            item.properties += [NSAttributeDescription(name: "extra", type: .stringAttributeType, isOptional: true)]
        case .migrateRenameAttribute:
            let renamed = NSAttributeDescription(name: "comment", type: .stringAttributeType, isOptional: true)
            renamed.renamingIdentifier = "note"
            item.properties = item.properties.filter { $0.name != "note" } + [renamed]
        case .migrateAddEntity:
            let tag = NSEntityDescription(name: "Tag")
            let itemTag = NSRelationshipDescription(name: "tag", destination: tag, toMany: false)
            let tagItems = NSRelationshipDescription(name: "items", destination: item, toMany: true)
            itemTag.inverseRelationship = tagItems
            tagItems.inverseRelationship = itemTag
            tag.properties = [NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: true), tagItems]
            item.properties += [itemTag]
            model.entities += [tag]
        default: break
        }
        return model
    }
}

extension OpenCoreDataSubject {
    func runMigration(_ kind: CaseKind, directory: URL) throws -> Measurement {
        let url = directory.appendingPathComponent("ocd.sqlite")
        let next = OCDModel.next(for: kind)
        let options: [AnyHashable: Any] = [
            NSMigratePersistentStoresAutomaticallyOption: true,
            NSInferMappingModelAutomaticallyOption: true,
            OpenCoreDataMigrationSourceModelsOption: [model],
        ]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: next)
        return try measure {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return try context.performAndWait { () throws -> Int64 in
                Int64(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")))
            }
        }
    }
}
