/// Where ``StoreFlowable/requireData(from:)`` and ``StoreFlowable/getData(from:)`` get data.
public enum GettingFrom: Hashable, Sendable {
  /// Valid cached data, else fetched data (the default).
  case both
  /// Fetched data only: always fetches.
  case origin
  /// Valid cached data only: never fetches.
  case cache
}

/// The error of ``StoreFlowable/requireData(from:)`` when there is no valid cached data to
/// return from ``GettingFrom/cache``.
public struct NoSuchElementError: Error, Hashable, Sendable, CustomStringConvertible {
  /// Creates the error.
  public init() {}

  public var description: String { "NoSuchElementError: no valid cached data" }
}
