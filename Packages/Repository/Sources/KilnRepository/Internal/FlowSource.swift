public import Foundation
public import _KilnSynchronization

/// What a coordinator is built from: the cacher, and what the repository decided when it was
/// made (whether the cache reads in place, whether the content pages), so that no coordinator
/// casts to find out.
@usableFromInline
struct FlowSource<Param: Hashable & Sendable, Data: Sendable>: Sendable {
  @usableFromInline let cacher: any Cacher<Param, Data>
  @usableFromInline let memoryCacher: StoreCacher<Param, Data>?
  @usableFromInline let paging: FlowStateMachine<Data>.Paging?

  /// A source over `cacher`, made once per ``Repository`` (in its init): the check for a
  /// `StoreCacher` over a `MemoryCache` runs there, once, so that no coordinator casts.
  @inlinable
  init<C: Cacher>(_ cacher: C, paging: FlowStateMachine<Data>.Paging? = nil) where C.Param == Param, C.Data == Data {
    self.cacher = cacher
    let storeCacher = cacher as? StoreCacher<Param, Data>
    memoryCacher = storeCacher?.memory == nil ? nil : storeCacher
    self.paging = paging
  }

  /// Reads the cache of `param` in place, without suspending; `nil` when the cache does not
  /// read in place.
  func readInPlace(_ param: Param, registry: FlowRegistry<Param, Data>) -> FlowStateMachine<Data>.CacheReading? {
    guard let memoryCacher, let memory = memoryCacher.memory else { return nil }
    guard let entry = memory.entry(forKey: param) else { return .init(cached: nil, isStale: true) }
    let stale =
      registry.isInvalidated(param, cachedAt: entry.storedAt) || memoryCacher.isExpired(cachedAt: entry.storedAt)
    return .init(cached: CachedData(data: entry.value, cachedAt: entry.storedAt), isStale: stale)
  }

  /// Reads the cache of `param` through the cacher (off the caller's actor and back).
  func read(_ param: Param, registry: FlowRegistry<Param, Data>) async -> FlowStateMachine<Data>.CacheReading {
    guard let cached = try? await cacher.loadCachedData(param: param) else { return .init(cached: nil, isStale: true) }
    let stale =
      registry.isInvalidated(param, cachedAt: cached.cachedAt)
      ? true : await cacher.needsRefresh(cachedAt: cached.cachedAt, param: param)
    return .init(cached: cached, isStale: stale)
  }
}

extension FlowCoordinator {
  /// Whether a new subscriber of `coordinator`, whose replay is its broadcaster's current
  /// state, may skip ``activate(forceRefresh:fetch:)``: the machine found that state valid
  /// and completed, nothing changed it since, and the memory cache still holds the same
  /// entry, neither expired nor invalidated. Then validating on the actor would emit nothing
  /// and change nothing.
  ///
  /// Inlinable and static (an actor's instance methods are called through its vtable, which
  /// no caller specialises), so that a subscription specialised for its Param and Data reads
  /// the memory cache specialised too.
  @inlinable
  static func showsValidCache(_ coordinator: FlowCoordinator) -> Bool {
    guard let memoryCacher = coordinator.source.memoryCacher, let memory = memoryCacher.memory,
      let settledAt = coordinator.settledAt.withLock({ $0 }),
      let entry = memory.entry(forKey: coordinator.param), entry.storedAt == settledAt
    else { return false }
    return !coordinator.registry.isInvalidated(coordinator.param, cachedAt: settledAt)
      && !memoryCacher.isExpired(cachedAt: settledAt)
  }
}

/// The cache writes of one param, each after every earlier one, so that the cache ends with
/// what the state shows. Used from its coordinator's actor only.
final class CacheWriteQueue<Param: Hashable & Sendable, Data: Sendable> {
  private let cacher: any Cacher<Param, Data>
  private let param: Param
  /// The last write enqueued; the next one runs after it.
  private var last: Task<Void, Never>?

  init(cacher: any Cacher<Param, Data>, param: Param) {
    self.cacher = cacher
    self.param = param
  }

  /// Writes `data` (or removes it, with `nil`) after every earlier write.
  ///
  /// With no write pending, the write starts at once on the calling thread
  /// (`startImmediately`): over a store that does not suspend (a `MemoryCache`) it has ended
  /// when this returns, so the coordinator awaiting it costs no task switch. Every caller
  /// awaits its write anyway (`FlowCoordinator.finish`).
  func enqueue(_ data: Data?, cachedAt: Date?) -> Task<Void, Never> {
    let previous = last
    let cacher = self.cacher
    let param = self.param
    let task: Task<Void, Never>
    if let previous {
      task = Task {
        await previous.value
        try? await cacher.saveCachedData(data, cachedAt: cachedAt, param: param)
      }
    } else {
      task = startImmediately {
        try? await cacher.saveCachedData(data, cachedAt: cachedAt, param: param)
      }
    }
    last = task
    return task
  }

  /// `write`, enqueued here, ended.
  func ended(_ write: Task<Void, Never>) {
    if last == write { last = nil }
  }

  /// The last write enqueued and not yet ended: once it ends, every earlier one has.
  var pending: Task<Void, Never>? { last }
}

extension Result where Failure == any Error {
  /// What `body` returns or throws.
  init(awaiting body: () async throws -> Success) async {
    do {
      self = .success(try await body())
    } catch {
      self = .failure(error)
    }
  }
}
