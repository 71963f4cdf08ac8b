import Foundation
import KilnTesting
import Testing

@testable import KilnRepository

/// The outbox sender's order of writes alone, without any concurrency: transitions one by
/// one, then random event sequences checked against the rules.
@Suite
struct OutboxSenderMachineTests {
  struct Failure: Error, CustomStringConvertible {
    var retryAfter: Duration?
    var description: String { retryAfter.map { "503, retry after \($0)" } ?? "503" }
  }

  typealias Machine = OutboxSenderMachine<Failure>
  typealias Lane = Machine.Lane

  static let a = Lane(channel: "notes", scope: Array("a".utf8))
  static let b = Lane(channel: "notes", scope: Array("b".utf8))
  static let c = Lane(channel: "todos", scope: Array("a".utf8))

  /// 3 attempts, 1 s apart, no jitter; a failure's own `retryAfter` wins.
  static func machine(maxInFlight: Int = 2, maxAttempts: Int = 3) -> Machine {
    var policy = RetryPolicy<Failure>.constant(maxAttempts: maxAttempts, delay: .seconds(1))
    policy.delayOverride = { failure, _ in failure.retryAfter }
    return Machine(policy: policy, maxInFlight: maxInFlight, probeInterval: .seconds(15))
  }

  static func send(_ sequence: UInt64, attempt: Int = 1, probe: Bool = false) -> Machine.Action {
    .send(sequence: sequence, attempt: attempt, isProbe: probe)
  }

  /// The token of the single retry or probe scheduled in `actions`.
  static func token(_ actions: [Machine.Action]) -> UInt64? {
    for action in actions {
      switch action {
      case .scheduleRetry(_, let token, _), .scheduleProbe(let token, _): return token
      default: continue
      }
    }
    return nil
  }

  @Test("one lane sends one entry at a time, oldest first; lanes go side by side up to the limit")
  func orderAndLimit() {
    var machine = Self.machine(maxInFlight: 2)
    #expect(machine.enqueued(1, in: Self.a) == [Self.send(1)])
    #expect(machine.enqueued(2, in: Self.a) == [])
    #expect(machine.enqueued(3, in: Self.b) == [Self.send(3)])
    #expect(machine.enqueued(4, in: Self.c) == [])
    #expect(machine.sendingCount == 2)
    // Lane a's next entry (2) is older than lane c's head (4): it takes the free attempt.
    #expect(machine.attemptEnded(1, in: Self.a, .confirmed) == [.remove(sequence: 1), Self.send(2)])
    #expect(machine.attemptEnded(3, in: Self.b, .confirmed) == [.remove(sequence: 3), Self.send(4)])
    #expect(machine.attemptEnded(2, in: Self.a, .confirmed) == [.remove(sequence: 2)])
    #expect(machine.attemptEnded(4, in: Self.c, .confirmed) == [.remove(sequence: 4)])
    #expect(machine.count == 0 && machine.sendingCount == 0)
  }

  @Test("an entry enqueued not ready holds its lane until it is ready; later entries wait behind it")
  func notReadyHoldsLane() {
    var machine = Self.machine(maxInFlight: 2)
    #expect(machine.enqueued(1, in: Self.a, ready: false) == [])
    #expect(machine.enqueued(2, in: Self.a) == [], "the lane's head is not ready: nothing overtakes it")
    #expect(machine.enqueued(3, in: Self.b, ready: false) == [])
    #expect(machine.entryReady(3, in: Self.b) == [Self.send(3)])
    #expect(machine.entryReady(1, in: Self.a) == [Self.send(1)])
    #expect(machine.entryReady(9, in: Self.a) == [], "an unknown entry changes nothing")
    #expect(machine.attemptEnded(1, in: Self.a, .confirmed) == [.remove(sequence: 1), Self.send(2)])
  }

  @Test("a pause hint stops sending at once and schedules a probe; resume starts the heads again")
  func pauseHint() throws {
    var machine = Self.machine()
    let paused = machine.pause()
    #expect(paused.first == .paused)
    let probe = try #require(Self.token(paused))
    #expect(machine.pause() == [], "already paused")
    #expect(machine.enqueued(1, in: Self.a) == [], "nothing is sent while paused")
    #expect(machine.probeDue(token: probe) == [Self.send(1, probe: true)], "the probe still goes")
    var resumed = Self.machine()
    _ = resumed.pause()
    _ = resumed.enqueued(1, in: Self.a)
    #expect(resumed.resume() == [.resumed, Self.send(1)])
  }

