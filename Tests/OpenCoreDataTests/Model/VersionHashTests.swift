import Foundation
import Testing

@testable import OpenCoreDataRuntime

/// Version hashes Apple's code computed for an Xcode model.
///
/// Most come from a store written by Apple's Core Data: `NSStoreModelVersionHashes`,
/// `NSStoreModelVersionHashesDigest` and `NSStoreModelVersionChecksumKey` in the store's `Z_METADATA`
/// (the test corpus's `stores-reports/<store path>.txt`, see its MANIFEST §2). The rest come from the
/// `VersionInfo.plist` that Xcode's model compiler wrote into a compiled `.momd` in the same
/// repository (`NSManagedObjectModel_VersionHashes`, `NSManagedObjectModel_VersionChecksums`). The
/// models are fixtures copied from those repositories.
struct StoreHashVector: Sendable, CustomTestStringConvertible {
    /// Where the expected values come from: a store report, or a compiled model's VersionInfo.plist.
    let store: String
    /// The model version, relative to `Fixtures/`.
    let model: String
    /// `NSPersistenceFrameworkVersion` of the store (`nil` for a compiled model).
    let frameworkVersion: Int?
    let hashes: [String: String]
    let digest: String?
    let checksum: String?

    var testDescription: String { frameworkVersion.map { "\(store) (framework \($0))" } ?? store }

