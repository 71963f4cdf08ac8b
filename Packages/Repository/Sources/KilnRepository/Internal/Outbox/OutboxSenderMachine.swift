import KilnCore

/// The order of an outbox's writes as a plain value: which entry to send now, which waits,
/// and what follows when an attempt ends. Every event returns the actions to carry out; the
/// sender that owns it does the sending, the waiting and the store writes.
///
/// The rules:
/// - the entries of one **lane** (a channel and a scope, usually one param) are sent one at a
///   time, oldest first: a write never overtakes an earlier write to the same thing;
/// - at most `maxInFlight` attempts run at once, over all lanes; the lane with the oldest
///   waiting entry goes first;
/// - a retryable failure (a 5xx, a 429, the server's "still in progress" 409) keeps the entry
///   at the head of its lane and waits as the ``RetryPolicy`` says (its `delayOverride`
///   honours `Retry-After`); after the policy's last attempt the lane **stalls** until a
///   ``resume()``: an entry is never dropped for a failure that may pass;
/// - an unreachable origin **pauses** every lane. While paused, one head entry is sent every
///   `probeInterval` as a probe; any answer from the origin (even an error) resumes
///   everything. ``resume()`` (the app saw the network come back, or the user asked) resumes
///   at once;
/// - a confirmed or rejected entry leaves its lane, and the lane's next entry goes.
///
/// Timers carry a token: a retry or probe that comes due after the state moved on (a resume,
/// a newer retry) changes nothing.
///
/// Tested without concurrency: `OutboxSenderMachineTests`, a table of transitions and a
/// model-based run of random events.
struct OutboxSenderMachine<Failure: Error>: Sendable {
  /// What orders entries: those of one lane go one at a time, in sequence order.
  struct Lane: Hashable, Sendable {
    var channel: String
    var scope: [UInt8]
  }

  /// How an attempt ended, as the sender classified it.
  enum Outcome: Sendable {
    /// The server applied the write.
    case confirmed
    /// The server refused it for good (a 4xx); it leaves the outbox.
    case rejected
    /// Refused, and replaced by a resolver's change: sent again at once, as a new write.
    case replaced
    /// It may pass: the policy decides whether and when to try again.
    case retryable(Failure)
    /// The origin could not be reached: every lane pauses.
    case unreachable(Failure)

    var isUnreachable: Bool {
      if case .unreachable = self { return true }
      return false
    }
  }

  /// What the sender carries out, in order.

  enum Action: Equatable, Sendable {
    /// Send entry `sequence`; `attempt` counts from 1 since it was enqueued or replaced.
    case send(sequence: UInt64, attempt: Int, isProbe: Bool)
    /// Call ``retryDue(_:token:)`` with `lane` and `token` after `delay`.
    case scheduleRetry(Lane, token: UInt64, after: Duration)
    /// Call ``probeDue(token:)`` with `token` after `delay`.
    case scheduleProbe(token: UInt64, after: Duration)
    /// Remove the entry from the store (confirmed or rejected).
    case remove(sequence: UInt64)
    /// Record the failure in the store: attempts so far and the error.
    case recordFailure(sequence: UInt64, attempts: Int, error: String)
    /// The lane waits for a resume: its head failed as often as the policy allows.
    case stalled(Lane, sequence: UInt64)
    /// Every lane waits: the origin is unreachable.
    case paused
    /// Sending goes on.
    case resumed
  }

  enum Mode: Equatable, Sendable {
    case running
    case paused
    case closed
  }

  private struct Entry: Sendable {
    let sequence: UInt64
    /// Attempts that failed since the entry was enqueued (or replaced): what is recorded.
    var attempts: Int
    /// Attempts that failed since the last resume: what the policy counts.
    var round: Int
    /// Whether it may be sent: a new write waits until its change is shown (see
    /// ``entryReady(_:in:)``), so that no answer overtakes it.
    var isReady: Bool
  }

  /// A lane's entries in sequence order, the head first: appending the newest and removing
  /// the head cost O(1) (a head index, not a shift), finding one a binary search, so a lane of
  /// 10,000 entries drains in linear time.
  private struct EntryQueue: Sendable {
    private var storage: [Entry] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Entry? { isEmpty ? nil : storage[head] }
    var sequences: [UInt64] { storage[head...].map(\.sequence) }

    subscript(position: Int) -> Entry {
      get { storage[head + position] }
      set { storage[head + position] = newValue }
    }

    /// The position of entry `sequence`, from 0 (the head).
    func position(of sequence: UInt64) -> Int? {
      var low = head
      var high = storage.count
      while low < high {
        let middle = (low + high) / 2
        if storage[middle].sequence < sequence { low = middle + 1 } else { high = middle }
      }
      return low < storage.count && storage[low].sequence == sequence ? low - head : nil
    }

    /// Inserts `entry` in sequence order, never before position `start`.
    mutating func insert(_ entry: Entry, notBefore start: Int) {
      if let last = storage.last, last.sequence > entry.sequence {
        let index = storage[(head + start)...].firstIndex { $0.sequence > entry.sequence } ?? storage.endIndex
        storage.insert(entry, at: index)
      } else {
        storage.append(entry)
      }
    }

