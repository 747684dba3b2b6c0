import Foundation

/// The string key path (KVC form) a Swift key path names, for APIs that take Swift key paths.
///
/// Without Objective-C there is no `_kvcKeyPathString`; on Linux a key path's description is
/// `\Root.a?.b!.c`, from which the root type and the optional markers are dropped.
package enum SwiftKeyPathName {
    /// The KVC key path a Swift key path names: its description (`\Country.team?.name`) without the
    /// root type and optional markers.
    package static func kvcKey(from keyPath: AnyKeyPath, root: Any.Type) -> String {
        let text = String(describing: keyPath)
        let prefix = "\\" + String(describing: root) + "."
        var path: Substring
        if text.hasPrefix(prefix) {
            path = text.dropFirst(prefix.count)
        } else if let dot = text.firstIndex(of: ".") {
            path = text[text.index(after: dot)...]
        } else {
            preconditionFailure("could not extract a String from KeyPath \(text)")
        }
        let key = String(path.filter { $0 != "?" && $0 != "!" })
        let isName = { (part: Substring) in
            !part.isEmpty && part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "@" }
        }
        precondition(
            key.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isName),
            "could not extract a String from KeyPath \(text); use stored properties or a string key path")
        return key
    }
}
