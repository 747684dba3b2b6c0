import Foundation
import OpenCoreData
import Testing

/// UndoManager, with the semantics Apple documents for NSUndoManager.
@Suite("UndoManager")
struct UndoManagerTests {
    /// Something whose changes register their own undo, as Apple's examples do.
    final class Counter {
        let undoManager: UndoManager
        private(set) var value = 0
        init(_ undoManager: UndoManager) { self.undoManager = undoManager }
        func set(_ newValue: Int) {
            let old = value
            undoManager.registerUndo(withTarget: self) { $0.set(old) }
            value = newValue
        }
    }

    private func explicit() -> UndoManager {
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        return undoManager
    }

    /// Apple: "The undo manager maintains an unowned reference to the target to prevent retain
    /// cycles." A target that owns its undo manager (a context owns its own) is freed when dropped.
    @Test func theTargetIsNotRetained() {
        weak var weakCounter: Counter?
        let undoManager = explicit()
        do {
            let counter = Counter(undoManager)
            weakCounter = counter
            undoManager.beginUndoGrouping()
            counter.set(1)
            undoManager.endUndoGrouping()
        }
        #expect(weakCounter == nil)
        #expect(undoManager.canUndo)
        undoManager.undo()  // the target has gone: nothing to do, and no crash (Apple raises here)
    }

    @Test func defaults() {
        let undoManager = UndoManager()
        #expect(undoManager.groupsByEvent)
        #expect(undoManager.levelsOfUndo == 0)
        #expect(undoManager.groupingLevel == 0)
        #expect(!undoManager.canUndo)
        #expect(!undoManager.canRedo)
        #expect(undoManager.isUndoRegistrationEnabled)
        #expect(undoManager.undoActionName == "")
        #expect(undoManager.undoMenuItemTitle == "Undo")
    }

