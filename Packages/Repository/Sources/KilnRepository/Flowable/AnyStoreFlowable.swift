/// A ``StoreFlowable`` made from a ``Cacher`` and a ``Fetcher`` for one param.
///
/// ```swift
/// let users = Repository<UserID, User>(expiration: .minutes(30))
/// let user = AnyStoreFlowable.from(cacher: users, fetcher: UserFetcher(), param: id)
/// for await state in user.publish() { render(state) }
/// ```
///
/// Flowables made from one ``Repository`` share the state of each param (it lives in the
/// repository): make as many as you like, they see the same states and share fetches.
public struct AnyStoreFlowable<Data: Sendable>: StoreFlowable {
  @usableFromInline let base: any FlowHandling<Data>
  /// `base.publish(forceRefresh:)`, made where the flowable was (see `init(_:)`).
  @usableFromInline let publisher: @Sendable (Bool) -> LoadingStateSequence<Data>

  // Inlinable (library evolution is off, so this is no public API): a subscription is made in
  // the module that called `AnyStoreFlowable.from`, specialised for its Param and Data. Generic
  // code left unspecialised looks up the metadata of every generic type it touches at run time
  // (about a third of a first emission's time, measured by RepositoryBenchmarks).
  @inlinable
  init<Param>(_ handle: FlowHandle<Param, Data>) {
    base = handle
    publisher = { handle.publish(forceRefresh: $0) }
  }

  /// Makes a flowable for `param`.
  ///
  /// - Parameters:
  ///   - cacher: The repository: keeps the data and the shared states.
  ///   - fetcher: Fetches the data of `param`.
  ///   - param: The param.
  /// - Returns: The flowable.
  @inlinable
  public static func from<F: Fetcher>(
    cacher: Repository<F.Param, Data>, fetcher: F, param: F.Param
  ) -> AnyStoreFlowable<Data> where F.Data == Data {
    AnyStoreFlowable(
      FlowHandle(source: cacher.source, registry: cacher.flows, param: param) { param, _ in
        try await fetcher.fetch(param: param)
      })
  }

  /// Makes a flowable for a repository and fetcher without a param (``UnitParam``).
  @inlinable
  public static func from<F: Fetcher>(
    cacher: Repository<UnitParam, Data>, fetcher: F
  ) -> AnyStoreFlowable<Data> where F.Param == UnitParam, F.Data == Data {
    from(cacher: cacher, fetcher: fetcher, param: UnitParam())
  }

  public func publish(forceRefresh: Bool) -> LoadingStateSequence<Data> {
    publisher(forceRefresh)
  }

  public func requireData(from: GettingFrom) async throws -> Data {
    try await base.requireData(from: from)
  }

  public func validate() async {
    await base.validate()
  }

  public func refresh() async {
    await base.refresh()
  }

  public func update(_ newData: Data?) async {
    await base.update(newData)
  }

  public func clear() async {
    await base.update(nil)
  }
}

/// What ``AnyStoreFlowable`` forwards to.
@usableFromInline
protocol FlowHandling<Data>: Sendable {
  associatedtype Data: Sendable
  func publish(forceRefresh: Bool) -> LoadingStateSequence<Data>
  func requireData(from: GettingFrom) async throws -> Data
  func validate() async
  func refresh() async
  func update(_ newData: Data?) async
}

/// One param of one repository, with the fetch to use for it.
@usableFromInline
struct FlowHandle<Param: Hashable & Sendable, Data: Sendable>: FlowHandling {
  @usableFromInline let source: FlowSource<Param, Data>
  @usableFromInline let registry: FlowRegistry<Param, Data>
  @usableFromInline let param: Param
  @usableFromInline let fetch: FlowCoordinator<Param, Data>.Fetch

  @usableFromInline
  init(
    source: FlowSource<Param, Data>, registry: FlowRegistry<Param, Data>, param: Param,
    fetch: @escaping FlowCoordinator<Param, Data>.Fetch
  ) {
    self.source = source
    self.registry = registry
    self.param = param
    self.fetch = fetch
  }

  /// Runs `body` with the param's coordinator, leased so it is not released meanwhile.
  func withCoordinator<Result>(
    _ body: (FlowCoordinator<Param, Data>) async throws -> Result
  ) async rethrows -> Result {
    let coordinator = registry.lease(param, source: source)
    do {
      let result = try await body(coordinator)
      await coordinator.endLease()
      return result
    } catch {
      await coordinator.endLease()
      throw error
    }
  }

  @inlinable
  func snapshots(forceRefresh: Bool) -> LoadingSnapshotSequence<Data> {
    let source = self.source
    let registry = self.registry
    let param = self.param
    let fetch = self.fetch
    return LoadingSnapshotSequence {
      let (coordinator, inbox) = registry.subscribe(param, source: source, fetch: fetch)
      return SnapshotSource(inbox: inbox) {
        // A valid memory cache already shown (the replay in the inbox): nothing to validate,
        // so no hop onto the coordinator's actor.
        if forceRefresh || !FlowCoordinator.showsValidCache(coordinator) {
          await coordinator.activate(forceRefresh: forceRefresh, fetch: fetch)
        }
      }
    }
  }

  @inlinable
  func publish(forceRefresh: Bool) -> LoadingStateSequence<Data> {
    LoadingStateSequence(snapshots(forceRefresh: forceRefresh))
  }

  @usableFromInline
  func requireData(from: GettingFrom) async throws -> Data {
    try await withCoordinator { try await $0.require(from: from, fetch: fetch) }
  }

  @usableFromInline
  func validate() async {
    await withCoordinator { await $0.validate(fetch: fetch) }
  }

  @usableFromInline
  func refresh() async {
    _ = await withCoordinator { await $0.refresh(fetch: fetch) }
  }

  @usableFromInline
  func update(_ newData: Data?) async {
    await withCoordinator { await $0.update(newData) }
  }
}
