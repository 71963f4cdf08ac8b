public import Foundation
import KilnCore

/// Keeps the data of each param and when it was cached, and decides when it needs a refresh.
///
/// A cacher is storage only: the loading states of its params live in the ``Repository``
/// made over it. Most apps use ``StoreCacher``, which keeps both in any `KeyValueStore` (and
/// ``Repository/init(store:expiration:clock:releaseAfter:abandonedFetch:)`` makes one). A
/// custom cacher implements the four load and save functions:
///
/// ```swift
/// struct UserCacher: Cacher {
///   var expiration: Duration? { .minutes(30) }
///   func loadData(param: UserID) async throws -> User? { … }
///   func saveData(_ data: User?, param: UserID) async throws { … }
///   func loadDataCachedAt(param: UserID) async throws -> Date? { … }
///   func saveDataCachedAt(_ cachedAt: Date?, param: UserID) async throws { … }
/// }
/// let users = Repository(cacher: UserCacher())
/// ```
public protocol Cacher<Param, Data>: Sendable {
  /// What identifies the data.
  associatedtype Param: Hashable & Sendable
  /// The cached data.
  associatedtype Data: Sendable

  /// How long cached data stays valid; `nil` (the default) for forever.
  var expiration: Duration? { get }

  /// The clock that the data's dates come from; a ``Repository`` over this cacher runs its
  /// release delay on it and dates invalidations by it. By default the continuous clock; a
  /// test returns KilnTesting's `ManualClock` and moves everything at once.
  var clock: any Clock<Duration> { get }

  /// The wall clock that stamps and expires data; by default ``clock``'s date (see KilnCore's
  /// `dateProvider(for:)`), so that expiry and invalidation dates agree.
  var now: @Sendable () -> Date { get }

  /// The cached data of `param`, or `nil`.
  func loadData(param: Param) async throws -> Data?

  /// Saves (or, with `nil`, removes) the data of `param`.
  func saveData(_ data: Data?, param: Param) async throws

  /// When the data of `param` was cached, or `nil` when unknown.
  func loadDataCachedAt(param: Param) async throws -> Date?

  /// Saves (or, with `nil`, removes) when the data of `param` was cached.
  func saveDataCachedAt(_ cachedAt: Date?, param: Param) async throws

  /// The data of `param` and when it was cached, in one read when the cacher can.
  func loadCachedData(param: Param) async throws -> CachedData<Data>?

  /// Saves the data of `param` and when it was cached, in one write when the cacher can;
  /// `nil` data removes both.
  func saveCachedData(_ data: Data?, cachedAt: Date?, param: Param) async throws

  /// Whether data cached at `cachedAt` must be fetched again. By default: when
  /// `cachedAt + expiration` is before ``now``; data without a date never expires.
  func needsRefresh(cachedAt: Date?, param: Param) async -> Bool
}

/// Data read from a ``Cacher``, with when it was cached.
public struct CachedData<Data: Sendable>: Sendable {
  /// The data.
  public var data: Data
  /// When it was cached; `nil` when unknown (then it never expires).
  public var cachedAt: Date?

  /// Creates a cached datum.
  public init(data: Data, cachedAt: Date?) {
    self.data = data
    self.cachedAt = cachedAt
  }
}

extension Cacher {
  /// Forever: cached data never expires.
  public var expiration: Duration? { nil }

  /// The continuous clock.
  public var clock: any Clock<Duration> { ContinuousClock() }

  /// ``clock``'s date (see KilnCore's `dateProvider(for:)`).
  public var now: @Sendable () -> Date { dateProvider(for: clock) }

  /// Reads ``loadData(param:)``, then ``loadDataCachedAt(param:)``.
  public func loadCachedData(param: Param) async throws -> CachedData<Data>? {
    guard let data = try await loadData(param: param) else { return nil }
    return CachedData(data: data, cachedAt: try await loadDataCachedAt(param: param))
  }

  /// Writes ``saveData(_:param:)``, then ``saveDataCachedAt(_:param:)``.
  public func saveCachedData(_ data: Data?, cachedAt: Date?, param: Param) async throws {
    try await saveData(data, param: param)
    try await saveDataCachedAt(data == nil ? nil : cachedAt, param: param)
  }

  /// Whether `cachedAt + expiration` is before now; `false` without a date or an expiration.
  public func needsRefresh(cachedAt: Date?, param: Param) async -> Bool {
    isExpired(cachedAt: cachedAt)
  }

  /// The default ``needsRefresh(cachedAt:param:)``, without suspending.
  @usableFromInline
  func isExpired(cachedAt: Date?) -> Bool {
    guard let cachedAt, let expiration else { return false }
    return cachedAt.addingTimeInterval(expiration.timeInterval) < now()
  }
}
