// The `nested-target-queues` scenarios: re-entrant calls into a queue from a queue that
// targets it, once the inner queue carries a token of its own. A regression makes GCD trap
// ("dispatch_sync called on queue already owned by current thread") or deadlock, so these
// run in this child process: the parent sees a crash or the watchdog's exit, not its own.

import Dispatch
import Foundation
import KilnDispatch

/// The scenario names, in the order they print "ok".
let nestedTargetQueueScenarios = [
  "synchronized-outer-inside-inner",
  "sync-route-to-outer-inside-inner",
  "callback-on-outer-inside-inner",
  "wait-for-callback-on-outer-inside-inner",
  "main-route-inside-queue-targeting-main",
]

/// Two new serial queues, `inner` targeting `outer`, each already marked by KilnDispatch
/// (as any earlier `synchronized` or `.sync` on them would have done).
private func targetPair(_ name: String) -> (outer: DispatchQueue, inner: DispatchQueue) {
  let outer = DispatchQueue(label: "kiln.probe.\(name).outer")
  let inner = DispatchQueue(label: "kiln.probe.\(name).inner", target: outer)
  synchronized(outer) {}
  synchronized(inner) {}
  return (outer, inner)
}

/// Runs the scenarios, printing one line each, then exits: 0 when all passed.
func runNestedTargetQueueScenarios() -> Never {
  var failures = 0
  func check<T: Equatable>(_ scenario: String, _ value: T, _ expected: T) {
    if value == expected {
      say("ok \(scenario)")
    } else {
      say("FAIL \(scenario): got \(value), expected \(expected)")
      failures += 1
    }
  }

  // synchronized(outer) inside synchronized(inner) runs inline: `inner` holds `outer`.
  let lock = targetPair("synchronized")
  let nested = synchronized(lock.inner) { synchronized(lock.outer) { 1 } }
  check("synchronized-outer-inside-inner", nested, 1)

  // f~>>.on(outer).sync from a block on inner.
  let route = targetPair("route")
  let double: @Sendable (Int) -> Int = { $0 * 2 }
  let doubled = synchronized(route.inner) { double~>>.on(route.outer).sync(2) }
  check("sync-route-to-outer-inside-inner", doubled, 4)

  // <<~outer ~~~ { } from a block on inner: the operation starts inline, not queued behind
  // the block that waits for it.
  let callback = targetPair("callback")
  let called = synchronized(callback.inner) {
    <<~callback.outer ~~~ { (done: @escaping @Sendable (Int) -> Void) in done(3) }
  }
  check("callback-on-outer-inside-inner", called, 3)

  // waitForCallback(on: outer) from a block on inner.
  let limited = targetPair("limited")
  let waited = synchronized(limited.inner) {
    try? waitForCallback(on: limited.outer, timeout: .seconds(5)) { (done: @escaping @Sendable (Int) -> Void) in
      done(4)
    }
  }
  check("wait-for-callback-on-outer-inside-inner", waited, 4)

  // The main route from a block on a queue targeting the main queue, run by a worker thread
  // (as after dispatchMain() on Linux): it must run inline, not main.sync onto itself.
  let mainInner = DispatchQueue(label: "kiln.probe.main-inner", target: .main)
  let timesTen: @MainActor @Sendable (Int) -> Int = { $0 * 10 }
  let earlierFailures = failures
  // Marks mainInner first: `<<~` asks KilnDispatch whether it runs there.
  <<~mainInner ~~~ { (done: @escaping @Sendable () -> Void) in done() }
  mainInner.async {
    let value = timesTen+>>.sync(5)
    if value == 50 {
      say("ok main-route-inside-queue-targeting-main")
    } else {
      say("FAIL main-route-inside-queue-targeting-main: got \(value), expected 50")
    }
    exit(earlierFailures == 0 && value == 50 ? 0 : 1)
  }
  dispatchMain()
}
