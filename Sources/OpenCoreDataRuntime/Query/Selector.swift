#if !canImport(ObjectiveC)
/// The name of a method, as Objective-C's `SEL`: here only a name, since Linux has no Objective-C
/// runtime to send it to.
///
/// It exists so code written against Apple's selector-based API compiles unchanged, chiefly
/// ``NSSortDescriptor/init(key:ascending:selector:)``:
///
/// ```swift
/// NSSortDescriptor(key: "name", ascending: true, selector: #selector(NSString.localizedStandardCompare(_:)))  // Apple
/// NSSortDescriptor(key: "name", ascending: true, selector: Selector("localizedStandardCompare:"))           // both
/// NSSortDescriptor(key: "name", ascending: true, selector: "localizedStandardCompare:")                    // Linux
/// ```
///
/// Related documentation: [Selector](https://developer.apple.com/documentation/objectivec/selector)
///
/// - Note: Linux: declared only where Objective-C is unavailable (on Apple platforms the real
///   `Selector` is used). `#selector(...)` needs Objective-C; write `Selector("name:")` instead.
///   Nothing is sent: APIs that take a selector recognise the names they document.
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method name, with its colons (`"caseInsensitiveCompare:"`).
    public let name: String

    /// A selector for the method `name` (Objective-C form: `"localizedCompare:"`).
    public init(_ name: String) { self.name = name }

    public init(stringLiteral value: String) { name = value }

    public var description: String { name }
}
#endif
