// KilnDispatchMainThreadProbe — runs KilnDispatch's async → sync waits on the process's
// real main thread, which Swift Testing never uses on Linux (its @MainActor tests run main
// queue blocks on a worker thread). KilnDispatchTests starts it as a child process.
//
// Prints "ok <scenario>" per scenario that returned the right value, "FAIL <scenario> …"
// otherwise, and exits 0 only when every scenario passed. A watchdog ends it with status 2
// if a wait deadlocks, so the test reports a failure instead of hanging.
//
// With the argument `nested-target-queues` it runs the scenarios of NestedTargetQueues.swift
// instead.

import Dispatch
import Foundation
import KilnDispatch

/// Writes a line to standard output at once (unbuffered), so the parent sees every line
/// even when the watchdog ends the process.
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let watchdog = Thread {
  Thread.sleep(forTimeInterval: 60)
  say("FAIL watchdog: a wait on the main thread never returned")
  exit(2)
}
watchdog.start()

var failures = 0

@MainActor
func check<T: Equatable>(_ scenario: String, _ value: T, _ expected: T) {
  if value == expected {
    say("ok \(scenario)")
  } else {
    say("FAIL \(scenario): got \(value), expected \(expected)")
    failures += 1
  }
}

guard Thread.isMainThread else {
  say("FAIL the probe's top-level code is not on the main thread")
  exit(1)
}

if CommandLine.arguments.dropFirst().first == "nested-target-queues" {
  runNestedTargetQueueScenarios()
}

// <<+ runs the function on the main queue; its callback arrives through the main queue too.
let viaMain = <<+{ (callback: @escaping @Sendable (Int) -> Void) in
  DispatchQueue.global().async { DispatchQueue.main.async { callback(1) } }
}
check("main-wait-main-callback", viaMain, 1)

// <<~ from the main thread, callback delivered on the main queue.
let fromGlobal = <<~{ (callback: @escaping @Sendable (Int) -> Void) in
  DispatchQueue.main.async { callback(2) }
}
check("global-call-main-callback", fromGlobal, 2)

// <<- runs inline; the callback comes later from a main-queue timer.
let delayed = <<-{ (callback: @escaping @Sendable (Int) -> Void) in
  DispatchQueue.main.asyncAfter(deadline: .now() + 0.05) { callback(3) }
}
check("inline-call-delayed-main-callback", delayed, 3)

// Arity 2 and 4 through the main queue.
let pair = <<+{ (callback: @escaping @Sendable (Int, String) -> Void) in
  DispatchQueue.main.async { callback(4, "four") }
}
check("arity-2", pair.0 == 4 && pair.1 == "four", true)
let four = <<~{ (callback: @escaping @Sendable (Int, Int, Int, Int) -> Void) in
  DispatchQueue.main.async { callback(1, 2, 3, 4) }
}
check("arity-4", [four.0, four.1, four.2, four.3], [1, 2, 3, 4])

// A worker's main.sync completes while the main thread waits (main-queue work flows).
let timesTen: @MainActor @Sendable (Int) -> Int = { value in
  dispatchPrecondition(condition: .onQueue(.main))
  return value * 10
}
let synced = <<-{ (callback: @escaping @Sendable (Int) -> Void) in
  DispatchQueue.global().async { callback(timesTen+>>.sync(5)) }
}
check("worker-main-sync-while-main-waits", synced, 50)

// The same with a time limit.
let limited = try? waitForCallback(timeout: .seconds(5)) { (callback: @escaping @Sendable (Int) -> Void) in
  DispatchQueue.main.async { callback(6) }
}
check("wait-for-callback-with-timeout", limited, 6)

// A callback called twice: the first call wins, nothing crashes.
let twice = <<+{ (callback: @escaping @Sendable (Int) -> Void) in
  DispatchQueue.main.async {
    callback(7)
    callback(8)
  }
}
check("callback-called-twice", twice, 7)

exit(failures == 0 ? 0 : 1)
