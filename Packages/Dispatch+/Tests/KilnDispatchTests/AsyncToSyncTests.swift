import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

/// The completion handler `<<-` and friends hand out, for tests that call it themselves
/// (Swift infers the handler's shape when it is passed to a typed API, not when called).
typealias Callback<each Value> = @Sendable (repeat each Value) -> Void

/// Callback-style functions of every arity, calling back from a serial queue of their own.
///
/// Not from the global queue: on Linux, GCD starts the global queue with one thread per
/// core and adds more only about once a second when they all block, and these tests block
/// threads on purpose. A serial queue gets a thread of its own (an overcommit thread).
enum Callee {
  static let queue = DispatchQueue(label: "kiln.tests.callee")

  static func none(reportingTo places: Recorder<Place>? = nil, _ completion: @escaping @Sendable () -> Void) {
    places?.append(QueueProbe.here)
    queue.async { completion() }
  }

  static func one(
    _ value: Int,
    reportingTo places: Recorder<Place>? = nil,
    _ completion: @escaping @Sendable (Int) -> Void
  ) {
    places?.append(QueueProbe.here)
    queue.async { completion(value) }
  }

  static func two(
    reportingTo places: Recorder<Place>? = nil,
    _ completion: @escaping @Sendable (String?, (any Error)?) -> Void
  ) {
    places?.append(QueueProbe.here)
    queue.async { completion("album", nil) }
  }

  static func four(
    reportingTo places: Recorder<Place>? = nil,
    _ completion: @escaping @Sendable (Int, String, Double, Bool) -> Void
  ) {
    places?.append(QueueProbe.here)
    queue.async { completion(1, "two", 3.0, true) }
  }
}

@Suite("Async → sync: <<-, <<+, <<~ and ~~~", .timeLimit(.minutes(1)))
struct AsyncToSyncTests {
  // MARK: - Values of every arity

  @Test("<<- starts the operation on the calling queue and returns the callback's arguments, for arities 0, 1, 2 and 4")
  func currentThreadArities() async {
    let places = Recorder<Place>()
    let results = await run(on: QueueProbe.serialQueue("caller")) {
      let none: Void = <<-{ Callee.none(reportingTo: places, $0) }
      let one = <<-{ Callee.one(7, reportingTo: places, $0) }
      let (album, error) = <<-{ Callee.two(reportingTo: places, $0) }
      let (a, b, c, d) = <<-{ Callee.four(reportingTo: places, $0) }
      return (none == (), one, album, error == nil, a, b, c, d)
    }
    #expect(results?.0 == true)
    #expect(results?.1 == 7)
    #expect(results?.2 == "album")
    #expect(results?.3 == true)
    #expect(results?.4 == 1 && results?.5 == "two" && results?.6 == 3.0 && results?.7 == true)
    #expect(places.values == Array(repeating: .queue("caller"), count: 4))
  }

  @Test("<<+ starts the operation on the main queue and returns the callback's arguments, for arities 0, 1, 2 and 4")
  func mainQueueArities() async {
    let places = Recorder<Place>()
    let results = await run(on: QueueProbe.serialQueue("caller")) {
      let none: Void = <<+{ Callee.none(reportingTo: places, $0) }
      let one = <<+{ Callee.one(7, reportingTo: places, $0) }
      let (album, error) = <<+{ Callee.two(reportingTo: places, $0) }
      let (a, b, c, d) = <<+{ Callee.four(reportingTo: places, $0) }
      return (none == (), one, album, error == nil, a, b, c, d)
    }
    #expect(results?.0 == true)
    #expect(results?.1 == 7)
    #expect(results?.2 == "album")
    #expect(results?.3 == true)
    #expect(results?.4 == 1 && results?.5 == "two" && results?.6 == 3.0 && results?.7 == true)
    #expect(places.values == Array(repeating: .main, count: 4))
  }

  @Test("<<~ starts the operation on the global queue and returns the callback's arguments, for arities 0, 1, 2 and 4")
  func globalQueueArities() async {
    let places = Recorder<Place>()
    let results = await run(on: QueueProbe.serialQueue("caller")) {
      let none: Void = <<~{ Callee.none(reportingTo: places, $0) }
      let one = <<~{ Callee.one(7, reportingTo: places, $0) }
      let (album, error) = <<~{ Callee.two(reportingTo: places, $0) }
      let (a, b, c, d) = <<~{ Callee.four(reportingTo: places, $0) }
      return (none == (), one, album, error == nil, a, b, c, d)
    }
    #expect(results?.0 == true)
    #expect(results?.1 == 7)
    #expect(results?.2 == "album")
    #expect(results?.3 == true)
    #expect(results?.4 == 1 && results?.5 == "two" && results?.6 == 3.0 && results?.7 == true)
    #expect(places.values == Array(repeating: .unnamed, count: 4))
  }

