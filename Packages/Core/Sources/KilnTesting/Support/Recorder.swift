import _KilnSynchronization

/// Collects values from `@Sendable` closures (callbacks, side effects) for a test to check.
///
/// ```swift
/// let seen = Recorder<Int>()
/// let query = source.notify(onSuccess: { seen.append($0) })
/// _ = try await query.load()
/// #expect(seen.values == [42])
/// ```
public final class Recorder<Element: Sendable>: Sendable {
  private let storage = KilnMutex<[Element]>([])
  private let recorded = AsyncCounter()

  /// Creates an empty recorder.
  public init() {}

  /// Records `element`.
  public func append(_ element: Element) {
    storage.withLock { storage in
      storage.append(element)
      recorded.increment()
    }
  }

  /// Everything recorded so far, in order.
  public var values: [Element] {
    storage.withLock { $0 }
  }

  /// How many values were recorded so far.
  public var count: Int {
    storage.withLock { $0.count }
  }

  /// Suspends until at least `count` values are recorded (or the test is cancelled).
  public func waitForCount(_ count: Int) async {
    await recorded.wait(untilAtLeast: count)
  }

  /// Suspends until at least `count` values are recorded, or `timeout` passes on the
  /// continuous clock.
  ///
  /// For tests of code that runs on real time (GCD timers, threads): the timeout turns a
  /// hang into a failed expectation. Code on an injected clock uses ``waitForCount(_:)``
  /// and the test's time limit instead.
  ///
  /// ```swift
  /// let fired = Recorder<Int>()
  /// queue.asyncAfter(deadline: .now() + 0.1) { fired.append(1) }
  /// #expect(await fired.waitForCount(1, timeout: .seconds(20)))
  /// ```
  ///
  /// - Returns: Whether the values arrived in time (`false` also when the task is cancelled).
  @discardableResult
  public func waitForCount(_ count: Int, timeout: Duration) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
      group.addTask {
        await self.recorded.wait(untilAtLeast: count)
        return self.recorded.value >= count
      }
      group.addTask {
        try? await Task.sleep(for: timeout)
        return false
      }
      let first = await group.next() ?? false
      // Both children return promptly once cancelled: the counter's wait and the sleep
      // both end on cancellation.
      group.cancelAll()
      return first || recorded.value >= count
    }
  }
}
