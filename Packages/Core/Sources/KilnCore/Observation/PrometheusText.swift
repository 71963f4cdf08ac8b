extension CounterReading {
  /// Renders readings in Prometheus' text exposition format (version 0.0.4), the body of a
  /// `/metrics` endpoint, without any metrics package.
  ///
  /// Each metric family gets one `# TYPE` line (`counter` or `gauge`) followed by its series,
  /// families in the order their first reading comes. Label values are escaped as the format
  /// asks (backslash, double quote, line feed).
  ///
  /// ```swift
  /// router.get("metrics") { _, _ in
  ///   CounterReading.prometheusText(chain.counterReadings() + sessions.counterReadings())
  /// }
  /// ```
  ///
  /// Give each counter once: a request chain with an `HTTPCaching` stage already reports its
  /// HTTP cache's counters, so adding the cache as well would publish every `kiln_http_cache_*`
  /// series twice.
  ///
  /// To publish through swift-metrics instead (a Prometheus registry, StatsD, OpenTelemetry),
  /// use the `Metrics` trait's `MetricsReporter`.
  ///
  /// - Parameter readings: The readings, from one or more ``CountingSource``s.
  /// - Returns: The exposition text, ending with a line feed (empty when there are none).
  public static func prometheusText(_ readings: some Sequence<CounterReading>) -> String {
    var families: [String: [CounterReading]] = [:]
    var order: [String] = []
    for reading in readings {
      if families[reading.name] == nil { order.append(reading.name) }
      families[reading.name, default: []].append(reading)
    }
    var text = ""
    for name in order {
      let members = families[name]!
      text += "# TYPE \(name) \(members[0].kind == .gauge ? "gauge" : "counter")\n"
      for reading in members {
        text += name
        if !reading.dimensions.isEmpty {
          text += "{"
          text += reading.dimensions.map { "\($0)=\"\(escapedLabelValue($1))\"" }.joined(separator: ",")
          text += "}"
        }
        text += " \(reading.value)\n"
      }
    }
    return text
  }

  /// Renders the readings of several sources in Prometheus' text exposition format, each
  /// series labelled with its source's name as `kiln_source` (as `MetricsReporter` does).
  ///
  /// ```swift
  /// CounterReading.prometheusText(sources: ["catalog": chain, "sessions": sessions])
  /// ```
  ///
  /// Choose the names from a small, fixed set, never a URL or a key.
  ///
  /// - Parameter sources: Each source's name and the source.
  /// - Returns: The exposition text, as ``prometheusText(_:)`` writes it.
  public static func prometheusText(sources: KeyValuePairs<String, any CountingSource>) -> String {
    prometheusText(
      sources.lazy.flatMap { name, source in
        source.counterReadings().lazy.map { reading in
          var reading = reading
          reading.dimensions.insert(("kiln_source", name), at: 0)
          return reading
        }
      })
  }

  /// `value` with backslash, double quote and line feed escaped, scalar by scalar (a `\r\n`
  /// is one `Character` but two scalars).
  private static func escapedLabelValue(_ value: String) -> String {
    guard value.unicodeScalars.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
    var escaped = String.UnicodeScalarView()
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\\": escaped.append(contentsOf: "\\\\".unicodeScalars)
      case "\"": escaped.append(contentsOf: "\\\"".unicodeScalars)
      case "\n": escaped.append(contentsOf: "\\n".unicodeScalars)
      default: escaped.append(scalar)
      }
    }
    return String(escaped)
  }
}
