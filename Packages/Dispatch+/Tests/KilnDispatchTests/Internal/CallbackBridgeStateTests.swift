import KilnTesting
import Testing

@testable import KilnDispatch

/// The bridge's state machine, event by event, without any concurrency. Waiters are plain
/// numbers; a hook is identified by the string it records.
@Suite("CallbackBridgeState", .timeLimit(.minutes(1)))
struct CallbackBridgeStateTests {
  typealias State = CallbackBridgeState<Int, Int>

  /// A cancel hook that records `name` when called.
  private func hook(_ name: String, into calls: Recorder<String>) -> @Sendable () -> Void {
    { calls.append(name) }
  }

  private func runsCallee(_ action: State.StartAction) -> Bool {
    if case .runCallee = action { return true }
    return false
  }

  @Test("The first delivery resumes the waiter; later ones are ignored")
  func firstDeliveryWins() {
    var state = State()
    #expect(runsCallee(state.start(1)))
    var cancelledWhileWaiting = state  // a copy: still waiting, cancellation would resume it
    #expect(cancelledWhileWaiting.cancel().waiter == 1)
    #expect(state.deliver(10) == 1)
    #expect(state.deliver(20) == nil)
    #expect(state.cancel().waiter == nil)
  }

  @Test("Cancellation while waiting resumes the waiter and hands out the hook, once")
  func cancelWhileWaiting() {
    let calls = Recorder<String>()
    var state = State()
    _ = state.start(1)
    #expect(state.register(cancelHook: hook("hook", into: calls)) == nil)
    let action = state.cancel()
    #expect(action.waiter == 1)
    action.cancelHook?()
    #expect(calls.values == ["hook"])
    #expect(state.deliver(10) == nil)
    let again = state.cancel()
    #expect(again.waiter == nil)
    #expect(again.cancelHook == nil)
  }

  @Test("Cancellation before the waiter starts resumes it at once, without running the callee")
  func cancelBeforeStart() {
    var state = State()
    let action = state.cancel()
    #expect(action.waiter == nil)
    #expect(action.cancelHook == nil)
    guard case .resumeCancelled(let waiter) = state.start(1) else {
      Issue.record("The callee would run although the task was cancelled")
      return
    }
    #expect(waiter == 1)
  }

  @Test("A hook registered after cancellation is handed back to be called at once")
  func hookAfterCancel() {
    let calls = Recorder<String>()
    var state = State()
    _ = state.start(1)
    let action = state.cancel()
    #expect(action.waiter == 1)
    #expect(action.cancelHook == nil)
    let late = state.register(cancelHook: hook("late", into: calls))
    late?()
    #expect(calls.values == ["late"])
  }

  @Test("After a delivery the hook is dropped and never called")
  func hookDroppedAfterDelivery() {
    let calls = Recorder<String>()
    var state = State()
    _ = state.start(1)
    _ = state.register(cancelHook: hook("early", into: calls))
    #expect(state.deliver(10) == 1)
    #expect(state.cancel().cancelHook == nil)
    #expect(state.register(cancelHook: hook("late", into: calls)) == nil)
    #expect(calls.count == 0)
  }
}
