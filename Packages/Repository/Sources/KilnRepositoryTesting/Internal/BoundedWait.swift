import KilnTesting

#if canImport(Testing)
  import Testing
#endif

/// Where a helper was called from, for the issue a wait that ran out records.
struct CallerLocation: Sendable {
  var fileID: String
  var filePath: String
  var line: Int
  var column: Int

  /// Records an issue at this location (with Swift Testing, where it can be imported).
  func recordIssue(_ message: String) {
    #if canImport(Testing)
      Issue.record(
        Comment(rawValue: message),
        sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    #endif
  }
}

/// Suspends until `counter` is at least `threshold`, for at most `timeout` on the continuous
/// clock.
///
/// Event-driven: the counter wakes the waiter; the timeout is one sleep racing it, not polling.
///
/// - Returns: Whether the counter got there (`false` too when the waiting task is cancelled).
func wait(for counter: AsyncCounter, toReach threshold: Int, timeout: Duration) async -> Bool {
  if counter.value >= threshold { return true }
  return await withTaskGroup(of: Bool.self) { group in
    group.addTask {
      await counter.wait(untilAtLeast: threshold)
      return counter.value >= threshold
    }
    group.addTask {
      try? await Task.sleep(for: timeout)
      return false
    }
    let first = await group.next() ?? false
    // Both children end promptly once cancelled: the counter's wait and the sleep.
    group.cancelAll()
    return first || counter.value >= threshold
  }
}

/// Like ``wait(for:toReach:timeout:)``, and records an issue at `location` when the counter did
/// not get there.
func expectWait(
  for counter: AsyncCounter, toReach threshold: Int, timeout: Duration, _ what: @autoclosure () -> String,
  at location: CallerLocation
) async -> Bool {
  if await wait(for: counter, toReach: threshold, timeout: timeout) { return true }
  location.recordIssue("\(what()) within \(timeout)\(Task.isCancelled ? " (the waiting task was cancelled)" : "")")
  return false
}
