#if Logging
  public import Logging

  extension LoggingWatch {
    /// Creates a watch that logs every attempt through a swift-log `Logger`: the `Logging`
    /// trait.
    ///
    /// ```swift
    /// var logger = Logger(label: "payments.http")
    /// logger.logLevel = .debug
    /// let handler = NetworkHandler(transport: transport, watches: [LoggingWatch(logger: logger)])
    /// ```
    ///
    /// Each attempt logs two entries at `level` (`debug` by default, so that a production
    /// logger at `info` pays only the level check): the request as sent, then the response or
    /// the error. Credentials are redacted as in ``init(redacting:logsHeaders:log:)``.
    ///
    /// - Parameters:
    ///   - logger: Where the entries go.
    ///   - level: The level of every entry; `debug` by default.
    ///   - redacting: More headers to redact, in any case, besides the credentials always
    ///     redacted.
    ///   - logsHeaders: Whether header fields are logged; `true` by default.
    public init(
      logger: Logger, level: Logger.Level = .debug, redacting: Set<String> = [], logsHeaders: Bool = true
    ) {
      self.init(
        redacting: redacting, logsHeaders: logsHeaders, isEnabled: { logger.logLevel <= level },
        log: { entry in logger.log(level: level, "\(entry)") })
    }
  }
#endif
