import Dispatch
import Foundation
import Testing

@testable import KilnDispatch

/// The run-loop half of waiting "on the main thread". Swift Testing never runs a test on
/// the real main thread on Linux (`swift test` parks it in `dispatchMain()`; `@MainActor`
/// tests run on the main queue from a worker thread), so these tests exercise the same
/// code on a thread of their own: a run-loop timer stands in for a main-queue block.
@Suite("CallbackRendezvous: waiting keeps the run loop turning", .timeLimit(.minutes(1)))
struct CallbackRendezvousTests {
  @Test("A waiter that spins its run loop receives a callback delivered by that run loop")
  func spinningReceivesRunLoopCallback() async {
    let outcome = await runOnNewThread { () -> Int? in
      let rendezvous = CallbackRendezvous<Int>()
      let callback = rendezvous.callback
      RunLoop.current.add(Timer(timeInterval: 0.05, repeats: false) { _ in callback(7) }, forMode: .default)
      return rendezvous.wait(until: .now() + defaultTimeout, spinningRunLoop: true)
    }
    #expect(outcome == 7)
  }

  @Test("A waiter that blocks instead never sees a callback that needs its run loop")
  func blockingMissesRunLoopCallback() async {
    let timedOut = await runOnNewThread { () -> Bool in
      let rendezvous = CallbackRendezvous<Int>()
      let callback = rendezvous.callback
      RunLoop.current.add(Timer(timeInterval: 0.01, repeats: false) { _ in callback(7) }, forMode: .default)
      return rendezvous.wait(until: .now() + 0.3, spinningRunLoop: false) == nil
    }
    #expect(timedOut == true)
  }

  @Test("A spinning waiter also receives a callback from another thread, and gives up at its deadline")
  func spinningReceivesOtherThreadsAndTimesOut() async {
    let outcome = await runOnNewThread { () -> (Int?, Int?, Double) in
      let delivered = CallbackRendezvous<Int>()
      let callback = delivered.callback
      Callee.queue.async(after: 0.05) { callback(3) }
      let value = delivered.wait(until: .now() + defaultTimeout, spinningRunLoop: true)
      let start = DispatchTime.now()
      let missing = CallbackRendezvous<Int>().wait(until: .now() + 0.1, spinningRunLoop: true)
      return (value, missing, seconds(since: start))
    }
    #expect(outcome?.0 == 3)
    #expect(outcome?.1 == nil)
    #expect((outcome?.2 ?? 0) >= 0.1)
  }

  @Test("Only the first delivery counts")
  func firstDeliveryWins() {
    let rendezvous = CallbackRendezvous<Int, String>()
    rendezvous.deliver(1, "one")
    rendezvous.deliver(2, "two")
    let (number, name) = rendezvous.wait()
    #expect(number == 1 && name == "one")
  }
}
