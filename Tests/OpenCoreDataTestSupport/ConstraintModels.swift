import Foundation
import OpenCoreData

extension TestModels {
    /// Seed 002's constraint examples, built in code:
    /// - `Category` (`name` unique; `detail`, `rank`, derived `articlesCount`) 1—n `Article`
    ///   (`title`); `Category.articles`
    ///   cascades, so a merged-away duplicate that still held articles would delete them;
    /// - `Person` with the compound constraint `firstName,lastName`;
    /// - `User` with two constraints, `email` and `username`;
    /// - `Animal` (`tag` unique) with the subentity `Dog` (`breed`): the parent's constraint
    ///   covers the subentity;
    /// - `Device` with constraints on non-string values: `identifier` (UUID), `serial` (Int64).
    public static func constraints() -> NSManagedObjectModel {
        let category = NSEntityDescription(
            name: "Category",
            properties: [
                NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false),
                NSAttributeDescription(name: "detail", type: .stringAttributeType),
                NSAttributeDescription(name: "rank", type: .integer32AttributeType),
            ])
        category.uniquenessConstraints = [["name"]]
        let articlesCount = NSDerivedAttributeDescription()  // seed 002: `articles.@count`
        articlesCount.name = "articlesCount"
        articlesCount.attributeType = .integer64AttributeType
        articlesCount.derivationExpression = NSExpression(forKeyPath: "articles.@count")
        let article = NSEntityDescription(
            name: "Article", properties: [NSAttributeDescription(name: "title", type: .stringAttributeType)])
        let articles = NSRelationshipDescription(name: "articles", destination: article, toMany: true)
        articles.deleteRule = .cascadeDeleteRule
        let inCategory = NSRelationshipDescription(name: "category", destination: category, toMany: false)
        articles.inverseRelationship = inCategory
        inCategory.inverseRelationship = articles
        category.properties += [articles, articlesCount]
        article.properties += [inCategory]

        let person = NSEntityDescription(
            name: "Person",
            properties: [
                NSAttributeDescription(name: "firstName", type: .stringAttributeType),
                NSAttributeDescription(name: "lastName", type: .stringAttributeType),
                NSAttributeDescription(name: "age", type: .integer16AttributeType),
            ])
        person.uniquenessConstraints = [["firstName", "lastName"]]

        let user = NSEntityDescription(
            name: "User",
            properties: [
                NSAttributeDescription(name: "email", type: .stringAttributeType),
                NSAttributeDescription(name: "username", type: .stringAttributeType),
            ])
        user.uniquenessConstraints = [["email"], ["username"]]

        let animal = NSEntityDescription(
            name: "Animal", properties: [NSAttributeDescription(name: "tag", type: .stringAttributeType)])
        animal.uniquenessConstraints = [["tag"]]
        let dog = NSEntityDescription(
            name: "Dog", properties: [NSAttributeDescription(name: "breed", type: .stringAttributeType)])
        animal.subentities = [dog]

        let device = NSEntityDescription(
            name: "Device",
            properties: [
                NSAttributeDescription(name: "identifier", type: .UUIDAttributeType),
                NSAttributeDescription(name: "serial", type: .integer64AttributeType),
                NSAttributeDescription(name: "label", type: .stringAttributeType),
            ])
        device.uniquenessConstraints = [["identifier"], ["serial"]]

        let model = NSManagedObjectModel()
        model.entities = [category, article, person, user, animal, dog, device]
        return model
    }
}
