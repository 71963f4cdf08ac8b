/// An asynchronous operation that produces one value or fails with a typed error.
///
/// `Query` is the unit every Kiln piece composes: a network request, a cache read, a
/// database lookup or a whole pipeline of decorators is a `Query`. Each call of
/// ``load()`` performs the work once; decorators in `KilnQuery` wrap one query in
/// another (`.map`, `.fallback`, `.retry`, `.serial()` …) without changing this shape.
///
/// ```swift
/// struct ArticleQuery: Query {
///   let id: Int
///   func load() async throws(any Error) -> Article {
///     try await api.article(id: id)
///   }
/// }
///
/// let article = try await ArticleQuery(id: 7).load()
/// ```
///
/// ## Typed failures
///
/// `Failure` keeps the precise error type through a pipeline. Everyday code uses
/// `any Error`; a concrete error type is opt-in. A conforming type that throws nothing
/// uses `Never`:
///
/// ```swift
/// struct Constant: Query {
///   func load() async -> Int { 42 }    // Failure == Never
/// }
/// ```
///
/// ## Cancellation
///
/// A query runs in its caller's task and should honour cancellation: stop work as soon as
/// it can and, when `Failure` can represent it, throw `CancellationError`. A query whose
/// `Failure` cannot represent cancellation returns or throws whatever it has instead; it
/// never hangs.
public protocol Query<Success, Failure>: Sendable {
  /// The value a successful load produces.
  associatedtype Success: Sendable

  /// The error a failed load throws. `Never` for queries that cannot fail.
  associatedtype Failure: Error

  /// Performs the work once and returns its value.
  ///
  /// - Returns: The loaded value.
  /// - Throws: `Failure` when the load fails. Queries whose `Failure` is `any Error`
  ///   throw `CancellationError` when their task is cancelled.
  func load() async throws(Failure) -> Success
}
