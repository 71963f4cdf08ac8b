import KilnCore
import Synchronization
import _KilnSynchronization

/// What an ``Outbox`` did since it was opened: changes recorded, attempts and how each ended,
/// entries quarantined, stalls and pauses, and how many entries wait now. Read it with
/// ``Outbox/statistics``, without awaiting the actor.
public struct OutboxStatistics: Hashable, Sendable {
  /// Changes recorded durably as entries of their own (``Writes/mutate(_:_:)`` that returned).
  public var appended = 0
  /// Changes written over the newest waiting entry of their param instead
  /// (``WriteCoalescing/lastWriteWins``).
  public var coalesced = 0
  /// Attempts begun to send an entry.
  public var attempts = 0
  /// Attempts the origin confirmed: the entry is gone.
  public var confirmed = 0
  /// Attempts the origin rejected, with no resolver replacing the change: it was rolled back
  /// and its entry removed.
  public var rejected = 0
  /// Rejections a resolver answered with a new change to send instead.
  public var replaced = 0
  /// Attempts that failed in a way that may pass (a 5xx, a timeout): retried, or stalled.
  public var failed = 0
  /// Attempts that found the origin unreachable: every scope paused.
  public var unreachable = 0
  /// Entries moved to the store's quarantine: damaged on disk, or unreadable by their channel.
  public var quarantined = 0
  /// Times a scope stalled after its retries ran out (until ``Outbox/resume()``).
  public var stalls = 0
  /// Times the outbox paused because the origin was unreachable.
  public var pauses = 0
  /// Entries waiting now: not yet confirmed, rejected or quarantined.
  public var pending = 0
  /// Whether the outbox is paused now.
  public var isPaused = false

  /// Creates statistics, all zero.
  public init() {}
}

/// The live counters behind ``OutboxStatistics``.
enum OutboxCounter: Int, CaseIterable {
  case appended, coalesced, attempts, confirmed, rejected, replaced, failed, unreachable, quarantined, stalls, pauses
}

/// An outbox's counters and its two gauges, written on the actor and read from anywhere.
final class OutboxCounters: Sendable {
  private let counters = AtomicCounters<OutboxCounter>()
  private let pending = Atomic<Int>(0)
  private let paused = Atomic<Bool>(false)

  func add(_ counter: OutboxCounter) { counters.add(counter) }
  func setPending(_ count: Int) { pending.store(count, ordering: .relaxed) }
  func setPaused(_ isPaused: Bool) { paused.store(isPaused, ordering: .relaxed) }

  var statistics: OutboxStatistics {
    var statistics = OutboxStatistics()
    statistics.appended = counters[.appended]
    statistics.coalesced = counters[.coalesced]
    statistics.attempts = counters[.attempts]
    statistics.confirmed = counters[.confirmed]
    statistics.rejected = counters[.rejected]
    statistics.replaced = counters[.replaced]
    statistics.failed = counters[.failed]
    statistics.unreachable = counters[.unreachable]
    statistics.quarantined = counters[.quarantined]
    statistics.stalls = counters[.stalls]
    statistics.pauses = counters[.pauses]
    statistics.pending = pending.load(ordering: .relaxed)
    statistics.isPaused = paused.load(ordering: .relaxed)
    return statistics
  }
}

extension Outbox: CountingSource {
  /// What the outbox did since it was opened: see ``OutboxStatistics``.
  public nonisolated var statistics: OutboxStatistics {
    counters.statistics
  }

  /// ``statistics`` named for export: `kiln_outbox_appended_total`, `kiln_outbox_coalesced_total`,
  /// `kiln_outbox_attempts_total`,
  /// `kiln_outbox_attempt_results_total` (`result`: `confirmed`, `rejected`, `replaced`,
  /// `failed`, `unreachable`), `kiln_outbox_quarantined_total`, `kiln_outbox_stalls_total`,
  /// `kiln_outbox_pauses_total`, and the gauges `kiln_outbox_pending` (entries waiting) and
  /// `kiln_outbox_paused` (1 while paused).
  public nonisolated func counterReadings() -> [CounterReading] {
    let statistics = statistics
    let results = "kiln_outbox_attempt_results_total"
    return [
      CounterReading("kiln_outbox_appended_total", value: statistics.appended),
      CounterReading("kiln_outbox_coalesced_total", value: statistics.coalesced),
      CounterReading("kiln_outbox_attempts_total", value: statistics.attempts),
      CounterReading(results, [("result", "confirmed")], value: statistics.confirmed),
      CounterReading(results, [("result", "rejected")], value: statistics.rejected),
      CounterReading(results, [("result", "replaced")], value: statistics.replaced),
      CounterReading(results, [("result", "failed")], value: statistics.failed),
      CounterReading(results, [("result", "unreachable")], value: statistics.unreachable),
      CounterReading("kiln_outbox_quarantined_total", value: statistics.quarantined),
      CounterReading("kiln_outbox_stalls_total", value: statistics.stalls),
      CounterReading("kiln_outbox_pauses_total", value: statistics.pauses),
      CounterReading("kiln_outbox_pending", value: statistics.pending, kind: .gauge),
      CounterReading("kiln_outbox_paused", value: statistics.isPaused ? 1 : 0, kind: .gauge),
    ]
  }
}
