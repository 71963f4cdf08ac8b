public import KilnCore
import _KilnSynchronization

/// A `Query` for tests: counts its loads, returns scripted results and can hold
/// loads in flight until the test releases them.
///
/// ```swift
/// let network = SpyQuery<Int, any Error>(results: [.failure(TestError("offline")), .success(42)])
/// network.hold()                                   // loads park until release()
/// let first = Task { try await network.serial().load() }
/// await network.waitForLoads(1)                    // the load is in flight
/// network.release()
/// ```
///
/// Each load takes the next scripted result when it **starts**; once the script is used
/// up, the last result repeats. A load parked by ``hold()`` that is cancelled stops
/// waiting at once: it throws `CancellationError` when `Failure` can hold one (`any
/// Error`), otherwise it returns its scripted result. Either way it counts in
/// ``cancelledCount``.
public final class SpyQuery<Success: Sendable, Failure: Error>: Query, Sendable {
  private struct State {
    var calls = 0
    var completed = 0
    var cancelled = 0
  }

  private let respond: @Sendable (_ call: Int) -> Result<Success, Failure>
  private let state = KilnMutex(State())
  private let started = AsyncCounter()
  private let finished = AsyncCounter()
  private let inFlight = AsyncCounter()
  private let gate = Gate(isOpen: true)

  /// Creates a spy whose `n`-th load (counting from 1) returns `respond(n)`.
  public init(_ respond: @escaping @Sendable (_ call: Int) -> Result<Success, Failure>) {
    self.respond = respond
  }

  /// Creates a spy whose every load returns `result`.
  public convenience init(_ result: Result<Success, Failure>) {
    self.init { _ in result }
  }

  /// Creates a spy whose loads return `results` in order, then repeat the last one.
  ///
  /// - Precondition: `results` is not empty.
  public convenience init(results: [Result<Success, Failure>]) {
    precondition(!results.isEmpty, "a SpyQuery needs at least one scripted result")
    self.init { call in results[min(call, results.count) - 1] }
  }

  /// How many loads have started.
  public var loadCount: Int {
    started.value
  }

  /// How many loads have returned or thrown.
  public var completedCount: Int {
    finished.value
  }

  /// How many loads are running now (started, not yet finished).
  public var inFlightCount: Int {
    inFlight.value
  }

  /// How many loads saw their task cancelled while parked at the hold.
  public var cancelledCount: Int {
    state.withLock { $0.cancelled }
  }

  /// Parks later loads (and loads already parked) until ``release()``.
  public func hold() {
    gate.close()
  }

  /// Lets every parked load go on, and later loads run straight through.
  public func release() {
    gate.open()
  }

  /// Suspends until at least `count` loads have started (or the test is cancelled).
  public func waitForLoads(_ count: Int) async {
    await started.wait(untilAtLeast: count)
  }

  /// Suspends until at least `count` loads have finished (or the test is cancelled).
  public func waitForCompletions(_ count: Int) async {
    await finished.wait(untilAtLeast: count)
  }

  public func load() async throws(Failure) -> Success {
    let call = state.withLock { state in
      state.calls += 1
      return state.calls
    }
    let result = respond(call)
    inFlight.increment()
    started.increment()
    defer {
      inFlight.decrement()
      finished.increment()
    }
    do {
      try await gate.wait()
    } catch {
      state.withLock { $0.cancelled += 1 }
      if let cancellation = error as? Failure { throw cancellation }
    }
    return try result.get()
  }
}
