public import Foundation

/// A store that lets one caller at a time, across every process sharing it, work on a key:
/// the lease behind cross-process single flight.
///
/// KilnNetwork's `HTTPCache` uses it when its store offers it (KilnStorage's `PostgresStore`
/// and `PostgresCache`, with the `PostgreSQL` trait): of the processes that miss, or must
/// revalidate, one URL together, one asks the origin and the others wait for the response it
/// stores.
///
/// ```swift
/// if let lease = try await store.takeLease(on: "article/7", for: .seconds(30)) {
///   defer { Task { await store.giveBack(lease) } }
///   try await store.setValue(try await origin.article(7), forKey: "article/7", expiresAt: nil)
/// } else {
///   // Another process is loading it: wait for its value.
/// }
/// ```
public protocol LeasingStore<Key>: Sendable {
  /// The key type.
  associatedtype Key: Hashable & Sendable

  /// Takes the lease on `key` for `duration`, unless another caller holds one that has not run
  /// out.
  ///
  /// - Parameters:
  ///   - key: The key.
  ///   - duration: How long the lease lasts if it is not given back: longer than the work takes,
  ///     so that a caller who dies holding it (even by `SIGKILL`) blocks the key no longer.
  /// - Returns: The lease, to give back with ``giveBack(_:)``; `nil` when another caller holds
  ///   the key.
  /// - Throws: When the store cannot be reached: callers then go on without a lease.
  func takeLease(on key: Key, for duration: Duration) async throws -> StoreLease?

  /// Gives `lease` back so that a waiting caller may take it at once, also from a cancelled
  /// task. Best effort: a lease that cannot be given back runs out after its duration.
  func giveBack(_ lease: StoreLease) async
}

/// A lease taken on a key of a ``LeasingStore``.
public struct StoreLease: Hashable, Sendable {
  /// The key as the store knows it (its encoded bytes).
  public let key: Data
  /// Who holds the lease: unique to each lease taken.
  public let holder: String

  /// Creates a lease; stores do, when one is taken.
  ///
  /// - Parameters:
  ///   - key: The key as the store knows it.
  ///   - holder: The holder's unique name.
  public init(key: Data, holder: String) {
    self.key = key
    self.holder = holder
  }
}
