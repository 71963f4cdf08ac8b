import _KilnSynchronization

/// Forwards a transport's progress for one attempt, never backwards.
final class ProgressReporter: Sendable {
  private let attempt: Int
  private let report: @Sendable (DownloadProgress) -> Void
  private let received = KilnMutex<Int64>(-1)

  init(attempt: Int, report: @escaping @Sendable (DownloadProgress) -> Void) {
    self.attempt = attempt
    self.report = report
  }

  func callAsFunction(_ receivedBytes: Int64, _ expectedBytes: Int64?) {
    let isNew = received.withLock { received in
      guard receivedBytes > received else { return false }
      received = receivedBytes
      return true
    }
    if isNew {
      report(DownloadProgress(attempt: attempt, receivedBytes: receivedBytes, expectedBytes: expectedBytes))
    }
  }
}