  @Test(
    "<<~queue ~~~ starts the operation on that queue and returns the callback's arguments, for arities 0, 1, 2 and 4")
  func namedQueueArities() async {
    let target = QueueProbe.serialQueue("target")
    let places = Recorder<Place>()
    let results = await run(on: QueueProbe.serialQueue("caller")) {
      let none: Void = <<~target ~~~ { Callee.none(reportingTo: places, $0) }
      let one = <<~target ~~~ { Callee.one(7, reportingTo: places, $0) }
      let (album, error) = <<~target ~~~ { Callee.two(reportingTo: places, $0) }
      let (a, b, c, d) = <<~target ~~~ { Callee.four(reportingTo: places, $0) }
      return (none == (), one, album, error == nil, a, b, c, d)
    }
    #expect(results?.0 == true)
    #expect(results?.1 == 7)
    #expect(results?.2 == "album")
    #expect(results?.3 == true)
    #expect(results?.4 == 1 && results?.5 == "two" && results?.6 == 3.0 && results?.7 == true)
    #expect(places.values == Array(repeating: .queue("target"), count: 4))
  }

  @Test("Every operator returns into a typed context: a declared type, a return value, an argument")
  func typedContexts() async {
    let target = QueueProbe.serialQueue("target")
    @Sendable func viaReturn() -> Int { <<~{ Callee.one(4, $0) } }
    @Sendable func sum(_ values: Int...) -> Int { values.reduce(0, +) }
    let total = await run(on: QueueProbe.serialQueue("caller")) { () -> Int in
      let a: Int = <<-{ Callee.one(1, $0) }
      let b: Int = <<+{ Callee.one(2, $0) }
      let c: Int = <<~{ Callee.one(3, $0) }
      let d: Int = <<~target ~~~ { Callee.one(5, $0) }
      return sum(a, b, c, viaReturn(), d, <<~{ Callee.one(6, $0) })
    }
    #expect(total == 21)
  }

  // MARK: - Where the operation runs

  @Test("<<- starts the operation at once, on the calling queue")
  func currentThreadRunsInline() async {
    let place = await run(on: QueueProbe.serialQueue("caller")) {
      <<-{ (callback: @escaping Callback<Place>) in callback(QueueProbe.here) }
    }
    #expect(place == .queue("caller"))
  }

  @Test("<<+ starts the operation on the main queue")
  func mainQueueOperation() async {
    let place = await run(on: QueueProbe.serialQueue("caller")) {
      <<+{ (callback: @escaping Callback<Place>) in
        dispatchPrecondition(condition: .onQueue(.main))
        callback(QueueProbe.here)
      }
    }
    #expect(place == .main)
  }

  @Test("<<~ starts the operation on the global queue")
  func globalQueueOperation() async {
    let place = await run(on: QueueProbe.serialQueue("caller")) {
      <<~{ (callback: @escaping Callback<Place>) in
        dispatchPrecondition(condition: .onQueue(.global()))
        callback(QueueProbe.here)
      }
    }
    #expect(place == .unnamed)
  }

  @Test("<<~queue ~~~ starts the operation on that queue")
  func namedQueueOperation() async {
    let target = QueueProbe.serialQueue("target")
    let place = await run(on: QueueProbe.serialQueue("caller")) {
      <<~target ~~~ { (callback: @escaping Callback<Place>) in
        dispatchPrecondition(condition: .onQueue(target))
        callback(QueueProbe.here)
      }
    }
    #expect(place == .queue("target"))
  }

  @Test("<<~queue ~~~ from that very queue runs the operation inline instead of deadlocking")
  func namedQueueReentrant() async {
    let target = QueueProbe.serialQueue("target")
    let value = await run(on: target) {
      <<~target ~~~ { callback in Callee.one(5, callback) }
    }
    #expect(value == 5)
  }

  @Test("<<~queue ~~~ from a queue that targets it runs the operation inline")
  func namedQueueReentrantThroughTarget() async {
    let target = QueueProbe.serialQueue("target")
    let inner = DispatchQueue(label: "kiln.tests.inner", target: target)
    let value = await run(on: inner) {
      <<~target ~~~ { callback in Callee.one(6, callback) }
    }
    #expect(value == 6)
  }

  // MARK: - The main queue

  @Test("<<+ from the main queue runs the operation inline and completes with a callback on main")
  @MainActor
  func mainQueueCallerWithCallbackOnMain() {
    dispatchPrecondition(condition: .onQueue(.main))
    let (value, place) = <<+{ (callback: @escaping Callback<Int, Place>) in callback(42, QueueProbe.here) }
    #expect(value == 42)
    #expect(place == .main)
  }

  @Test("<<+ from the main queue completes with a callback from another queue")
  @MainActor
  func mainQueueCallerWithCallbackElsewhere() {
    let value = <<+{ callback in Callee.one(43, callback) }
    #expect(value == 43)
  }