    mutating func remove(at position: Int) {
      guard position == 0 else {
        storage.remove(at: head + position)
        return
      }
      head += 1
      if head == storage.count {
        storage.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 64, head * 2 >= storage.count {
        storage.removeFirst(head)
        head = 0
      }
    }

    mutating func resetRounds() {
      for index in head..<storage.count { storage[index].round = 0 }
    }
  }

  private struct LaneState: Sendable {
    /// Waiting entries, in sequence order; the head is the one sent.
    var entries = EntryQueue()
    var isSending = false
    /// The token of the retry it waits for, if any.
    var retryToken: UInt64?
    var isStalled = false

    var isReady: Bool {
      entries.first?.isReady == true && !isSending && retryToken == nil && !isStalled
    }

    /// Nothing waits or is sent: the lane can be forgotten.
    var isDone: Bool { entries.isEmpty && !isSending }

    /// Ends a stall or a retry wait, and gives every entry the policy's full count again.
    mutating func startRound() {
      isStalled = false
      retryToken = nil
      entries.resetRounds()
    }
  }

  let policy: RetryPolicy<Failure>
  let maxInFlight: Int
  let probeInterval: Duration

  private(set) var mode = Mode.running
  private var lanes: [Lane: LaneState] = [:]
  private var inFlight = 0
  private var probe: UInt64?
  private var probeToken: UInt64?
  private var nextToken: UInt64 = 0

  init(policy: RetryPolicy<Failure>, maxInFlight: Int, probeInterval: Duration) {
    precondition(maxInFlight >= 1, "an outbox sends at least one write at a time")
    precondition(probeInterval > .zero, "an outbox's probe interval must be positive")
    self.policy = policy
    self.maxInFlight = maxInFlight
    self.probeInterval = probeInterval
  }

  // MARK: - Observing

  /// The number of attempts running.
  var sendingCount: Int { inFlight }

  /// The sequences waiting in `lane` (the head first), whatever they wait for.
  func sequences(in lane: Lane) -> [UInt64] {
    lanes[lane]?.entries.sequences ?? []
  }

  /// Whether `lane` waits for a resume.
  func isStalled(_ lane: Lane) -> Bool {
    lanes[lane]?.isStalled ?? false
  }

  /// The number of entries waiting or being sent.
  var count: Int { lanes.values.reduce(0) { $0 + $1.entries.count } }

  // MARK: - Events

  /// An entry joins its lane: a new write, or one restored from the store after a restart
  /// (with the attempts it had failed). One that is not `ready` holds its lane from the
  /// head until ``entryReady(_:in:)``: entries enqueued in sequence order keep their order
  /// even when what follows the enqueue finishes in another order.
  mutating func enqueued(_ sequence: UInt64, in lane: Lane, attempts: Int = 0, ready: Bool = true) -> [Action] {
    guard mode != .closed else { return [] }
    let entry = Entry(sequence: sequence, attempts: attempts, round: 0, isReady: ready)
    var state = lanes.removeValue(forKey: lane) ?? LaneState()
    // Restored entries may arrive in any order: keep the lane sorted (never moving the head
    // being sent).
    state.entries.insert(entry, notBefore: state.isSending ? 1 : 0)
    lanes[lane] = state
    return pump()
  }

  /// Entry `sequence` of `lane`, enqueued not ready, may be sent.
  mutating func entryReady(_ sequence: UInt64, in lane: Lane) -> [Action] {
    let found = updateLane(lane) { state in
      guard let position = state.entries.position(of: sequence) else { return false }
      state.entries[position].isReady = true
      return true
    }
    return found == true ? pump() : []
  }

  /// Entry `sequence` of `lane` leaves without being sent (it was quarantined); nothing
  /// happens while it is being sent.
  mutating func dropped(_ sequence: UInt64, in lane: Lane) -> [Action] {
    let found = updateLane(lane) { state in
      guard let position = state.entries.position(of: sequence), !(position == 0 && state.isSending) else {
        return false
      }
      state.entries.remove(at: position)
      if position == 0 { state.retryToken = nil }
      return true
    }
    return found == true ? pump() : []
  }

  /// Runs `body` on the state of `lane` in place (no copy of its entries), forgetting the lane
  /// once it is done; `nil` when there is no such lane.
  private mutating func updateLane<Result>(_ lane: Lane, _ body: (inout LaneState) -> Result) -> Result? {
    guard var state = lanes.removeValue(forKey: lane) else { return nil }
    let result = body(&state)
    if !state.isDone { lanes[lane] = state }
    return result
  }

