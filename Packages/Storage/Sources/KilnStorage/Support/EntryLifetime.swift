public import Foundation

/// The entry-lifetime bookkeeping every store shares: checking the lifetime a store is
/// created with, and stamping an entry's expiry from it.
///
/// `@usableFromInline` and `@inlinable` so that ``MemoryCache``'s inlinable write path can
/// use it without a call across the module boundary.
@usableFromInline
enum EntryLifetime {
  /// Stops the program when `lifetime` is zero or negative: a store created that way would
  /// drop every value it is given.
  ///
  /// - Parameters:
  ///   - lifetime: How long an entry stored without an explicit expiry lives; `nil` for
  ///     until removed.
  ///   - store: The store's type name, for the message.
  static func validate(_ lifetime: Duration?, of store: String) {
    precondition(lifetime.map { $0 > .zero } ?? true, "\(store) entryLifetime must be positive")
  }

  /// When an entry stored at `stamp` expires: `explicit` when given, else `stamp` plus
  /// `lifetime`, else never (`nil`).
  @inlinable
  static func expiry(_ explicit: Date?, storedAt stamp: Date, lifetime: Duration?) -> Date? {
    explicit ?? lifetime.map { stamp.addingTimeInterval($0.timeInterval) }
  }
}
