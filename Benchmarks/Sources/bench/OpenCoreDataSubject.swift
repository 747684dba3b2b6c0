import OpenCoreData

// The entities as an app declares them: `@ManagedProperty` is the Linux spelling of `@NSManaged`.

final class OCDItem: NSManagedObject {
    @ManagedProperty var id: Int64
    @ManagedProperty var name: String
    @ManagedProperty var rank: Int16
    @ManagedProperty var score: Double
    @ManagedProperty var weight: Double
    @ManagedProperty var createdAt: Date
    @ManagedProperty var flag: Bool
    @ManagedProperty var note: String?
}

final class OCDCountry: NSManagedObject {
    @ManagedProperty var code: Int16
    @ManagedProperty var updatedAt: Date
    @ManagedProperty var moods: Set<OCDMood>
}

final class OCDMood: NSManagedObject {
    @ManagedProperty var date: Date
    @ManagedProperty var latitude: Double
    @ManagedProperty var longitude: Double
    @ManagedProperty var country: OCDCountry?
}

enum OCDModel {
    static func make() -> NSManagedObjectModel {
        let idAttribute = NSAttributeDescription(name: "id", type: .integer64AttributeType, isOptional: false)
        idAttribute.isIndexed = true
        let item = NSEntityDescription(
            name: "Item", managedObjectClassName: NSStringFromClass(OCDItem.self),
            properties: [
                idAttribute,
                NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
                NSAttributeDescription(name: "rank", type: .integer16AttributeType, isOptional: false),
                NSAttributeDescription(name: "score", type: .doubleAttributeType, isOptional: false),
                NSAttributeDescription(name: "weight", type: .doubleAttributeType, isOptional: false),
                NSAttributeDescription(name: "createdAt", type: .dateAttributeType, isOptional: false),
                NSAttributeDescription(name: "flag", type: .booleanAttributeType, isOptional: false),
                NSAttributeDescription(name: "note", type: .stringAttributeType, isOptional: true),
            ])

        let country = NSEntityDescription(name: "Country", managedObjectClassName: NSStringFromClass(OCDCountry.self))
        let mood = NSEntityDescription(name: "Mood", managedObjectClassName: NSStringFromClass(OCDMood.self))
        let moodCountry = NSRelationshipDescription(name: "country", destination: country, toMany: false)
        let countryMoods = NSRelationshipDescription(name: "moods", destination: mood, toMany: true)
        moodCountry.inverseRelationship = countryMoods
        countryMoods.inverseRelationship = moodCountry
        let code = NSAttributeDescription(
            name: "code", type: .integer16AttributeType, isOptional: false, defaultValue: 0)
        code.isIndexed = true
        country.properties = [
            code,
            NSAttributeDescription(name: "updatedAt", type: .dateAttributeType, isOptional: false),
            countryMoods,
        ]
        mood.properties = [
            NSAttributeDescription(name: "date", type: .dateAttributeType, isOptional: false),
            NSAttributeDescription(name: "latitude", type: .doubleAttributeType, isOptional: false),
            NSAttributeDescription(name: "longitude", type: .doubleAttributeType, isOptional: false),
            moodCountry,
        ]
        let model = NSManagedObjectModel()
        model.entities = [item, country, mood]
        return model
    }
}

/// `key == value` on an integer attribute, the way the app writes it.
func integerEquals(_ key: String, _ value: Int64) -> NSPredicate {
    if Options.current.astPredicates {
        return NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: key), rightExpression: NSExpression(forConstantValue: value),
            modifier: .direct, type: .equalTo)
    }
    return NSPredicate(format: "%K == %lld", key, value)
}

