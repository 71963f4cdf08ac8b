import KilnCore
import _KilnSynchronization

/// What a ``RequestChain`` did since it was created: requests, their outcomes, attempts,
/// retries and why, authentication refreshes, timeouts, bytes. Read it with
/// ``RequestChain/statistics`` or ``NetworkHandler/statistics``.
///
/// Kiln's stages count into the chain that runs them, through the request's context; a stage
/// used outside a chain counts nothing. The counters only grow, but ``inFlight``.
public struct RequestStatistics: Hashable, Sendable {
  /// Requests sent through the chain.
  public var requests = 0
  /// Requests in the chain now.
  public var inFlight = 0
  /// Responses the chain returned, by status class: index 1 for 1xx through 5 for 5xx (index 0
  /// counts statuses outside 100–599).
  public var responsesByClass: [Int] = Array(repeating: 0, count: 6)
  /// Requests that ended with no response: ``NetworkError/transport(_:)`` (but a transport's
  /// timeout or cancellation).
  public var transportFailures = 0
  /// Requests that ended with ``NetworkError/timedOut(_:)``, or the transport's own timeout.
  public var timeoutFailures = 0
  /// Requests that ended with ``NetworkError/cancelled``.
  public var cancellations = 0
  /// Requests that ended with another error (``NetworkError/authentication(_:)``, ...).
  public var otherFailures = 0
  /// Attempts that reached the transport (a fresh cache hit makes none, a retried request
  /// several).
  public var attempts = 0
  /// Retries ``Retrying`` began (counted before the wait) after a retryable status.
  public var retriesAfterStatus = 0
  /// Retries ``Retrying`` began (counted before the wait) after a transport error or timeout.
  public var retriesAfterError = 0
  /// Attempts ``AttemptTimeout`` ended at its limit.
  public var attemptTimeouts = 0
  /// Responses ``Authenticating`` saw rejected (a `401`), each followed by a refresh (shared
  /// by the requests rejected together) and, when it succeeds, one more attempt.
  public var authenticationRejections = 0
  /// Refreshes that failed, as seen by each rejected request waiting for one.
  public var refreshFailures = 0
  /// The bytes of the response bodies the transport returned.
  public var receivedBytes = 0

  /// Creates statistics, all zero.
  public init() {}
}

/// The live counters behind ``RequestStatistics``.
enum RequestCounter: Int, CaseIterable {
  case requests, inFlight
  case otherStatus, status1xx, status2xx, status3xx, status4xx, status5xx
  case transportFailures, timeoutFailures, cancellations, otherFailures
  case attempts, retriesAfterStatus, retriesAfterError, attemptTimeouts
  case authenticationRejections, refreshFailures, receivedBytes

  /// The counter of a response's status class.
  static func statusClass(_ status: Int) -> RequestCounter {
    switch status {
    case 100..<200: .status1xx
    case 200..<300: .status2xx
    case 300..<400: .status3xx
    case 400..<500: .status4xx
    case 500..<600: .status5xx
    default: .otherStatus
    }
  }

  /// The label of a status class (`2xx`) or of a failure (`timeout`), as the counters'
  /// readings and ``RequestMetrics``' `outcome` dimension name it.
  var label: String {
    switch self {
    case .otherStatus: "other"
    case .status1xx: "1xx"
    case .status2xx: "2xx"
    case .status3xx: "3xx"
    case .status4xx: "4xx"
    case .status5xx: "5xx"
    case .transportFailures: "transport"
    case .timeoutFailures: "timeout"
    case .cancellations: "cancelled"
    case .otherFailures: "other"
    default: String(describing: self)
    }
  }

  /// The counter of a request that ended with `error`.
  static func failure(_ error: NetworkError) -> RequestCounter {
    switch error {
    case .transport(.cancelled), .cancelled: .cancellations
    case .timedOut, .transport(.timedOut): .timeoutFailures
    case .transport: .transportFailures
    default: .otherFailures
    }
  }
}

/// The counters of one chain, shared by its copies; handed to the stages in the context.
typealias RequestCounters = AtomicCounters<RequestCounter>

extension RequestStatistics {
  init(_ counters: RequestCounters) {
    requests = counters[.requests]
    inFlight = counters[.inFlight]
    responsesByClass = [
      counters[.otherStatus], counters[.status1xx], counters[.status2xx], counters[.status3xx],
      counters[.status4xx], counters[.status5xx],
    ]
    transportFailures = counters[.transportFailures]
    timeoutFailures = counters[.timeoutFailures]
    cancellations = counters[.cancellations]
    otherFailures = counters[.otherFailures]
    attempts = counters[.attempts]
    retriesAfterStatus = counters[.retriesAfterStatus]
    retriesAfterError = counters[.retriesAfterError]
    attemptTimeouts = counters[.attemptTimeouts]
    authenticationRejections = counters[.authenticationRejections]
    refreshFailures = counters[.refreshFailures]
    receivedBytes = counters[.receivedBytes]
  }

