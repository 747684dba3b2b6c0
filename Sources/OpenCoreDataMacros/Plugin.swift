import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct OpenCoreDataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ManagedPropertyMacro.self,
    ]
}
