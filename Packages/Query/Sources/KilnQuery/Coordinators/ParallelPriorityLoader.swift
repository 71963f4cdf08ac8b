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
/// cancelled and left to finish on their own once the load has its outcome. The loader is a
/// value holding no mutable state: each load decides its outcome with its own
/// state machine, so concurrent loads never wait for each other.
public struct ParallelPriorityLoader<Value: Sendable, ItemFailure: Error>: Query, Sendable {
  public typealias Success = [Value?]
  public typealias Failure = ParallelPriorityLoaderError<ItemFailure>

  /// The items, in the order of the loaded values.
  public let items: [PriorityItem<Value, ItemFailure>]

  /// The lowest priority an item must have to be mandatory.
  public let mandatoryPriority: ParallelPriority

  /// How long a load may take; `nil` for no limit.
  public let timeout: Duration?

  /// The clock the time limit is measured on.
  public let clock: any Clock<Duration>

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
  public func load() async throws(Failure) -> Success {
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

/// Shares one load's ``ParallelPriorityStateMachine`` between the item tasks and the timer.
private final class Collector<Value: Sendable, Failure: Error>: Sendable {
  typealias Outcome = ParallelPriorityStateMachine<Value, Failure>.Outcome

  private let machine: KilnMutex<ParallelPriorityStateMachine<Value, Failure>>

  init(mandatory: [Bool]) {
    machine = KilnMutex(ParallelPriorityStateMachine(mandatory: mandatory))
  }

  func outcomeWithoutItems() -> Outcome? {
    machine.withLock { $0.outcomeWithoutItems() }
  }

  func record(_ result: Result<Value, Failure>, at index: Int) -> Outcome? {
    machine.withLock { $0.record(result, at: index) }
  }

  func timeLimitReached() -> Outcome? {
    machine.withLock { $0.timeLimitReached() }
  }
}
