/// Checks `condition` every `interval` until it holds, for at most `timeout` on the
/// continuous clock.
///
/// For state that another thread or an event loop changes, with no event to await. It
/// sleeps between checks instead of spinning on `Task.yield()`: a spinning test holds a
/// thread of the cooperative pool (two on a two-core machine) for as long as it waits, and
/// a suite's time limit cannot stop it when the condition never comes true.
///
/// ```swift
/// #expect(await poll(timeout: .seconds(30)) { handler.inFlightCount == 0 })
/// ```
///
/// - Parameters:
///   - interval: The time between two checks; 1 ms by default.
///   - timeout: How long to keep checking.
///   - condition: What to wait for.
/// - Returns: Whether `condition` came true in time (`false` also when the task is cancelled).
public func poll(
  every interval: Duration = .milliseconds(1), timeout: Duration, until condition: () -> Bool
) async -> Bool {
  let deadline = ContinuousClock.now.advanced(by: timeout)
  while !condition() {
    guard ContinuousClock.now < deadline, (try? await Task.sleep(for: interval)) != nil else {
      return condition()
    }
  }
  return true
}
