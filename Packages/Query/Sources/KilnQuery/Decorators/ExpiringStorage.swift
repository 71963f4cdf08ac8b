public import Foundation

/// A storage that is read only while a validation policy accepts its timestamp
/// (Bricks' `ExpiringCache`).
///
/// Create one with ``KilnCore/Storage/expiring(validationPolicy:now:)``. It is a storage
/// itself: saving and clearing go straight to the base storage.
@frozen
public struct ExpiringStorage<Base: Storage, Policy: ValidationPolicy>: Storage {
  public typealias Value = Base.Value

  /// The storage read while its value is valid.
  public let base: Base

  /// Decides whether the base storage's value may be used.
  public let validationPolicy: Policy

  @usableFromInline
  let now: @Sendable () -> Date

  @inlinable
  init(base: Base, validationPolicy: Policy, now: @escaping @Sendable () -> Date) {
    self.base = base
    self.validationPolicy = validationPolicy
    self.now = now
  }

  /// The base storage's timestamp.
  @inlinable
  public var timestamp: Date? {
    get async { await base.timestamp }
  }

  /// Whether the base storage's value is valid now.
  @inlinable
  public var isValid: Bool {
    get async { await isValidNow() }
  }

  /// Asks the policy about the base storage's timestamp, now.
  ///
  /// The constant policies (``KilnCore/NeverValidPolicy``, ``KilnCore/AlwaysValidPolicy``)
  /// are answered without reading the timestamp or the clock: their answer depends on
  /// neither. Performance: once this is specialised in the caller's module (every member
  /// is `@inlinable`), the type checks fold away, so a never-valid pipeline reads no clock
  /// at all and any other policy pays exactly one clock read per load.
  @inlinable @inline(__always)
  func isValidNow() async -> Bool {
    if Policy.self == NeverValidPolicy.self { return false }
    if Policy.self == AlwaysValidPolicy.self { return true }
    return validationPolicy.isValid(timestamp: await base.timestamp, now: now())
  }

  /// Loads the base storage's value if the policy accepts its timestamp.
  ///
  /// - Throws: ``ExpiringCacheError/expired`` without reading the base storage when the
  ///   policy rejects its timestamp; otherwise whatever the base storage's load throws
  ///   (`StorageError/empty` when it is empty).
  @inlinable @inline(__always)
  public func load() async throws -> Value {
    guard await isValidNow() else {
      throw ExpiringCacheError.expired
    }
    return try await base.load()
  }

  /// Saves into the base storage.
  @inlinable
  public func save(_ value: Value) async throws {
    try await base.save(value)
  }

  /// Clears the base storage.
  @inlinable
  public func clear() async throws {
    try await base.clear()
  }
}

extension Storage {
  /// Reads this storage only while `validationPolicy` accepts its timestamp.
  ///
  /// When the policy rejects the timestamp — the value is too old, or there is none — the load
  /// fails with ``ExpiringCacheError/expired`` **without reading the storage**. Put a
  /// ``KilnCore/Query/fallback(_:)`` behind it to load fresh data:
  ///
  /// ```swift
  /// let articles = cache
  ///   .expiring(validationPolicy: .maxAge(.seconds(300)))
  ///   .fallback(network.map(with: Article.init).store(into: cache))
  /// ```
  ///
  /// - Parameters:
  ///   - validationPolicy: Decides from the timestamp whether the value may be used:
  ///     `.maxAge(_:)`, `.alwaysValid`, `.neverValid` or `.custom { }`.
  ///   - now: The current wall-clock time; inject a fixed or manual date in tests.
  /// - Returns: A storage that reads this one only while it is valid, and saves into it.
  @inlinable
  public func expiring<Policy: ValidationPolicy>(
    validationPolicy: Policy,
    now: @escaping @Sendable () -> Date = Date.init
  ) -> ExpiringStorage<Self, Policy> {
    ExpiringStorage(base: self, validationPolicy: validationPolicy, now: now)
  }
}
