import SwiftDiagnostics
import SwiftSyntax

/// Every diagnostic the OpenCoreData macros emit, with its fix-it messages.
enum MacroDiagnostic: DiagnosticMessage {
    /// The attribute is on something that is not a property (a function, a type, ...).
    case notAProperty
    /// `let` cannot have accessors.
    case letProperty
    /// A managed property's value lives in the object graph; an initial value would never be used.
    case hasInitializer
    /// The accessors need the type to pick the right hook.
    case missingTypeAnnotation
    /// `static`/`class` properties are not per-object values.
    case staticProperty(keyword: String)
    /// Only `NSManagedObject` subclasses have managed properties.
    case outsideClass(found: String)
    /// Static stored properties (the cached key) are not supported in generic types.
    case genericClass(name: String)
    /// The property already has accessors or observers.
    case hasAccessors
    /// `var a: Int, b: Int`: one property per attribute.
    case multipleBindings
    /// The store name argument must be a plain string literal.
    case storeNameNotALiteral

    var message: String {
        switch self {
        case .notAProperty:
            "'@ManagedProperty' can only be applied to a 'var' property"
        case .letProperty:
            "'@ManagedProperty' requires a 'var'; a managed property can change when the object graph does"
        case .hasInitializer:
            "'@ManagedProperty' property cannot have an initial value; set the attribute's default value in the model"
        case .missingTypeAnnotation:
            "'@ManagedProperty' property needs an explicit type annotation"
        case .staticProperty(let keyword):
            "'@ManagedProperty' cannot be applied to a '\(keyword)' property; managed values belong to objects"
        case .outsideClass(let found):
            """
            '@ManagedProperty' can only be used inside an NSManagedObject subclass or an extension of one, \
            not \(found)
            """
        case .genericClass(let name):
            "'@ManagedProperty' is not supported in generic class '\(name)'"
        case .hasAccessors:
            "'@ManagedProperty' property cannot declare accessors or observers; the macro generates them"
        case .multipleBindings:
            "'@ManagedProperty' must be applied to a single property; declare each property separately"
        case .storeNameNotALiteral:
            "'@ManagedProperty' store name must be a string literal"
        }
    }

    var diagnosticID: MessageID {
        let id = switch self {
        case .notAProperty: "notAProperty"
        case .letProperty: "letProperty"
        case .hasInitializer: "hasInitializer"
        case .missingTypeAnnotation: "missingTypeAnnotation"
        case .staticProperty: "staticProperty"
        case .outsideClass: "outsideClass"
        case .genericClass: "genericClass"
        case .hasAccessors: "hasAccessors"
        case .multipleBindings: "multipleBindings"
        case .storeNameNotALiteral: "storeNameNotALiteral"
        }
        return MessageID(domain: "OpenCoreDataMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }

    /// The fix-its that go with the diagnostics above.
    enum FixIt: FixItMessage {
        case replaceLetWithVar
        case removeInitializer
        case removeModifier(keyword: String)
        case removeAccessors

        var message: String {
            switch self {
            case .replaceLetWithVar: "Replace 'let' with 'var'"
            case .removeInitializer: "Remove the initial value"
            case .removeModifier(let keyword): "Remove '\(keyword)'"
            case .removeAccessors: "Remove the accessors"
            }
        }

        var fixItID: MessageID {
            let id = switch self {
            case .replaceLetWithVar: "replaceLetWithVar"
            case .removeInitializer: "removeInitializer"
            case .removeModifier: "removeModifier"
            case .removeAccessors: "removeAccessors"
            }
            return MessageID(domain: "OpenCoreDataMacros", id: id)
        }
    }
}