    @Test func undoRegistersRedoAndRedoRegistersUndo() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.endUndoGrouping()
        #expect(undoManager.canUndo && !undoManager.canRedo)
        undoManager.undo()
        #expect(counter.value == 0)
        #expect(!undoManager.canUndo && undoManager.canRedo, "the undo's own registration went to the redo stack")
        undoManager.redo()
        #expect(counter.value == 1)
        #expect(undoManager.canUndo && !undoManager.canRedo)
        undoManager.undo()
        #expect(counter.value == 0)
    }

    @Test func aNewRegistrationClearsTheRedoStack() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        for value in [1, 2] {
            undoManager.beginUndoGrouping()
            counter.set(value)
            undoManager.endUndoGrouping()
        }
        undoManager.undo()
        #expect(undoManager.canRedo)
        undoManager.beginUndoGrouping()
        counter.set(5)
        undoManager.endUndoGrouping()
        #expect(!undoManager.canRedo)
        undoManager.undo()
        undoManager.undo()
        #expect(counter.value == 0)
    }

    @Test func nestedGroupsAreUndoneAsOne() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.beginUndoGrouping()
        #expect(undoManager.groupingLevel == 2)
        counter.set(2)
        counter.set(3)
        undoManager.endUndoGrouping()
        undoManager.endUndoGrouping()
        undoManager.undo()
        #expect(counter.value == 0, "undo() undoes the top-level group with what is nested in it")
        undoManager.redo()
        #expect(counter.value == 3)
    }

    @Test func undoNestedGroupUndoesTheLastNestedGroupOfTheOpenGroup() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.beginUndoGrouping()
        counter.set(2)
        undoManager.endUndoGrouping()
        undoManager.undoNestedGroup()
        #expect(counter.value == 1)
        undoManager.endUndoGrouping()
        undoManager.undo()
        #expect(counter.value == 0)
    }

    @Test func undoWithNestedGroupsOpenDoesNothing() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.beginUndoGrouping()
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.undo()  // Apple raises; logged here
        #expect(counter.value == 1)
        #expect(undoManager.groupingLevel == 2)
    }

    @Test func undoClosesTheOpenTopLevelGroup() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.undo()
        #expect(undoManager.groupingLevel == 0)
        #expect(counter.value == 0)
    }

    @Test func registeringWithoutAGroupWhenNotGroupingByEventIsRefused() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        counter.set(1)  // Apple raises; logged here
        #expect(!undoManager.canUndo)
    }

    @Test func groupingByEventOpensAGroupAtTheFirstRegistrationAndTheEventClosesIt() async {
        await MainActor.run {
            let undoManager = UndoManager()
            let counter = Counter(undoManager)
            counter.set(1)
            counter.set(2)
            #expect(undoManager.groupingLevel == 1)
            undoManager.undo()  // closes the event's group, undoes both
            #expect(counter.value == 0)
        }
        let undoManager = await MainActor.run {
            let undoManager = UndoManager()
            Counter(undoManager).set(1)
            return UncheckedBox(undoManager)
        }
        // The group is closed by a block on the main queue once this event (the MainActor job) ends.
        await MainActor.run { #expect(undoManager.value.groupingLevel == 0) }
    }

    @Test func levelsOfUndoDropsTheOldestGroups() {
        let undoManager = explicit()
        undoManager.levelsOfUndo = 2
        let counter = Counter(undoManager)
        for value in 1...3 {
            undoManager.beginUndoGrouping()
            counter.set(value)
            undoManager.endUndoGrouping()
        }
        undoManager.undo()
        undoManager.undo()
        #expect(counter.value == 1)
        #expect(!undoManager.canUndo)
    }

    @Test func disablingRegistration() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.disableUndoRegistration()
        undoManager.disableUndoRegistration()
        undoManager.enableUndoRegistration()
        #expect(!undoManager.isUndoRegistrationEnabled, "calls nest")
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.endUndoGrouping()
        #expect(!undoManager.canUndo)
        undoManager.enableUndoRegistration()
        #expect(undoManager.isUndoRegistrationEnabled)
    }

    @Test func actionNames() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.setActionName("Count")
        undoManager.endUndoGrouping()
        #expect(undoManager.undoActionName == "Count")
        #expect(undoManager.undoMenuItemTitle == "Undo Count")
        undoManager.undo()
        #expect(undoManager.redoActionName == "Count", "the redo group keeps the name")
        #expect(undoManager.redoMenuItemTitle == "Redo Count")
        #expect(undoManager.undoActionName == "")
    }

    @Test func removingActions() {
        let undoManager = explicit()
        let a = Counter(undoManager), b = Counter(undoManager)
        undoManager.beginUndoGrouping()
        a.set(1)
        b.set(1)
        undoManager.endUndoGrouping()
        undoManager.removeAllActions(withTarget: a)
        undoManager.undo()
        #expect(a.value == 1 && b.value == 0)
        undoManager.beginUndoGrouping()
        a.set(2)
        undoManager.disableUndoRegistration()
        undoManager.removeAllActions()
        #expect(!undoManager.canUndo && !undoManager.canRedo)
        #expect(undoManager.groupingLevel == 0)
        #expect(undoManager.isUndoRegistrationEnabled, "removeAllActions() enables registration again")
    }

    @Test func isUndoingAndIsRedoing() {
        let undoManager = explicit()
        var seen: [String] = []
        final class Target {}
        let target = Target()
        undoManager.beginUndoGrouping()
        undoManager.registerUndo(withTarget: target) { _ in
            seen.append("undoing \(undoManager.isUndoing) redoing \(undoManager.isRedoing)")
            undoManager.registerUndo(withTarget: target) { _ in
                seen.append("undoing \(undoManager.isUndoing) redoing \(undoManager.isRedoing)")
            }
        }
        undoManager.endUndoGrouping()
        undoManager.undo()
        undoManager.redo()
        #expect(seen == ["undoing true redoing false", "undoing false redoing true"])
        #expect(!undoManager.isUndoing && !undoManager.isRedoing)
    }

    @Test func notifications() {
        let undoManager = explicit()
        let counter = Counter(undoManager)
        let names: [Notification.Name] = [
            .NSUndoManagerCheckpoint, .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange, .NSUndoManagerWillRedoChange,
            .NSUndoManagerDidRedoChange, .NSUndoManagerDidOpenUndoGroup, .NSUndoManagerWillCloseUndoGroup,
            .NSUndoManagerDidCloseUndoGroup,
        ]
        let log = UncheckedBox([String]())
        let observers = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: undoManager, queue: nil) { note in
                log.value.append(note.name.rawValue.replacingOccurrences(of: "NSUndoManager", with: "")
                    .replacingOccurrences(of: "Notification", with: ""))
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        undoManager.beginUndoGrouping()
        counter.set(1)
        undoManager.endUndoGrouping()
        #expect(log.value == ["DidOpenUndoGroup", "Checkpoint", "WillCloseUndoGroup", "DidCloseUndoGroup"],
                "no checkpoint when a top-level group opens")
        log.value = []
        undoManager.undo()
        // undo() posts one, then undoNestedGroup() (which it calls) another, as both are documented to.
        #expect(log.value == [
            "Checkpoint", "Checkpoint", "WillUndoChange", "DidOpenUndoGroup", "Checkpoint", "WillCloseUndoGroup", "DidCloseUndoGroup",
            "DidUndoChange",
        ])
        log.value = []
        undoManager.redo()
        #expect(log.value.first == "Checkpoint")
        #expect(log.value.contains("WillRedoChange") && log.value.last == "DidRedoChange")
        #expect(UndoManager.didUndoChangeNotification == .NSUndoManagerDidUndoChange)
    }
}

/// A box for test state the compiler cannot see is used on one thread.
final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
