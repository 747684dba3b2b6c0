import Foundation

/// Records changes as undo operations, grouped, and performs them to undo (and then redo) them.
///
/// ```swift
/// let undoManager = UndoManager()
/// context.undoManager = undoManager
/// mood.colors = newColors          // the context registers the change at its next checkpoint
/// context.undo()                   // the colors are back
///
/// undoManager.registerUndo(withTarget: document) { document in document.title = oldTitle }
/// undoManager.setActionName("Rename")
/// ```
///
/// - Note: Linux: Foundation on Linux has no `UndoManager`; this is OpenCoreData's, with Apple's API
///   for closures. There is no selector-based registration (`registerUndo(withTarget:selector:object:)`,
///   `prepare(withInvocationTarget:)`): they need the Objective-C runtime. With ``groupsByEvent`` (the
///   default), the group opened by the first registration of an event is closed by a block enqueued
///   on `DispatchQueue.main` when registering on the main thread or the main queue (main-actor code;
///   it runs when the main queue is next serviced, by the main run loop or `dispatchMain()`), and on other threads by a block given to that
///   thread's `RunLoop.current`, which runs only if the thread runs its run loop: on a dispatch queue
///   the group stays open until ``undo()`` (which closes it) or ``endUndoGrouping()``.
///   `runLoopModes` is not offered. Where Apple raises `NSInternalInconsistencyException` (ending a
///   group none began, ``undo()`` with nested groups open, registering outside a group with
///   ``groupsByEvent`` off), the call logs and does nothing.
///
/// Not `Sendable`, as on Apple: use an undo manager on one thread or queue (a context's).
///
/// Related Core Data documentation: [UndoManager](https://developer.apple.com/documentation/foundation/undomanager)
open class UndoManager: NSObject {
    /// One registered operation, or a nested group.
    fileprivate enum Entry {
        case action(target: ObjectIdentifier, perform: () -> Void)
        case group(Group)
    }

    /// A group of operations, undone or redone as one.
    fileprivate final class Group {
        var entries: [Entry] = []
        var actionName = ""
        var isDiscardable = false
        var isEmpty: Bool { entries.allSatisfy { if case .group(let g) = $0 { g.isEmpty } else { false } } }

        /// Drops the operations registered for `target`, in nested groups too.
        func removeActions(of target: ObjectIdentifier) {
            entries.removeAll { if case .action(let t, _) = $0 { t == target } else { false } }
            for case .group(let group) in entries { group.removeActions(of: target) }
        }

        /// Performs the operations, the last registered first.
        func perform() {
            for entry in entries.reversed() {
                switch entry {
                case .action(_, let perform): perform()
                case .group(let group): group.perform()
                }
            }
        }
    }

    /// Top-level groups, the most recent last.
    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The groups open for registration, the innermost last (on the redo side while undoing).
    private var openGroups: [Group] = []
    private var disableCount = 0
    private var state: State = .idle
    private enum State { case idle, undoing, redoing }
    /// Counts event groups opened, so that a scheduled close only ends the group it was made for.
    private var eventGroupNumber = 0
    private var eventGroupOpen = false
    /// Contexts and other clients that record pending changes at each checkpoint, before the
    /// notification is posted (see `NSManagedObjectContext+Undo.swift`).
    private var checkpointClients: [WeakCheckpointClient] = []

    /// Creates an undo manager with empty stacks that groups by event.
    ///
    /// Related Core Data documentation: [init()](https://developer.apple.com/documentation/foundation/undomanager/init())
    public override init() { super.init() }

    // MARK: Registering

