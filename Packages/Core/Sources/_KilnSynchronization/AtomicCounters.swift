import Synchronization

/// A fixed set of integer counters, one per case of `Counter`, each incremented with a relaxed
/// atomic add: the counting behind Kiln's statistics, cheap enough for a hot path (no lock,
/// no allocation) and readable from any thread at any time.
///
/// A reading is a snapshot of each counter on its own, not of all of them at one instant:
/// two counters read together may be one increment apart.
package final class AtomicCounters<Counter: CaseIterable & RawRepresentable>: @unchecked Sendable
where Counter.RawValue == Int {
  // Sendable: the slots are only reached through Atomic's operations; the pointer itself
  // never changes after init.
  private let slots: UnsafeMutablePointer<Atomic<Int>>
  private let count: Int

  /// Creates the counters, all zero.
  package init() {
    count = Counter.allCases.count
    precondition(
      Counter.allCases.map(\.rawValue) == Array(0..<count), "AtomicCounters needs raw values 0, 1, 2, … in order")
    slots = .allocate(capacity: count)
    for index in 0..<count {
      (slots + index).initialize(to: Atomic(0))
    }
  }

  deinit {
    slots.deinitialize(count: count)
    slots.deallocate()
  }

  /// Adds `amount` (1 by default) to `counter`.
  @inline(__always)
  package func add(_ counter: Counter, _ amount: Int = 1) {
    slots[counter.rawValue].wrappingAdd(amount, ordering: .relaxed)
  }

  /// Subtracts `amount` (1 by default) from `counter`: for gauges.
  @inline(__always)
  package func subtract(_ counter: Counter, _ amount: Int = 1) {
    slots[counter.rawValue].wrappingSubtract(amount, ordering: .relaxed)
  }

  /// The value of `counter` now.
  package subscript(_ counter: Counter) -> Int {
    slots[counter.rawValue].load(ordering: .relaxed)
  }
}
