import _KilnSynchronization

/// Loads several queries in parallel and succeeds as soon as every mandatory one is in.
///
/// ```swift
/// let page = ParallelPriorityLoader(
///   [
///     MainSection().prioritized(.required),
///     Recommendations().prioritized(.optional),
///     Trending().prioritized(.optional),
///   ],
///   timeout: .seconds(5)
/// )
///
/// do throws(ParallelPriorityLoaderError<any Error>) {
///   let sections = try await page.load()    // [Section?], in item order
///   render(main: sections[0]!, recommended: sections[1], trending: sections[2])
/// } catch .timeout {
///   showTimeout()
/// } catch {
///   showError(error)
/// }
/// ```
///
/// Each load starts every item at once, then:
/// - succeeds **as soon as every mandatory item** (priority at or above `mandatoryPriority`)
///   has a value. Optional items that finished by then are included, the others are `nil`
///   (and cancelled); a failed optional item is `nil`. Values are in item order.
/// - fails with ``ParallelPriorityLoaderError/mandatoryFailed(index:failure:)`` as soon as a
///   mandatory item fails;
/// - fails with ``ParallelPriorityLoaderError/timeout`` when the time limit passes first.
///
/// With no mandatory item at all, a load waits for every item, or — at the time limit —
/// succeeds with those that are in.
///
/// A load returns on time even if an item ignores cancellation: items run in their own tasks,
/// cancelled and left to finish on their own once the load has its outcome. The loader holds
/// no mutable state, so every load is independent and concurrent loads never wait for each
/// other.
public actor ParallelPriorityLoader<Value: Sendable, ItemFailure: Error>: Query {
  public typealias Success = [Value?]
  public typealias Failure = ParallelPriorityLoaderError<ItemFailure>

  /// The items, in the order of the loaded values.
  public nonisolated let items: [PriorityItem<Value, ItemFailure>]

  /// The lowest priority an item must have to be mandatory.
  public nonisolated let mandatoryPriority: ParallelPriority

  /// How long a load may take; `nil` for no limit.
  public nonisolated let timeout: Duration?

  /// The clock the time limit is measured on.
  public nonisolated let clock: any Clock<Duration>

  /// Creates a loader.
  ///
  /// - Parameters:
  ///   - items: The queries to load, with their priorities.
  ///   - mandatoryPriority: Items at or above it must load; `.required` by default.
  ///   - timeout: How long a load may take; `nil` for no limit.
  ///   - clock: The clock the time limit is measured on; pass a `ManualClock` in tests.
  public init(
    _ items: [PriorityItem<Value, ItemFailure>],
    mandatoryPriority: ParallelPriority = .required,
    timeout: Duration? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.items = items
    self.mandatoryPriority = mandatoryPriority
    self.timeout = timeout
    self.clock = clock
  }

  /// Loads every item in parallel until every mandatory item is in.
  ///
  /// - Returns: One value per item, in item order; `nil` for an optional item that failed or
  ///   was not in on time.
  /// - Throws: ``ParallelPriorityLoaderError/mandatoryFailed(index:failure:)``,
  ///   ``ParallelPriorityLoaderError/timeout`` or ``ParallelPriorityLoaderError/cancelled``.
  public nonisolated func load() async throws(Failure) -> Success {
    let mandatory = items.map { $0.priority >= mandatoryPriority }
    let collector = Collector<Value, ItemFailure>(mandatory: mandatory)
    if let done = collector.outcomeWithoutItems() { return try done.get() }

    let race = Race<Result<Success, Failure>>()
    for (index, item) in items.enumerated() {
      let query = item.query
      race.track(
        Task {
          let result = await query.result()
          if let outcome = collector.record(result, at: index) { race.resolve(outcome) }
        }
      )
    }
    if let timeout {
      let clock = clock
      race.track(
        Task {
          do {
            try await clock.sleep(for: timeout)
          } catch {
            return  // the load has its outcome, or the caller was cancelled
          }
          if let outcome = collector.timeLimitReached() { race.resolve(outcome) }
        }
      )
    }
    return try await race.wait { .failure(.cancelled) }.get()
  }
}

extension Sequence {
  /// Loads these items in parallel and returns as soon as every mandatory one is in.
  ///
  /// ```swift
  /// let sections = try await [main.prioritized(.required), ads.prioritized(.optional)]
  ///   .loadMandatory(mandatoryPriority: .required, timeout: .seconds(5))
  /// ```
  ///
  /// - Parameters:
  ///   - mandatoryPriority: Items at or above it must load.
  ///   - timeout: How long the load may take; `nil` for no limit.
  ///   - clock: The clock the time limit is measured on.
  /// - Returns: One value per item, in order; `nil` for an optional item that failed or was
  ///   not in on time.
  /// - Throws: See ``ParallelPriorityLoader/load()``.
  public func loadMandatory<Value, ItemFailure>(
    mandatoryPriority: ParallelPriority = .required,
    timeout: Duration? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) async throws(ParallelPriorityLoaderError<ItemFailure>) -> [Value?]
  where Element == PriorityItem<Value, ItemFailure> {
    try await ParallelPriorityLoader(
      Array(self),
      mandatoryPriority: mandatoryPriority,
      timeout: timeout,
      clock: clock
    ).load()
  }
}

/// Gathers the items' outcomes of one load and decides, exactly once, how the load ends.
private final class Collector<Value: Sendable, Failure: Error>: Sendable {
  typealias Outcome = Result<[Value?], ParallelPriorityLoaderError<Failure>>

  private struct State {
    let mandatory: [Bool]
    let hasMandatory: Bool
    var values: [Value?]
    var mandatoryLeft: Int
    var itemsLeft: Int
    var isDecided = false
  }

  private let state: KilnMutex<State>

  init(mandatory: [Bool]) {
    state = KilnMutex(
      State(
        mandatory: mandatory,
        hasMandatory: mandatory.contains(true),
        values: Array(repeating: nil, count: mandatory.count),
        mandatoryLeft: mandatory.count { $0 },
        itemsLeft: mandatory.count
      )
    )
  }

  /// The outcome of a load of no items: success with no values.
  func outcomeWithoutItems() -> Outcome? {
    state.withLock { $0.itemsLeft == 0 ? .success([]) : nil }
  }

  /// Records item `index`'s outcome; returns the load's outcome when this decides it.
  func record(_ result: Result<Value, Failure>, at index: Int) -> Outcome? {
    state.withLock { state in
      guard !state.isDecided else { return nil }
      state.itemsLeft -= 1
      switch result {
      case .success(let value):
        state.values[index] = value
        if state.mandatory[index] { state.mandatoryLeft -= 1 }
      case .failure(let failure):
        if state.mandatory[index] {
          state.isDecided = true
          return .failure(.mandatoryFailed(index: index, failure: failure))
        }
      }
      if (state.hasMandatory && state.mandatoryLeft == 0) || state.itemsLeft == 0 {
        state.isDecided = true
        return .success(state.values)
      }
      return nil
    }
  }

  /// Decides the load at its time limit: a timeout while mandatory items are missing,
  /// otherwise success with the items that are in.
  func timeLimitReached() -> Outcome? {
    state.withLock { state in
      guard !state.isDecided else { return nil }
      state.isDecided = true
      return state.mandatoryLeft > 0 ? .failure(.timeout) : .success(state.values)
    }
  }
}
