import Foundation

extension NSExpression {
    /// An expression for the property path a Swift key path names.
    ///
    /// ```swift
    /// let updated = NSExpression(forKeyPath: \Country.updatedAt)  // keyPath == "updatedAt"
    /// ```
    ///
    /// Related Core Data documentation: [NSExpression](https://developer.apple.com/documentation/foundation/nsexpression)
    ///
    /// - Note: Linux: the string key path is derived from the key path's description
    ///   (`\Country.team?.name` gives `"team.name"`), so the key path must name stored properties, as
    ///   the `@objc` properties Apple requires; anything else stops the program, as on Apple platforms.
    public convenience init<Root, Value>(forKeyPath keyPath: KeyPath<Root, Value>) {
        self.init(forKeyPath: SwiftKeyPathName.kvcKey(from: keyPath, root: Root.self))
    }
}
