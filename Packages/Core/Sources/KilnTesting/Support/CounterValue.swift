public import KilnCore

/// The value of the reading named `name` with exactly `dimensions` (in order), or `nil` when
/// `readings` has none: what a test checks of a KilnCore `CountingSource`.
///
/// ```swift
/// #expect(counterValue(cache.counterReadings(), "kiln_memory_cache_lookups_total", [("result", "hit")]) == 1)
/// ```
///
/// - Parameters:
///   - readings: A source's readings.
///   - name: The metric's name.
///   - dimensions: Its label names and values; none by default.
public func counterValue(
  _ readings: [CounterReading], _ name: String, _ dimensions: [(String, String)] = []
) -> Int? {
  readings.first { $0.name == name && $0.dimensions.elementsEqual(dimensions) { $0 == $1 } }?.value
}
