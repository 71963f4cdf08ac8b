extension Query {
  /// Loads once and returns the outcome as a `Result` instead of throwing.
  ///
  /// ```swift
  /// switch await articles.result() {
  /// case .success(let list): show(list)
  /// case .failure(let error): show(error)
  /// }
  /// ```
  ///
  /// - Returns: `.success` with the loaded value, or `.failure` with the typed error.
  @inlinable
  public func result() async -> Result<Success, Failure> {
    do throws(Failure) {
      return .success(try await load())
    } catch {
      return .failure(error)
    }
  }

  /// Starts a load in a new task and delivers its outcome to `completion`.
  ///
  /// This is the callback form for code that is not `async` yet. The completion is called
  /// **exactly once** — also when the returned task is cancelled: the query then sees the
  /// cancellation like any other load and its outcome (typically `CancellationError` for
  /// an `any Error` failure) is delivered.
  ///
  /// ```swift
  /// let task = articles.load { result in
  ///   Task { @MainActor in render(result) }
  /// }
  /// // later, when the screen goes away:
  /// task.cancel()
  /// ```
  ///
  /// - Parameters:
  ///   - priority: The priority of the task that runs the load; `nil` uses the default.
  ///   - completion: Called once with the outcome, on no particular executor: hop to the
  ///     main actor yourself when you update UI.
  /// - Returns: The task that runs the load. Cancel it to cancel the load; await its
  ///   `value` to know the completion has returned.
  @inlinable
  @discardableResult
  public func load(
    priority: TaskPriority? = nil,
    completion: @escaping @Sendable (Result<Success, Failure>) -> Void
  ) -> Task<Void, Never> {
    Task(priority: priority) {
      completion(await self.result())
    }
  }

  /// Wraps this query in an ``AnyQuery`` to hide its concrete type.
  ///
  /// - Returns: A type-erased query with the same success and failure types.
  @inlinable
  public func eraseToAnyQuery() -> AnyQuery<Success, Failure> {
    AnyQuery(self)
  }
}