// Seed 004's helpers (`Managed.findOrCreate`, `findOrFetch`, `materializedObject`), for Country.
extension OCDCountry {
    static func findOrCreate(code: Int16, in context: NSManagedObjectContext, created: inout Int) throws -> OCDCountry {
        let predicate = integerEquals("code", Int64(code))
        if let country = materializedObject(in: context, matching: predicate) { return country }
        let request = NSFetchRequest<OCDCountry>(entityName: "Country")
        request.predicate = predicate
        request.returnsObjectsAsFaults = false
        request.fetchLimit = 1
        if let country = try context.fetch(request).first { return country }
        let country = NSEntityDescription.insertNewObject(forEntityName: "Country", into: context) as! OCDCountry
        country.code = code
        country.updatedAt = Date()
        created += 1
        return country
    }

    static func materializedObject(in context: NSManagedObjectContext, matching predicate: NSPredicate) -> OCDCountry? {
        for object in context.registeredObjects where !object.isFault {
            if let result = object as? OCDCountry, predicate.evaluate(with: result) { return result }
        }
        return nil
    }
}

final class OpenCoreDataSubject: Subject {
    let model = OCDModel.make()
    let storeType: String
    /// With the in-memory store, set-up and run share the coordinator (and so run in one process).
    private var memoryCoordinator: NSPersistentStoreCoordinator?

    /// The store's file in a run's folder.
    static let fileName = "ocd.sqlite"

    init(storeType: String) { self.storeType = storeType }

    func context(_ directory: URL) throws -> NSManagedObjectContext {
        let coordinator: NSPersistentStoreCoordinator
        if storeType == NSInMemoryStoreType, let existing = memoryCoordinator {
            coordinator = existing
        } else {
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let url = directory.appendingPathComponent(Self.fileName)
            try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: url, options: nil)
            if storeType == NSInMemoryStoreType { memoryCoordinator = coordinator }
        }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    func setUp(_ kind: CaseKind, sizes: Sizes, directory: URL) throws {
        let context = try context(directory)
        try context.performAndWait { () throws -> Void in
            switch kind.fixture {
            case .none:
                break
            case .items:
                // In chunks, so that a million rows do not sit in one context.
                var i = 0
                while i < sizes.n {
                    for j in i..<min(sizes.n, i + 50_000) { Self.insertItem(j, into: context) }
                    try context.save()
                    context.reset()
                    i += 50_000
                }
            case .countriesAndMoods:
                for c in 0..<sizes.countries8 {
                    let country = OCDCountry(context: context)
                    country.code = Int16(truncatingIfNeeded: c)
                    country.updatedAt = Date(timeIntervalSinceReferenceDate: 700_000_000)
                    for m in 0..<sizes.moodsPerCountry8 {
                        let mood = OCDMood(context: context)
                        mood.date = Date(timeIntervalSinceReferenceDate: Sizes.moodDate(c * sizes.moodsPerCountry8 + m))
                        mood.latitude = 50
                        mood.longitude = 20
                        mood.country = country
                    }
                    if c % 100 == 99 {
                        try context.save()
                        context.reset()
                    }
                }
                try context.save()
                context.reset()
            }
        }
    }

    static func insertItem(_ i: Int, into context: NSManagedObjectContext) {
        let values = ItemValues(i)
        let item = OCDItem(context: context)
        item.id = values.id
        item.name = values.name
        item.rank = values.rank
        item.score = values.score
        item.weight = values.weight
        item.createdAt = Date(timeIntervalSinceReferenceDate: values.createdAt)
        item.flag = values.flag
        item.note = values.note
    }

