import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

private typealias M = MigrationFixture

/// `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)` and the model
/// compatibility API, against the rules of Apple's "Migrating your data model automatically".
@Suite("Migration: inferred mapping models and compatibility")
struct MappingModelTests {
    private func v1() -> NSManagedObjectModel {
        M.model(
            "1",
            [
                M.entity("Car", [M.attribute("color"), M.attribute("plate", optional: false)]),
                M.entity("Garage", [M.attribute("address")]),
                M.entity("Note", [M.attribute("text")]),
            ])
    }

    @Test func mappingTypesFollowWhatChanged() throws {
        let v2 = M.model(
            "2",
            [
                M.entity(
                    "Automobile", [M.attribute("paintColor", renamedFrom: "color"), M.attribute("plate", optional: false)],
                    renamedFrom: "Car"),
                M.entity("Garage", [M.attribute("address")]),
                M.entity("Owner", [M.attribute("name")]),
            ])
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: v2)
        let byName = mapping.entityMappingsByName
        #expect(Set(byName.keys) == ["CarToAutomobile", "GarageToGarage", "Owner", "Note"])
        #expect(byName["CarToAutomobile"]?.mappingType == .transformEntityMappingType)
        #expect(byName["GarageToGarage"]?.mappingType == .copyEntityMappingType)
        #expect(byName["Owner"]?.mappingType == .addEntityMappingType)
        #expect(byName["Note"]?.mappingType == .removeEntityMappingType)
        let car = try #require(byName["CarToAutomobile"])
        #expect(car.sourceEntityName == "Car" && car.destinationEntityName == "Automobile")
        #expect(car.sourceEntityVersionHash == v1().entitiesByName["Car"]?.versionHash)
        let paint = try #require(car.attributeMappings?.first { $0.name == "paintColor" })
        #expect(paint._sourcePropertyName == "color")
        #expect(paint.valueExpression != nil)
    }

    @Test func attributeChangingTypeCannotBeInferred() throws {
        let v2 = M.model(
            "2",
            [
                M.entity("Car", [M.attribute("color", .integer16AttributeType), M.attribute("plate", optional: false)]),
                M.entity("Garage", [M.attribute("address")]),
            ])
        let error = #expect(throws: OpenCoreDataError.self) {
            try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: v2)
        }
        #expect(error?.errorCode == NSInferredMappingModelError)
        #expect(error?.entityName == "Car" && error?.key == "color")
    }

    @Test func optionalBecomingRequiredNeedsADefault() throws {
        func v2(_ defaultValue: Any?) -> NSManagedObjectModel {
            M.model(
                "2",
                [M.entity("Car", [M.attribute("color", optional: false, defaultValue: defaultValue), M.attribute("plate", optional: false)])])
        }
        #expect(throws: OpenCoreDataError.self) {
            try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: v2(nil))
        }
        #expect(try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: v2("red")).entityMappings.count == 3)
        // Required → optional needs nothing.
        let relaxed = M.model("2", [M.entity("Car", [M.attribute("color"), M.attribute("plate")])])
        #expect(try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: relaxed).entityMappings.count == 3)
    }

    @Test func mergingTwoHierarchiesCannotBeInferred() throws {
        let vehicle = M.entity("Car", [M.attribute("color"), M.attribute("plate", optional: false)])
        let garage = M.entity("Garage", [M.attribute("address")])
        vehicle.subentities = [garage]
        let v2 = M.model("2", [vehicle, garage])
        #expect(throws: OpenCoreDataError.self) {
            try NSMappingModel.inferredMappingModel(forSourceModel: v1(), destinationModel: v2)
        }
    }

    @Test func compatibilityComparesEntityVersionHashes() throws {
        let model = v1()
        let metadata: [String: Any] = [NSStoreModelVersionHashesKey: model.entityVersionHashesByName]
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(v1().isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let changed = M.model("1", [M.entity("Car", [M.attribute("color")]), M.entity("Garage", [M.attribute("address")])])
        #expect(!changed.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [:]))
        // A configuration only needs its own entities to match.
        model.setEntities([model.entitiesByName["Garage"]!], forConfigurationName: "Places")
        var garageOnly = metadata
        garageOnly[NSStoreModelVersionHashesKey] = ["Garage": model.entitiesByName["Garage"]!.versionHash]
        #expect(model.isConfiguration(withName: "Places", compatibleWithStoreMetadata: garageOnly))
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: garageOnly))
    }

    @Test func storeMetadataCarriesHashesIdentifiersAndChecksum() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let model = v1()
        let url = try M.makeStore(model, in: directory) { insertObject("Garage", ["address": "Main St"], into: $0) }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["1"])
        #expect(metadata[NSStoreModelVersionChecksumKey] as? String == model.versionChecksum)
    }
}
