import Foundation
import Testing
@testable import OpenCoreDataRuntime
import class OpenCoreDataRuntime.NSComparisonPredicate
import class OpenCoreDataRuntime.NSCompoundPredicate
import class OpenCoreDataRuntime.NSExpression
import class OpenCoreDataRuntime.NSPredicate

/// Runs the cases of `Fixtures/predicates/predicate_cases.jsonl` (GNUstep, MIOCoreData, Realm test
/// suites; see the README next to it) that need only dictionaries, arrays and plain values.
///
/// Outcomes: `pass`, `fail`, or `skip` with a reason. Known differences are skips, not passes:
/// - GNUstep expects `a = 1` to print as `a = 1`; Apple (and we) print `a == 1`.
/// - Where Apple raises (`SELF.foo <= 2` on strings, an unknown function), we return false / nil;
///   those count as passes of the "never crash" rule and are reported separately.
/// - `fetch` cases (MIOCoreData's Apple parity tests) are rebuilt over an in-memory store.
@Suite struct PredicateCorpusTests {
    private struct Case {
        let json: [String: Any]
        var id: String { json["id"] as? String ?? "?" }
        var kind: String { json["kind"] as? String ?? "" }
        var format: String? { json["format"] as? String }
        var args: [Any] { (json["args"] as? [Any] ?? []).map(PredicateCorpusTests.convert) }
        var object: Any? { json["object"].map(PredicateCorpusTests.convert) }
        var expected: Any? { json["expected"] }
    }

    private enum Outcome: Equatable {
        case pass, raisesOnApple, fail(String), skip(String)
    }

    private static func loadCases() throws -> [Case] {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let text = try String(contentsOf: fixtures.appendingPathComponent("predicates/predicate_cases.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            Case(json: try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
        }
    }

    /// JSON to the values the original tests used: `{"date": "yyyy-MM-dd"}` is an NSDate in local
    /// time, null is NSNull, numbers stay NSNumber.
    private static func convert(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            if dictionary.count == 1, let day = dictionary["date"] as? String {
                let formatter = DateFormatter()
                formatter.dateFormat = "yyyy-MM-dd"
                formatter.timeZone = .current
                return formatter.date(from: day) ?? NSNull()
            }
            return dictionary.mapValues(convert)
        }
        if let array = value as? [Any] { return array.map(convert) }
        return value
    }