    /// Records an operation that calls `handler` with `target` to undo a change.
    ///
    /// Outside undo and redo, a registration clears the redo stack. While undoing it is recorded
    /// as a redo operation, and while redoing as an undo operation. Ignored while registration is
    /// disabled (``disableUndoRegistration()``).
    ///
    /// Related Core Data documentation: [registerUndo(withTarget:handler:)](https://developer.apple.com/documentation/foundation/undomanager/registerundo(withtarget:handler:))
    public func registerUndo<TargetType: AnyObject>(withTarget target: TargetType, handler: @escaping (TargetType) -> Void) {
        guard disableCount == 0 else { return }
        if openGroups.isEmpty {
            guard groupsByEvent else {
                return reportMisuse("UndoManager.registerUndo(withTarget:handler:): no undo group is open and groupsByEvent is off")
            }
            beginEventGroup()
        }
        if state == .idle { redoStack.removeAll() }
        // The target is not retained, as Apple documents ("an unowned reference to the target to
        // prevent retain cycles"): a context is the target of its own undo operations and holds its
        // undo manager. Held weakly, so an operation whose target has gone is skipped, not a crash.
        let perform: () -> Void = { [weak target] in
            guard let target else {
                return reportMisuse("UndoManager: the target of an undo operation was freed before it ran (Apple raises here)")
            }
            handler(target)
        }
        openGroups[openGroups.count - 1].entries.append(.action(target: ObjectIdentifier(target), perform: perform))
    }

    /// Opens the group of the current event and schedules its close (see the type's note).
    private func beginEventGroup() {
        beginUndoGrouping()
        eventGroupOpen = true
        eventGroupNumber &+= 1
        let scheduled = ScheduledClose(manager: self, number: eventGroupNumber)
        if Thread.isMainThread || MainQueueMark.isCurrent {
            DispatchQueue.main.async { scheduled.run() }
        } else {
            RunLoop.current.perform { scheduled.run() }
        }
    }

    /// The end of the event that opened group `number`: closes it if it is still the only one open.
    fileprivate func endEvent(_ number: Int) {
        guard eventGroupOpen, number == eventGroupNumber, openGroups.count == 1, state == .idle else { return }
        endUndoGrouping()
    }

    // MARK: Groups

    /// Opens a group: the operations registered until the matching ``endUndoGrouping()`` are
    /// undone as one. Groups nest.
    ///
    /// Posts ``NSNotification/Name/NSUndoManagerCheckpoint`` (unless the group is a top-level one) and
    /// ``NSNotification/Name/NSUndoManagerDidOpenUndoGroup``.
    ///
    /// Related Core Data documentation: [beginUndoGrouping()](https://developer.apple.com/documentation/foundation/undomanager/beginundogrouping())
    open func beginUndoGrouping() {
        if !openGroups.isEmpty { checkpoint() }
        openGroups.append(Group())
        NotificationCenter.default.post(name: .NSUndoManagerDidOpenUndoGroup, object: self)
    }

    /// Closes the group the last ``beginUndoGrouping()`` opened. An empty top-level group is
    /// dropped.
    ///
    /// Posts ``NSNotification/Name/NSUndoManagerCheckpoint``, ``NSNotification/Name/NSUndoManagerWillCloseUndoGroup``
    /// (with `NSUndoManagerGroupIsDiscardableKey` when the group is discardable) and
    /// ``NSNotification/Name/NSUndoManagerDidCloseUndoGroup``.
    ///
    /// Related Core Data documentation: [endUndoGrouping()](https://developer.apple.com/documentation/foundation/undomanager/endundogrouping())
    open func endUndoGrouping() {
        guard !openGroups.isEmpty else {
            return reportMisuse("UndoManager.endUndoGrouping(): no undo group is open")
        }
        checkpoint()  // clients record their pending changes into the group before it closes
        guard let group = openGroups.last else { return }  // a client may have removed all actions
        let userInfo: [AnyHashable: Any]? = group.isDiscardable ? [NSUndoManagerGroupIsDiscardableKey: true] : nil
        NotificationCenter.default.post(name: .NSUndoManagerWillCloseUndoGroup, object: self, userInfo: userInfo)
        openGroups.removeLast()
        if openGroups.count == 0 { eventGroupOpen = false }
        if let parent = openGroups.last {
            if !group.isEmpty { parent.entries.append(.group(group)) }
        } else if !group.isEmpty {
            switch state {
            case .undoing: push(group, onto: &redoStack)
            case .idle, .redoing: push(group, onto: &undoStack)
            }
        }
        NotificationCenter.default.post(name: .NSUndoManagerDidCloseUndoGroup, object: self)
    }

