import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ManagedProperty`: turns a `var` of an `NSManagedObject` subclass into accessors that read and
/// write the object graph through the runtime's `_ocd` hooks, with a cached key as a peer.
///
/// ```swift
/// @ManagedProperty var updatedAt: Date
/// ```
/// becomes
/// ```swift
/// var updatedAt: Date {
///     get { _ocdGetValue(Self.__ocd_key_updatedAt) }
///     set { _ocdSetValue(newValue, Self.__ocd_key_updatedAt) }
/// }
/// private static let __ocd_key_updatedAt = OpenCoreData.ManagedPropertyKey("updatedAt")
/// ```
/// A `Set<Element>` property also gets Xcode's `addTo<Name>`/`removeFrom<Name>` accessors.
///
/// Diagnostics are reported by the peer role only (it runs for every kind of declaration); the
/// accessor role expands to placeholders, or nothing, when the declaration is not valid.
public enum ManagedPropertyMacro {
    /// The prefix of the peer that caches the property's key.
    static let keyPrefix = "__ocd_key_"
}

extension ManagedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = ManagedPropertyDeclaration(node, declaration, context, diagnose: false) else {
            // The peer role reported the problem. A declaration that can take accessors gets
            // placeholders, so the compiler adds no "did not produce an accessor" error of its own.
            guard ManagedPropertyDeclaration.canTakeAccessors(declaration) else { return [] }
            return [
                #"get { Swift.fatalError("invalid @ManagedProperty") }"#,
                "set {}",
            ]
        }
        let key = "Self.\(keyPrefix)\(property.name)"
        let getter = property.isOptional ? "_ocdGetOptionalValue(\(key))" : "_ocdGetValue(\(key))"
        return [
            """
            get {
                \(raw: getter)
            }
            """,
            """
            set {
                _ocdSetValue(newValue, \(raw: key))
            }
            """,
        ]
    }
}

extension ManagedPropertyMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = ManagedPropertyDeclaration(node, declaration, context, diagnose: true) else { return [] }
        let keyName = "\(keyPrefix)\(property.name)"
        var peers: [DeclSyntax] = [
            "private static let \(raw: keyName) = OpenCoreData.ManagedPropertyKey(\(property.storeName))"
        ]
        if let (set, element) = property.toMany {
            // Xcode's generated accessors for an unordered to-many relationship (in
            // `+CoreDataProperties.swift`), typed with the property's element type.
            let suffix = property.name.prefix(1).uppercased() + property.name.dropFirst()
            let access = property.accessorAccess.map { "\($0) " } ?? ""
            peers += [
                """
                \(raw: access)func addTo\(raw: suffix)(_ value: \(element)) {
                    _ocdAdd([value], Self.\(raw: keyName))
                }
                """,
                """
                \(raw: access)func removeFrom\(raw: suffix)(_ value: \(element)) {
                    _ocdRemove([value], Self.\(raw: keyName))
                }
                """,
                """
                \(raw: access)func addTo\(raw: suffix)(_ values: \(set)) {
                    _ocdAdd(Array(values), Self.\(raw: keyName))
                }
                """,
                """
                \(raw: access)func removeFrom\(raw: suffix)(_ values: \(set)) {
                    _ocdRemove(Array(values), Self.\(raw: keyName))
                }
                """,
            ]
        }
        return peers
    }
}

/// What the expansion needs to know about a valid `@ManagedProperty` declaration.
struct ManagedPropertyDeclaration {
    /// The property's Swift name, without backticks.
    var name: String
    /// The string literal naming the property in the entity.
    var storeName: ExprSyntax
    /// Whether the type is `T?`, `T!` or `Optional<T>`.
    var isOptional: Bool
    /// For a `Set<Element>` relationship: the set type without the optional (the bulk accessors'
    /// argument) and the element type.
    var toMany: (set: TypeSyntax, element: TypeSyntax)?
    /// The access level for generated mutating functions: the setter's, else the property's.
    var accessorAccess: String?

    /// Validates the declaration; reports problems when `diagnose` is set, and returns `nil` if any.
    init?(
        _ node: AttributeSyntax,
        _ declaration: some DeclSyntaxProtocol,
        _ context: some MacroExpansionContext,
        diagnose: Bool
    ) {
        var problems: [Diagnostic] = []
        defer { if diagnose { problems.forEach(context.diagnose) } }

        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            problems.append(Diagnostic(node: node, message: MacroDiagnostic.notAProperty))
            return nil
        }

