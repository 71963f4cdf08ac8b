/// A step in the life of a ``Flight``, reported to a test that observes flights (see
/// ``FlightProbe``).
@usableFromInline
enum FlightEvent: Sendable {
  /// A caller joined a flight: a new one or the one in flight (``Flight/admit(to:)``).
  case joined
  /// A flight started: its task was created (``Flight/start(after:_:onFinish:)``).
  case started
  /// A caller waits for the outcome; a higher priority it brings is already applied
  /// (``Flight/wait(_:)``).
  case waiting
  /// A waiting caller was cancelled: it left, or stopped being interested.
  case left
  /// A flight ended: every waiter has its outcome and the registry has dropped the flight.
  case ended
}

/// Lets a test wait for a flight event instead of polling the registries.
///
/// In debug builds, a flight reports its events to the ``observer`` of the task that joins,
/// starts or waits for it (a task-local value, so each test sees only its own flights, and the
/// tasks a test creates inherit it). In release builds ``report(_:)`` is empty: the hot path
/// pays nothing.
@usableFromInline
enum FlightProbe {
  #if DEBUG
    /// Receives the flight events of the current task and of the tasks it creates.
    @TaskLocal @usableFromInline static var observer: (@Sendable (FlightEvent) -> Void)?
  #endif

  /// Reports `event` to the current ``observer``; does nothing in release builds.
  @inlinable @inline(__always)
  static func report(_ event: FlightEvent) {
    #if DEBUG
      observer?(event)
    #endif
  }
}