    private func push(_ group: Group, onto stack: inout [Group]) {
        stack.append(group)
        if levelsOfUndo > 0, stack.count > levelsOfUndo { stack.removeFirst(stack.count - levelsOfUndo) }
    }

    /// The number of open groups (nested), 0 when none is open.
    ///
    /// Related Core Data documentation: [groupingLevel](https://developer.apple.com/documentation/foundation/undomanager/groupinglevel)
    open var groupingLevel: Int { openGroups.count }

    /// Whether the first registration of an event opens a group that the end of the event closes
    /// (default `true`; see the type's note for what ends an event on Linux).
    ///
    /// Related Core Data documentation: [groupsByEvent](https://developer.apple.com/documentation/foundation/undomanager/groupsbyevent)
    open var groupsByEvent = true

    /// The most top-level groups the undo (and redo) stack keeps; 0, the default, keeps all. The
    /// oldest go first.
    ///
    /// Related Core Data documentation: [levelsOfUndo](https://developer.apple.com/documentation/foundation/undomanager/levelsofundo)
    open var levelsOfUndo = 0 {
        didSet {
            if levelsOfUndo > 0 {
                if undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
                if redoStack.count > levelsOfUndo { redoStack.removeFirst(redoStack.count - levelsOfUndo) }
            }
        }
    }

    // MARK: Undo and redo

    /// Closes the top-level group if it is open, then undoes it (``undoNestedGroup()``).
    ///
    /// Logs and does nothing when nested groups are open (Apple raises).
    ///
    /// Related Core Data documentation: [undo()](https://developer.apple.com/documentation/foundation/undomanager/undo())
    open func undo() {
        checkpoint()  // pending changes a client registers now join the open group, or open one
        if openGroups.count > 1 {
            return reportMisuse("UndoManager.undo(): \(openGroups.count) undo groups are open; close the nested ones first")
        }
        if openGroups.count == 1 { endUndoGrouping() }
        undoNestedGroup()
    }

    /// Undoes the last group: the last top-level group when none is open, else the last group
    /// nested in the open one. Its operations' own registrations go to the redo stack, as one group.
    ///
    /// Posts ``NSNotification/Name/NSUndoManagerCheckpoint`` and ``NSNotification/Name/NSUndoManagerWillUndoChange``
    /// before, ``NSNotification/Name/NSUndoManagerDidUndoChange`` after.
    ///
    /// Related Core Data documentation: [undoNestedGroup()](https://developer.apple.com/documentation/foundation/undomanager/undonestedgroup())
    open func undoNestedGroup() {
        let wasOpen = !openGroups.isEmpty
        checkpoint()
        // Changes a client registered at the checkpoint opened an event group: they are the last
        // group now, and the one to undo.
        if !wasOpen, openGroups.count == 1 { endUndoGrouping() }
        let group: Group
        if let open = openGroups.last {
            guard case .group(let nested)? = open.entries.last else {
                return reportMisuse("UndoManager.undoNestedGroup(): operations were registered in the open group after its last nested group")
            }
            open.entries.removeLast()
            group = nested
        } else {
            guard let last = undoStack.popLast() else { return }
            group = last
        }
        NotificationCenter.default.post(name: .NSUndoManagerWillUndoChange, object: self)
        run(group, as: .undoing)
        NotificationCenter.default.post(name: .NSUndoManagerDidUndoChange, object: self)
    }

    /// Performs the last group of the redo stack; its operations' registrations go to the undo
    /// stack, as one group.
    ///
    /// Posts ``NSNotification/Name/NSUndoManagerCheckpoint`` and ``NSNotification/Name/NSUndoManagerWillRedoChange``
    /// before, ``NSNotification/Name/NSUndoManagerDidRedoChange`` after.
    ///
    /// Related Core Data documentation: [redo()](https://developer.apple.com/documentation/foundation/undomanager/redo())
    open func redo() {
        let wasOpen = !openGroups.isEmpty
        checkpoint()  // pending changes registered now clear the redo stack, as new changes do
        if !wasOpen, openGroups.count == 1 { endUndoGrouping() }
        if !openGroups.isEmpty {
            return reportMisuse("UndoManager.redo(): an undo group is open; close it first")
        }
        guard let group = redoStack.popLast() else { return }
        NotificationCenter.default.post(name: .NSUndoManagerWillRedoChange, object: self)
        run(group, as: .redoing)
        NotificationCenter.default.post(name: .NSUndoManagerDidRedoChange, object: self)
    }

