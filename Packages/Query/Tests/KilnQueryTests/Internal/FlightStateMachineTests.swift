import Testing

@testable import KilnQuery

/// The state of a shared load, event by event, without any concurrency.
@Suite("FlightStateMachine", .timeLimit(.minutes(1)))
struct FlightStateMachineTests {
  typealias State = FlightStateMachine<Int, any Error>

  @Test("cancelling the last waiter abandons a flight: it can no longer be joined or kept running")
  func lastWaiterAbandons() {
    var state = State(keepsRunningWithoutWaiters: false)
    let slot = state.join()!
    _ = state.cancel(slot, detachingWith: CancellationError())
    #expect(!state.isJoinable)
    let joined = state.join()
    #expect(joined == nil)
    let kept = state.keepRunning()
    #expect(!kept)
  }

  @Test("a flight kept running while joinable survives the cancellation of all its waiters")
  func keepRunningWhileJoinable() {
    var state = State(keepsRunningWithoutWaiters: false)
    let started = state.started(Task {}, priority: .medium)
    #expect(started.isNone)
    let slot = state.join()!
    let kept = state.keepRunning()
    #expect(kept)
    let action = state.cancel(slot, detachingWith: CancellationError())
    #expect(action.cancelTask == nil)
    #expect(state.isJoinable)
    let joined = state.join()
    #expect(joined != nil)
  }

  @Test("a finished flight cannot be kept running")
  func keepRunningAfterFinish() {
    var state = State(keepsRunningWithoutWaiters: false)
    _ = state.finish(.success(1))
    #expect(state.hasEnded)
    let kept = state.keepRunning()
    #expect(!kept)
  }

  @Test("a flight waiting for its predecessor runs its load only if it was not abandoned meanwhile")
  func predecessorEnded() {
    var wanted = State(keepsRunningWithoutWaiters: false)
    wanted.waitForPredecessor()
    #expect(wanted.waitsForPredecessor)
    _ = wanted.join()
    let runs = wanted.predecessorEnded()
    #expect(runs)
    #expect(!wanted.waitsForPredecessor)

    var abandoned = State(keepsRunningWithoutWaiters: false)
    abandoned.waitForPredecessor()
    let slot = abandoned.join()!
    _ = abandoned.cancel(slot, detachingWith: CancellationError())
    let abandonedRuns = abandoned.predecessorEnded()
    #expect(!abandonedRuns)
  }
}

extension FlightStateMachine.StartAction {
  fileprivate var isNone: Bool {
    if case .none = self { return true }
    return false
  }
}
