/// Runs a fresh query per call, built from a parameter: an action such as "like this
/// article" or "send this message".
///
/// ```swift
/// let like = Command { (id: Article.ID) in LikeRequest(articleID: id) }
///
/// let count = try await like.execute(article.id)          // async
/// like.execute(article.id) { result in print(result) }    // or with a completion
/// ```
///
/// Each call builds a new query and runs it to its end — concurrent calls are independent.
/// ``executingCount`` tells how many calls are running, for a spinner or a disabled button.
public actor Command<Parameter: Sendable, Value: Sendable, Failure: Error> {
  private let run: @Sendable (Parameter) async throws(Failure) -> Value

  /// The number of executions running now.
  public private(set) var executingCount = 0

  /// Creates a command that builds the query of each call with `query`.
  ///
  /// - Parameter query: Builds the query that one call of ``execute(_:)`` runs.
  public init<Action: Query>(_ query: @escaping @Sendable (Parameter) -> Action)
  where Action.Success == Value, Action.Failure == Failure {
    run = { (parameter) async throws(Failure) -> Value in try await query(parameter).load() }
  }

  /// Whether an execution is running now.
  public var isExecuting: Bool {
    executingCount > 0
  }

  /// Builds a new query for `parameter` and loads it.
  ///
  /// - Parameter parameter: What to build the query from.
  /// - Returns: The query's value.
  /// - Throws: The query's failure.
  public func execute(_ parameter: Parameter) async throws(Failure) -> Value {
    executingCount += 1
    defer { executingCount -= 1 }
    return try await run(parameter)
  }

  /// Builds a new query for `parameter`, loads it in a new task and delivers the outcome to
  /// `completion`.
  ///
  /// The task keeps the query alive until it completes; `completion` is called exactly once,
  /// also when the task is cancelled (with what the cancelled query returns).
  ///
  /// - Parameters:
  ///   - parameter: What to build the query from.
  ///   - priority: The priority of the task; `nil` for the default.
  ///   - completion: Called once with the outcome, on no particular executor.
  /// - Returns: The task running the query; cancel it to cancel the query.
  @discardableResult
  public nonisolated func execute(
    _ parameter: Parameter,
    priority: TaskPriority? = nil,
    completion: @escaping @Sendable (Result<Value, Failure>) -> Void
  ) -> Task<Void, Never> {
    Task(priority: priority) {
      let result: Result<Value, Failure>
      do throws(Failure) {
        result = .success(try await self.execute(parameter))
      } catch {
        result = .failure(error)
      }
      completion(result)
    }
  }
}