    static let all: [StoreHashVector] = [
        StoreHashVector(
            store: "alemar11+CoreDataPlus__Tests__Resources__SampleModel__Fixtures__SampleModel_V1.sqlite.txt",
            model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel",
            frameworkVersion: 1044,
            hashes: [
                "Car": "nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=",
                "ExpensiveSportCar": "PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=",
                "Person": "FkJoVRtFEIrnY6orph/zLTLTIyOFCYfD4hYHyNpEtys=",
                "SportCar": "UU7BkHpWgpn5+2hREGUWE28HVfRfpTqCOg5NRAE9UxM=",
            ],
            digest: "fACvwxty0QWritKFX3/LTtXZvI64UnFcRtP6qcjW1Yl0owr+rH+SpCvzy/uDYRpknMXbgacd3srn9wmE2KkL8Q==",
            checksum: nil),
        StoreHashVector(
            store: "alemar11+CoreDataPlus__Tests__Resources__SampleModel__Fixtures__SampleModel_V2.sqlite.txt",
            model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel",
            frameworkVersion: 1044,
            hashes: [
                "Car": "flA++/S2PNk/9ynpZ14hxjxlJi2FqYifWaJECvZIG5M=",
                "LuxuryCar": "qHPFWQAQ5Oo/e9+EZ4bfv1ywlVJrhqoN4sVpxLsSGIY=",
                "Person": "BnrmLhvRAUy2VZ2ZCAOuWPNU3Rt7p7dyKjYcDDnyE04=",
                "SportCar": "cipVtbvNUddIdqTdj497veV93GHLZaV37FsPvpeNe4w=",
            ],
            digest: "gA/GyOCh8sMDKPJBWGZpv2usq+rU1r4MjgwPc9tbafDh4RTvoBOjSnmanNvWopksmy/criJNqsnPcAZkTmEa7Q==",
            checksum: nil),
        StoreHashVector(
            store: "alemar11+CoreDataPlus__Tests__Resources__SampleModel3__Fixtures__SampleModel3_V1.sqlite.txt",
            model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld/SampleModel3.xcdatamodel",
            frameworkVersion: 1344,
            hashes: ["User": "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g="],
            digest: "0KLB/FnL8roMcgeszeCxnPnvYqnn4VzB2DpFP6csqrDKzLB6fyG5rrVfjY5DtnQxx4355oWuKFublPf2Jo1UWg==",
            checksum: "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik="),
        StoreHashVector(
            store: "bignerdranch+CoreDataStack__Sample_Model__Deprecated__TestModel.sqlite.txt",
            model: "bignerdranch+CoreDataStack/Sample Model/Deprecated/Sample.xcdatamodeld/TestModel.xcdatamodel",
            frameworkVersion: 637,
            hashes: [
                "Author": "y8H1wnTr9BRHTE41D3OxSx3TVsIngq50iIENWXGIxG0=",
                "Book": "KSySPkjCy+6loRO7doX7xjq4AMC7wkKtF6Dy4qHgj1w=",
            ],
            digest: nil, checksum: nil),
        StoreHashVector(
            store: "contentful+contentful-persistence.swift__Tests__ContentfulPersistenceTests__BundledPreseededDatabaseTests__Test.sqlite.txt",
            model: "contentful+contentful-persistence.swift/Tests/ContentfulPersistenceTests/Test.xcdatamodeld/Test.xcdatamodel",
            frameworkVersion: 1327,
            hashes: [
                "Asset": "vpD7YUlwqHvePA8ShetYaIpJRDF+1LabaCdY+9kUa44=",
                "Author": "IiMdDT7EtT5Z0FIUEB/26GQ4BNnwF141IDOJnXuymvw=",
                "Category": "ulYIqNJzbYoR8HyUVXZ0K/PeoVqM4uqQrZ6oKCm/XaI=",
                "Post": "/FVdB3R99EQLU4RY/wbXjU5bx6Yi9H/HJdc7ngEDtu4=",
                "SyncInfo": "kY6NHObk/W1DaiYGcaGM9/iSeRKeMxmSElSXyThj6H8=",
            ],
            digest: "6EfkCVlZYIxr4rqME2NcWHkOzc51ilRSccLKUVgC5sGO8UPQ3W5ap+9rZ5VH8VLoQ/AV38RsdRWyjtYiQ0/zfQ==",
            checksum: "gW5zQaDo3eKxFNsxHZ1XfyoOL+OIJRPycZs1ji8H648="),
        StoreHashVector(
            store: "hwaxxer+BookMigration__BookMigration__Model1.sqlite.txt",
            model: "hwaxxer+BookMigration/BookMigration/Model.xcdatamodeld/Model1.xcdatamodel",
            frameworkVersion: 419,
            hashes: [
                "Book": "QAj4tkrjwHQVGdiK0wEeqC4C3pQrvIhRCwPbCZIk7fU=",
                "User": "+ifl7ss57tyNIBx4GpqLk7/mDZi70ClX1CJ83vCIHmo=",
            ],
            digest: nil, checksum: nil),
        StoreHashVector(
            store: "mwkirk+MWKCoreData__Tests__Stores__MWKCoreDataTests.sqlite.txt",
            model: "mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld/MWKCoreDataTests.xcdatamodel",
            frameworkVersion: 519,
            hashes: ["Employee": "Yl/WCH8wj9MUp+rO2Ex4oyKTfS3P1GxWQxZ38bAVKyo="],
            digest: nil, checksum: nil),
        StoreHashVector(
            store: "mwkirk+MWKCoreData__Tests__Stores__MWKCoreDataTests2.sqlite.txt",
            model: "mwkirk+MWKCoreData/Tests/Model/MWKCoreDataTests.xcdatamodeld/MWKCoreDataTests2.xcdatamodel",
            frameworkVersion: 519,
            hashes: [
                "Dept": "6ui1jhnUl60yafUZMxRqAT6c+sGwcfYTmdRBIppDPSM=",
                "Employee": "S1UQsEQ0TXkpy2SyCOw6kIN81svpZG8ZhrYmjcOT/cc=",
            ],
            digest: nil, checksum: nil),
        // Xcode-compiled models: alemar11/CoreDataPlus Tests/Resources/SampleModel/Fixtures/SampleModel.momd
        // and Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd, VersionInfo.plist.
        StoreHashVector(
            store: "alemar11+CoreDataPlus SampleModel.momd/VersionInfo.plist, version SampleModel3",
            model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel3.xcdatamodel",
            frameworkVersion: nil,
            hashes: [
                "Car": "lITFqUIBMVkVPXxgwsaKgoR7eCXO5mcoGtz2TyVxeSk=",
                "LuxuryCar": "vBcyTTVIeamwUwOErPMyyfTNhKQ6TaDJ2kpqWp3dfQg=",
                "Maker": "xo05YAM8Qdm7hk5p4fflD+mYxPJIEpq5PBapZ3vq0b0=",
                "Person": "mc8l/vRuh4lJoMB77AVPnf5cL8eKgecLw6T9d1NqM8c=",
                "SportCar": "aXRu2wwW7/Djuh8m2cJlcOI6REPa+8ykEdgRWq5QRwI=",
            ],
            digest: nil, checksum: nil),
        StoreHashVector(
            store: "alemar11+CoreDataPlus SampleModel3.momd/VersionInfo.plist, version SampleModel3_v2",
            model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld/SampleModel3_v2.xcdatamodel",
            frameworkVersion: nil,
            hashes: [
                "Pet": "dnNCJipkWHMMeKrnPFMo0PyqTjWW0vh/IuNm60ap9G8=",
                "User": "akfL7w4/hMJEkkn9yD8APX5RQ3j47pp2qNTA7IuxuCI=",
            ],
            digest: nil, checksum: "rzn6eNBLyn8k3AoC3kH3yymPT0vSUPaVcgi0v2SuHS8="),
        StoreHashVector(
            store: "alemar11+CoreDataPlus SampleModel3.momd/VersionInfo.plist, version SampleModel3_v3",
            model: "alemar11+CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld/SampleModel3_v3.xcdatamodel",
            frameworkVersion: nil,
            hashes: [
                "Pet": "dnNCJipkWHMMeKrnPFMo0PyqTjWW0vh/IuNm60ap9G8=",
                "User": "txWJ9kRmNW79MTIerWwpOt6O2t32z9cJMUTAc8OsPDs=",
            ],
            digest: nil, checksum: "HFFd7j8Z9/s0tJ1vqPzVSPX/pNYEbNAlXayypitIFow="),
    ]
}