    /// Performs `group`'s operations in a group of their own on the other stack, named as `group`.
    private func run(_ group: Group, as mode: State) {
        let previous = state
        state = mode
        let outer = openGroups
        openGroups = []
        beginUndoGrouping()
        openGroups[0].actionName = group.actionName
        openGroups[0].isDiscardable = group.isDiscardable
        group.perform()
        endUndoGrouping()
        openGroups = outer
        state = previous
    }

    /// Whether there is a group to undo (closed, or open with operations in it).
    ///
    /// Related Core Data documentation: [canUndo](https://developer.apple.com/documentation/foundation/undomanager/canundo)
    open var canUndo: Bool {
        !undoStack.isEmpty || openGroups.contains { !$0.isEmpty }
    }

    /// Whether there is a group to redo. Posts ``NSNotification/Name/NSUndoManagerCheckpoint`` first,
    /// as Apple's does (a pending change registered then clears the redo stack).
    ///
    /// Related Core Data documentation: [canRedo](https://developer.apple.com/documentation/foundation/undomanager/canredo)
    open var canRedo: Bool {
        checkpoint()
        return !redoStack.isEmpty
    }

    /// Whether the manager is performing undo operations.
    ///
    /// Related Core Data documentation: [isUndoing](https://developer.apple.com/documentation/foundation/undomanager/isundoing)
    open var isUndoing: Bool { state == .undoing }

    /// Whether the manager is performing redo operations.
    ///
    /// Related Core Data documentation: [isRedoing](https://developer.apple.com/documentation/foundation/undomanager/isredoing)
    open var isRedoing: Bool { state == .redoing }

    // MARK: Action names

    /// Names the group being registered (while undoing, the redo group), or the last group of the
    /// undo stack when none is open.
    ///
    /// Related Core Data documentation: [setActionName(_:)](https://developer.apple.com/documentation/foundation/undomanager/setactionname(_:))
    open func setActionName(_ actionName: String) {
        (openGroups.first ?? undoStack.last)?.actionName = actionName
    }

    /// The name of the group ``undo()`` would undo, or an empty string.
    ///
    /// Related Core Data documentation: [undoActionName](https://developer.apple.com/documentation/foundation/undomanager/undoactionname)
    open var undoActionName: String {
        if let open = openGroups.first, !open.isEmpty { return open.actionName }
        return undoStack.last?.actionName ?? ""
    }

