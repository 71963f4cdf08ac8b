import Foundation
import KilnTesting
import Testing

@testable import KilnRepository

/// The repository's state machine alone, without any concurrency: a table of transitions,
/// then random event sequences checked against a reference model.
@Suite
struct FlowStateMachineTests {
  typealias Machine = FlowStateMachine<Int>

  // MARK: - Transition table

  /// What an event's actions and the state after it look like, in a form a table can spell.
  struct Outcome: Equatable, CustomStringConvertible {
    /// The state emitted (`loading(1)`, `completed(2)`, `error(1)`, `loading(nil)`…), or nil.
    var emits: String?
    var startsFetch = false
    var cancelsFetch = false
    /// The content written, `.some(nil)` for a removal.
    var writes: Int?? = nil
    /// The main activity after the event.
    var main: String

    var description: String {
      "emits \(emits ?? "-"), start \(startsFetch), cancel \(cancelsFetch), writes \(String(describing: writes)), main \(main)"
    }
  }

  struct Transition: Sendable, CustomTestStringConvertible {
    let name: String
    let given: @Sendable (inout Machine) -> Void
    let event: @Sendable (inout Machine) -> Machine.Actions
    let expected: Outcome

    var testDescription: String { name }
  }

  static let day = Date(timeIntervalSince1970: 86_400)
  static let later = Date(timeIntervalSince1970: 90_000)

  static func reading(_ value: Int?, at date: Date = day, stale: Bool = false) -> Machine.CacheReading {
    Machine.CacheReading(cached: value.map { CachedData(data: $0, cachedAt: date) }, isStale: value == nil || stale)
  }

  static func describe(_ state: LoadingState<Int>?) -> String? {
    switch state {
    case nil: nil
    case .loading(let content)?: "loading(\(content.map(String.init) ?? "nil"))"
    case .completed(let content, let next, let prev)?:
      next == .fixed(canRequestAdditionalData: false) && prev == .fixed(canRequestAdditionalData: false)
        ? "completed(\(content))" : "completed(\(content), \(next), \(prev))"
    case .error(_, let content)?: "error(\(content.map(String.init) ?? "nil"))"
    }
  }

  static func main(_ machine: Machine) -> String {
    switch machine.main {
    case .idle: "idle"
    case .loading: "loading"
    case .failed: "failed"
    }
  }

  static func outcome(_ actions: Machine.Actions, _ machine: Machine) -> Outcome {
    Outcome(
      emits: describe(actions.emit?.state), startsFetch: actions.start != nil, cancelsFetch: actions.cancel != nil,
      writes: actions.write.map { $0.data }, main: main(machine))
  }

  /// Shows 1 from a valid cache.
  static func showingCached(_ machine: inout Machine) {
    _ = machine.validationRead(reading(1), token: machine.generation)
  }

  /// Fetching, over cached 1 that expired.
  static func fetchingOverStale(_ machine: inout Machine) {
    _ = machine.validationRead(reading(1, stale: true), token: machine.generation)
  }

