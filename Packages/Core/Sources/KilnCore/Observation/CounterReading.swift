/// One of a component's counters, read at one moment and named for export.
///
/// Kiln's caches, stores and request pipelines count what they do at the cost of an atomic
/// increment, and read their counters as a plain snapshot value (`MemoryCacheStatistics`-like
/// structs on each type). ``CountingSource/counterReadings()`` gives the same numbers in one
/// shape for every component, so that an exporter (the `Metrics` trait's `MetricsReporter`,
/// or code of your own) can publish all of them without knowing each type:
///
/// ```swift
/// for reading in cache.counterReadings() {
///   print(reading.name, reading.dimensions, reading.value)
///   // kiln_memory_cache_lookups_total [("result", "hit")] 1532
/// }
/// ```
///
/// Names follow Prometheus' conventions (snake case, a `_total` suffix on counters, the unit
/// in the name: `_bytes`). Dimensions have a bounded set of values, documented with each
/// counter: never a URL or a key. The article "Observing Kiln" lists every counter.
public struct CounterReading: Sendable, Hashable {
  /// Whether a reading only grows or says how much of something there is now.
  public enum Kind: Sendable, Hashable {
    /// A count since the component was created: it never decreases. An exporter publishes
    /// the difference since its last reading.
    case counter
    /// A current amount (entries held, requests in flight): it goes up and down.
    case gauge
  }

  /// The metric's name, such as `kiln_http_cache_lookups_total`.
  public var name: String

  /// Label names and values, in a fixed order; each value comes from a small, documented set.
  public var dimensions: [(String, String)]

  /// The value: a count, or bytes where the name ends in `_bytes` or `_bytes_total`.
  public var value: Int

  /// Whether ``value`` only grows.
  public var kind: Kind

  /// Creates a reading.
  ///
  /// - Parameters:
  ///   - name: The metric's name.
  ///   - dimensions: Label names and values; none by default.
  ///   - value: The value.
  ///   - kind: ``Kind/counter`` by default.
  public init(_ name: String, _ dimensions: [(String, String)] = [], value: Int, kind: Kind = .counter) {
    self.name = name
    self.dimensions = dimensions
    self.value = value
    self.kind = kind
  }

  public static func == (lhs: CounterReading, rhs: CounterReading) -> Bool {
    lhs.name == rhs.name && lhs.value == rhs.value && lhs.kind == rhs.kind
      && lhs.dimensions.elementsEqual(rhs.dimensions) { $0 == $1 }
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(name)
    for (label, value) in dimensions {
      hasher.combine(label)
      hasher.combine(value)
    }
    hasher.combine(value)
    hasher.combine(kind)
  }

  /// The reading's name and dimensions, the identity of one time series.
  public var series: String {
    dimensions.isEmpty ? name : name + "{" + dimensions.map { "\($0)=\"\($1)\"" }.joined(separator: ",") + "}"
  }
}

/// A component that counts what it does and reads its counters as ``CounterReading``s.
///
/// Kiln's caches, stores, HTTP cache, request chain and handler conform. Reading costs a few
/// atomic loads (or one lock) and an array; the counting itself is done as the component works.
public protocol CountingSource: Sendable {
  /// Every counter of the component now.
  func counterReadings() -> [CounterReading]
}