    private static func canonicalJSON(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject([value]),
              let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]) else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Structure description of parsed predicates, in the corpus's vocabulary

    private static func operatorName(_ type: NSComparisonPredicate.Operator) -> String {
        switch type {
        case .equalTo: "=="
        case .notEqualTo: "!="
        case .lessThan: "<"
        case .lessThanOrEqualTo: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqualTo: ">="
        case .contains: "CONTAINS"
        case .in: "IN"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .like: "LIKE"
        case .matches: "MATCHES"
        case .between: "BETWEEN"
        case .customSelector: "CUSTOM"
        }
    }

    /// Whether `expression` matches an expected `{"keyPath": …}` / `{"constant": …}` / `{"function": …, "arguments": […]}`.
    private static func matches(_ expression: NSExpression, _ expected: [String: Any]) -> Bool {
        if let path = expected["keyPath"] as? String { return expression.expressionType == .keyPath && expression.keyPath == path }
        if expected.keys.contains("constant") {
            let want = expected["constant"].map(convert)
            guard expression.expressionType == .constantValue else { return false }
            return PredicateValues.equal(expression.constantValue, want)
                && (PredicateValues.normalize(expression.constantValue).flatMap(PredicateValues.string) == nil)
                    == (PredicateValues.normalize(want).flatMap(PredicateValues.string) == nil)
        }
        if let name = expected["function"] as? String {
            guard expression.expressionType == .function, expression.function == name else { return false }
            let args = expected["arguments"] as? [[String: Any]] ?? []
            let have = expression.arguments ?? []
            return have.count == args.count && zip(have, args).allSatisfy { matches($0, $1) }
        }
        return true
    }

    private static func matches(_ predicate: NSPredicate, _ expected: [String: Any]) -> Bool {
        if let type = expected["type"] as? String {
            switch type {
            case "comparison":
                guard predicate is NSComparisonPredicate else { return false }
            case "AND", "OR", "NOT":
                guard let compound = predicate as? NSCompoundPredicate else { return false }
                let want: NSCompoundPredicate.LogicalType = type == "AND" ? .and : type == "OR" ? .or : .not
                guard compound.compoundPredicateType == want else { return false }
                if let count = expected["subpredicate_count"] as? Int, compound.subpredicates.count != count { return false }
                if let subs = expected["sub"] as? [[String: Any]] {
                    let have = compound._subpredicates
                    guard have.count == subs.count, zip(have, subs).allSatisfy({ matches($0, $1) }) else { return false }
                }
                return true
            default:
                return false
            }
        }
        guard let comparison = predicate as? NSComparisonPredicate else { return false }
        if let op = expected["operator"] as? String, operatorName(comparison.predicateOperatorType) != op { return false }
        if let left = expected["left"] as? [String: Any], !matches(comparison.leftExpression, left) { return false }
        if let right = expected["right"] as? [String: Any], !matches(comparison.rightExpression, right) { return false }
        return true
    }

    // MARK: Running a case

    private static func run(_ c: Case) -> Outcome {
        switch c.kind {
        case "evaluate":
            guard let format = c.format else { return .skip("no format") }
            let predicate = NSPredicate(format: format, argumentArray: c.args)
            let result = predicate.evaluate(with: c.object)
            if let raises = c.expected as? [String: Any], raises["raises"] != nil {
                return result == false ? .raisesOnApple : .fail("Apple raises; we returned true")
            }
            guard let expected = c.expected as? Bool else { return .skip("unexpected expectation") }
            if format == "%@ > %@" {  // 0077: also after re-parsing its own predicateFormat
                let again = NSPredicate(format: predicate.predicateFormat)
                if again.evaluate(with: c.object) != expected { return .fail("re-parsed \(predicate.predicateFormat) differs") }
            }
            return result == expected ? .pass : .fail("evaluated \(result), parsed as \(predicate.predicateFormat)")
        case "filter":
            guard let format = c.format, let raw = c.json["object"] as? [Any], let expected = c.expected as? [Any] else { return .skip("shape") }
            let predicate = NSPredicate(format: format, argumentArray: c.args)
            let kept = raw.filter { predicate.evaluate(with: convert($0)) }.map(canonicalJSON)
            let want = expected.map(canonicalJSON)
            return kept == want ? .pass : .fail("kept \(kept), expected \(want)")
        case "parse-structure", "parse-operator", "parse-constant":
            guard let format = c.format, let expected = c.expected as? [String: Any] else { return .skip("shape") }
            do {
                let predicate = try NSPredicate(validatingFormat: format, argumentArray: c.args)
                return matches(predicate, expected) ? .pass : .fail("parsed as \(predicate.predicateFormat)")
            } catch {
                return .fail("\(error)")
            }
        case "predicateFormat":
            guard let format = c.format, let expected = c.expected as? String else { return .skip("shape") }
            let printed = NSPredicate(format: format, argumentArray: c.args).predicateFormat
            if format == "a = 1", printed == "a == 1" { return .skip("GNUstep prints '=', Apple '=='; we follow Apple") }
            return printed == expected ? .pass : .fail("printed \(printed)")
        case "predicateFormat-after-substitution":
            guard let format = c.format, let expected = c.expected as? String,
                  let variables = c.json["substitution"] as? [String: Any] else { return .skip("shape") }
            let printed = NSPredicate(format: format, argumentArray: c.args).withSubstitutionVariables(variables).predicateFormat
            return printed == expected ? .pass : .fail("printed \(printed)")
        case "predicateFormat-equivalence":
            guard let format = c.format else { return .skip("shape") }
            let hand = NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: "name"), rightExpression: NSExpression(forConstantValue: "y"),
                modifier: .direct, type: .contains, options: [])
            return hand.predicateFormat == NSPredicate(format: format).predicateFormat ? .pass : .fail(hand.predicateFormat)
        case "isEqual":
            guard let format = c.format, let other = c.json["other_format"] as? String, let expected = c.expected as? Bool else { return .skip("shape") }
            let a = NSPredicate(format: format), b = NSPredicate(format: other)
            if a.isEqual(b) != expected { return .fail("isEqual was \(!expected)") }
            if expected, a.hash != b.hash { return .fail("equal predicates with different hashes") }
            return .pass
        case "compound-api":
            guard let description = c.json["description"] as? String, let expected = c.expected as? Bool else { return .skip("shape") }
            let predicate: NSPredicate
            if description.contains("andPredicateWithSubpredicates: @[]") {
                predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [])
            } else if description.contains("orPredicateWithSubpredicates: @[]") {
                predicate = NSCompoundPredicate(orPredicateWithSubpredicates: [])
            } else if let open = description.firstIndex(of: "("), description.hasSuffix(")") {
                let head = description[..<open]
                let body = description[description.index(after: open)..<description.index(before: description.endIndex)]
                let subs = body.split(separator: ",").map { NSPredicate(format: $0.trimmingCharacters(in: .whitespaces)) }
                let type: NSCompoundPredicate.LogicalType = head == "AND" ? .and : head == "OR" ? .or : .not
                predicate = NSCompoundPredicate(type: type, subpredicates: subs)
            } else {
                return .skip("unrecognised description")
            }
            return predicate.evaluate(with: c.object) == expected ? .pass : .fail("evaluated \(!expected)")
        case "expression-function":
            guard let description = c.json["description"] as? String,
                  let start = description.range(of: "expressionForFunction:@\""),
                  let end = description[start.upperBound...].firstIndex(of: "\"") else { return .skip("shape") }
            let name = String(description[start.upperBound..<end])
            let value = NSExpression(forFunction: name, arguments: [NSExpression(forConstantValue: [1, 2, 3])])
                .expressionValue(with: nil, context: nil)
            if let raises = c.expected as? [String: Any], raises["raises"] != nil {
                return value == nil ? .raisesOnApple : .fail("Apple raises; we returned \(value!)")
            }
            return PredicateValues.equal(value, c.expected) ? .pass : .fail("got \(value.map { "\($0)" } ?? "nil")")
        case "expression-evaluate":
            guard let format = c.format, let expected = c.expected as? [String: Any] else { return .skip("shape") }
            let value = NSExpression(format: format, argumentArray: c.args).expressionValue(with: nil, context: nil)
            guard value != nil else { return .fail("nil") }
            if let want = expected["value_if_computed"], !PredicateValues.equal(value, want) { return .fail("got \(value!)") }
            return .pass
        case "realm-count":
            guard var format = c.format else { return .skip("shape") }
            // Case 0430: the extractor split Realm's `@"%K LIKE 'a?" "?'"` (adjacent C string
            // literals, written so to avoid the `??'` trigraph) and kept the second part as an
            // argument. The real format string is the concatenation.
            if let source = c.json["args_source"] as? String, source.hasPrefix("\""),
               let close = source.dropFirst().firstIndex(of: "\"") {
                format += source[source.index(after: source.startIndex)..<close]
            }
            // The original arguments are Objective-C expressions; any value of the specifier's kind will do to parse.
            let arguments: [Any] = ((try? PredicateLexer.tokenize(format)) ?? []).compactMap { token in
                guard case .specifier(let conversion, _, _) = token.kind else { return nil }
                switch conversion {
                case "K": return "key"
                case "@": return "value"
                case "f", "e", "g", "F", "E", "G": return 1.5
                default: return 1
                }
            }
            do {
                _ = try NSPredicate(validatingFormat: format, argumentArray: arguments)
                return .pass
            } catch {
                return .fail("\(error)")
            }
        case "fetch":
            do { return try runFetch(c) } catch { return .fail("\(error)") }
        default:
            return .skip("kind \(c.kind) not run")
        }
    }

    /// MIOCoreData's Apple parity fetches, rebuilt over an in-memory store: `PEntity(name, counter: Int32)`,
    /// `PParent(name) <->> PChild(name)`.
    private static func runFetch(_ c: Case) throws -> Outcome {
        guard let format = c.format, let entityName = c.json["entity"] as? String else { return .skip("shape") }
        let pEntity = NSEntityDescription(name: "PEntity", properties: [
            NSAttributeDescription(name: "name", type: .stringAttributeType),
            NSAttributeDescription(name: "counter", type: .integer32AttributeType),
        ])
        let parent = NSEntityDescription(name: "PParent", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let child = NSEntityDescription(name: "PChild", properties: [NSAttributeDescription(name: "name", type: .stringAttributeType)])
        let children = NSRelationshipDescription(name: "children", destination: child, toMany: true)
        let parentLink = NSRelationshipDescription(name: "parent", destination: parent, toMany: false)
        children.inverseRelationship = parentLink
        parentLink.inverseRelationship = children
        parent.properties.append(children)
        child.properties.append(parentLink)
        let model = NSManagedObjectModel()
        model.entities = [pEntity, parent, child]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator

        var parents: [String: NSManagedObject] = [:]
        func insertParent(_ name: String) -> NSManagedObject {
            let object = NSManagedObject(entity: parent, insertInto: context)
            object.setValue(name, forKey: "name")
            parents[name] = object
            return object
        }
        func insertChild(_ name: String, _ owner: NSManagedObject) {
            let object = NSManagedObject(entity: child, insertInto: context)
            object.setValue(name, forKey: "name")
            object.setValue(owner, forKey: "parent")
        }
        switch c.json["object"] {
        case let rows as [[String: Any]]:
            for row in rows {
                let object = NSManagedObject(entity: pEntity, insertInto: context)
                object.setValue(row["name"], forKey: "name")
                object.setValue(row["counter"], forKey: "counter")
            }
        case let spec as [String: Any]:
            if let names = spec["PEntity.name"] as? [String] {
                for name in names { NSManagedObject(entity: pEntity, insertInto: context).setValue(name, forKey: "name") }
            } else if let names = spec["PParent"] as? [String], let kids = spec["PChild"] as? [String: String] {
                for name in names { _ = insertParent(name) }
                for (name, owner) in kids.sorted(by: { $0.key < $1.key }) { insertChild(name, parents[owner]!) }
            } else {
                for (name, kids) in spec.sorted(by: { $0.key < $1.key }) {
                    let owner = insertParent(name)
                    for kid in kids as? [String] ?? [] { insertChild(kid, owner) }
                }
            }
        default:
            return .skip("shape")
        }
        try context.save()
        func resolve(_ arg: Any) -> Any {
            if let array = arg as? [Any] { return array.map(resolve) }
            guard let text = arg as? String else { return arg }
            if text == "<managed object parentA>" { return parents["A"]! }
            if text == "<NSManagedObjectID of parentB>" { return parents["B"]!.objectID }
            return arg
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        request.predicate = NSPredicate(format: format, argumentArray: c.args.map(resolve))
        let names = Set(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String })
        switch c.expected {
        case let list as [String]:
            return names == Set(list) ? .pass : .fail("fetched \(names.sorted())")
        case let spec as [String: Any]:
            if let count = spec["count"] as? Int { return names.count == count ? .pass : .fail("fetched \(names.sorted())") }
            if let contains = spec["contains"] as? [String] {
                return names.isSuperset(of: contains) ? .pass : .fail("fetched \(names.sorted())")
            }
            return .skip("shape")
        default:
            return .skip("shape")
        }
    }

    @Test func corpusCases() throws {
        let cases = try Self.loadCases()
        #expect(cases.count == 899)
        var summary: [String: [String: Int]] = [:]
        var failures: [String] = []
        var skips: [String] = []
        for c in cases {
            let outcome = Self.run(c)
            let repo = (c.json["source"] as? [String: Any])?["repo"] as? String ?? "?"
            let label: String
            switch outcome {
            case .pass: label = "passed"
            case .raisesOnApple: label = "raises-on-Apple-false-here"
            case .fail(let why): label = "failed"; failures.append("\(c.id) [\(c.kind)] \(c.format ?? ""): \(why)")
            case .skip(let why): label = "skipped"; skips.append("\(c.id) [\(c.kind)]: \(why)")
            }
            summary["\(repo) \(c.kind)", default: [:]][label, default: 0] += 1
        }
        for key in summary.keys.sorted() { print("corpus \(key): \(summary[key]!.sorted { $0.key < $1.key })") }
        for skip in skips where !skip.contains("[fetch]") { print("corpus skip \(skip)") }
        for failure in failures { print("corpus FAIL \(failure)") }
        #expect(failures.isEmpty, "\(failures.count) corpus cases failed")
    }

    /// Every corpus predicate format, parsed a second time (so from ``PredicateTemplates``'s cached
    /// template when it has one), gives the predicate the direct parse gives, or the same error.
    @Test func templatesGiveTheDirectParse() throws {
        var compared = 0
        var parsed = 0
        var templated = 0
        for c in try Self.loadCases() {
            guard let format = c.format, !c.kind.hasPrefix("expression") else { continue }
            let direct = Result { try PredicateParser.parsePredicateUncached(format, arguments: c.args) }
            for _ in 0..<2 {
                let cached = Result { try NSPredicate(validatingFormat: format, argumentArray: c.args) }
                switch (direct, cached) {
                case (.success(let expected), .success(let got)):
                    #expect(got == expected, "\(c.id): \(format)")
                    #expect(got.predicateFormat == expected.predicateFormat, "\(c.id): \(format)")
                case (.failure(let expected), .failure(let got)):
                    #expect("\(got)" == "\(expected)", "\(c.id): \(format)")
                default:
                    Issue.record("\(c.id): \(format): direct \(direct), cached \(cached)")
                }
            }
            compared += 1
            if case .success = direct {
                parsed += 1
                if PredicateTemplates.usesTemplate(format) { templated += 1 }
            }
        }
        #expect(compared > 800)
        // Every well-formed corpus format has a template (none depends on an argument's value).
        #expect(templated == parsed, "only \(templated) of \(parsed) well-formed formats use a template")
    }
}
