public import KilnRepository
import KilnTesting
import _KilnSynchronization

/// Subscribes to a `LoadingStateSequence` and keeps every state it sees, in
/// order, for a test to read and wait on.
///
/// ```swift
/// let states = LoadingStateRecorder(flowable.publish())
/// await fetcher.waitForCall(0)
/// fetcher.fail(0, with: TestError("offline"))
/// #expect(await states.waitForCount(2).map(\.isLoading) == [true, false])
/// await states.waitForState { $0.error != nil }
/// await states.stop()
/// ```
///
/// The subscription runs in a task of its own from `init` until ``stop()``, or until the
/// recorder is deinitialised (which cancels it without waiting). Each state is recorded with
/// the origin of its content (``snapshots``), and the snapshots in which only the pending
/// local changes moved are kept too (``snapshots``, ``waitForSnapshot(timeout:fileID:filePath:line:column:where:)``),
/// though not as states: ``states`` is what `publish()` emits.
///
/// The waits are bounded: when what a test waits for has not come within the timeout, the
/// wait records an issue at the caller (with Swift Testing) and returns what it has, so a
/// missing state fails the test where it was expected instead of hanging it until its time
/// limit. The timeout runs on the continuous clock, whatever clock the code under test uses.
public final class LoadingStateRecorder<Content: Sendable>: Sendable {
  private let recorded = Recorder<LoadingSnapshot<Content>>()
  /// Every snapshot, the pending-only ones included.
  private let everySnapshot = Recorder<LoadingSnapshot<Content>>()
  private let subscription: KilnMutex<Task<Void, Never>?> = KilnMutex(nil)
  private let ended = AsyncCounter()
  private let timeout: Duration

  /// Subscribes to `states` and starts recording.
  ///
  /// - Parameters:
  ///   - states: The states to record, usually a flowable's `publish()`.
  ///   - timeout: How long the waits wait by default before they record an issue. 30 seconds
  ///     by default.
  public init(_ states: LoadingStateSequence<Content>, timeout: Duration = .seconds(30)) {
    self.timeout = timeout
    let recorded = self.recorded
    let everySnapshot = self.everySnapshot
    let ended = self.ended
    // The task holds what it writes to, never the recorder, so that dropping the recorder
    // deinitialises it and cancels the subscription.
    let task = Task {
      for await snapshot in states.withOrigin() {
        if !snapshot.stateUnchanged { recorded.append(snapshot) }
        everySnapshot.append(snapshot)
      }
      ended.increment()
    }
    subscription.withLock { $0 = task }
  }

  deinit {
    subscription.withLock { $0 }?.cancel()
  }

  /// Every state seen so far, in order.
  public var states: [LoadingState<Content>] { recorded.values.map(\.state) }

  /// Every snapshot seen so far, in order: each state with the origin of its content, and
  /// the snapshots in which only their `pending` status moved.
  public var snapshots: [LoadingSnapshot<Content>] { everySnapshot.values }

  /// How many states were seen so far.
  public var count: Int { recorded.count }

  /// Whether the subscription has ended (stopped, or its sequence finished).
  public var hasEnded: Bool { ended.value > 0 }

  /// Suspends until at least `count` states have been seen, and returns every state seen so
  /// far (which may be more than `count`).
  ///
  /// When fewer have come within `timeout` (or the waiting task is cancelled), records an
  /// issue at the caller and returns the states seen.
  ///
  /// - Parameters:
  ///   - count: The number of states to wait for.
  ///   - timeout: How long to wait; the recorder's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  /// - Returns: Every state seen so far, in order.
  @discardableResult
  public func waitForCount(
    _ count: Int, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> [LoadingState<Content>] {
    let timeout = timeout ?? self.timeout
    if !(await recorded.waitForCount(count, timeout: timeout)) {
      let states = self.states
      CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column).recordIssue(
        "The LoadingStateRecorder saw \(states.count) of \(count) states within \(timeout): \(states)")
      return states
    }
    return states
  }

  /// Suspends until a state that `predicate` accepts has been seen (at any time since the
  /// recorder started), and returns the first such state.
  ///
  /// When none has come within `timeout` (or the waiting task is cancelled), records an issue
  /// at the caller and returns `nil`.
  ///
  /// - Parameters:
  ///   - timeout: How long to wait; the recorder's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  ///   - predicate: The state to wait for.
  /// - Returns: The first state seen that `predicate` accepts, or `nil`.
  @discardableResult
  public func waitForState(
    timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column,
    where predicate: (LoadingState<Content>) -> Bool
  ) async -> LoadingState<Content>? {
    let timeout = timeout ?? self.timeout
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var checked = 0
    while true {
      let states = self.states
      if let match = states[checked...].first(where: predicate) { return match }
      checked = states.count
      let remaining = ContinuousClock.now.duration(to: deadline)
      // Event-driven: wake at the next state, not on a timer.
      let more = remaining > .zero ? await recorded.waitForCount(checked + 1, timeout: remaining) : false
      if !more {
        if let match = self.states[checked...].first(where: predicate) { return match }
        CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column).recordIssue(
          "The LoadingStateRecorder saw no matching state within \(timeout): \(self.states)")
        return nil
      }
    }
  }

  /// Suspends until a snapshot that `predicate` accepts has been seen (at any time since the
  /// recorder started), pending-only snapshots included, and returns the first one.
  ///
  /// When none has come within `timeout`, records an issue at the caller and returns `nil`.
  ///
  /// - Parameters:
  ///   - timeout: How long to wait; the recorder's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  ///   - predicate: The snapshot to wait for.
  /// - Returns: The first snapshot seen that `predicate` accepts, or `nil`.
  @discardableResult
  public func waitForSnapshot(
    timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column,
    where predicate: (LoadingSnapshot<Content>) -> Bool
  ) async -> LoadingSnapshot<Content>? {
    let timeout = timeout ?? self.timeout
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var checked = 0
    while true {
      let snapshots = everySnapshot.values
      if let match = snapshots[checked...].first(where: predicate) { return match }
      checked = snapshots.count
      let remaining = ContinuousClock.now.duration(to: deadline)
      let more = remaining > .zero ? await everySnapshot.waitForCount(checked + 1, timeout: remaining) : false
      if !more {
        if let match = everySnapshot.values[checked...].first(where: predicate) { return match }
        CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column).recordIssue(
          "The LoadingStateRecorder saw no matching snapshot within \(timeout): \(everySnapshot.values)")
        return nil
      }
    }
  }

  /// Cancels the subscription and waits for its sequence to end.
  ///
  /// The states seen stay readable. Stopping twice is harmless.
  public func stop() async {
    subscription.withLock { $0 }?.cancel()
    await ended.wait(untilAtLeast: 1)
  }
}
