#if ServiceLifecycle
  public import ServiceLifecycle

  /// A `ServiceGroup` owns the outbox's lifetime: ``run()`` waits for the group's graceful
  /// shutdown (or cancellation), then closes the outbox.
  extension Outbox: Service {
    /// Waits until the service group shuts down gracefully or the task is cancelled, then
    /// closes the outbox (``close()``): sends in flight are cancelled, answered entries are
    /// removed from the store, and every other entry stays there, durable, for the next
    /// ``open(_:clock:options:now:)``. Nothing acknowledged is lost.
    public func run() async {
      try? await gracefulShutdown()
      await close()
    }
  }
#endif