  @Test("a dropped entry leaves its lane without a send; one being sent is not dropped")
  func droppedEntries() {
    var machine = Self.machine(maxInFlight: 1)
    _ = machine.enqueued(1, in: Self.a)
    _ = machine.enqueued(2, in: Self.a)
    _ = machine.enqueued(3, in: Self.a)
    #expect(machine.dropped(1, in: Self.a) == [], "being sent")
    #expect(machine.dropped(2, in: Self.a) == [])
    #expect(machine.sequences(in: Self.a) == [1, 3])
    #expect(machine.attemptEnded(1, in: Self.a, .confirmed) == [.remove(sequence: 1), Self.send(3)])
    #expect(machine.dropped(7, in: Self.b) == [])
  }

  @Test("entries restored after a restart are sorted into their lanes, with their attempts")
  func restoredOutOfOrder() {
    var machine = Self.machine(maxInFlight: 1)
    #expect(machine.enqueued(9, in: Self.a) == [Self.send(9)])
    #expect(machine.enqueued(7, in: Self.b, attempts: 2) == [])
    #expect(machine.enqueued(5, in: Self.b, attempts: 4) == [])
    #expect(machine.sequences(in: Self.b) == [5, 7])
    #expect(machine.attemptEnded(9, in: Self.a, .confirmed) == [.remove(sequence: 9), Self.send(5, attempt: 5)])
  }

  @Test("a retryable failure keeps the entry first and waits the policy's delay, or the failure's own")
  func retryWaits() throws {
    var machine = Self.machine()
    _ = machine.enqueued(1, in: Self.a)
    let failed = machine.attemptEnded(1, in: Self.a, .retryable(Failure()))
    let token = try #require(Self.token(failed))
    #expect(
      failed == [
        .recordFailure(sequence: 1, attempts: 1, error: "503"),
        .scheduleRetry(Self.a, token: token, after: .seconds(1)),
      ])
    #expect(machine.enqueued(2, in: Self.a) == [], "the lane waits for its head")
    #expect(machine.retryDue(Self.a, token: token) == [Self.send(1, attempt: 2)])

