public import Dispatch

/// Runs an async function in a new task and hands its result to a completion handler on
/// `queue`: a callback API on top of async code.
///
/// ```swift
/// func loadProfile(completion: @escaping @Sendable (Result<Profile, any Error>) -> Void) {
///   runAsync(deliverOn: callbackQueue) {
///     try await api.profile()
///   } completion: { result in
///     completion(result)
///   }
/// }
/// ```
///
/// - Parameters:
///   - priority: The priority of the task; by default the caller's.
///   - queue: The queue the completion handler runs on.
///   - operation: The async work; runs on its own actor if it has one.
///   - completion: Receives the outcome, exactly once, asynchronously on `queue`.
/// - Returns: The task running `operation`. Cancelling it cancels `operation`, which
///   decides how to end; `completion` still runs once, with whatever `operation` produced
///   (typically a `CancellationError`).
@discardableResult
public func runAsync<Success: Sendable, Failure: Error>(
  priority: TaskPriority? = nil,
  deliverOn queue: DispatchQueue,
  _ operation: sending @escaping @isolated(any) () async throws(Failure) -> Success,
  completion: @escaping @Sendable (Result<Success, Failure>) -> Void
) -> Task<Void, Never> {
  Task(priority: priority) {
    let result = await outcome(of: operation)
    queue.async { completion(result) }
  }
}

/// Runs an async function in a new task and hands its result to a completion handler on
/// the main actor.
///
/// ```swift
/// runAsync {
///   try await api.profile()
/// } completion: { result in
///   profileView.show(result)      // main actor
/// }
/// ```
///
/// - Parameters:
///   - priority: The priority of the task; by default the caller's.
///   - operation: The async work; runs on its own actor if it has one.
///   - completion: Receives the outcome, exactly once, asynchronously on the main queue.
/// - Returns: The task running `operation`. Cancelling it cancels `operation`;
///   `completion` still runs once, with whatever `operation` produced.
@discardableResult
public func runAsync<Success: Sendable, Failure: Error>(
  priority: TaskPriority? = nil,
  _ operation: sending @escaping @isolated(any) () async throws(Failure) -> Success,
  completion: @escaping @MainActor (Result<Success, Failure>) -> Void
) -> Task<Void, Never> {
  Task(priority: priority) {
    let result = await outcome(of: operation)
    DispatchQueue.main.async { MainActor.assumeIsolated { completion(result) } }
  }
}

private func outcome<Success: Sendable, Failure: Error>(
  of operation: @isolated(any) () async throws(Failure) -> Success
) async -> Result<Success, Failure> {
  do throws(Failure) {
    return .success(try await operation())
  } catch {
    return .failure(error)
  }
}
