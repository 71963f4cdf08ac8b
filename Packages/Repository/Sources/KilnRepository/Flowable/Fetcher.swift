/// Fetches the data of a param from its origin (a server, a database…).
///
/// ```swift
/// struct UserFetcher: Fetcher {
///   func fetch(param: UserID) async throws -> User { try await api.user(param) }
/// }
/// ```
public protocol Fetcher<Param, Data>: Sendable {
  /// What identifies the data; `UnitParam` when there is one datum.
  associatedtype Param: Hashable & Sendable
  /// The fetched data.
  associatedtype Data: Sendable

  /// Fetches the data of `param`.
  ///
  /// - Parameter param: The param to fetch.
  /// - Returns: The data.
  /// - Throws: Whatever the origin throws; the repository keeps its content and reports it.
  func fetch(param: Param) async throws -> Data
}

/// The param of a repository holding a single datum.
public struct UnitParam: Hashable, Sendable, Codable {
  /// The one unit param.
  public init() {}
}

/// A ``Fetcher`` made of a closure.
///
/// ```swift
/// let fetcher = AnyFetcher<UserID, User> { id in try await api.user(id) }
/// ```
public struct AnyFetcher<Param: Hashable & Sendable, Data: Sendable>: Fetcher {
  private let body: @Sendable (Param) async throws -> Data

  /// Creates a fetcher calling `fetch`.
  public init(_ fetch: @escaping @Sendable (Param) async throws -> Data) {
    body = fetch
  }

  /// Calls the closure.
  public func fetch(param: Param) async throws -> Data {
    try await body(param)
  }
}
