#if ServiceLifecycle
  public import ServiceLifecycle
#endif

/// Runs `operation` until the task is cancelled, or (with the `ServiceLifecycle` trait) until
/// the service group it runs in shuts down gracefully, which then cancels it: the loop of
/// `PostgresStore.run()` and `PostgresCache.run()`.
func runUntilGracefulShutdown(_ operation: @escaping @Sendable () async -> Void) async {
  #if ServiceLifecycle
    await cancelWhenGracefulShutdown(operation)
  #else
    await operation()
  #endif
}

#if ServiceLifecycle

  /// A `ServiceGroup` owns the store's lifetime: ``run()`` waits for the group's graceful
  /// shutdown (or cancellation), then closes the store, after its queued writes are written.
  extension SQLiteStore: Service {
    /// Waits until the service group shuts down gracefully or the task is cancelled, then
    /// closes the store (``close()``): queued writes are written first, later calls throw
    /// ``SQLiteStoreError/closed``.
    public func run() async {
      try? await gracefulShutdown()
      await close()
    }
  }

  #if PostgreSQL
    /// A `ServiceGroup` runs the store's sweeps (``run()``) until it shuts down gracefully.
    /// Run the `PostgresClient` as a service of the same group, listed before the store, so
    /// that it shuts down after it.
    extension PostgresStore: Service {}

    /// A `ServiceGroup` runs the cache's listener (``run()``) until it shuts down gracefully.
    /// List the store's `PostgresClient` before the cache, so that it shuts down after it.
    extension PostgresCache: Service {}
  #endif
#endif
