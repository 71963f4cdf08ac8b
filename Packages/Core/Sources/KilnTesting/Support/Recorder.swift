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
  private let count = AsyncCounter()

  /// Creates an empty recorder.
  public init() {}

  /// Records `element`.
  public func append(_ element: Element) {
    storage.withLock { storage in
      storage.append(element)
      count.increment()
    }
  }

  /// Everything recorded so far, in order.
  public var values: [Element] {
    storage.withLock { $0 }
  }

  /// Suspends until at least `count` values are recorded (or the test is cancelled).
  public func waitForCount(_ count: Int) async {
    await self.count.wait(untilAtLeast: count)
  }
}
