import _KilnSynchronization

/// An ``OutboxStore`` that lets one sender at a time claim its entries, across processes:
/// two senders of one store would send a scope's entries out of order, and each entry twice.
///
/// KilnRepository's `Outbox` takes the lock when it opens and gives it back when it closes;
/// a second `Outbox` over the same store (in this process or another: an app and its share
/// extension on one file, two instances of a service on one table) is refused with a typed
/// error that says who holds it, instead of sending beside the first.
///
/// ``SQLiteOutboxStore`` locks a file beside the database (`<database>.sender.lock`, with
/// `flock`), which the system releases when the holding process dies, even by `SIGKILL`;
/// `PostgresOutboxStore` takes a PostgreSQL advisory lock on a session of its own;
/// ``MemoryOutboxStore`` lets one sender per instance.
public protocol SenderLockingOutboxStore: OutboxStore {
  /// Takes the store's sender lock when it is free.
  ///
  /// - Returns: ``OutboxSenderLock/acquired(_:)`` with the lease that holds it until
  ///   released (or deinitialized), or ``OutboxSenderLock/held(by:)`` when another sender
  ///   holds it.
  /// - Throws: ``OutboxStoreError`` when the lock cannot be asked for (the lock file cannot be
  ///   created, the server cannot be reached).
  func lockSender() async throws(OutboxStoreError) -> OutboxSenderLock
}

/// What ``SenderLockingOutboxStore/lockSender()`` found.
public enum OutboxSenderLock: Sendable {
  /// The lock is this caller's until the lease is released.
  case acquired(OutboxSenderLease)

  /// Another sender holds the lock: who, as far as the store can tell (for example
  /// `process 4242` for a SQLite file).
  case held(by: String)
}

/// A held sender lock: released by ``release()``, or soon after the lease is deinitialized.
public final class OutboxSenderLease: Sendable {
  private let releaser: KilnMutex<(@Sendable () async -> Void)?>

  /// Creates a lease that runs `release` once, when it is released or deinitialized (for a
  /// store of your own). `release` returns once the lock is free.
  public init(release: @escaping @Sendable () async -> Void) {
    releaser = KilnMutex(release)
  }

  /// Gives the lock back, and returns once another sender can take it; later calls do
  /// nothing.
  public func release() async {
    await take()?()
  }

  /// Whether ``release()`` was called.
  public var isReleased: Bool {
    releaser.withLock { $0 == nil }
  }

  private func take() -> (@Sendable () async -> Void)? {
    releaser.withLock { releaser in
      defer { releaser = nil }
      return releaser
    }
  }

  deinit {
    // Not awaited: the lock is free a moment later.
    if let release = take() { Task { await release() } }
  }
}