  static let transitions: [Transition] = [
    Transition(
      name: "a valid cache read on a new param shows it completed",
      given: { _ in }, event: { $0.validationRead(reading(1), token: 0).0 },
      expected: Outcome(emits: "completed(1)", main: "idle")),
    Transition(
      name: "an empty cache starts a fetch with no content",
      given: { _ in }, event: { $0.validationRead(reading(nil), token: 0).0 },
      expected: Outcome(emits: "loading(nil)", startsFetch: true, main: "loading")),
    Transition(
      name: "an expired cache shows its content while it refetches",
      given: { _ in }, event: { $0.validationRead(reading(1, stale: true), token: 0).0 },
      expected: Outcome(emits: "loading(1)", startsFetch: true, main: "loading")),
    Transition(
      name: "a read that an update overtook changes nothing",
      given: { _ = $0.update(5, now: later) }, event: { $0.validationRead(reading(1), token: 0).0 },
      expected: Outcome(main: "idle")),
    Transition(
      name: "reading the entry already shown emits nothing",
      given: showingCached, event: { $0.validationRead(reading(1), token: $0.generation).0 },
      expected: Outcome(main: "idle")),
    Transition(
      name: "a read while a fetch is in flight joins it",
      given: fetchingOverStale, event: { $0.validationRead(reading(1), token: $0.generation).0 },
      expected: Outcome(main: "loading")),
    Transition(
      name: "an invalidated shown content refetches on the next read",
      given: {
        showingCached(&$0)
        _ = $0.invalidate(canFetch: false)
      },
      event: { $0.validationRead(reading(1), token: $0.generation).0 },
      expected: Outcome(emits: "loading(1)", startsFetch: true, main: "loading")),
    Transition(
      name: "a fetch that succeeds shows and writes its content",
      given: fetchingOverStale, event: { $0.fetchFinished($0.generation, .success(2), now: later) },
      expected: Outcome(emits: "completed(2)", writes: .some(2), main: "idle")),
    Transition(
      name: "a fetch that fails keeps the content in the error",
      given: fetchingOverStale, event: { $0.fetchFinished($0.generation, .failure(TestError("x")), now: later) },
      expected: Outcome(emits: "error(1)", main: "failed")),
    Transition(
      name: "a superseded fetch's answer changes nothing",
      given: {
        fetchingOverStale(&$0)
        _ = $0.startFetch()
      },
      event: { $0.fetchFinished($0.generation - 1, .success(9), now: later) },
      expected: Outcome(main: "loading")),
    Transition(
      name: "a fetch answered after an update changes nothing",
      given: {
        fetchingOverStale(&$0)
        _ = $0.update(5, now: later)
      },
      event: { $0.fetchFinished(1, .success(9), now: later) },
      expected: Outcome(main: "idle")),
    Transition(
      name: "an update during a fetch shows and writes the update",
      given: fetchingOverStale, event: { $0.update(5, now: later) },
      expected: Outcome(emits: "completed(5)", writes: .some(5), main: "idle")),
    Transition(
      name: "a clear shows loading with no content and removes the entry",
      given: showingCached, event: { $0.update(nil, now: later) },
      expected: Outcome(emits: "loading(nil)", writes: .some(nil), main: "idle")),
    Transition(
      name: "a refresh over a failure shows loading with the content",
      given: {
        fetchingOverStale(&$0)
        _ = $0.fetchFinished($0.generation, .failure(TestError("x")), now: later)
      },
      event: { $0.startFetch() },
      expected: Outcome(emits: "loading(1)", startsFetch: true, main: "loading")),
    Transition(
      name: "an observed invalidation refetches",
      given: showingCached, event: { $0.invalidate(canFetch: true) },
      expected: Outcome(emits: "loading(1)", startsFetch: true, main: "loading")),
    Transition(
      name: "an unobserved invalidation only marks the content stale",
      given: showingCached, event: { $0.invalidate(canFetch: false) },
      expected: Outcome(main: "idle")),
    Transition(
      name: "an invalidation during a fetch starts no second one",
      given: fetchingOverStale, event: { $0.invalidate(canFetch: true) },
      expected: Outcome(main: "loading")),
    Transition(
      name: "an abandoned fetch is cancelled, emitting nothing",
      given: fetchingOverStale, event: { $0.abandonFetch() },
      expected: Outcome(cancelsFetch: true, main: "idle")),
    Transition(
      name: "a fetch someone waits for is not abandoned",
      given: {
        fetchingOverStale(&$0)
        $0.waiterJoined($0.generation)
      }, event: { $0.abandonFetch() },
      expected: Outcome(main: "loading")),
    Transition(
      name: "the only waiter leaving by cancellation abandons the fetch",
      given: {
        fetchingOverStale(&$0)
        $0.waiterJoined($0.generation)
      },
      event: { $0.abandonFetch($0.generation, leavingWaiters: 1) },
      expected: Outcome(cancelsFetch: true, main: "idle")),
    Transition(
      name: "a waiter of an older fetch does not abandon the newer one",
      given: {
        fetchingOverStale(&$0)
        _ = $0.startFetch()
      },
      event: { $0.abandonFetch($0.generation - 1, leavingWaiters: 1) },
      expected: Outcome(main: "loading")),
    Transition(
      name: "a page starting shows the next page loading",
      given: showingCached, event: { $0.pageStarted(.next).1 },
      expected: Outcome(emits: "completed(1, loading, fixed(canRequestAdditionalData: false))", main: "idle")),
    Transition(
      name: "a page merged shows and writes the merged content",
      given: {
        showingCached(&$0)
        _ = $0.pageStarted(.next)
      },
      event: { $0.pageFinished(.next, token: $0.generation, .success({ $0 + 10 }), now: later).1 },
      expected: Outcome(emits: "completed(11)", writes: .some(11), main: "idle")),
    Transition(
      name: "a page that failed shows its error beside the content",
      given: {
        showingCached(&$0)
        _ = $0.pageStarted(.prev)
      },
      event: { $0.pageFinished(.prev, token: $0.generation, .failure(TestError("p")), now: later).1 },
      expected: Outcome(
        emits: "completed(1, fixed(canRequestAdditionalData: false), error(TestError(p)))",
        main: "idle")),
    Transition(
      name: "a page that no longer fits is dropped and its loading state cleared",
      given: {
        showingCached(&$0)
        _ = $0.pageStarted(.next)
      },
      event: { $0.pageFinished(.next, token: $0.generation, .success({ _ in nil }), now: later).1 },
      expected: Outcome(emits: "completed(1)", main: "idle")),
    Transition(
      name: "a page answered after a refresh began is dropped",
      given: {
        showingCached(&$0)
        _ = $0.pageStarted(.next)
        _ = $0.startFetch()
      },
      event: { $0.pageFinished(.next, token: $0.generation - 1, .success({ $0 + 10 }), now: later).1 },
      expected: Outcome(main: "loading")),
  ]

