#if Metrics && ServiceLifecycle
  public import ServiceLifecycle

  /// A `ServiceGroup` runs the reporter beside the services it watches: it publishes every
  /// interval, and once more when the group shuts down gracefully.
  extension MetricsReporter: Service {}
#endif