    func run(_ kind: CaseKind, sizes: Sizes, directory: URL) throws -> Measurement {
        if kind.isMigration { return try runMigration(kind, directory: directory) }  // Migrations.swift
        if kind.isContexts { return try runContexts(kind, sizes: sizes, directory: directory) }  // Contexts*.swift
        let context = try context(directory)
        return try context.performAndWait { () throws -> Measurement in
            switch kind {
            case .migrateAddAttribute, .migrateRenameAttribute, .migrateAddEntity:
                throw BenchError("the migration cases run in Migrations.swift")
            case .importContexts, .readers, .mergeSave, .frcInsert:
                throw BenchError("the contexts cases run in Contexts.swift")
            case .insert:
                return try measure {
                    for i in 0..<sizes.n { Self.insertItem(i, into: context) }
                    try context.save()
                    return Int64(sizes.n)
                }
            case .fetchAll:
                return try measure {
                    let request = NSFetchRequest<OCDItem>(entityName: "Item")
                    request.returnsObjectsAsFaults = false
                    var check: Int64 = 0
                    for item in try context.fetch(request) {
                        check &+= ItemValues.checksum(
                            id: item.id, name: item.name, rank: item.rank, score: item.score, weight: item.weight,
                            createdAt: item.createdAt.timeIntervalSinceReferenceDate, flag: item.flag, note: item.note)
                    }
                    return check
                }
            case .faults:
                return try measure {
                    let request = NSFetchRequest<OCDItem>(entityName: "Item")
                    var check: Int64 = 0
                    for item in try context.fetch(request) { check &+= Int64(item.name.utf8.count) }
                    return check
                }
            case .lookups:
                return try measure {
                    var check: Int64 = 0
                    for j in 0..<sizes.lookups {
                        let request = NSFetchRequest<OCDItem>(entityName: "Item")
                        request.predicate = integerEquals("id", sizes.lookupKey(j))
                        request.fetchLimit = 1
                        guard let item = try context.fetch(request).first else { throw BenchError("lookup \(j): none") }
                        check &+= item.id &+ Int64(item.name.utf8.count)
                    }
                    return check
                }
            case .update:
                return try measure {
                    let request = NSFetchRequest<OCDItem>(entityName: "Item")
                    request.returnsObjectsAsFaults = false
                    let items = try context.fetch(request)
                    for item in items { item.score += 1 }
                    try context.save()
                    return Int64(items.count)
                }
            case .delete:
                return try measure {
                    let items = try context.fetch(NSFetchRequest<OCDItem>(entityName: "Item"))
                    for item in items { context.delete(item) }
                    try context.save()
                    return Int64(items.count)
                }
            case .findOrCreate:
                return try measure {
                    var check: Int64 = 0
                    var created = 0
                    for i in 0..<sizes.moods7 {
                        let mood = NSEntityDescription.insertNewObject(forEntityName: "Mood", into: context) as! OCDMood
                        mood.date = Date(timeIntervalSinceReferenceDate: Sizes.moodDate(i))
                        mood.latitude = 50
                        mood.longitude = 20
                        let country = try OCDCountry.findOrCreate(
                            code: sizes.countryCode7(i), in: context, created: &created)
                        mood.country = country
                        check &+= Int64(country.code)
                    }
                    try context.save()
                    return check &+ Int64(created) &* 1_000_000
                }
            case .traverse:
                return try measure {
                    var check: Int64 = 0
                    for country in try context.fetch(NSFetchRequest<OCDCountry>(entityName: "Country")) {
                        for mood in country.moods {
                            check &+= 1 &+ Int64(mood.date.timeIntervalSinceReferenceDate.rounded())
                        }
                    }
                    return check
                }
            case .traversePrefetch:
                return try measure {
                    var check: Int64 = 0
                    let request = NSFetchRequest<OCDCountry>(entityName: "Country")
                    request.relationshipKeyPathsForPrefetching = ["moods"]
                    for country in try context.fetch(request) {
                        for mood in country.moods {
                            check &+= 1 &+ Int64(mood.date.timeIntervalSinceReferenceDate.rounded())
                        }
                    }
                    return check
                }
            case .memory:
                return try measure {
                    let request = NSFetchRequest<OCDItem>(entityName: "Item")
                    request.fetchBatchSize = 1000
                    var check: Int64 = 0
                    if Options.current.batchedArray {
                        for item in try context.fetch(request) { check &+= Int64(item.name.utf8.count) }
                    } else {
                        // What Apple's `fetch` returns for a batched request (a lazily loading array).
                        for item in try context.fetchBatched(request) { check &+= Int64(item.name.utf8.count) }
                    }
                    return check
                }
            }
        }
    }
}
