import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

private struct Refused: Error, Equatable {}

@Suite("Bridges: withCallback, withCancellableCallback and runAsync", .timeLimit(.minutes(1)))
struct BridgeTests {
  // MARK: - Callback → async

  @Test("withCallback returns the callback's arguments for arities 0, 1, 2 and 4")
  func arities() async throws {
    let none: Void = try await withCallback { Callee.none($0) }
    let one = try await withCallback { Callee.one(7, $0) }
    let (album, error) = try await withCallback { Callee.two($0) }
    let (a, b, c, d) = try await withCallback { Callee.four($0) }
    #expect(none == ())
    #expect(one == 7)
    #expect(album == "album" && error == nil)
    #expect(a == 1 && b == "two" && c == 3.0 && d == true)
  }

  @Test("withCallback resumes once when the callback is called twice, and keeps the first value")
  func calledTwice() async throws {
    let value = try await withCallback { (callback: @escaping Callback<Int>) in
      callback(1)
      callback(2)
    }
    #expect(value == 1)
  }

  @Test("withCallback resumes once when racing threads call the callback")
  func racingCalls() async throws {
    for _ in 0..<50 {
      let value = try await withCallback { (callback: @escaping Callback<Int>) in
        Callee.queue.async { DispatchQueue.concurrentPerform(iterations: 4) { callback($0) } }
      }
      #expect((0..<4).contains(value))
    }
  }

  @Test("withCallback runs its body on the caller's actor")
  @MainActor
  func callerIsolation() async throws {
    let place = try await withCallback { (callback: @escaping Callback<Place>) in
      MainActor.assertIsolated()
      callback(QueueProbe.here)
    }
    #expect(place == .main)
  }

  @Test("Cancelling the waiting task throws CancellationError at once and calls the cancel hook once")
  func cancellationReachesHook() async {
    let callbacks = Recorder<Callback<Int>>()
    let hookCalls = Recorder<Bool>()
    let task = Task {
      try await withCancellableCallback { (callback: @escaping Callback<Int>) in
        callbacks.append(callback)  // the callee holds on to it and never calls back
        return { hookCalls.append(true) }
      }
    }
    #expect(await callbacks.wait())
    task.cancel()
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(await hookCalls.wait())
    await callbacks.first()?(5)  // a late callback is ignored
    #expect(hookCalls.count == 1)
  }

  @Test("Cancellation that arrives while the body runs still reaches the hook the body returns")
  func cancellationDuringBody() async {
    let hookCalls = Recorder<Bool>()
    let task = Task {
      try await withCancellableCallback { (_: @escaping Callback<Int>) in
        withUnsafeCurrentTask { $0?.cancel() }  // cancelled before the hook is handed over
        return { hookCalls.append(true) }
      }
    }
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(await hookCalls.wait())
    #expect(hookCalls.count == 1)
  }

  @Test("A task cancelled before the call never runs the body")
  func alreadyCancelled() async {
    let bodyRuns = Recorder<Bool>()
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await withCallback { (callback: @escaping Callback<Int>) in
        bodyRuns.append(true)
        callback(1)
      }
    }
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(bodyRuns.count == 0)
  }

  @Test("When the callback wins, a later cancellation does not call the hook")
  func callbackWins() async throws {
    let hookCalls = Recorder<Bool>()
    let task = Task {
      try await withCancellableCallback { (callback: @escaping Callback<Int>) in
        Callee.one(3, callback)
        return { hookCalls.append(true) }
      }
    }
    let value = try await task.value
    task.cancel()
    #expect(value == 3)
    #expect(hookCalls.count == 0)
  }

  @Test("withCallback bridges a Result callback: .get() turns it into a throwing call")
  func resultCallback() async throws {
    func load(fail: Bool, completion: @escaping @Sendable (Result<Int, Refused>) -> Void) {
      Callee.queue.async { completion(fail ? .failure(Refused()) : .success(1)) }
    }
    #expect(try await withCallback { load(fail: false, completion: $0) }.get() == 1)
    await #expect(throws: Refused()) { try await withCallback { load(fail: true, completion: $0) }.get() }
  }

  // MARK: - Async → callback

  @Test("runAsync(deliverOn:) delivers the value to the completion on that queue")
  func deliversValue() async {
    let queue = QueueProbe.serialQueue("completion")
    let results = Recorder<(Result<Int, Never>, Place)>()
    runAsync(deliverOn: queue) { () async -> Int in
      21 * 2
    } completion: { result in
      results.append((result, QueueProbe.here))
    }
    let (result, place) = await results.first() ?? (.success(0), .unnamed)
    #expect(result == .success(42))
    #expect(place == .queue("completion"))
  }

  @Test("runAsync(deliverOn:) delivers a typed error")
  func deliversError() async {
    let results = Recorder<Result<Int, Refused>>()
    runAsync(deliverOn: QueueProbe.serialQueue("completion")) { () async throws(Refused) -> Int in
      throw Refused()
    } completion: { result in
      results.append(result)
    }
    #expect(await results.first() == .failure(Refused()))
  }

  @Test("runAsync with a main-actor completion delivers on the main queue")
  func deliversOnMain() async {
    let results = Recorder<(Int, Place)>()
    runAsync { () async throws -> Int in
      7
    } completion: { result in
      MainActor.assertIsolated()
      results.append(((try? result.get()) ?? 0, QueueProbe.here))
    }
    let (value, place) = await results.first() ?? (0, .unnamed)
    #expect(value == 7)
    #expect(place == .main)
  }

  @Test("Cancelling runAsync's task cancels the operation; the completion still runs, once")
  func cancellation() async {
    let started = Recorder<Bool>()
    let results = Recorder<Bool>()
    let task = runAsync(deliverOn: QueueProbe.serialQueue("completion")) { () async throws -> Int in
      started.append(true)
      try await Task.sleep(for: .seconds(600))
      return 1
    } completion: { result in
      results.append((try? result.get()) == nil && (result.error is CancellationError))
    }
    #expect(await started.wait())
    task.cancel()
    #expect(await results.first() == true)
    await task.value
    #expect(results.count == 1)
  }
}

extension Result {
  /// The failure, if any.
  fileprivate var error: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
