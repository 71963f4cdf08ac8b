public import Foundation
import KilnCore
import Synchronization
public import _KilnSynchronization

/// The loading states of a repository's params: one shared state (and at most one fetch) per
/// param, released when nobody has used it for ``releaseDelay``. Owned by a ``Repository``.
@usableFromInline
final class FlowRegistry<Param: Hashable & Sendable, Data: Sendable>: Sendable {
  /// How long the state of a param nobody observes or uses is kept.
  let releaseDelay: Duration
  /// What happens to a fetch when its last subscriber and waiter leave.
  let abandonedFetch: AbandonedFetchPolicy
  /// The clock the release delay runs on.
  let releaseClock: ElapsedClock
  /// The wall clock that dates invalidations (compared with cached-at dates): the cacher's
  /// `now`, the date of the clock the release delay runs on.
  let now: @Sendable () -> Date

  struct Invalidation {
    var matches: @Sendable (Param) -> Bool
    var date: Date
  }

  @usableFromInline
  struct State {
    @usableFromInline var coordinators: [Param: FlowCoordinator<Param, Data>] = [:]
    var invalidations: [Invalidation] = []
  }

  /// The most invalidation records kept for params not in memory; past it the oldest are
  /// merged into one that invalidates every param cached before it (more refetching, never less).
  static var invalidationLimit: Int { 64 }

  @usableFromInline let state = KilnMutex(State())
  /// Whether any invalidation was recorded (they are never removed): until then
  /// ``isInvalidated(_:cachedAt:)`` answers without the lock, on every subscription.
  private let hasInvalidations = Atomic(false)
  /// What the params' coordinators did: see `Repository.statistics`.
  let counters = RepositoryCounters()

  init(
    releaseAfter: Duration, abandonedFetch: AbandonedFetchPolicy, clock: any Clock<Duration>,
    date: @escaping @Sendable () -> Date
  ) {
    precondition(releaseAfter >= .zero, "Repository releaseAfter must not be negative")
    now = date
    releaseDelay = releaseAfter
    self.abandonedFetch = abandonedFetch
    releaseClock = ElapsedClock(clock)
  }

  /// The number of params whose state is held.
  var count: Int {
    state.withLock { $0.coordinators.count }
  }

  /// The params whose state is held.
  var params: [Param] {
    state.withLock { Array($0.coordinators.keys) }
  }

  // MARK: - Invalidation

  /// Marks the data of every param matching `predicate` stale (see
  /// ``Repository/invalidate(where:)``).
  func invalidate(where predicate: @escaping @Sendable (Param) -> Bool) async {
    let now = self.now()
    let held = state.withLock { state in
      state.invalidations.append(Invalidation(matches: predicate, date: now))
      hasInvalidations.store(true, ordering: .releasing)
      if state.invalidations.count > Self.invalidationLimit {
        let excess = state.invalidations.count - Self.invalidationLimit + 1
        let latest = state.invalidations.prefix(excess).map(\.date).max() ?? now
        state.invalidations.removeFirst(excess)
        state.invalidations.insert(Invalidation(matches: { _ in true }, date: latest), at: 0)
      }
      return state.coordinators.map { ($0.key, $0.value.lease()) }
    }
    // The predicate is user code: run it outside the lock, then drop the other leases.
    var matching: [FlowCoordinator<Param, Data>] = []
    for (param, coordinator) in held {
      if predicate(param) {
        matching.append(coordinator)
      } else {
        await coordinator.endLease()
      }
    }
    await withTaskGroup(of: Void.self) { group in
      for coordinator in matching {
        group.addTask {
          await coordinator.invalidate()
          await coordinator.endLease()
        }
      }
    }
  }

  /// Whether an invalidation covers data of `param` cached at `cachedAt`.
  @usableFromInline
  func isInvalidated(_ param: Param, cachedAt: Date?) -> Bool {
    guard hasInvalidations.load(ordering: .acquiring) else { return false }
    let invalidations = state.withLock { $0.invalidations }
    return invalidations.contains { invalidation in
      guard let cachedAt else { return invalidation.matches(param) }
      return cachedAt <= invalidation.date && invalidation.matches(param)
    }
  }

  // MARK: - Coordinators

  /// The coordinator of `param` (created if needed) with a lease that keeps it held until
  /// ``FlowCoordinator/endLease()``.
  func lease(_ param: Param, source: FlowSource<Param, Data>) -> FlowCoordinator<Param, Data> {
    state.withLock { state in
      coordinator(param, source: source, in: &state).lease()
    }
  }

  /// Subscribes to `param`'s states, atomically with respect to releasing it; `fetch` is
  /// what an invalidation refetches with while this subscriber is the newest.
  // Inlinable (library evolution is off, so this is no public API): a subscription is made in
  // the module that called `AnyStoreFlowable.from`, specialised for its Param and Data. Generic
  // code left unspecialised looks up the metadata of every generic type it touches at run time
  // (about a third of a first emission's time, measured by RepositoryBenchmarks).
  @inlinable
  func subscribe(
    _ param: Param, source: FlowSource<Param, Data>, fetch: @escaping FlowCoordinator<Param, Data>.Fetch
  ) -> (FlowCoordinator<Param, Data>, SubscriberInbox<Data>) {
    state.withLock { state in
      let coordinator = coordinator(param, source: source, in: &state)
      return (coordinator, coordinator.broadcaster.subscribe(tag: fetch))
    }
  }

  @inlinable
  func coordinator(
    _ param: Param, source: FlowSource<Param, Data>, in state: inout State
  ) -> FlowCoordinator<Param, Data> {
    if let existing = state.coordinators[param] { return existing }
    let created = FlowCoordinator(param: param, source: source, registry: self, broadcaster: Broadcaster())
    state.coordinators[param] = created
    return created
  }

  /// Removes `coordinator` if it is still `param`'s, unleased and unobserved.
  func release(_ param: Param, _ coordinator: FlowCoordinator<Param, Data>) -> Bool {
    state.withLock { state in
      guard state.coordinators[param] === coordinator, coordinator.isUnused else { return false }
      state.coordinators.removeValue(forKey: param)
      return true
    }
  }
}

/// What happens to a fetch when nobody waits for it any more (its last subscriber left and
/// no `refresh`/`requireData` awaits it).
public enum AbandonedFetchPolicy: Hashable, Sendable {
  /// Cancel it; the content stays as it was.
  case cancel
  /// Let it finish and cache its result.
  case finish
}