        Self.checkContext(node, context, into: &problems)

        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let specifier = variable.bindingSpecifier
            problems.append(Diagnostic(
                node: specifier,
                message: MacroDiagnostic.letProperty,
                fixIt: .replace(
                    message: MacroDiagnostic.FixIt.replaceLetWithVar,
                    oldNode: specifier,
                    newNode: specifier.with(\.tokenKind, .keyword(.var))
                )
            ))
        }

        if let modifier = variable.modifiers.first(where: {
            $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
        }) {
            let keyword = modifier.name.text
            problems.append(Diagnostic(
                node: modifier,
                message: MacroDiagnostic.staticProperty(keyword: keyword),
                fixIt: .replace(
                    message: MacroDiagnostic.FixIt.removeModifier(keyword: keyword),
                    oldNode: variable.modifiers,
                    newNode: variable.modifiers.filter { $0.id != modifier.id }
                )
            ))
        }

        guard variable.bindings.count == 1, let binding = variable.bindings.first else {
            problems.append(Diagnostic(node: variable.bindings, message: MacroDiagnostic.multipleBindings))
            return nil
        }
        guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier else {
            problems.append(Diagnostic(node: binding.pattern, message: MacroDiagnostic.notAProperty))
            return nil
        }

        if let initializer = binding.initializer {
            problems.append(Diagnostic(
                node: initializer,
                message: MacroDiagnostic.hasInitializer,
                fixIt: .replace(
                    message: MacroDiagnostic.FixIt.removeInitializer,
                    oldNode: binding,
                    newNode: Self.trimmingTrailingTrivia(binding.with(\.initializer, nil))
                )
            ))
        }

        if let accessors = binding.accessorBlock {
            problems.append(Diagnostic(
                node: accessors,
                message: MacroDiagnostic.hasAccessors,
                fixIt: .replace(
                    message: MacroDiagnostic.FixIt.removeAccessors,
                    oldNode: binding,
                    newNode: Self.trimmingTrailingTrivia(binding.with(\.accessorBlock, nil))
                )
            ))
        }

        let type = binding.typeAnnotation?.type
        if type == nil {
            problems.append(Diagnostic(node: binding.pattern, message: MacroDiagnostic.missingTypeAnnotation))
        }

        let name = identifier.text.trimmingBackticks
        var storeName: ExprSyntax = ExprSyntax(StringLiteralExprSyntax(content: name))
        if let argument = node.arguments?.as(LabeledExprListSyntax.self)?.first?.expression,
           !argument.is(NilLiteralExprSyntax.self) {
            if let literal = argument.as(StringLiteralExprSyntax.self),
               literal.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) }) {
                storeName = ExprSyntax(literal.trimmed)
            } else {
                problems.append(Diagnostic(node: argument, message: MacroDiagnostic.storeNameNotALiteral))
            }
        }

        guard problems.isEmpty, let type else { return nil }

        self.name = name
        self.storeName = storeName
        let unwrapped = type.optionalWrapped
        self.isOptional = unwrapped != nil
        if let set = (unwrapped ?? type).setType, let element = set.element {
            toMany = (set.type, element)
        }
        accessorAccess = Self.accessorAccess(variable.modifiers)
    }

    /// Whether `declaration` is a single `var` with a type and nothing that forbids accessors.
    static func canTakeAccessors(_ declaration: some DeclSyntaxProtocol) -> Bool {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              variable.bindingSpecifier.tokenKind == .keyword(.var),
              variable.bindings.count == 1, let binding = variable.bindings.first
        else { return false }
        return binding.pattern.is(IdentifierPatternSyntax.self) && binding.typeAnnotation != nil
            && binding.initializer == nil && binding.accessorBlock == nil
    }

    /// Reports a use outside a class or a class extension.
    private static func checkContext(
        _ node: AttributeSyntax, _ context: some MacroExpansionContext, into problems: inout [Diagnostic]
    ) {
        guard let enclosing = context.lexicalContext.first else {
            problems.append(Diagnostic(node: node, message: MacroDiagnostic.outsideClass(found: "at top level")))
            return
        }
        if let classDecl = enclosing.as(ClassDeclSyntax.self) {
            if classDecl.genericParameterClause != nil {
                let message = MacroDiagnostic.genericClass(name: classDecl.name.text)
                problems.append(Diagnostic(node: node, message: message))
            }
            return
        }
        // An extension may extend a class; the type checker rejects the hooks if it does not.
        if enclosing.is(ExtensionDeclSyntax.self) { return }
        let found = switch enclosing.kind {
        case .structDecl: "in a struct"
        case .enumDecl: "in an enum"
        case .actorDecl: "in an actor"
        case .protocolDecl: "in a protocol"
        default: "in a local scope"
        }
        problems.append(Diagnostic(node: node, message: MacroDiagnostic.outsideClass(found: found)))
    }

    /// The access level of the property's setter (`fileprivate(set)`), else of the property;
    /// `open` becomes `public`: an override of a generated accessor would bypass the object graph.
    private static func accessorAccess(_ modifiers: DeclModifierListSyntax) -> String? {
        let levels: Set<String> = ["open", "public", "package", "internal", "fileprivate", "private"]
        var access: String?
        for modifier in modifiers where levels.contains(modifier.name.text) {
            if modifier.detail?.detail.text == "set" { return modifier.name.text }
            access = modifier.name.text
        }
        return access == "open" ? "public" : access
    }

    /// A binding without the trivia that separated it from the part just removed.
    private static func trimmingTrailingTrivia(_ binding: PatternBindingSyntax) -> PatternBindingSyntax {
        binding.with(\.trailingTrivia, [])
    }
}

