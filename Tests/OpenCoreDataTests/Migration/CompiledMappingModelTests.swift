import Foundation
import OpenCoreData
import OpenCoreDataTestSupport
import Testing

@testable import OpenCoreDataRuntime

/// Xcode's compiled mapping model CoreDataPlus V2toV3.cdm decoded into `NSMappingModel`, checked
/// against the two model versions it maps between (their Xcode model files).
@Suite("Compiled mapping models (.cdm)", .enabled(if: Corpus.isPresent))
struct CompiledMappingModelTests {
    static let base = "alemar11+CoreDataPlus/Tests/Resources/SampleModel"

    @Test func v2toV3DecodesWithTheModelsVersionHashes() throws {
        let url = Corpus.repo("\(Self.base)/Fixtures/V2toV3.cdm")
        let mapping = try NSMappingModel.compiledMappingModel(from: try Data(contentsOf: url), url: url)
        let v2 = try NSManagedObjectModel.load(contentsOf: Corpus.repo("\(Self.base)/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"))
        let v3 = try NSManagedObjectModel.load(contentsOf: Corpus.repo("\(Self.base)/SampleModel.xcdatamodeld/SampleModel3.xcdatamodel"))

        #expect(mapping.entityMappings.map(\.name) == ["CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker"])
        #expect(mapping.entityMappings.map(\.mappingType) == [
            .customEntityMappingType, .customEntityMappingType, .copyEntityMappingType, .customEntityMappingType, .addEntityMappingType,
        ])
        for entityMapping in mapping.entityMappings {
            let name = entityMapping.name!
            if let source = entityMapping.sourceEntityName {
                #expect(entityMapping.sourceEntityVersionHash == v2.entitiesByName[source]?.versionHash, "\(name)")
                #expect(entityMapping.sourceExpression?.function == "fetchRequestForSourceEntityNamed:predicateString:")
                #expect(entityMapping.sourceExpression?.arguments?.first?.constantValue as? String == source)
            } else {
                #expect(entityMapping.mappingType == .addEntityMappingType && entityMapping.sourceExpression == nil)
            }
            let destination = try #require(entityMapping.destinationEntityName)
            #expect(entityMapping.destinationEntityVersionHash == v3.entitiesByName[destination]?.versionHash, "\(name)")
            // Every destination property the mapping names is a property of the destination entity.
            let names = (entityMapping.attributeMappings ?? []).compactMap(\.name) + (entityMapping.relationshipMappings ?? []).compactMap(\.name)
            #expect(!names.isEmpty)
            #expect(Set(names).isSubset(of: Set(v3.entitiesByName[destination]!.propertiesByName.keys)), "\(name)")
        }
        let car = try #require(mapping.entityMappingsByName["CarToCar"])
        #expect(car.entityMigrationPolicyClassName == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        // `$source.model`: the in-SQL migration reads it as a copy of `model`.
        let model = try #require(car.attributeMappings?.first { $0.name == "model" })
        #expect(model.valueExpression?.expressionType == .keyPath)
        #expect(model._copiedSourceProperty.flatMap { try? $0.get() } == "model")
        let owner = try #require(car.relationshipMappings?.first { $0.name == "owner" })
        #expect(owner.valueExpression?.function == "destinationInstancesForEntityMappingNamed:sourceInstances:")
        #expect(owner.valueExpression?.operand.variable == "manager")
        #expect(owner.valueExpression?.arguments?.first?.constantValue as? String == "PersonToPerson")
        #expect(car.relationshipMappings?.first { $0.name == "createdBy" }?.valueExpression == nil)
    }

    @Test func aCompiledModelIsNotAMappingModel() throws {
        let url = Corpus.repo("\(Self.base)/Fixtures/SampleModel.momd/SampleModel2.mom")
        let error = try #require(throws: OpenCoreDataError.self) {
            _ = try NSMappingModel.compiledMappingModel(from: try Data(contentsOf: url), url: url)
        }
        #expect(error.code == .fileReadCorruptFile)
        #expect(error.message.contains("not an NSMappingModel"))
        let truncated = try Data(contentsOf: Corpus.repo("\(Self.base)/Fixtures/V2toV3.cdm")).prefix(5000)
        #expect(throws: OpenCoreDataError.self) { _ = try NSMappingModel.compiledMappingModel(from: truncated) }
    }
}