  /// These counters named for export (see ``RequestChain/counterReadings()``).
  var readings: [CounterReading] {
    let responses = "kiln_http_client_responses_total"
    let failures = "kiln_http_client_failures_total"
    let retries = "kiln_http_client_retries_total"
    let classes: [RequestCounter] = [.otherStatus, .status1xx, .status2xx, .status3xx, .status4xx, .status5xx]
    let failureCounts: [(RequestCounter, Int)] = [
      (.transportFailures, transportFailures), (.timeoutFailures, timeoutFailures), (.cancellations, cancellations),
      (.otherFailures, otherFailures),
    ]
    return [CounterReading("kiln_http_client_requests_total", value: requests)]
      + zip(classes, responsesByClass).map { CounterReading(responses, [("status_class", $0.label)], value: $1) }
      + failureCounts.map { CounterReading(failures, [("error", $0.label)], value: $1) }
      + [
        CounterReading("kiln_http_client_attempts_total", value: attempts),
        CounterReading(retries, [("reason", "status")], value: retriesAfterStatus),
        CounterReading(retries, [("reason", "error")], value: retriesAfterError),
        CounterReading("kiln_http_client_attempt_timeouts_total", value: attemptTimeouts),
        CounterReading("kiln_http_client_authentication_rejections_total", value: authenticationRejections),
        CounterReading("kiln_http_client_refresh_failures_total", value: refreshFailures),
        CounterReading("kiln_http_client_received_bytes_total", value: receivedBytes),
        CounterReading("kiln_http_client_requests_in_flight", value: inFlight, kind: .gauge),
      ]
  }
}

extension RequestChain: CountingSource {
  /// What the chain did (``statistics``), with the single-flight counts of its
  /// ``Deduplicating`` stage and the counters of its ``HTTPCaching`` stage's cache, named for
  /// export:
  ///
  /// | Name | Kind | Dimensions | Meaning |
  /// |---|---|---|---|
  /// | `kiln_http_client_requests_total` | counter | | requests sent through the chain |
  /// | `kiln_http_client_responses_total` | counter | `status_class`: `1xx` … `5xx`, `other` | responses returned |
  /// | `kiln_http_client_failures_total` | counter | `error`: `transport`, `timeout`, `cancelled`, `other` | requests with no response |
  /// | `kiln_http_client_attempts_total` | counter | | attempts that reached the transport |
  /// | `kiln_http_client_retries_total` | counter | `reason`: `status`, `error` | retries begun |
  /// | `kiln_http_client_attempt_timeouts_total` | counter | | attempts ended by ``AttemptTimeout`` |
  /// | `kiln_http_client_authentication_rejections_total` | counter | | rejected credentials, each followed by a refresh (and, when it succeeds, one more attempt) |
  /// | `kiln_http_client_refresh_failures_total` | counter | | failed refreshes, per waiting request |
  /// | `kiln_http_client_received_bytes_total` | counter | | response body bytes from the transport |
  /// | `kiln_http_client_requests_in_flight` | gauge | | requests in the chain now |
  /// | `kiln_http_client_single_flight_total` | counter | `role`: `leader`, `joiner` | shared requests started, and callers who joined one |
  ///
  /// The HTTP cache's counters follow, as ``HTTPCache/counterReadings()`` names them.
  public func counterReadings() -> [CounterReading] {
    var readings = statistics.readings
    if let deduplicating = first(Deduplicating.self) {
      let name = "kiln_http_client_single_flight_total"
      readings.append(CounterReading(name, [("role", "leader")], value: deduplicating.startedCount))
      readings.append(CounterReading(name, [("role", "joiner")], value: deduplicating.joinedCount))
    }
    if let caching = first(HTTPCaching.self) {
      readings += caching.cache.counterReadings()
    }
    return readings
  }
}

extension NetworkHandler: CountingSource {
  /// The counters of the handler's ``chain``: see ``RequestChain/counterReadings()``.
  public func counterReadings() -> [CounterReading] {
    chain.counterReadings()
  }

  /// What the handler's chain did since it was created: ``RequestChain/statistics``.
  public var statistics: RequestStatistics {
    chain.statistics
  }
}
