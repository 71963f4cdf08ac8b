public import Observation

/// Loads objects by key for a UI and publishes the result: `object`, `error` and `isLoading`
/// are observable (Observation), and everything runs on the main actor.
///
/// ```swift
/// let loader = Loader<UserID, User> { id in try await api.user(id) }
/// await loader.load(key: id)
/// loader.object   // the user, or nil with loader.error set
/// ```
///
/// Concurrent loads of one key share one request. ``refresh(key:)`` always starts a new
/// request, whatever happened before (an earlier failure never blocks it). The newest
/// request wins: an older answer arriving later changes nothing.
@Observable @MainActor
public final class Loader<Key: Hashable & Sendable, Object: Sendable> {
  /// The last loaded object; kept while a later request loads or fails.
  public private(set) var object: Object?
  /// The error of the last request, or `nil` after a success.
  public private(set) var error: (any Error)?
  /// Whether a request is running.
  public private(set) var isLoading = false
  /// The key of the last request.
  public private(set) var key: Key?

  /// Called with each loaded object (after ``object`` is set).
  @ObservationIgnored public var loadCompleted: (@MainActor (Key, Object) -> Void)?

  @ObservationIgnored private let loadObject: @Sendable (Key) async throws -> Object
  @ObservationIgnored private var inFlight: [Key: (id: UInt64, task: Task<Object, any Error>)] = [:]
  @ObservationIgnored private var lastID: UInt64 = 0
  @ObservationIgnored private var newestID: UInt64 = 0

  /// Creates a loader.
  ///
  /// - Parameter load: Loads the object of a key (a network request, a query…).
  public init(load: @escaping @Sendable (Key) async throws -> Object) {
    loadObject = load
  }

  /// The number of distinct requests started, for tests and diagnostics.
  @ObservationIgnored public private(set) var requestCount = 0

  /// Loads the object of `key`, joining a request for it already running.
  public func load(key: Key) async {
    await run(key, joining: true)
  }

  /// Loads the object of `key` with a new request, even if one is running or the last failed.
  public func refresh(key: Key) async {
    await run(key, joining: false)
  }

  /// Cancels every running request; ``object`` and ``error`` stay, ``isLoading`` becomes `false`.
  public func cancel() {
    for entry in inFlight.values { entry.task.cancel() }
    inFlight = [:]
    lastID &+= 1
    newestID = lastID
    isLoading = false
  }

  private func run(_ key: Key, joining: Bool) async {
    let entry: (id: UInt64, task: Task<Object, any Error>)
    if joining, let existing = inFlight[key] {
      entry = existing
    } else {
      lastID &+= 1
      requestCount += 1
      let load = loadObject
      entry = (lastID, Task { try await load(key) })
      inFlight[key] = entry
    }
    newestID = entry.id
    self.key = key
    isLoading = true
    let result: Result<Object, any Error>
    do {
      result = .success(try await entry.task.value)
    } catch {
      result = .failure(error)
    }
    if inFlight[key]?.id == entry.id { inFlight[key] = nil }
    guard newestID == entry.id else { return }
    isLoading = false
    switch result {
    case .success(let object):
      self.object = object
      error = nil
      loadCompleted?(key, object)
    case .failure(let failure):
      if failure is CancellationError, entry.task.isCancelled { return }
      error = failure
    }
  }
}

/// The key of a loader that loads a single object.
///
/// ```swift
/// let settings = Loader<GenericKey, Settings> { _ in try await api.settings() }
/// await settings.load(key: GenericKey())
/// ```
public struct GenericKey: Hashable, Sendable, Codable {
  /// The one key.
  public init() {}
}