extension TypeSyntax {
    /// `T` for `T?`, `T!`, `Optional<T>` and `Swift.Optional<T>`; `nil` for other types.
    var optionalWrapped: TypeSyntax? {
        if let optional = self.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let iuo = self.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return iuo.wrappedType }
        if let (name, arguments) = genericNamed, name == "Optional", arguments.count == 1 { return arguments.first }
        return nil
    }

    /// `(Set<Element>, Element)` when this is `Set<Element>` (or `Swift.Set`) whose element may be a
    /// managed object: not a standard library or Foundation value type (a transformable attribute).
    var setType: (type: TypeSyntax, element: TypeSyntax?)? {
        guard let (name, arguments) = genericNamed, name == "Set", arguments.count == 1,
              let element = arguments.first
        else { return nil }
        let elementName: String? =
            if let identifier = element.as(IdentifierTypeSyntax.self) { identifier.name.text }
            else if let member = element.as(MemberTypeSyntax.self) { member.name.text }
            else { nil }
        guard let elementName, !Self.valueTypeNames.contains(elementName) else { return (trimmed, nil) }
        return (trimmed, element.trimmed)
    }

    /// Element types of `Set` that cannot be managed objects.
    private static let valueTypeNames: Set<String> = [
        "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8",
        "UInt16", "UInt32", "UInt64", "Double", "Float", "Decimal", "Date", "Data", "UUID", "URL", "AnyHashable",
        "NSNumber", "NSString", "NSDate", "NSData", "NSUUID", "NSURL", "NSManagedObjectID",
    ]

    /// The name and generic arguments of `Name<...>` or `Swift.Name<...>`.
    private var genericNamed: (String, [TypeSyntax])? {
        if let identifier = self.as(IdentifierTypeSyntax.self), let clause = identifier.genericArgumentClause {
            return (identifier.name.text, clause.arguments.compactMap(\.argumentType))
        }
        if let member = self.as(MemberTypeSyntax.self), let clause = member.genericArgumentClause,
           member.baseType.as(IdentifierTypeSyntax.self)?.name.text == "Swift" {
            return (member.name.text, clause.arguments.compactMap(\.argumentType))
        }
        return nil
    }
}

extension GenericArgumentSyntax {
    /// The argument as a type. Works with swift-syntax 600 (a type) and 601+ (a type or, for value
    /// generics, an expression).
    var argumentType: TypeSyntax? { Syntax(argument).as(TypeSyntax.self) }
}

extension String {
    /// `default` for `` `default` ``.
    var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