@Suite struct VersionHashTests {
    // MARK: Apple-written stores

    @Test(arguments: StoreHashVector.all)
    func entityHashesMatchAppleWrittenStore(_ vector: StoreHashVector) throws {
        let model = try NSManagedObjectModel.load(contentsOf: ModelFixtures.url(vector.model))
        let hashes = model.entityVersionHashesByName.mapValues { $0.base64EncodedString() }
        #expect(Set(hashes.keys) == Set(vector.hashes.keys))
        for (entity, expected) in vector.hashes {
            #expect(hashes[entity] == expected, "entity \(entity)")
        }
        if let digest = vector.digest {
            #expect(model.versionHashesDigest == digest)
        }
        if let checksum = vector.checksum {
            #expect(model.versionChecksum == checksum)
        }
    }

    /// The digest is a function of the stored hashes alone, so it can be checked from metadata.
    @Test func digestFromStoredHashes() throws {
        for vector in StoreHashVector.all {
            guard let digest = vector.digest else { continue }
            let hashes = vector.hashes.mapValues { Data(base64Encoded: $0)! }
            #expect(NSManagedObjectModel.versionHashesDigest(of: hashes) == digest, "\(vector.store)")
        }
    }

    /// `Recipes.sqlite` (alhoqbani/AppleSample-iPhoneCoreDataRecipes, framework 754; its hashes are
    /// byte-identical to Apple's original framework-241 seed in magicalpanda/MagicalRecord) was not
    /// written with the XML model now in the repository. Its own `Z_MODELCACHE` shows the model that
    /// wrote it: `Image.recipe`, `Ingredient.displayOrder` and `Ingredient.name` are not optional, and
    /// to-one relationships have `minCount` 1. Only `RecipeType`, which none of that touches, matches
    /// the XML as is; with those four edits all four match.
    @Test func recipesStoreMatchesTheModelThatWroteIt() throws {
        let expected = [
            "Image": "njbxNx1A/bZrU1DVRF9Kx6AYc/E6XKYaVqbNJLdYlC8=",
            "Ingredient": "5tCLlA1r9p1UWdOTr3XJ+ZzBr6bxraWAs3Vt9zCAZek=",
            "Recipe": "PcSdeYYgO5cW+z5s8cHpAZzy3WHO/upsq6Ujxtwckog=",
            "RecipeType": "EtqagX2A7+sQqDbBbEtFZT9iQz2Hsuv8um2Nz6k5YK4=",
        ]
        let model = try NSManagedObjectModel.load(
            contentsOf: ModelFixtures.url("alhoqbani+AppleSample-iPhoneCoreDataRecipes/Recipes/Recipes.xcdatamodeld"))
        let asInXML = model.entityVersionHashesByName.mapValues { $0.base64EncodedString() }
        #expect(asInXML["RecipeType"] == expected["RecipeType"])
        #expect(asInXML["Recipe"] != expected["Recipe"])

        let entities = model.entitiesByName
        entities["Image"]!.propertiesByName["recipe"]!.isOptional = false
        entities["Ingredient"]!.propertiesByName["displayOrder"]!.isOptional = false
        entities["Ingredient"]!.propertiesByName["name"]!.isOptional = false
        for entity in model.entities {
            for relationship in entity.relationshipsByName.values where !relationship.isToMany {
                relationship.minCount = 1
            }
        }
        #expect(model.entityVersionHashesByName.mapValues { $0.base64EncodedString() } == expected)
    }