  /// The attempt at entry `sequence` of `lane` ended.
  mutating func attemptEnded(_ sequence: UInt64, in lane: Lane, _ outcome: Outcome) -> [Action] {
    guard let current = lanes[lane], current.isSending, current.entries.first?.sequence == sequence else { return [] }
    var state = lanes.removeValue(forKey: lane)!
    state.isSending = false
    inFlight -= 1
    let wasProbe = probe == sequence
    if wasProbe { probe = nil }
    var actions: [Action] = []
    if mode == .paused, !outcome.isUnreachable {
      // The origin answered (a probe, or an attempt started before the pause): it is back.
      mode = .running
      probeToken = nil
      actions.append(.resumed)
    }
    switch outcome {
    case .confirmed, .rejected:
      state.entries.remove(at: 0)
      actions.append(.remove(sequence: sequence))
    case .replaced:
      state.entries[0].attempts = 0
      state.entries[0].round = 0
    case .retryable(let failure):
      state.entries[0].attempts += 1
      state.entries[0].round += 1
      let entry = state.entries[0]
      actions.append(.recordFailure(sequence: sequence, attempts: entry.attempts, error: "\(failure)"))
      if policy.allowsRetry(after: failure, attempt: entry.round) {
        let token = takeToken()
        state.retryToken = token
        actions.append(.scheduleRetry(lane, token: token, after: policy.delay(after: failure, attempt: entry.round)))
      } else {
        state.isStalled = true
        actions.append(.stalled(lane, sequence: sequence))
      }
    case .unreachable(let failure):
      // Being offline is no failure of the write: it does not count against the policy.
      actions.append(
        .recordFailure(sequence: sequence, attempts: state.entries[0].attempts, error: "\(failure)"))
      if mode == .running {
        mode = .paused
        actions.append(.paused)
      }
      if mode == .paused, wasProbe || (probeToken == nil && probe == nil) {
        actions.append(scheduleProbe())
      }
    }
    if !state.isDone { lanes[lane] = state }
    return actions + pump()
  }

  /// The retry of `lane` scheduled with `token` is due.
  mutating func retryDue(_ lane: Lane, token: UInt64) -> [Action] {
    let due = updateLane(lane) { state in
      guard state.retryToken == token else { return false }
      state.retryToken = nil
      return true
    }
    return due == true ? pump() : []
  }

  /// The probe scheduled with `token` is due: one head entry goes, to learn whether the
  /// origin is back.
  mutating func probeDue(token: UInt64) -> [Action] {
    guard mode == .paused, probeToken == token, probe == nil, inFlight < maxInFlight else { return [] }
    probeToken = nil
    let candidate = lanes.filter { !$0.value.isSending && $0.value.entries.first?.isReady == true }
      .min { $0.value.entries[0].sequence < $1.value.entries[0].sequence }
    guard let (lane, _) = candidate else {
      // Nothing to send: the next write starts its own probe when it arrives.
      return []
    }
    return [start(lane, isProbe: true)]
  }

  /// Sending goes on now: a pause ends, stalled lanes and retry waits start again with the
  /// policy's full count of attempts.
  mutating func resume() -> [Action] {
    guard mode != .closed else { return [] }
    var actions: [Action] = []
    if mode == .paused {
      mode = .running
      probeToken = nil
      actions.append(.resumed)
    }
    for index in lanes.indices { lanes.values[index].startRound() }
    return actions + pump()
  }

  /// The app says the origin cannot be reached: every scope pauses now, as after an unreachable
  /// answer (attempts in flight end as they will), and a probe is scheduled in case the hint
  /// is wrong.
  mutating func pause() -> [Action] {
    guard mode == .running else { return [] }
    mode = .paused
    var actions: [Action] = [.paused]
    if probeToken == nil && probe == nil { actions.append(scheduleProbe()) }
    return actions
  }

  /// Nothing more is sent; the entries stay in the store.
  mutating func close() {
    mode = .closed
    lanes = [:]
    inFlight = 0
    probe = nil
    probeToken = nil
  }

  // MARK: - Internal

  /// Starts the heads of ready lanes, oldest first, while attempts are free.
  private mutating func pump() -> [Action] {
    guard mode == .running, inFlight < maxInFlight else { return [] }
    // The ready heads, by sequence: a plain loop and an array (a key path and a filtered
    // dictionary cost a generic-metadata lookup and a hash table per answer, measured).
    var ready: [(sequence: UInt64, lane: Lane)] = []
    for (lane, state) in lanes where state.isReady {
      ready.append((state.entries[0].sequence, lane))
    }
    ready.sort { $0.sequence < $1.sequence }
    var actions: [Action] = []
    for (_, lane) in ready.prefix(maxInFlight - inFlight) {
      actions.append(start(lane, isProbe: false))
    }
    return actions
  }

  private mutating func start(_ lane: Lane, isProbe: Bool) -> Action {
    lanes[lane]!.isSending = true
    inFlight += 1
    let entry = lanes[lane]!.entries[0]
    if isProbe { probe = entry.sequence }
    return .send(sequence: entry.sequence, attempt: entry.attempts + 1, isProbe: isProbe)
  }

  private mutating func scheduleProbe() -> Action {
    let token = takeToken()
    probeToken = token
    return .scheduleProbe(token: token, after: probeInterval)
  }

  private mutating func takeToken() -> UInt64 {
    nextToken += 1
    return nextToken
  }
}

extension OutboxSenderMachine.Lane: CustomStringConvertible {
  var description: String { "\(channel)/\(String(decoding: scope, as: UTF8.self))" }
}