    /// The name of the group ``redo()`` would redo, or an empty string.
    ///
    /// Related Core Data documentation: [redoActionName](https://developer.apple.com/documentation/foundation/undomanager/redoactionname)
    open var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// The title of an Undo menu item: "Undo" followed by the undo action name, if any.
    ///
    /// Related Core Data documentation: [undoMenuItemTitle](https://developer.apple.com/documentation/foundation/undomanager/undomenuitemtitle)
    open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }

    /// The title of a Redo menu item: "Redo" followed by the redo action name, if any.
    ///
    /// Related Core Data documentation: [redoMenuItemTitle](https://developer.apple.com/documentation/foundation/undomanager/redomenuitemtitle)
    open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

    /// "Undo" followed by `actionName`, if it is not empty.
    ///
    /// - Note: Linux: not localized.
    ///
    /// Related Core Data documentation: [undoMenuTitle(forUndoActionName:)](https://developer.apple.com/documentation/foundation/undomanager/undomenutitle(forundoactionname:))
    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    /// "Redo" followed by `actionName`, if it is not empty.
    ///
    /// - Note: Linux: not localized.
    ///
    /// Related Core Data documentation: [redoMenuTitle(forUndoActionName:)](https://developer.apple.com/documentation/foundation/undomanager/redomenutitle(forundoactionname:))
    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }

    /// Marks the group being registered as discardable (one that changes no persistent state).
    ///
    /// Related Core Data documentation: [setActionIsDiscardable(_:)](https://developer.apple.com/documentation/foundation/undomanager/setactionisdiscardable(_:))
    open func setActionIsDiscardable(_ discardable: Bool) {
        (openGroups.first ?? undoStack.last)?.isDiscardable = discardable
    }

    /// Whether the group ``undo()`` would undo is discardable.
    ///
    /// Related Core Data documentation: [undoActionIsDiscardable](https://developer.apple.com/documentation/foundation/undomanager/undoactionisdiscardable)
    open var undoActionIsDiscardable: Bool { undoStack.last?.isDiscardable ?? false }

    /// Whether the group ``redo()`` would redo is discardable.
    ///
    /// Related Core Data documentation: [redoActionIsDiscardable](https://developer.apple.com/documentation/foundation/undomanager/redoactionisdiscardable)
    open var redoActionIsDiscardable: Bool { redoStack.last?.isDiscardable ?? false }

    // MARK: Clearing and disabling

    /// Empties both stacks, drops open groups and enables registration.
    ///
    /// Related Core Data documentation: [removeAllActions()](https://developer.apple.com/documentation/foundation/undomanager/removeallactions())
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroups.removeAll()
        eventGroupOpen = false
        disableCount = 0
    }

    /// Removes the operations registered with `target` from both stacks and the open groups;
    /// groups left empty are dropped.
    ///
    /// Related Core Data documentation: [removeAllActions(withTarget:)](https://developer.apple.com/documentation/foundation/undomanager/removeallactions(withtarget:))
    open func removeAllActions(withTarget target: Any) {
        guard let object = target as AnyObject? else { return }
        let id = ObjectIdentifier(object)
        for group in undoStack + redoStack + openGroups { group.removeActions(of: id) }
        undoStack.removeAll { $0.isEmpty }
        redoStack.removeAll { $0.isEmpty }
    }

    /// Stops recording registrations until a matching ``enableUndoRegistration()``; calls nest.
    ///
    /// Related Core Data documentation: [disableUndoRegistration()](https://developer.apple.com/documentation/foundation/undomanager/disableundoregistration())
    open func disableUndoRegistration() { disableCount += 1 }

    /// Balances a ``disableUndoRegistration()``; logs when registration is not disabled (Apple raises).
    ///
    /// Related Core Data documentation: [enableUndoRegistration()](https://developer.apple.com/documentation/foundation/undomanager/enableundoregistration())
    open func enableUndoRegistration() {
        guard disableCount > 0 else {
            return reportMisuse("UndoManager.enableUndoRegistration(): registration is not disabled")
        }
        disableCount -= 1
    }

    /// Whether registrations are recorded.
    ///
    /// Related Core Data documentation: [isUndoRegistrationEnabled](https://developer.apple.com/documentation/foundation/undomanager/isundoregistrationenabled)
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    // MARK: Checkpoints

    /// Lets clients record pending changes, then posts ``NSNotification/Name/NSUndoManagerCheckpoint``.
    private func checkpoint() {
        checkpointClients.removeAll { $0.client == nil }
        for box in checkpointClients { box.client?._undoManagerCheckpoint(self) }
        NotificationCenter.default.post(name: .NSUndoManagerCheckpoint, object: self)
    }

    /// Adds a client told of each checkpoint before observers of the notification (held weakly).
    package func _addCheckpointClient(_ client: any UndoCheckpointClient) {
        guard !checkpointClients.contains(where: { $0.client === client }) else { return }
        checkpointClients.append(WeakCheckpointClient(client: client))
    }

    /// Removes a client added with ``_addCheckpointClient(_:)``.
    package func _removeCheckpointClient(_ client: any UndoCheckpointClient) {
        checkpointClients.removeAll { $0.client == nil || $0.client === client }
    }
}

/// A client an ``UndoManager`` tells of each checkpoint (a context records its pending changes).
package protocol UndoCheckpointClient: AnyObject {
    func _undoManagerCheckpoint(_ undoManager: UndoManager)
}

private struct WeakCheckpointClient {
    weak var client: (any UndoCheckpointClient)?
}

