import KilnRepository
import KilnRepositoryTesting
import KilnTesting

/// A fetcher answering from a closure, counting its calls.
struct CountingFetcher<Value: Sendable>: Fetcher {
  let calls = AsyncCounter()
  let body: @Sendable (String) async throws -> Value

  init(_ body: @escaping @Sendable (String) async throws -> Value) {
    self.body = body
  }

  func fetch(param: String) async throws -> Value {
    calls.increment()
    return try await body(param)
  }
}

/// Completed with no more pages either way.
func completed<Content: Sendable>(_ content: Content) -> LoadingState<Content> {
  .completed(
    content: content, next: .fixed(canRequestAdditionalData: false), prev: .fixed(canRequestAdditionalData: false))
}

/// The recorder these tests had before KilnRepositoryTesting, under the names
/// ReleaseTimingTests still uses: a `LoadingStateRecorder` with `wait(for:)` and `cancel()`.
struct Subscriber<Content: Sendable>: Sendable {
  let recorder: LoadingStateRecorder<Content>

  init(_ sequence: LoadingStateSequence<Content>) {
    recorder = LoadingStateRecorder(sequence)
  }

  /// ``LoadingStateRecorder/waitForCount(_:timeout:fileID:filePath:line:column:)``.
  func wait(
    for count: Int, fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> [LoadingState<Content>] {
    await recorder.waitForCount(count, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// ``LoadingStateRecorder/stop()``.
  func cancel() async {
    await recorder.stop()
  }
}
