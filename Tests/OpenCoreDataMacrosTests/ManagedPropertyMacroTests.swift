import MacroTesting
import OpenCoreDataMacros
import Testing

/// Exact expansions and diagnostics of `@ManagedProperty`.
@Suite struct ManagedPropertyMacroTests {
    // MARK: Expansions

    @Test func nonOptionalAttribute() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date
            }
            """
        } expansion: {
            """
            final class Country: NSManagedObject {
                var updatedAt: Date {
                    get {
                        _ocdGetValue(Self.__ocd_key_updatedAt)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_updatedAt)
                    }
                }

                private static let __ocd_key_updatedAt = OpenCoreData.ManagedPropertyKey("updatedAt")
            }
            """
        }
    }

    @Test func fileprivateAttributeKeepsAccessLevel() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                fileprivate(set) var iso3166Code: ISO3166.Country {
                    get { ISO3166.Country(rawValue: numericISO3166Code)! }
                    set { numericISO3166Code = newValue.rawValue }
                }

                @ManagedProperty fileprivate var numericISO3166Code: Int16
            }
            """
        } expansion: {
            """
            final class Country: NSManagedObject {
                fileprivate(set) var iso3166Code: ISO3166.Country {
                    get { ISO3166.Country(rawValue: numericISO3166Code)! }
                    set { numericISO3166Code = newValue.rawValue }
                }

                fileprivate var numericISO3166Code: Int16 {
                    get {
                        _ocdGetValue(Self.__ocd_key_numericISO3166Code)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_numericISO3166Code)
                    }
                }

                private static let __ocd_key_numericISO3166Code = OpenCoreData.ManagedPropertyKey("numericISO3166Code")
            }
            """
        }
    }

    @Test func optionalNSNumber() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Mood: NSManagedObject {
                @ManagedProperty fileprivate var latitude: NSNumber?
            }
            """
        } expansion: {
            """
            final class Mood: NSManagedObject {
                fileprivate var latitude: NSNumber? {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_latitude)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_latitude)
                    }
                }

                private static let __ocd_key_latitude = OpenCoreData.ManagedPropertyKey("latitude")
            }
            """
        }
    }

    @Test func optionalSpellings() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Mood: NSManagedObject {
                @ManagedProperty var rating: Optional<Double>
                @ManagedProperty var name: String!
                @ManagedProperty var note: Swift.Optional<String>
            }
            """
        } expansion: {
            """
            final class Mood: NSManagedObject {
                var rating: Optional<Double> {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_rating)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_rating)
                    }
                }

                private static let __ocd_key_rating = OpenCoreData.ManagedPropertyKey("rating")
                var name: String! {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_name)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_name)
                    }
                }

                private static let __ocd_key_name = OpenCoreData.ManagedPropertyKey("name")
                var note: Swift.Optional<String> {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_note)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_note)
                    }
                }

                private static let __ocd_key_note = OpenCoreData.ManagedPropertyKey("note")
            }
            """
        }
    }

    @Test func toOneRelationship() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Mood: NSManagedObject {
                @ManagedProperty var country: Country?
            }
            """
        } expansion: {
            """
            final class Mood: NSManagedObject {
                var country: Country? {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_country)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_country)
                    }
                }

                private static let __ocd_key_country = OpenCoreData.ManagedPropertyKey("country")
            }
            """
        }
    }

    @Test func toManyRelationshipGetsXcodeAccessors() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var moods: Set<Mood>
            }
            """
        } expansion: {
            """
            final class Country: NSManagedObject {
                var moods: Set<Mood> {
                    get {
                        _ocdGetValue(Self.__ocd_key_moods)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_moods)
                    }
                }

                private static let __ocd_key_moods = OpenCoreData.ManagedPropertyKey("moods")

                func addToMoods(_ value: Mood) {
                    _ocdAdd([value], Self.__ocd_key_moods)
                }

                func removeFromMoods(_ value: Mood) {
                    _ocdRemove([value], Self.__ocd_key_moods)
                }

                func addToMoods(_ values: Set<Mood>) {
                    _ocdAdd(Array(values), Self.__ocd_key_moods)
                }

                func removeFromMoods(_ values: Set<Mood>) {
                    _ocdRemove(Array(values), Self.__ocd_key_moods)
                }
            }
            """
        }
    }

    @Test func toManyAccessorsTakeTheSetterAccessLevel() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            public final class Country: NSManagedObject {
                @ManagedProperty public private(set) var moods: Set<Mood>?
                @ManagedProperty open var regions: Swift.Set<Region>
            }
            """
        } expansion: {
            """
            public final class Country: NSManagedObject {
                public private(set) var moods: Set<Mood>? {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_moods)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_moods)
                    }
                }

                private static let __ocd_key_moods = OpenCoreData.ManagedPropertyKey("moods")

                private func addToMoods(_ value: Mood) {
                    _ocdAdd([value], Self.__ocd_key_moods)
                }

                private func removeFromMoods(_ value: Mood) {
                    _ocdRemove([value], Self.__ocd_key_moods)
                }

                private func addToMoods(_ values: Set<Mood>) {
                    _ocdAdd(Array(values), Self.__ocd_key_moods)
                }

                private func removeFromMoods(_ values: Set<Mood>) {
                    _ocdRemove(Array(values), Self.__ocd_key_moods)
                }
                open var regions: Swift.Set<Region> {
                    get {
                        _ocdGetValue(Self.__ocd_key_regions)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_regions)
                    }
                }

                private static let __ocd_key_regions = OpenCoreData.ManagedPropertyKey("regions")

                public func addToRegions(_ value: Region) {
                    _ocdAdd([value], Self.__ocd_key_regions)
                }

                public func removeFromRegions(_ value: Region) {
                    _ocdRemove([value], Self.__ocd_key_regions)
                }

                public func addToRegions(_ values: Swift.Set<Region>) {
                    _ocdAdd(Array(values), Self.__ocd_key_regions)
                }

                public func removeFromRegions(_ values: Swift.Set<Region>) {
                    _ocdRemove(Array(values), Self.__ocd_key_regions)
                }
            }
            """
        }
    }

    @Test func setOfValuesIsATransformableAttribute() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Mood: NSManagedObject {
                @ManagedProperty var tags: Set<String>
            }
            """
        } expansion: {
            """
            final class Mood: NSManagedObject {
                var tags: Set<String> {
                    get {
                        _ocdGetValue(Self.__ocd_key_tags)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_tags)
                    }
                }

                private static let __ocd_key_tags = OpenCoreData.ManagedPropertyKey("tags")
            }
            """
        }
    }

    @Test func storeName() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty("numeric_code") var code: Int16
                @ManagedProperty(nil) var `default`: Bool
            }
            """
        } expansion: {
            """
            final class Country: NSManagedObject {
                var code: Int16 {
                    get {
                        _ocdGetValue(Self.__ocd_key_code)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_code)
                    }
                }

                private static let __ocd_key_code = OpenCoreData.ManagedPropertyKey("numeric_code")
                var `default`: Bool {
                    get {
                        _ocdGetValue(Self.__ocd_key_default)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_default)
                    }
                }

                private static let __ocd_key_default = OpenCoreData.ManagedPropertyKey("default")
            }
            """
        }
    }

    @Test func classExtension() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            extension Country {
                @ManagedProperty public var updatedAt: Date?
            }
            """
        } expansion: {
            """
            extension Country {
                public var updatedAt: Date? {
                    get {
                        _ocdGetOptionalValue(Self.__ocd_key_updatedAt)
                    }
                    set {
                        _ocdSetValue(newValue, Self.__ocd_key_updatedAt)
                    }
                }

                private static let __ocd_key_updatedAt = OpenCoreData.ManagedPropertyKey("updatedAt")
            }
            """
        }
    }

    // MARK: Diagnostics

    @Test func letIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty let updatedAt: Date
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty let updatedAt: Date
                                 ┬──
                                 ╰─ 🛑 '@ManagedProperty' requires a 'var'; a managed property can change when the object graph does
                                    ✏️ Replace 'let' with 'var'
            }
            """
        } fixes: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date
            }
            """
        }
    }

    @Test func initializerIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date = Date()
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date = Date()
                                                     ┬───────
                                                     ╰─ 🛑 '@ManagedProperty' property cannot have an initial value; set the attribute's default value in the model
                                                        ✏️ Remove the initial value
            }
            """
        } fixes: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date
            }
            """
        }
    }

    @Test func missingTypeAnnotationIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt = Date()
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt = Date()
                                               ┬───────
                                     │         ╰─ 🛑 '@ManagedProperty' property cannot have an initial value; set the attribute's default value in the model
                                     │            ✏️ Remove the initial value
                                     ┬────────
                                     ╰─ 🛑 '@ManagedProperty' property needs an explicit type annotation
            }
            """
        }
    }

    @Test func staticPropertyIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty static var updatedAt: Date
                @ManagedProperty public class var count: Int
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty static var updatedAt: Date
                                 ┬─────
                                 ╰─ 🛑 '@ManagedProperty' cannot be applied to a 'static' property; managed values belong to objects
                                    ✏️ Remove 'static'
                @ManagedProperty public class var count: Int
                                        ┬────
                                        ╰─ 🛑 '@ManagedProperty' cannot be applied to a 'class' property; managed values belong to objects
                                           ✏️ Remove 'class'
            }
            """
        } fixes: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date
                @ManagedProperty public var count: Int
            }
            """
        }
    }

    @Test func nonPropertyIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty func updatedAt() -> Date { Date() }
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty func updatedAt() -> Date { Date() }
                ┬───────────────
                ╰─ 🛑 '@ManagedProperty' can only be applied to a 'var' property
            }
            """
        }
    }

    @Test func outsideAClassIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            struct Country {
                @ManagedProperty var updatedAt: Date
            }
            enum Continent {
                @ManagedProperty var updatedAt: Date
            }
            @ManagedProperty var updatedAt: Date
            """
        } diagnostics: {
            """
            struct Country {
                @ManagedProperty var updatedAt: Date
                ┬───────────────
                ╰─ 🛑 '@ManagedProperty' can only be used inside an NSManagedObject subclass or an extension of one, not in a struct
            }
            enum Continent {
                @ManagedProperty var updatedAt: Date
                ┬───────────────
                ╰─ 🛑 '@ManagedProperty' can only be used inside an NSManagedObject subclass or an extension of one, not in an enum
            }
            @ManagedProperty var updatedAt: Date
            ┬───────────────
            ╰─ 🛑 '@ManagedProperty' can only be used inside an NSManagedObject subclass or an extension of one, not at top level
            """
        }
    }

    @Test func genericClassIsAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            class Box<Value>: NSManagedObject {
                @ManagedProperty var updatedAt: Date
            }
            """
        } diagnostics: {
            """
            class Box<Value>: NSManagedObject {
                @ManagedProperty var updatedAt: Date
                ┬───────────────
                ╰─ 🛑 '@ManagedProperty' is not supported in generic class 'Box'
            }
            """
        }
    }

    @Test func accessorsAreAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date {
                    didSet { print(updatedAt) }
                }
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date {
                                                     ╰─ 🛑 '@ManagedProperty' property cannot declare accessors or observers; the macro generates them
                                                        ✏️ Remove the accessors
                    didSet { print(updatedAt) }
                }
            }
            """
        } fixes: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date
            }
            """
        }
    }

    /// swift-syntax rejects this before the macro runs; the compiler shows the macro's
    /// `multipleBindings` error next to its own.
    @Test func severalBindingsAreAnError() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date, createdAt: Date
            }
            """
        } diagnostics: {
            """
            final class Country: NSManagedObject {
                @ManagedProperty var updatedAt: Date, createdAt: Date
                ┬────────────────────────────────────────────────────
                ├─ 🛑 accessor macro can only be applied to a single variable
                ╰─ 🛑 peer macro can only be applied to a single variable
            }
            """
        }
    }

    @Test func storeNameMustBeALiteral() {
        assertMacro(["ManagedProperty": ManagedPropertyMacro.self]) {
            #"""
            final class Country: NSManagedObject {
                @ManagedProperty(Keys.updatedAt) var updatedAt: Date
                @ManagedProperty("updated\(suffix)") var updatedAt2: Date
            }
            """#
        } diagnostics: {
            #"""
            final class Country: NSManagedObject {
                @ManagedProperty(Keys.updatedAt) var updatedAt: Date
                                 ┬─────────────
                                 ╰─ 🛑 '@ManagedProperty' store name must be a string literal
                @ManagedProperty("updated\(suffix)") var updatedAt2: Date
                                 ┬─────────────────
                                 ╰─ 🛑 '@ManagedProperty' store name must be a string literal
            }
            """#
        }
    }
}
