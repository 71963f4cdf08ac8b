public import Foundation

/// Keeps the data of each param and when it was cached, and decides when it needs a refresh.
///
/// Most apps use ``StoreCacher``, which keeps both in any `KeyValueStore`. A custom cacher
/// implements the four load and save functions and stores one ``FlowRegistry``: the loading
/// states of its params live there, so every flowable made from one cacher shares them.
///
/// ```swift
/// final class UserCacher: Cacher {
///   let flows = FlowRegistry<UserID, User>()
///   var expiration: Duration? { .minutes(30) }
///   func loadData(param: UserID) async throws -> User? { … }
///   func saveData(_ data: User?, param: UserID) async throws { … }
///   func loadDataCachedAt(param: UserID) async throws -> Date? { … }
///   func saveDataCachedAt(_ cachedAt: Date?, param: UserID) async throws { … }
/// }
/// ```
public protocol Cacher<Param, Data>: Sendable {
  /// What identifies the data.
  associatedtype Param: Hashable & Sendable
  /// The cached data.
  associatedtype Data: Sendable

  /// The loading states of this cacher's params. Store one instance: every flowable made
  /// from this cacher shares it.
  var flows: FlowRegistry<Param, Data> { get }

  /// How long cached data stays valid; `nil` (the default) for forever.
  var expiration: Duration? { get }

  /// The wall clock that stamps and expires data; by default the registry's
  /// (``FlowRegistry/now``), so that expiry and invalidation dates agree.
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

  /// ``flows``' ``FlowRegistry/now``: the date of the clock the registry was made with.
  public var now: @Sendable () -> Date { flows.now }

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
