/// Which response statuses a ``NetworkHandler`` accepts; any other is
/// ``NetworkError/status(_:)``.
///
/// ```swift
/// NetworkHandler(transport: transport, validation: .successful)                 // 2xx (the default)
/// NetworkHandler(transport: transport, validation: .statuses(Set(200...299).union([304])))
/// NetworkHandler(transport: transport, validation: .all)                        // Lynn: never an error
/// ```
public struct StatusValidation: Sendable {
  private let accepts: @Sendable (Int) -> Bool

  /// Accepts the statuses for which `accepts` returns `true`.
  ///
  /// - Parameter accepts: Whether a status is acceptable.
  public init(_ accepts: @escaping @Sendable (Int) -> Bool) {
    self.accepts = accepts
  }

  /// Whether `status` is acceptable.
  public func accepts(_ status: Int) -> Bool {
    accepts(status)
  }

  /// `200...299`.
  public static var successful: StatusValidation {
    StatusValidation { (200...299).contains($0) }
  }

  /// Every status: a response is never an error.
  public static var all: StatusValidation {
    StatusValidation { _ in true }
  }

  /// Exactly the statuses in `statuses`.
  ///
  /// - Parameter statuses: The acceptable statuses.
  public static func statuses(_ statuses: Set<Int>) -> StatusValidation {
    StatusValidation { statuses.contains($0) }
  }
}
