/// Makes a property of an `NSManagedObject` subclass read and write the object's value in the
/// object graph: the Linux stand-in for `@NSManaged`.
///
/// Write the property as you would with `@NSManaged`: a `var` with a type and no initial value.
///
/// ```swift
/// final class Country: NSManagedObject {
///     @ManagedProperty var updatedAt: Date
///     @ManagedProperty fileprivate var numericISO3166Code: Int16
///     @ManagedProperty var continent: Continent?
///     @ManagedProperty var moods: Set<Mood>
///     @ManagedProperty("iso_name") var isoName: String?
/// }
/// ```
///
/// The macro generates a getter and a setter (with the property's access level, so
/// `fileprivate(set)` and the like keep working) and a private static key that caches the
/// property's slot, so reading a value costs an atomic load and an array index, not a dictionary
/// lookup. The optional argument names the property in the entity when it differs from the Swift name.
///
/// - Optional types (`T?`, `T!`, `Optional<T>`) read `nil` when the value is nil.
/// - Non-optional types read an empty value (`0`, `""`, an empty set, the reference date) while
///   the value is nil, for example before a required attribute is set; a non-optional to-one
///   relationship that is nil traps, naming the property.
/// - Numbers convert between the attribute's type and the property's (an `Int` property can read
///   an Integer 64 attribute, an `NSNumber?` property a Double attribute).
/// - A to-many relationship can be declared as `Set<Element>`, `NSSet?` (Xcode's codegen), and
///   when ordered as `NSOrderedSet?` or `[Element]`.
/// - A to-many relationship declared as `Set<Element>` also gets Xcode's generated accessors
///   `addTo<Name>(_:)` and `removeFrom<Name>(_:)`, for one `Element` and for a `Set<Element>`,
///   with the setter's access level. They change the relationship in place and maintain the inverse.
///
/// - Note: Linux: `@NSManaged` needs the Objective-C runtime: it compiles on Linux but fails to
///   link. Use `@ManagedProperty` instead; on Apple platforms `OpenCoreDataShim` users can keep
///   `@NSManaged`. Xcode's `NSSet`/`NSOrderedSet` accessor overloads and the ordered accessors
///   (`insertInto<Name>(_:at:)`) are not generated; use `mutableOrderedSetValue(forKey:)`.
///
/// Related Core Data documentation: [NSManaged](https://developer.apple.com/documentation/coredata/nsmanaged)
@attached(accessor)
@attached(peer, names: prefixed(__ocd_key_), arbitrary)
public macro ManagedProperty(_ storeName: String? = nil) =
    #externalMacro(module: "OpenCoreDataMacros", type: "ManagedPropertyMacro")
