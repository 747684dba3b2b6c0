import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Seed 002's "Derived Attributes": `Category.articlesCount` (`articles.@count`), `Category.totalViews`
/// (`@sum.articles.views`, the seed's spelling), `Article.categoryName` (`category.name`),
/// `Article.lastModified` (`now()`), `Article.searchName` (`canonical:(name)`), plus `uppercase:` and
/// `lowercase:` (of a to-one key path). Every test runs on both stores.
@Suite("Derived attributes")
struct DerivedAttributeTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType]

    /// The seed's `Article` class, with `@ManagedProperty` for `@NSManaged`.
    final class Article: NSManagedObject {
        @ManagedProperty var name: String
        @ManagedProperty var views: Int64
        @ManagedProperty var category: Category?
        // Derived from category.name
        @ManagedProperty var categoryName: String?
        // Derived from canonical:(name)
        @ManagedProperty var searchName: String?
        @ManagedProperty var lastModified: Date?
    }

    final class Category: NSManagedObject {
        @ManagedProperty var name: String
        @ManagedProperty var articles: Set<Article>
        @ManagedProperty var articlesCount: Int64
        @ManagedProperty var totalViews: Int64
    }

    static func derived(_ name: String, _ type: NSAttributeType, _ expression: NSExpression) -> NSDerivedAttributeDescription {
        let attribute = NSDerivedAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.derivationExpression = expression
        return attribute
    }

    static func model(extra: [NSPropertyDescription] = []) -> NSManagedObjectModel {
        let category = NSEntityDescription(name: "Category", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
            derived("articlesCount", .integer64AttributeType, NSExpression(forKeyPath: "articles.@count")),
            derived("totalViews", .integer64AttributeType, NSExpression(forKeyPath: "@sum.articles.views")),
        ])
        category.managedObjectClassName = String(reflecting: Category.self)
        let article = NSEntityDescription(name: "Article", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
            NSAttributeDescription(name: "views", type: .integer64AttributeType, defaultValue: 0),
            derived("categoryName", .stringAttributeType, NSExpression(forKeyPath: "category.name")),
            derived("searchName", .stringAttributeType, NSExpression(format: "canonical:(name)")),
            derived("lastModified", .dateAttributeType, NSExpression(format: "now()")),
            derived("shout", .stringAttributeType, NSExpression(format: "uppercase:(name)")),
            derived("categoryKey", .stringAttributeType, NSExpression(format: "lowercase:(category.name)")),
        ] + extra)
        article.managedObjectClassName = String(reflecting: Article.self)
        let articles = NSRelationshipDescription(name: "articles", destination: article, toMany: true)
        let inCategory = NSRelationshipDescription(name: "category", destination: category, toMany: false)
        articles.inverseRelationship = inCategory
        inCategory.inverseRelationship = articles
        category.properties += [articles]
        article.properties += [inCategory]
        let model = NSManagedObjectModel()
        model.entities = [article, category]
        return model
    }

    private func fetch<T: NSManagedObject>(
        _ type: T.Type, _ entity: String, _ predicate: NSPredicate? = nil, sort: [NSSortDescriptor] = [], in context: NSManagedObjectContext
    ) throws -> [T] {
        let request = NSFetchRequest<T>(entityName: entity)
        request.predicate = predicate
        request.sortDescriptors = sort
        return try context.fetch(request)
    }

    // MARK: The seed's example

    @Test(arguments: storeTypes)
    func seedExampleComputesOnSave(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        let swift = Category(context: context)
        swift.name = "Swift"
        let article = Article(context: context)
        article.name = "Core Data Best Practices"
        article.views = 7
        article.category = swift
        // "In-memory changes don't update derived attributes until saved."
        #expect(article.searchName == nil && article.categoryName == nil && swift.articlesCount == 0)

        let before = Date()
        try context.save()
        let after = Date()
        // "After save, derived attributes are updated"
        #expect(article.searchName == "core data best practices")
        #expect(article.categoryName == "Swift")
        #expect(article.value(forKey: "shout") as? String == "CORE DATA BEST PRACTICES")
        #expect(article.value(forKey: "categoryKey") as? String == "swift")
        #expect(swift.articlesCount == 1)
        #expect(swift.totalViews == 7)
        let stamped = try #require(article.lastModified)
        #expect(stamped >= before && stamped <= after)
        #expect(!context.hasChanges, "the computed values are saved with the objects")

        // Stored as ordinary values: a fresh coordinator (SQLite) or context (in memory) reads them.
        if storeType == NSSQLiteStoreType { try store.reopen() }
        let reader = store.newContext()
        let again = try #require(try fetch(Article.self, "Article", in: reader).first)
        #expect(again.searchName == "core data best practices")
        #expect(again.categoryName == "Swift")
        #expect(again.lastModified == stamped)
        let category = try #require(again.category)
        #expect(category.articlesCount == 1 && category.totalViews == 7)
        if let url = store.url {
            let row = try RawDatabase(url).rows("SELECT ZSEARCHNAME, ZCATEGORYNAME FROM ZARTICLE").first
            #expect(row?[0] as? String == "core data best practices" && row?[1] as? String == "Swift", "ordinary columns")
        }
    }

    @Test(arguments: storeTypes)
    func nowUpdatesOnEverySaveOfTheObject(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        let article = Article(context: context)
        article.name = "Draft"
        try context.save()
        let first = try #require(article.lastModified)
        Thread.sleep(forTimeInterval: 0.01)
        article.name = "Final"
        try context.save()
        let second = try #require(article.lastModified)
        #expect(second > first, "Automatically updates on every save.")
        #expect(article.searchName == "final")
    }

    // MARK: "Café" found by "cafe"; predicates and sorts on derived values

    @Test(arguments: storeTypes)
    func searchNameFindsCafeAndSortsByCountInSQL(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        var statements: [String] = []
        if storeType == NSSQLiteStoreType {
            try sqliteStore(store.coordinator).connection?.statementObserver = { statements.append($0) }
        }
        let context = store.newContext()
        let drinks = Category(context: context)
        drinks.name = "Drinks"
        let places = Category(context: context)
        places.name = "Places"
        let empty = Category(context: context)
        empty.name = "Empty"
        for (name, category) in [("Café", places), ("CAFE", drinks), ("café au lait", drinks), ("Tea", drinks)] {
            let article = Article(context: context)
            article.name = name
            article.category = category
        }
        try context.save()

        let reader = store.newContext()
        statements.removeAll()
        // The seed's query: "Matches "Café", "CAFE", "café", etc."
        let found = try fetch(Article.self, "Article", NSPredicate(format: "searchName CONTAINS %@", "cafe"), in: reader)
        #expect(Set(found.map(\.name)) == ["Café", "CAFE", "café au lait"])
        let sorted = try fetch(
            Category.self, "Category", sort: [NSSortDescriptor(key: "articlesCount", ascending: false)], in: reader)
        #expect(sorted.map(\.name) == ["Drinks", "Places", "Empty"])
        #expect(sorted.map(\.articlesCount) == [3, 1, 0])
        let busy = try fetch(Category.self, "Category", NSPredicate(format: "articlesCount >= 1 AND totalViews == 0"), in: reader)
        #expect(Set(busy.map(\.name)) == ["Drinks", "Places"])
        if storeType == NSSQLiteStoreType {
            // The derived columns are compared and sorted by SQLite, not in memory.
            #expect(statements.contains { $0.contains("ZSEARCHNAME") && $0.contains("WHERE") })
            #expect(statements.contains { $0.contains("ORDER BY t0.ZARTICLESCOUNT DESC") })
            #expect(statements.contains { $0.contains("ZARTICLESCOUNT >=") && $0.contains("ZTOTALVIEWS") })
        }
    }

    // MARK: Kept correct when related objects change

    @Test(arguments: storeTypes)
    func keptCorrectWhenRelatedObjectsChange(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let setup = store.newContext()
        let swift = Category(context: setup)
        swift.name = "Swift"
        let rust = Category(context: setup)
        rust.name = "Rust"
        for (name, views) in [("A", 3), ("B", 4)] {
            let article = Article(context: setup)
            article.name = name
            article.views = Int64(views)
            article.category = swift
        }
        try setup.save()
        #expect(swift.articlesCount == 2 && swift.totalViews == 7)

        // Each step runs in a fresh context that has not loaded the category: the save finds it
        // through the inverse relationship.
        func category(_ name: String) throws -> Category {
            try #require(try fetch(Category.self, "Category", NSPredicate(format: "name == %@", name), in: store.newContext()).first)
        }
        func article(_ name: String, in context: NSManagedObjectContext) throws -> Article {
            try #require(try fetch(Article.self, "Article", NSPredicate(format: "name == %@", name), in: context).first)
        }

        // An article is added.
        var context = store.newContext()
        let added = Article(context: context)
        added.name = "C"
        added.views = 5
        let swiftHere = try #require(try fetch(Category.self, "Category", NSPredicate(format: "name == 'Swift'"), in: context).first)
        added.category = swiftHere
        try context.save()
        #expect(try category("Swift").articlesCount == 3 && category("Swift").totalViews == 12)

        // Only an article's views change: the category is stale and is saved too.
        context = store.newContext()
        try article("A", in: context).views = 10
        try context.save()
        #expect(try category("Swift").totalViews == 19)

        // An article moves to another category: both counts and sums follow.
        context = store.newContext()
        let moved = try article("B", in: context)
        let rustHere = try #require(try fetch(Category.self, "Category", NSPredicate(format: "name == 'Rust'"), in: context).first)
        moved.category = rustHere
        try context.save()
        #expect(try category("Swift").articlesCount == 2 && category("Swift").totalViews == 15)
        #expect(try category("Rust").articlesCount == 1 && category("Rust").totalViews == 4)
        #expect(try article("B", in: store.newContext()).categoryName == "Rust")

        // An article is deleted.
        context = store.newContext()
        context.delete(try article("C", in: context))
        try context.save()
        #expect(try category("Swift").articlesCount == 1 && category("Swift").totalViews == 10)

        // The category is renamed: its articles' categoryName (and lowercase:) follow, though the
        // context never loaded them.
        context = store.newContext()
        let renamed = try #require(try fetch(Category.self, "Category", NSPredicate(format: "name == 'Rust'"), in: context).first)
        renamed.name = "Rust 2024"
        try context.save()
        let b = try article("B", in: store.newContext())
        #expect(b.categoryName == "Rust 2024")
        #expect(b.value(forKey: "categoryKey") as? String == "rust 2024")
        // ... and predicates see the stored values.
        let matching = try fetch(Article.self, "Article", NSPredicate(format: "categoryName == %@", "Rust 2024"), in: store.newContext())
        #expect(matching.map(\.name) == ["B"])

        // The article leaves every category.
        context = store.newContext()
        try article("B", in: context).category = nil
        try context.save()
        #expect(try article("B", in: store.newContext()).categoryName == nil)
        #expect(try category("Rust 2024").articlesCount == 0 && category("Rust 2024").totalViews == 0)
    }

    @Test(arguments: storeTypes)
    func derivedValueThatReadsAnotherDerivedValueSettles(storeType: String) throws {
        // Article.siblings = category.articlesCount: the category's count changes in the same save.
        let siblings = Self.derived("siblings", .integer64AttributeType, NSExpression(forKeyPath: "category.articlesCount"))
        let store = try TestStore(storeType, model: Self.model(extra: [siblings]))
        let context = store.newContext()
        let swift = Category(context: context)
        swift.name = "Swift"
        var articles: [Article] = []
        for name in ["A", "B", "C"] {
            let article = Article(context: context)
            article.name = name
            article.category = swift
            articles.append(article)
        }
        try context.save()
        #expect(articles.map { $0.value(forKey: "siblings") as? Int64 } == [3, 3, 3])
        let more = Article(context: context)
        more.name = "D"
        more.category = swift
        try context.save()
        #expect((articles + [more]).map { $0.value(forKey: "siblings") as? Int64 } == [4, 4, 4, 4])
        let stored = try fetch(Article.self, "Article", NSPredicate(format: "siblings == 4"), in: store.newContext())
        #expect(stored.count == 4)
    }

    @Test(arguments: storeTypes)
    func refreshReadsTheSavedValue(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let writer = store.newContext()
        let swift = Category(context: writer)
        swift.name = "Swift"
        let first = Article(context: writer)
        first.name = "One"
        first.category = swift
        try writer.save()

        let viewer = store.newContext()
        let seen = try #require(try fetch(Category.self, "Category", in: viewer).first)
        #expect(seen.articlesCount == 1)
        let second = Article(context: writer)
        second.name = "Two"
        second.category = swift
        try writer.save()
        #expect(seen.articlesCount == 1, "another context's save does not change this context's objects")
        viewer.refresh(seen, mergeChanges: false)
        #expect(seen.articlesCount == 2, "Derived attributes are calculated on save or refresh")
    }

    // MARK: Read-only

    @Test(arguments: storeTypes)
    func derivedAttributesCannotBeSetManually(storeType: String) throws {
        let store = try TestStore(storeType, model: Self.model())
        let context = store.newContext()
        let swift = Category(context: context)
        swift.name = "Swift"
        let article = Article(context: context)
        article.name = "Café"
        article.category = swift
        try context.save()

        // Apple's exact behaviour is not documented; the seed says "Derived attributes are read-only
        // ... article.categoryName = "Swift" // Ignored!". Accessors and setValue(_:forKey:) ignore the
        // value (and log); the throwing setCheckedValue(_:forKey:) reports it.
        article.categoryName = "Other"
        article.setValue("other", forKey: "searchName")
        swift.setValue(42, forKey: "articlesCount")
        #expect(article.categoryName == "Swift" && article.searchName == "cafe" && swift.articlesCount == 1)
        #expect(!context.hasChanges)
        #expect {
            try article.setCheckedValue("Other", forKey: "categoryName")
        } throws: { error in
            let e = error as? OpenCoreDataError
            return e?.code == .managedObjectValidation && e?.key == "categoryName" && e?.entityName == "Article"
                && e?.objectID == article.objectID
        }
        #expect(article.categoryName == "Swift")
        // setPrimitiveValue is the escape hatch; the next save recomputes the value.
        article.setPrimitiveValue("tampered", forKey: "searchName")
        article.name = "Crème"
        try context.save()
        #expect(article.searchName == "creme")
    }

    // MARK: Unsupported expressions fail the store's load

    @Test(arguments: storeTypes)
    func unsupportedExpressionFailsTheLoad(storeType: String) throws {
        let cases: [(NSExpression?, String)] = [
            (NSExpression(forKeyPath: "category.articles"), "to-many"),
            (NSExpression(forKeyPath: "category.articles.name"), "to-many"),
            (NSExpression(forKeyPath: "category.nosuch"), "no property nosuch"),
            (NSExpression(forKeyPath: "category.articles.name.@sum"), "numeric attribute"),
            (NSExpression(format: "sqrt:(views)"), "sqrt:"),
            (NSExpression(format: "canonical:(views)"), "string attribute"),
            (NSExpression(format: "views + 1"), "add:to: is not a function derived attributes support"),
            (nil, "no derivation expression"),
        ]
        for (expression, why) in cases {
            let bad = NSDerivedAttributeDescription()
            bad.name = "broken"
            bad.attributeType = .stringAttributeType
            bad.derivationExpression = expression
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let url = directory.file("Store.sqlite")
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model(extra: [bad]))
            #expect {
                try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: url)
            } throws: { error in
                let e = error as? OpenCoreDataError
                return e?.code == .persistentStoreIncompatibleSchema && e?.entityName == "Article" && e?.key == "broken"
                    && e!.message.contains("Article.broken") && e!.message.contains(why)
                    && (error as NSError).code == NSPersistentStoreIncompatibleSchemaError
            }
            #expect(coordinator.persistentStores.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: url.path), "no store file is created")
        }
    }

    @Test func expressionFormsAreCheckedAgainstTheEntity() throws {
        let model = Self.model()
        let article = try #require(model.entitiesByName["Article"])
        let category = try #require(model.entitiesByName["Category"])
        func check(_ entity: NSEntityDescription, _ name: String) throws -> DerivationExpression {
            try (entity.propertiesByName[name] as! NSDerivedAttributeDescription)._derivation(in: entity)
        }
        let total = try check(category, "totalViews")
        #expect(total.keyPath == "articles.views.@sum", "the seed's @sum.articles.views reads as articles.views.@sum")
        #expect(total.relationshipNames == ["articles"] && total.attributeName == "views" && total.localKey == "articles")
        let count = try check(category, "articlesCount")
        #expect(count.attributeName == nil && count.relationshipNames == ["articles"])
        let name = try check(article, "categoryName")
        #expect(name.relationshipNames == ["category"] && name.attributeName == "name" && name.function == nil)
        let search = try check(article, "searchName")
        #expect(search.function == .canonical && search.localKey == "name")
        #expect(try check(article, "lastModified").isNow)
    }

    @Test func modelFilesKeepFunctionExpressions() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" systemVersion="22G120" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Article" representedClassName="Article" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
                    <attribute name="lastModified" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()" usesScalarValueType="NO"/>
                </entity>
            </model>
            """
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bundle = directory.file("Seed.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: bundle.appendingPathComponent("contents"))
        let model = try NSManagedObjectModel.load(contentsOf: bundle)
        let search = try #require(model.entitiesByName["Article"]?.propertiesByName["searchName"] as? NSDerivedAttributeDescription)
        #expect(search.derivationExpression?.function == "canonical:")
        #expect(search._derivationExpressionFormat == "canonical:(name)", "the version hash reads the text as written")
        let context = try makeContext(model: model)
        let article = NSEntityDescription.insertNewObject(forEntityName: "Article", into: context)
        article.setValue("Ünïcode", forKey: "name")
        try context.save()
        #expect(article.value(forKey: "searchName") as? String == "unicode")
        #expect(article.value(forKey: "lastModified") is Date)
    }
}