  @Test("every transition of the table", arguments: transitions)
  func transition(_ transition: Transition) {
    var machine = Machine(canSettle: true, paging: nil)
    transition.given(&machine)
    let actions = transition.event(&machine)
    #expect(Self.outcome(actions, machine) == transition.expected)
  }

  @Test("additional page requests follow the main state and their own")
  func pageRequests() {
    var machine = Machine(canSettle: false, paging: { _ in (true, false) })
    func request(_ continueWhenError: Bool = true) -> String {
      switch machine.pageRequest(.next, continueWhenError: continueWhenError) {
      case .done(let result): "\(result)"
      case .proceed(let content): "proceed(\(content))"
      }
    }
    #expect(request() == "rejected(KilnRepository.AdditionalRequestError.onNil)")
    _ = machine.validationRead(Self.reading(nil), token: 0)
    #expect(request() == "skipped(KilnRepository.AdditionalRequestSkipReason.mainLoading)")
    _ = machine.fetchFinished(machine.generation, .failure(TestError("x")), now: Self.day)
    #expect(request() == "rejected(KilnRepository.AdditionalRequestError.onErrorState)")
    _ = machine.startFetch()
    _ = machine.fetchFinished(machine.generation, .success(1), now: Self.day)
    #expect(
      Self.describe(machine.state)
        == "completed(1, fixed(canRequestAdditionalData: true), fixed(canRequestAdditionalData: false))")
    #expect(request() == "proceed(1)")
    _ = machine.pageStarted(.next)
    #expect(request() == "skipped(KilnRepository.AdditionalRequestSkipReason.alreadyLoading)")
    _ = machine.pageFinished(.next, token: machine.generation, .failure(TestError("p")), now: Self.day)
    #expect(request(false) == "skipped(KilnRepository.AdditionalRequestSkipReason.previousError)")
    #expect(request(true) == "proceed(1)")
  }

  @Test("the cache shown settles only when valid, completed and quiet; any change unsettles it")
  func settling() {
    var machine = Machine(canSettle: true, paging: nil)
    _ = machine.validationRead(Self.reading(1), token: 0)
    #expect(machine.settledAt == Self.day)
    _ = machine.invalidate(canFetch: false)
    #expect(machine.settledAt == nil)
    _ = machine.update(2, now: Self.later)
    #expect(machine.settledAt == nil)
    // Shown, but its write has not ended: not settled.
    _ = machine.validationRead(Self.reading(2, at: Self.later), token: machine.generation)
    #expect(machine.settledAt == nil)
    machine.writeFinished()
    _ = machine.validationRead(Self.reading(2, at: Self.later), token: machine.generation)
    #expect(machine.settledAt == Self.later)
    // A machine whose cache does not read in place never settles.
    var remote = Machine(canSettle: false, paging: nil)
    _ = remote.validationRead(Self.reading(1), token: 0)
    #expect(remote.settledAt == nil)
  }

  // MARK: - Model-based

  /// What the repository must do, written as plainly as possible: the content is what the
  /// newest of updates, live fetches and merged pages set; a fetch is live until an update, a
  /// newer fetch or a cancellation replaces it; stale content (expired or invalidated) is
  /// refetched by the next validation; and the cache ends with the content.
  struct Reference {
    var content: Int?
    var hasState = false
    var liveFetch: UInt64?
    var invalidated = false
    /// The last fetch failed (and nothing replaced its error since).
    var failed = false
    var cache: Int?

    /// The kind of state shown: a live fetch loads, a failure shows its error, no content loads.
    var expectedKind: String {
      if liveFetch != nil { return "loading" }
      if failed { return "error" }
      return content == nil ? "loading" : "completed"
    }
  }

  @Test("random event sequences keep the machine where the reference model says", arguments: 0..<50)
  func modelBased(seed: UInt64) {
    var random = SeededRandomNumberGenerator(seed: seed &* 0x9E37_79B9 &+ 1)
    var machine = Machine(canSettle: true, paging: { _ in (true, false) })
    var model = Reference()
    var started: [UInt64] = []
    var writes: [Machine.CacheWrite] = []
    var cachedAt: Date?
    var clock = Self.day

    func apply(_ actions: Machine.Actions, _ context: Comment) {
      if let generation = actions.cancel {
        #expect(model.liveFetch == generation, "\(context): cancels the live fetch only")
        model.liveFetch = nil
        model.failed = false
      }
      if let start = actions.start {
        #expect(start.stale == model.content, "\(context): a fetch starts over the content")
        model.liveFetch = start.generation
        model.failed = false
        model.hasState = true
        started.append(start.generation)
      }
      if let write = actions.write { writes.append(write) }
      if let emitted = actions.emit {
        #expect(emitted.state.content == model.content, "\(context): the state emitted carries the content")
        #expect(emitted.state.kind == model.expectedKind, "\(context): the kind of state shown")
      }
    }

    /// The coordinator reads the cache after every write enqueued before the read.
    func flushWrites() {
      while !writes.isEmpty {
        let write = writes.removeFirst()
        model.cache = write.data
        cachedAt = write.data == nil ? nil : write.cachedAt
        machine.writeFinished()
      }
    }

    for step in 0..<300 {
      let context: Comment = "seed \(seed) step \(step)"
      clock = clock.addingTimeInterval(1)
      let generationBefore = machine.generation
      switch Int.random(in: 0..<9, using: &random) {
      case 0:  // A subscriber or validate(): reads the cache, refetches what is stale.
        flushWrites()
        let expired = Bool.random(using: &random)
        let reading = Machine.CacheReading(
          cached: model.cache.map { CachedData(data: $0, cachedAt: cachedAt) }, isStale: model.cache == nil || expired)
        let wasLive = model.liveFetch != nil
        if !wasLive, !model.hasState { model.content = model.cache }
        if !wasLive {
          model.hasState = true
          model.failed = false
        }
        let (actions, validation) = machine.validationRead(reading, token: machine.generation)
        let refetches = !wasLive && (reading.isStale || model.invalidated)
        #expect((actions.start != nil) == refetches, "\(context): refetches exactly what is stale")
        #expect((validation == .wait) == (wasLive || refetches), "\(context): waits for a fetch in flight")
        apply(actions, context)
      case 1:  // refresh()
        apply(machine.startFetch(), context)
      case 2, 3:  // A fetch answers: the live one, or one an update or a newer fetch overtook.
        guard let generation = started.randomElement(using: &random) else { continue }
        let value = Int.random(in: 0..<1_000, using: &random)
        let succeeds = Bool.random(using: &random)
        let isLive = model.liveFetch == generation
        if isLive {
          model.liveFetch = nil
          model.failed = !succeeds
          if succeeds {
            model.content = value
            model.invalidated = false
          }
        }
        let actions = machine.fetchFinished(
          generation, succeeds ? .success(value) : .failure(TestError("f")), now: clock)
        #expect((actions.emit != nil) == isLive, "\(context): only the live fetch's answer shows")
        #expect((actions.write != nil) == (isLive && succeeds), "\(context): only its success is written")
        apply(actions, context)
      case 4:  // update(_:) or clear()
        let value: Int? = Bool.random(using: &random) ? Int.random(in: 0..<1_000, using: &random) : nil
        model.content = value
        model.liveFetch = nil
        model.invalidated = false
        model.failed = false
        model.hasState = true
        apply(machine.update(value, now: clock), context)
      case 5:  // An invalidation, observed (with a fetcher) or not.
        let observed = Bool.random(using: &random)
        model.invalidated = true
        let startsFetch = observed && model.liveFetch == nil
        let actions = machine.invalidate(canFetch: observed)
        #expect((actions.start != nil) == startsFetch, "\(context): an observed invalidation refetches")
        apply(actions, context)
      case 6:  // The last subscriber leaves: the fetch nobody waits for is cancelled.
        apply(machine.abandonFetch(), context)
      case 7:  // The oldest pending write reaches the cache.
        guard !writes.isEmpty else { continue }
        let write = writes.removeFirst()
        model.cache = write.data
        cachedAt = write.data == nil ? nil : write.cachedAt
        machine.writeFinished()
      default:  // A next page: merged, or overtaken by an update while it loads.
        guard case .proceed(let content) = machine.pageRequest(.next, continueWhenError: true) else {
          #expect(
            model.liveFetch != nil || model.failed || model.content == nil || !model.hasState,
            "\(context): a page is refused only while loading, failed or empty")
          continue
        }
        #expect(content == model.content && model.liveFetch == nil, "\(context): pages load over idle content")
        let (token, startedPage) = machine.pageStarted(.next)
        apply(startedPage, context)
        let overtaken = Bool.random(using: &random)
        if overtaken {
          model.content = 7
          model.invalidated = false
          model.failed = false
          apply(machine.update(7, now: clock), context)
        } else {
          model.content = content + 1
        }
        let (result, finished) = machine.pageFinished(.next, token: token, .success({ $0 + 1 }), now: clock)
        #expect(
          (result == .loaded) == !overtaken && (result == .superseded) == overtaken,
          "\(context): a page loads unless overtaken")
        apply(finished, context)
      }
      // Invariants after every event.
      #expect(machine.generation >= generationBefore, "\(context): the generation never goes back")
      #expect(machine.fetchGeneration == model.liveFetch, "\(context): the live fetch is the model's")
      if let live = machine.fetchGeneration {
        #expect(live == machine.generation, "\(context): only the newest generation fetches")
      }
      if machine.hasState { #expect(machine.content == model.content, "\(context): the content is the model's") }
      #expect(machine.invalidated == model.invalidated, "\(context): stale exactly when the model is")
      #expect(machine.pendingWrites == writes.count, "\(context): every write is counted until it ends")
      if machine.settledAt != nil {
        #expect(
          machine.fetch == nil && machine.pendingWrites == 0 && !machine.invalidated && machine.showsCompleted,
          "\(context): settled only when quiet, valid and shown completed")
      }
    }
    // Once every write has landed, the cache holds the content.
    flushWrites()
    #expect(model.cache == machine.content || !machine.hasState, "seed \(seed): the cache ends with the content")
  }

  // MARK: - Local changes (overlays)

  /// A change that is not commutative, so that the order of the fold shows: `x → x * 10 + digit`.
  static func appending(_ digit: Int) -> @Sendable (Int?) -> Int? {
    { ($0 ?? 0) * 10 + digit }
  }

  @Test("local changes show over the base in sequence order; only the base is cached")
  func overlaysFold() {
    var machine = Machine(canSettle: true, paging: nil)
    Self.showingCached(&machine)
    var actions = machine.mutationApplied(2, enqueuedAt: Self.day, apply: Self.appending(2))
    #expect(actions.emit?.state == completed(12))
    #expect(actions.emit?.origin == .update)
    #expect(actions.emit?.pending?.count == 1)
    #expect(actions.write == nil, "a pending change is never cached")
    // An older entry (restored after a restart) goes under the newer one.
    actions = machine.mutationApplied(1, enqueuedAt: Self.day, apply: Self.appending(1))
    #expect(actions.emit?.state == completed(112))
    #expect(!machine.isQuiet, "a param with pending changes is not released")
    #expect(machine.settledAt == nil)
    // A refresh: its result is the new base, the changes go on top.
    _ = machine.startFetch()
    actions = machine.fetchFinished(machine.generation, .success(3), now: Self.later)
    #expect(actions.emit?.state == completed(312))
    #expect(actions.write?.data == 3)
    machine.writeFinished()
    // Progress changes the status only.
    actions = machine.mutationProgress(1, isSending: true, attempts: 0, failure: nil)
    #expect(actions.emit?.state == completed(312))
    #expect(actions.emit?.pending?.sendingCount == 1)
    actions = machine.mutationProgress(1, isSending: false, attempts: 1, failure: "503")
    #expect(
      actions.emit?.pending
        == PendingStatus(count: 2, failedAttempts: 1, lastFailure: "503", oldestEnqueuedAt: Self.day))
    // Confirmed: joins the base (cached); a fetch in flight from before is ignored.
    let before = machine.startFetch()
    actions = machine.mutationConfirmed(1, server: nil, canFetch: true, now: Self.later)
    #expect(actions.write?.data == 31)
    #expect(actions.start == nil, "changes remain: no validation yet")
    #expect(actions.emit?.state == completed(312))
    machine.writeFinished()
    #expect(machine.fetchFinished(before.start!.generation, .success(0), now: Self.later).emit == nil)
    #expect(machine.content == 312)
    // The last one confirmed without content: validated once.
    actions = machine.mutationConfirmed(2, server: nil, canFetch: true, now: Self.later)
    #expect(actions.write?.data == 312)
    #expect(actions.start != nil)
    #expect(actions.emit?.state == .loading(content: 312))
    #expect(actions.emit?.pending == nil)
  }

  @Test("the overlay queue finds, removes and counts changes through head removals and compaction")
  func overlayQueue() {
    var queue = OverlayQueue<Int>()
    var model: [(sequence: UInt64, attempts: Int)] = []
    for sequence in stride(from: UInt64(2), through: 600, by: 2) {
      queue.insert(Machine.Overlay(sequence: sequence, apply: { $0 }, enqueuedAt: Self.day))
      model.append((sequence, 0))
    }
    queue.insert(Machine.Overlay(sequence: 7, apply: { $0 }, enqueuedAt: Self.day, attempts: 2))
    model.insert((7, 2), at: 3)
    var random = SeededRandomNumberGenerator(seed: 3)
    for step in 0..<400 {
      if Bool.random(using: &random) || model.count < 3 {
        let removed = queue.remove(at: 0)
        #expect(removed.sequence == model.removeFirst().sequence, "step \(step): the oldest goes first")
      } else {
        let position = Int.random(in: 0..<model.count, using: &random)
        let removed = queue.remove(at: position)
        #expect(removed.sequence == model.remove(at: position).sequence, "step \(step): the one asked for")
      }
      if model.isEmpty { break }
      let probe = model[Int.random(in: 0..<model.count, using: &random)]
      #expect(queue.position(of: probe.sequence).map { queue[$0].sequence } == probe.sequence)
      #expect(queue.position(of: probe.sequence + 1) == nil || model.contains { $0.sequence == probe.sequence + 1 })
      #expect(queue.count == model.count)
      #expect(queue.failedAttempts == model.reduce(0) { $0 + $1.attempts })
      #expect(Array(queue.map(\.sequence)) == model.map(\.sequence))
    }
  }

  @Test("a rejected change disappears and the base is refetched; a replaced one keeps its place")
  func overlaysRejectedAndReplaced() {
    var machine = Machine(canSettle: true, paging: nil)
    Self.showingCached(&machine)
    _ = machine.mutationApplied(1, enqueuedAt: Self.day, apply: Self.appending(1))
    _ = machine.mutationApplied(2, enqueuedAt: Self.day, apply: Self.appending(2))
    var actions = machine.mutationReplaced(1, apply: Self.appending(7))
    #expect(actions.emit?.state == completed(172))
    actions = machine.mutationRejected(1, canFetch: true)
    #expect(actions.start != nil, "rolled back by a refetch")
    #expect(actions.emit?.state == .loading(content: 12))
    #expect(actions.write == nil)
    actions = machine.fetchFinished(machine.generation, .success(5), now: Self.later)
    #expect(actions.emit?.state == completed(52))
    // Unobserved: no fetch, the next use refetches.
    actions = machine.mutationRejected(2, canFetch: false)
    #expect(actions.start == nil)
    #expect(machine.invalidated)
    #expect(actions.emit?.state == completed(5))
    #expect(actions.emit?.pending == nil)
    // Events about unknown changes do nothing.
    #expect(machine.mutationConfirmed(9, server: 1, canFetch: true, now: Self.later).emit == nil)
    #expect(machine.mutationRejected(9, canFetch: true).start == nil)
  }

  @Test(
    "random fetches, updates and local changes: shown = fold(base, changes), confirmed changes stay", arguments: 0..<40)
  func overlaysModelBased(seed: UInt64) {
    var random = SeededRandomNumberGenerator(seed: seed &* 0x2545_F491 &+ 7)
    var machine = Machine(canSettle: true, paging: nil)
    Self.showingCached(&machine)
    var base: Int? = 1
    var overlays: [(sequence: UInt64, digit: Int)] = []
    var nextSequence: UInt64 = 1
    /// Fetches started, with whether a confirmation came after they started.
    var fetches: [(generation: UInt64, overtaken: Bool)] = []
    var live: UInt64?
    for step in 0..<300 {
      let context: Comment = "seed \(seed) step \(step)"
      var actions = Machine.Actions.none
      switch Int.random(in: 0..<7, using: &random) {
      case 0:  // mutate
        let digit = Int.random(in: 1...9, using: &random)
        overlays.append((nextSequence, digit))
        actions = machine.mutationApplied(nextSequence, enqueuedAt: Self.day, apply: Self.appending(digit))
        nextSequence += 1
      case 1:  // confirmed, with or without the origin's content
        guard let pick = overlays.indices.randomElement(using: &random) else { continue }
        let overlay = overlays.remove(at: pick)
        let server: Int? = Bool.random(using: &random) ? Int.random(in: 0..<100, using: &random) : nil
        base = server ?? Self.appending(overlay.digit)(base)
        for index in fetches.indices { fetches[index].overtaken = true }
        live = nil
        actions = machine.mutationConfirmed(overlay.sequence, server: server, canFetch: false, now: Self.later)
        #expect(actions.write.map { $0.data } == .some(base), "\(context): the confirmed base is cached")
      case 2:  // rejected
        guard let pick = overlays.indices.randomElement(using: &random) else { continue }
        let overlay = overlays.remove(at: pick)
        actions = machine.mutationRejected(overlay.sequence, canFetch: false)
        #expect(actions.write == nil, "\(context): a rejection writes nothing")
      case 3:  // a fetch starts
        actions = machine.startFetch()
        live = machine.generation
        fetches.append((machine.generation, false))
        #expect(actions.start?.stale == base, "\(context): a fetch starts over the base")
      case 4:  // a fetch answers
        guard let pick = fetches.indices.randomElement(using: &random) else { continue }
        let fetch = fetches.remove(at: pick)
        let value = Int.random(in: 0..<100, using: &random)
        actions = machine.fetchFinished(fetch.generation, .success(value), now: Self.later)
        if fetch.overtaken {
          #expect(
            actions.emit == nil && actions.write == nil, "\(context): a fetch from before a confirmation is ignored")
        }
        if live == fetch.generation {
          base = value
          live = nil
        }
      case 5:  // update
        let value = Int.random(in: 0..<100, using: &random)
        base = value
        live = nil
        for index in fetches.indices { fetches[index].overtaken = true }
        actions = machine.update(value, now: Self.later)
      default:  // progress
        guard let overlay = overlays.randomElement(using: &random) else { continue }
        actions = machine.mutationProgress(
          overlay.sequence, isSending: Bool.random(using: &random), attempts: 1, failure: "x")
        #expect(actions.emit?.state.content == machine.content, "\(context): progress keeps the content")
      }
      if let write = actions.write { #expect(write.data == machine.base, "\(context): only the base is written") }
      while machine.pendingWrites > 0 { machine.writeFinished() }
      let expected = overlays.sorted { $0.sequence < $1.sequence }.reduce(base) { Self.appending($1.digit)($0) }
      #expect(machine.base == base, "\(context): the base is the model's")
      #expect(machine.content == expected, "\(context): shown = fold(base, changes in sequence order)")
      #expect(machine.overlays.map(\.sequence) == overlays.map(\.sequence).sorted(), "\(context): the changes")
      #expect(machine.isQuiet == (overlays.isEmpty && machine.fetch == nil), "\(context): quiet only without changes")
      if let emitted = actions.emit {
        #expect(emitted.pending?.count == (overlays.isEmpty ? nil : overlays.count), "\(context): the pending count")
        #expect(emitted.state.content == expected, "\(context): the emitted content")
      }
    }
  }
}

extension LoadingState {
  fileprivate var kind: String {
    switch self {
    case .loading: "loading"
    case .completed: "completed"
    case .error: "error"
    }
  }
}
