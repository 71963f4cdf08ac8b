import Testing

/// Polls `condition` every millisecond until it holds, for at most `timeout`; records an
/// issue when it never does.
///
/// Never a loop on `Task.yield()`: that holds a thread of the cooperative pool (two on a
/// two-core machine) while it waits, and a suite's time limit cannot stop it when the
/// condition never comes true.
func waitUntil(
  timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async {
  let deadline = ContinuousClock.now.advanced(by: timeout)
  while !condition() {
    guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(1))) != nil else {
      Issue.record("the condition did not come true within \(timeout)", sourceLocation: sourceLocation)
      return
    }
  }
}