  @Test("A callback delivered through the main queue reaches a waiter on another queue")
  func callbackThroughMainQueue() async {
    let value = await run(on: QueueProbe.serialQueue("caller")) {
      <<~{ (callback: @escaping Callback<Place>) in
        DispatchQueue.main.async { callback(QueueProbe.here) }
      }
    }
    #expect(value == .main)
  }

  @Test("<<- on the main queue completes when the callee calls back on the main queue synchronously")
  @MainActor
  func currentThreadOnMain() {
    let value = <<-{ (callback: @escaping Callback<Place>) in
      MainActor.assumeIsolated { callback(QueueProbe.here) }
    }
    #expect(value == .main)
  }

  // MARK: - Misuse

  @Test("A callback called twice returns the first value and ignores the second")
  func callbackTwice() async {
    let value = await run(on: QueueProbe.serialQueue("caller")) {
      <<-{ (callback: @escaping Callback<Int>) in
        callback(1)
        callback(2)
      }
    }
    #expect(value == 1)
  }

  @Test("Racing calls of one callback from many threads return one of them, once")
  func callbackRace() async {
    let values = await run(on: QueueProbe.serialQueue("caller")) {
      (0..<20).map { _ in
        <<-{ (callback: @escaping Callback<Int>) in
          DispatchQueue.concurrentPerform(iterations: 8) { callback($0) }
        }
      }
    }
    #expect(values?.count == 20)
    #expect(values?.allSatisfy { (0..<8).contains($0) } == true)
  }

  @Test("A callback called after the wait returned is ignored")
  func callbackAfterReturn() async {
    let late = Recorder<Callback<Int>>()
    let value = await run(on: QueueProbe.serialQueue("caller")) {
      <<-{ (callback: @escaping Callback<Int>) in
        late.append(callback)
        callback(1)
      }
    }
    await late.first()?(2)
    await late.first()?(3)
    #expect(value == 1)
  }

  @Test("An operation that throws rethrows its error without waiting")
  func operationThrows() async {
    struct Refused: Error {}
    let caught = await run(on: QueueProbe.serialQueue("caller")) { () -> Bool in
      do {
        let _: Int = try <<-{ _ in throw Refused() }
        return false
      } catch {
        return error is Refused
      }
    }
    #expect(caught == true)
  }

  @Test("A closure of several statements works with the result type spelled out")
  func multiStatementClosure() async {
    let value = await run(on: QueueProbe.serialQueue("caller")) {
      let doubled: Int = <<-{ callback in
        let input = 21
        Callee.one(input) { callback($0 * 2) }
      }
      return doubled
    }
    #expect(value == 42)
  }

  // MARK: - Time limits

  @Test("waitForCallback(timeout:) returns the value when the callback comes in time")
  func timeoutInTime() async {
    let value = await run(on: QueueProbe.serialQueue("caller")) {
      try? waitForCallback(timeout: .seconds(20)) { Callee.one(9, $0) }
    }
    #expect(value == 9)
  }

  @Test("waitForCallback(timeout:) throws CallbackTimeoutError when the callback never comes, not before the limit")
  func timeoutExpires() async {
    let outcome = await run(on: QueueProbe.serialQueue("caller")) { () -> (Result<Int, CallbackTimeoutError>, Double) in
      let start = DispatchTime.now()
      let result = Result { () throws(CallbackTimeoutError) -> Int in
        try waitForCallback(timeout: .milliseconds(100)) { _ in }
      }
      return (result, seconds(since: start))
    }
    #expect(outcome?.0 == .failure(CallbackTimeoutError(timeout: .milliseconds(100))))
    #expect((outcome?.1 ?? 0) >= 0.1)
  }

  @Test("waitForCallback(on:timeout:) runs the operation on the queue and returns its value")
  func timeoutOnQueue() async {
    let target = QueueProbe.serialQueue("target")
    let place = await run(on: QueueProbe.serialQueue("caller")) {
      try? waitForCallback(on: target, timeout: .seconds(20)) { (callback: @escaping Callback<Place>) in
        callback(QueueProbe.here)
      }
    }
    #expect(place == .queue("target"))
  }

  @Test("waitForCallback(on:timeout:) ignores a callback that comes after the timeout")
  func lateCallbackAfterTimeout() async {
    let late = Recorder<Callback<Int>>()
    let result = await run(on: QueueProbe.serialQueue("caller")) {
      Result { () throws(CallbackTimeoutError) -> Int in
        try waitForCallback(on: Callee.queue, timeout: .milliseconds(50)) { late.append($0) }
      }
    }
    #expect(result == .failure(CallbackTimeoutError(timeout: .milliseconds(50))))
    await late.first()?(1)  // must not crash or resurrect the finished wait
    #expect(late.count == 1)
  }
}
