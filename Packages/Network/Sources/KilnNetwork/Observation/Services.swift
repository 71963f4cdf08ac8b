#if AsyncHTTPClient && ServiceLifecycle
  public import ServiceLifecycle

  /// A `ServiceGroup` owns the transport's client: ``run()`` waits for the group's graceful
  /// shutdown (or cancellation), then shuts the client down.
  extension AsyncHTTPClientTransport: Service {
    /// Waits until the service group shuts down gracefully or the task is cancelled, then
    /// shuts down the client the transport created (``shutdown()``; a client passed in is
    /// left to its owner). List the transport before the services that send through it, so
    /// that the group shuts them down first.
    public func run() async throws {
      try? await gracefulShutdown()
      try await shutdown()
    }
  }
#endif