    let overridden = machine.attemptEnded(1, in: Self.a, .retryable(Failure(retryAfter: .seconds(7))))
    let second = try #require(Self.token(overridden))
    #expect(overridden.last == .scheduleRetry(Self.a, token: second, after: .seconds(7)))
  }

  @Test("after the policy's last attempt the lane stalls, keeps its entries, and others go on")
  func stallsThenResumes() throws {
    var machine = Self.machine(maxAttempts: 3)
    _ = machine.enqueued(1, in: Self.a)
    _ = machine.enqueued(2, in: Self.a)
    for attempt in 1...2 {
      let failed = machine.attemptEnded(1, in: Self.a, .retryable(Failure()))
      #expect(machine.retryDue(Self.a, token: try #require(Self.token(failed))) == [Self.send(1, attempt: attempt + 1)])
    }
    #expect(
      machine.attemptEnded(1, in: Self.a, .retryable(Failure())) == [
        .recordFailure(sequence: 1, attempts: 3, error: "503"), .stalled(Self.a, sequence: 1),
      ])
    #expect(machine.isStalled(Self.a))
    #expect(machine.sequences(in: Self.a) == [1, 2], "nothing is dropped")
    #expect(machine.enqueued(3, in: Self.b) == [Self.send(3)], "other lanes go on")
    // A resume gives the lane the policy's full count again; the recorded attempts go on.
    #expect(machine.resume() == [Self.send(1, attempt: 4)])
    #expect(!machine.isStalled(Self.a))
    let failed = machine.attemptEnded(1, in: Self.a, .retryable(Failure()))
    #expect(failed.contains(.recordFailure(sequence: 1, attempts: 4, error: "503")))
    #expect(Self.token(failed) != nil, "a retry, not a stall: the round starts again")
  }

  @Test("a retry or probe that comes due after the state moved on changes nothing")
  func staleTimers() throws {
    var machine = Self.machine()
    _ = machine.enqueued(1, in: Self.a)
    let first = try #require(Self.token(machine.attemptEnded(1, in: Self.a, .retryable(Failure()))))
    #expect(machine.resume() == [Self.send(1, attempt: 2)])
    let second = try #require(Self.token(machine.attemptEnded(1, in: Self.a, .retryable(Failure()))))
    #expect(machine.retryDue(Self.a, token: first) == [])
    #expect(machine.retryDue(Self.a, token: second) == [Self.send(1, attempt: 3)])
    #expect(machine.retryDue(Self.a, token: second) == [], "a timer fires once")
    #expect(machine.probeDue(token: second) == [], "not paused")
  }

  @Test("an unreachable origin pauses every lane; probes go every interval; an answer resumes all")
  func pauseAndProbe() throws {
    var machine = Self.machine(maxInFlight: 2)
    _ = machine.enqueued(1, in: Self.a)
    _ = machine.enqueued(2, in: Self.b)
    let offline = machine.attemptEnded(1, in: Self.a, .unreachable(Failure()))
    let probe = try #require(Self.token(offline))
    #expect(
      offline == [
        .recordFailure(sequence: 1, attempts: 0, error: "503"), .paused,
        .scheduleProbe(token: probe, after: .seconds(15)),
      ])
    #expect(machine.mode == .paused)
    #expect(
      machine.attemptEnded(2, in: Self.b, .unreachable(Failure())) == [
        .recordFailure(sequence: 2, attempts: 0, error: "503")
      ], "one probe schedule, not two")
    #expect(machine.enqueued(3, in: Self.c) == [], "nothing starts while paused")

    #expect(machine.probeDue(token: probe) == [Self.send(1, probe: true)], "the oldest head probes")
    let stillOffline = machine.attemptEnded(1, in: Self.a, .unreachable(Failure()))
    let next = try #require(Self.token(stillOffline))
    #expect(
      stillOffline == [
        .recordFailure(sequence: 1, attempts: 0, error: "503"), .scheduleProbe(token: next, after: .seconds(15)),
      ])
    #expect(machine.probeDue(token: probe) == [], "the old probe is spent")
    #expect(machine.probeDue(token: next) == [Self.send(1, probe: true)])
    #expect(
      machine.attemptEnded(1, in: Self.a, .confirmed) == [
        .resumed, .remove(sequence: 1), Self.send(2), Self.send(3),
      ])
    #expect(machine.mode == .running)
  }

  @Test("any answer ends a pause, an error too; resume() ends it at once")
  func answersEndPauses() throws {
    var machine = Self.machine(maxInFlight: 2)
    _ = machine.enqueued(1, in: Self.a)
    _ = machine.enqueued(2, in: Self.b)
    _ = machine.attemptEnded(1, in: Self.a, .unreachable(Failure()))
    // An attempt started before the pause comes back with a 503: the origin is reachable.
    let answered = machine.attemptEnded(2, in: Self.b, .retryable(Failure()))
    #expect(answered.first == .resumed)
    #expect(answered.contains(Self.send(1)))
    #expect(machine.mode == .running)

    _ = machine.attemptEnded(1, in: Self.a, .unreachable(Failure()))
    #expect(machine.mode == .paused)
    // Lane b's retry wait ends too: a resume sends everything now.
    #expect(machine.resume() == [.resumed, Self.send(1), Self.send(2, attempt: 2)])
  }

  @Test("a rejected entry leaves and the next goes; a replaced one is sent again as a new write")
  func rejectedAndReplaced() {
    var machine = Self.machine()
    _ = machine.enqueued(1, in: Self.a)
    _ = machine.enqueued(2, in: Self.a)
    _ = machine.attemptEnded(1, in: Self.a, .retryable(Failure()))
    _ = machine.resume()
    #expect(machine.attemptEnded(1, in: Self.a, .replaced) == [Self.send(1)], "attempt 1 of the new write")
    #expect(machine.attemptEnded(1, in: Self.a, .rejected) == [.remove(sequence: 1), Self.send(2)])
  }

  @Test("an end that does not match the attempt in flight, and anything after close, is ignored")
  func ignoredEvents() {
    var machine = Self.machine()
    _ = machine.enqueued(1, in: Self.a)
    _ = machine.enqueued(2, in: Self.a)
    #expect(machine.attemptEnded(2, in: Self.a, .confirmed) == [], "2 is not being sent")
    #expect(machine.attemptEnded(1, in: Self.b, .confirmed) == [], "wrong lane")
    machine.close()
    #expect(machine.attemptEnded(1, in: Self.a, .confirmed) == [])
    #expect(machine.enqueued(3, in: Self.a) == [])
    #expect(machine.resume() == [])
    #expect(machine.mode == .closed)
  }

  // MARK: - Random sequences

  @Test("random events keep the rules, and a final drain sends every write once, in order per lane", arguments: 0..<200)
  func randomSequences(seed: UInt64) {
    var random = SeededRandomNumberGenerator(seed: seed &* 0x9E37_79B9 &+ 7)
    let lanes = [Self.a, Self.b, Self.c]
    let maxInFlight = Int.random(in: 1...3, using: &random)
    var machine = Self.machine(maxInFlight: maxInFlight, maxAttempts: Int.random(in: 1...3, using: &random))
    var laneOf: [UInt64: Lane] = [:]
    var nextSequence: UInt64 = 1
    var sending: [UInt64: Bool] = [:]  // sequence → is a probe
    var retries: [Lane: UInt64] = [:]
    var probe: UInt64?
    var removed: [Lane: [UInt64]] = [:]

    func apply(_ actions: [Machine.Action], after event: String) {
      var paused = machine.mode == .paused
      for action in actions {
        switch action {
        case .send(let sequence, _, let isProbe):
          let lane = laneOf[sequence]!
          #expect(sending[sequence] == nil, "\(event): \(sequence) sent twice at once")
          #expect(!sending.keys.contains { laneOf[$0] == lane }, "\(event): two sends in lane \(lane)")
          #expect(machine.sequences(in: lane).first == sequence, "\(event): \(sequence) is not its lane's head")
          #expect(!paused || isProbe, "\(event): a send while paused")
          sending[sequence] = isProbe
        case .scheduleRetry(let lane, let token, let delay):
          #expect(delay >= .zero)
          retries[lane] = token
        case .scheduleProbe(let token, _):
          probe = token
        case .remove(let sequence):
          removed[laneOf[sequence]!, default: []].append(sequence)
        case .paused:
          paused = true
        case .resumed:
          paused = false
        case .recordFailure, .stalled:
          break
        }
      }
      #expect(sending.count <= maxInFlight, "\(event): \(sending.count) in flight")
      #expect(sending.count == machine.sendingCount)
    }

    for step in 0..<60 {
      switch Int.random(in: 0..<10, using: &random) {
      case 0...2:
        let lane = lanes.randomElement(using: &random)!
        laneOf[nextSequence] = lane
        apply(machine.enqueued(nextSequence, in: lane), after: "step \(step) enqueue \(nextSequence)")
        nextSequence += 1
      case 3...6:
        guard let sequence = sending.keys.sorted().randomElement(using: &random) else { continue }
        let outcome: Machine.Outcome =
          switch Int.random(in: 0..<5, using: &random) {
          case 0: .confirmed
          case 1: .rejected
          case 2: .replaced
          case 3: .retryable(Failure())
          default: .unreachable(Failure())
          }
        sending[sequence] = nil
        apply(machine.attemptEnded(sequence, in: laneOf[sequence]!, outcome), after: "step \(step) end \(sequence)")
      case 7:
        guard let (lane, token) = retries.randomElement(using: &random) else { continue }
        retries[lane] = nil
        apply(machine.retryDue(lane, token: token), after: "step \(step) retry \(lane)")
      case 8:
        guard let token = probe else { continue }
        probe = nil
        apply(machine.probeDue(token: token), after: "step \(step) probe")
      default:
        apply(machine.resume(), after: "step \(step) resume")
      }
    }

    // Drain: the origin is back and accepts everything.
    apply(machine.resume(), after: "drain resume")
    var rounds = 0
    while machine.count > 0, rounds < 10_000 {
      rounds += 1
      guard let sequence = sending.keys.min() else {
        Issue.record("seed \(seed): \(machine.count) entries wait and nothing is sent")
        break
      }
      sending[sequence] = nil
      apply(machine.attemptEnded(sequence, in: laneOf[sequence]!, .confirmed), after: "drain \(sequence)")
    }
    var everything: [UInt64] = []
    for lane in lanes {
      let done = removed[lane] ?? []
      #expect(done == done.sorted(), "seed \(seed): lane \(lane) out of order: \(done)")
      everything += done
    }
    #expect(everything.sorted() == Array(1..<nextSequence), "seed \(seed): every write leaves exactly once")
  }
}