/// Tells whether code runs on the main queue: where the main thread does not drain it (a test
/// runner, a program blocked in a call), main-actor code runs on the main queue from another thread.
private enum MainQueueMark {
    static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// The close of an event's group, scheduled on a run loop or the main queue.
///
/// `@unchecked Sendable` invariant: `run()` executes where the manager was used when it was
/// scheduled (the main queue, or the registering thread's run loop).
private final class ScheduledClose: @unchecked Sendable {
    weak var manager: UndoManager?
    let number: Int
    init(manager: UndoManager, number: Int) {
        self.manager = manager
        self.number = number
    }
    func run() { manager?.endEvent(number) }
}

/// The user-info key of ``NSNotification/Name/NSUndoManagerWillCloseUndoGroup`` telling that the
/// group is discardable.
///
/// Related Core Data documentation: [NSUndoManagerGroupIsDiscardableKey](https://developer.apple.com/documentation/foundation/nsundomanagergroupisdiscardablekey)
public let NSUndoManagerGroupIsDiscardableKey = "NSUndoManagerGroupIsDiscardableKey"

extension NSNotification.Name {
    /// Posted when an undo manager opens or closes a group (except when it opens a top-level one),
    /// before undo and redo, and when ``UndoManager/canRedo`` is asked.
    ///
    /// Related Core Data documentation: [NSUndoManagerCheckpoint](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagercheckpoint)
    public static let NSUndoManagerCheckpoint = Notification.Name("NSUndoManagerCheckpointNotification")
    /// Posted before an undo manager undoes a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerWillUndoChange](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerwillundochange)
    public static let NSUndoManagerWillUndoChange = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after an undo manager undid a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerDidUndoChange](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerdidundochange)
    public static let NSUndoManagerDidUndoChange = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before an undo manager redoes a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerWillRedoChange](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerwillredochange)
    public static let NSUndoManagerWillRedoChange = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after an undo manager redid a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerDidRedoChange](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerdidredochange)
    public static let NSUndoManagerDidRedoChange = Notification.Name("NSUndoManagerDidRedoChangeNotification")
    /// Posted when an undo manager opened a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerDidOpenUndoGroup](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerdidopenundogroup)
    public static let NSUndoManagerDidOpenUndoGroup = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before an undo manager closes a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerWillCloseUndoGroup](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerwillcloseundogroup)
    public static let NSUndoManagerWillCloseUndoGroup = Notification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after an undo manager closed a group.
    ///
    /// Related Core Data documentation: [NSUndoManagerDidCloseUndoGroup](https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsundomanagerdidcloseundogroup)
    public static let NSUndoManagerDidCloseUndoGroup = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
}

extension UndoManager {
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerCheckpoint``.
    public static let checkpointNotification = NSNotification.Name.NSUndoManagerCheckpoint
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerWillUndoChange``.
    public static let willUndoChangeNotification = NSNotification.Name.NSUndoManagerWillUndoChange
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerDidUndoChange``.
    public static let didUndoChangeNotification = NSNotification.Name.NSUndoManagerDidUndoChange
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerWillRedoChange``.
    public static let willRedoChangeNotification = NSNotification.Name.NSUndoManagerWillRedoChange
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerDidRedoChange``.
    public static let didRedoChangeNotification = NSNotification.Name.NSUndoManagerDidRedoChange
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerDidOpenUndoGroup``.
    public static let didOpenUndoGroupNotification = NSNotification.Name.NSUndoManagerDidOpenUndoGroup
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerWillCloseUndoGroup``.
    public static let willCloseUndoGroupNotification = NSNotification.Name.NSUndoManagerWillCloseUndoGroup
    /// The newer Swift spelling of ``NSNotification/Name/NSUndoManagerDidCloseUndoGroup``.
    public static let didCloseUndoGroupNotification = NSNotification.Name.NSUndoManagerDidCloseUndoGroup
    /// The user-info key of ``NSNotification/Name/NSUndoManagerWillCloseUndoGroup`` telling that the
    /// group is discardable.
    public static let groupIsDiscardableUserInfoKey = NSUndoManagerGroupIsDiscardableKey
}
