import Foundation
import OpenCoreData

extension TestModels {
    /// Version 1 of the migration model: `Person(name, age, city)`, identifier "1".
    public static func migrationPersonV1() -> NSManagedObjectModel {
        let person = NSEntityDescription(
            name: "Person",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType),
                NSAttributeDescription(name: "age", type: .integer32AttributeType),
                NSAttributeDescription(name: "city", type: .stringAttributeType),
            ])
        let model = NSManagedObjectModel()
        model.entities = [person]
        model.versionIdentifiers = ["1"]
        return model
    }

    /// Version 2: `age` removed (the SQLite store rebuilds its table), identifier "2".
    public static func migrationPersonV2() -> NSManagedObjectModel {
        let person = NSEntityDescription(
            name: "Person",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType),
                NSAttributeDescription(name: "city", type: .stringAttributeType),
            ])
        let model = NSManagedObjectModel()
        model.entities = [person]
        model.versionIdentifiers = ["2"]
        return model
    }
}