    /// Stores whose model is a pre-Xcode-4 binary `elements` archive (not loadable here): the model is
    /// rebuilt in code from what the archive holds (property names, types, optionality, counts).
    ///
    /// `RKSeedDatabase.sqlite` (RestKit/RestKit `Examples/RKTwitterCoreData`, framework 419) with
    /// `RKTwitterCoreData.xcdatamodel/elements`. Old Xcode wrote `minCount` 1 on optional to-one
    /// relationships, and the hash includes it.
    @Test func legacyRestKitTwitterStore() {
        let tweet = NSEntityDescription(name: "Tweet", managedObjectClassName: "RKTweet")
        let user = NSEntityDescription(name: "User")
        let toUser = NSRelationshipDescription(name: "user", destination: user, toMany: false)
        toUser.minCount = 1
        let statuses = NSRelationshipDescription(name: "status", destination: tweet, toMany: true)
        toUser.inverseRelationship = statuses
        statuses.inverseRelationship = toUser
        tweet.properties = [
            NSAttributeDescription(name: "createdAt", type: .dateAttributeType),
            NSAttributeDescription(name: "inReplyToScreenName", type: .stringAttributeType),
            NSAttributeDescription(name: "isFavorited", type: .booleanAttributeType),
            NSAttributeDescription(name: "statusID", type: .integer64AttributeType, defaultValue: Int64(0)),
            NSAttributeDescription(name: "text", type: .stringAttributeType),
            NSAttributeDescription(name: "urlString", type: .stringAttributeType),
            toUser,
        ]
        user.properties = [
            NSAttributeDescription(name: "name", type: .stringAttributeType),
            NSAttributeDescription(name: "screenName", type: .stringAttributeType),
            NSAttributeDescription(name: "userID", type: .integer64AttributeType, defaultValue: Int64(0)),
            statuses,
        ]
        let model = NSManagedObjectModel()
        model.entities = [tweet, user]
        #expect(model.entityVersionHashesByName.mapValues { $0.base64EncodedString() } == [
            "Tweet": "03/3h3rvyZ47wXshv/VXUgXc4yBt3dSvlv148MVfP90=",
            "User": "0l9cLHSs9tngemqQ6YaBlitgrL9+hJnrT8ajvmvao5c=",
        ])
    }

    /// `CoreDataBooks.sqlite` (gilpa/iphone_sqlite_test, framework 320) with
    /// `CoreDataBooks.xcdatamodel/elements`. The repository later added a `contents` attribute to the
    /// model and, by hand, a `"ZCONTENTS" VARCHAR DEFAULT test` column to the table; the stored hash
    /// is that of the model before the addition.
    @Test func legacyCoreDataBooksStore() {
        let book = NSEntityDescription(name: "Book", properties: [
            NSAttributeDescription(name: "author", type: .stringAttributeType, isOptional: false, defaultValue: "Author"),
            NSAttributeDescription(name: "copyright", type: .dateAttributeType),
            NSAttributeDescription(name: "title", type: .stringAttributeType, isOptional: false, defaultValue: "Title"),
        ])
        #expect(book.versionHash.base64EncodedString() == "SywFzcIhPlYwCP6NznsBMp6WyEHF3zYdaYvX/HIaGI0=")
    }

    // MARK: What is and is not an input (Apple's versionHash documentation)

    @Test func hashIgnoresUserInfoClassNamesDeleteRulesDefaultsAndValidation() throws {
        let model = try Self.personModel()
        let before = model.entityVersionHashesByName
        let person = model.entitiesByName["Person"]!
        let name = person.attributesByName["name"]!
        let pets = person.relationshipsByName["pets"]!
        let propertyHashes = (name.versionHash, pets.versionHash)

        person.userInfo = ["key": "value"]
        person.managedObjectClassName = "MyApp.Person"
        person.renamingIdentifier = "OldPerson"
        name.userInfo = ["note": "changed"]
        name.defaultValue = "Anonymous"
        name.renamingIdentifier = "fullName"
        name.isIndexed = true
        name.setValidationPredicates([NSPredicate(value: true)], withValidationWarnings: ["never"])
        name.valueTransformerName = "SomeTransformer"
        pets.deleteRule = .cascadeDeleteRule
        pets.userInfo = ["note": "changed"]

        #expect(model.entityVersionHashesByName == before)
        #expect(name.versionHash == propertyHashes.0)
        #expect(pets.versionHash == propertyHashes.1)
    }

    @Test func isOptionalChangesTheHash() throws {
        let model = try Self.personModel()
        let person = model.entitiesByName["Person"]!
        let name = person.attributesByName["name"]!
        let entityBefore = person.versionHash
        let propertyBefore = name.versionHash
        name.isOptional.toggle()
        #expect(name.versionHash != propertyBefore)
        #expect(person.versionHash != entityBefore)
    }

    @Test func everyDocumentedInputChangesTheHash() throws {
        let changes: [(String, (NSManagedObjectModel) -> Void)] = [
            ("entity versionHashModifier", { $0.entitiesByName["Person"]!.versionHashModifier = "v2" }),
            ("isAbstract", { $0.entitiesByName["Person"]!.isAbstract = true }),
            ("uniqueness constraint", { $0.entitiesByName["Person"]!.uniquenessConstraints = [["name"]] }),
            ("attribute type", { ($0.entitiesByName["Person"]!.attributesByName["name"]!).attributeType = .URIAttributeType }),
            ("property versionHashModifier", { $0.entitiesByName["Person"]!.attributesByName["name"]!.versionHashModifier = "x" }),
            ("external storage", { $0.entitiesByName["Person"]!.attributesByName["name"]!.allowsExternalBinaryDataStorage = true }),
            ("history tombstone", { $0.entitiesByName["Person"]!.attributesByName["name"]!.preservesValueInHistoryOnDeletion = true }),
            ("maxCount", { $0.entitiesByName["Person"]!.relationshipsByName["pets"]!.maxCount = 5 }),
            ("minCount", { $0.entitiesByName["Person"]!.relationshipsByName["pets"]!.minCount = 1 }),
            ("ordered", { $0.entitiesByName["Person"]!.relationshipsByName["pets"]!.isOrdered = true }),
            ("transient", { $0.entitiesByName["Person"]!.attributesByName["name"]!.isTransient = true }),
        ]
        for (label, change) in changes {
            let model = try Self.personModel()
            let before = model.entitiesByName["Person"]!.versionHash
            change(model)
            #expect(model.entitiesByName["Person"]!.versionHash != before, "\(label)")
        }
    }

    @Test func transientPropertiesAreNotPartOfTheEntityHash() throws {
        let model = try Self.personModel()
        let person = model.entitiesByName["Person"]!
        let before = person.versionHash
        let scratch = NSAttributeDescription(name: "scratch", type: .stringAttributeType)
        scratch.isTransient = true
        person.properties = person.properties + [scratch]
        #expect(person.versionHash == before)
    }

    @Test func subentityHashIncludesTheSuperentityHash() throws {
        let model = try NSManagedObjectModel.load(
            contentsOf: ModelFixtures.url("alemar11+CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"))
        let car = model.entitiesByName["Car"]!
        let sportCar = model.entitiesByName["SportCar"]!
        let before = sportCar.versionHash
        car.versionHashModifier = "changed"
        #expect(sportCar.versionHash != before)
    }

    @Test func derivedAttributesHashAsReadOnly() {
        let plain = NSAttributeDescription(name: "photoCount", type: .integer64AttributeType)
        let derived = NSDerivedAttributeDescription()
        derived.name = "photoCount"
        derived.attributeType = .integer64AttributeType
        derived.derivationExpression = NSExpression(forKeyPath: "photos.@count")
        #expect(derived._derivationExpressionFormat == "photos.@count")
        #expect(derived.versionHash != plain.versionHash)
    }

    /// FORMATS.md §2 step 4 corner case [RE, not exercised by any store]: an inherited relationship
    /// that is its own inverse hashes without the inverse name in the subentity; other inherited
    /// relationships hash the same as in their own entity.
    @Test func inheritedSelfInverseRelationshipDropsTheInverseName() {
        let node = NSEntityDescription(name: "Node")
        let special = NSEntityDescription(name: "SpecialNode")
        let partner = NSRelationshipDescription(name: "partner", destination: node, toMany: false)
        partner.inverseRelationship = partner
        let children = NSRelationshipDescription(name: "children", destination: node, toMany: true)
        let parent = NSRelationshipDescription(name: "parent", destination: node, toMany: false)
        children.inverseRelationship = parent
        parent.inverseRelationship = children
        node.properties = [partner, children, parent]
        node.subentities = [special]

        #expect(partner._versionHash(in: special) != partner._versionHash(in: node))
        #expect(partner.versionHash == partner._versionHash(in: node))
        #expect(children._versionHash(in: special) == children._versionHash(in: node))
    }

    /// A hand-computed vector for the property base hash (FORMATS.md §2 step 1).
    @Test func propertyBaseHashLayout() {
        let attribute = NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: true)
        var base = Data("name".utf8)
        base.append(contentsOf: [1, 0])  // uint16 flags, optional
        var attributeInput = SHA2.sha256(base)
        attributeInput.append(contentsOf: [0xBC, 0x02, 0, 0])  // int32 700
        #expect(attribute.versionHash == SHA2.sha256(attributeInput))
    }

    static func personModel() throws -> NSManagedObjectModel {
        let person = NSEntityDescription(name: "Person")
        let pet = NSEntityDescription(name: "Pet")
        let name = NSAttributeDescription(name: "name", type: .stringAttributeType, isOptional: false)
        let pets = NSRelationshipDescription(name: "pets", destination: pet, toMany: true)
        let owner = NSRelationshipDescription(name: "owner", destination: person, toMany: false)
        pets.inverseRelationship = owner
        owner.inverseRelationship = pets
        person.properties = [name, pets]
        pet.properties = [NSAttributeDescription(name: "name", type: .stringAttributeType), owner]
        let model = NSManagedObjectModel()
        model.entities = [person, pet]
        return model
    }
}
