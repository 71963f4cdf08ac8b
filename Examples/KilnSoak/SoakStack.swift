import Foundation
import KilnNetwork
import KilnRepository
import KilnStorage
import KilnTesting
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `GET /item/<id>`.
struct ItemTarget: TargetGroup {
  let baseURL: URL
  let id: Int
  var path: String { "item/\(id)" }
  var task: NetworkTask { .plain }
}

/// `GET /articles?list=<l>&page=<n>`.
struct ListPageTarget: TargetGroup {
  let baseURL: URL
  let list: Int
  let page: Int
  var path: String { "articles" }
  var task: NetworkTask { .parameters(["list": "\(list)", "page": "\(page)"]) }
}

/// A list of the soak API paged both ways through the handler, opened in its middle.
struct ListPages: TwoWayPaginationFetcher {
  static let firstPage = SoakAPI.pageCount / 2

  let baseURL: URL
  let handler: NetworkHandler

  func page(_ number: Int, of list: Int) async throws -> PaginationResult<SoakValue> {
    let items = try await handler.request(
      ListPageTarget(baseURL: baseURL, list: list, page: number), as: [SoakValue].self)
    return PaginationResult(
      data: items, nextKey: number < SoakAPI.pageCount ? "\(number + 1)" : nil,
      prevKey: number > 1 ? "\(number - 1)" : nil)
  }

  func fetch(param: Int) async throws -> PaginationResult<SoakValue> {
    try await page(Self.firstPage, of: param)
  }

  func fetchNext(nextKey: String, param: Int) async throws -> PaginationResult<SoakValue> {
    try await page(Int(nextKey)!, of: param)
  }

  func fetchPrev(prevKey: String, param: Int) async throws -> PaginationResult<SoakValue> {
    try await page(Int(prevKey)!, of: param)
  }
}

/// Hands out increasing sequence numbers for the values the soak writes itself.
final class Sequencer: Sendable {
  private let counter = Atomic<Int>(0)

  func next() -> Int {
    counter.add(1, ordering: .relaxed).newValue
  }

  /// The newest sequence number handed out.
  var newest: Int {
    counter.load(ordering: .relaxed)
  }
}

/// The demo's stack under soak: the handler with the HTTP cache and retries, the repository
/// with pagination, MemoryCache, DiskCache, TieredCache and SQLiteStore, and the stores the
/// writer child shares. Both handlers send through one `transport` (`--transport`), which the
/// caller shuts down.
final class SoakStack: Sendable {
  static let listCount = 8
  static let maxPages = 3
  static let keyCount = 400

  let stats: SoakStats
  /// The embedded server's API; `nil` with an external server.
  let api: SoakAPI?
  let baseURL: URL
  let itemHandler: NetworkHandler
  let listHandler: NetworkHandler
  let httpCache: HTTPCache
  let memory: MemoryCache<String, SoakValue>
  let disk: DiskCache<String, SoakValue>
  let full: DiskCache<String, SoakValue>?
  let tiered: TieredCache<String, SoakValue, DiskCache<String, SoakValue>>
  let sqlite: SQLiteStore<String, SoakValue>
  let sharedSQLite: SQLiteStore<String, SoakValue>
  let sharedDisk: DiskCache<String, SoakValue>
  let lists: [PaginationStoreFlowable<SoakValue>]
  let writer: WriterSupervisor
  let sequencer = Sequencer()

  init(
    stats: SoakStats, api: SoakAPI?, baseURL: URL, workspace: URL, fullDirectory: URL?, transport: SoakTransport,
    writerExecutable: String
  ) throws {
    self.stats = stats
    self.api = api
    self.baseURL = baseURL
    // The HTTP cache lives on the small file system that the fault scheduler fills up.
    let httpFolder = (fullDirectory ?? workspace).appendingPathComponent("http")
    httpCache = HTTPCache(store: try DiskCache<String, Data>(directory: httpFolder, sizeLimit: 3 << 20))
    let retries = NetworkHandler.RetryPolicy(
      maxAttempts: 3, backoff: .exponential(initial: .milliseconds(20), maximum: .milliseconds(500)), budget: nil)
    itemHandler = NetworkHandler(
      transport: transport.caching(in: httpCache), retryPolicy: retries, timeout: .seconds(5),
      deduplicatesRequests: true)
    listHandler = NetworkHandler(transport: transport.base, retryPolicy: retries, timeout: .seconds(5))

    memory = MemoryCache(countLimit: 1_000, entryLifetime: nil)
    disk = try DiskCache(directory: workspace.appendingPathComponent("disk"), sizeLimit: 2 << 20)
    full = try fullDirectory.map { try DiskCache(directory: $0.appendingPathComponent("full"), sizeLimit: 2 << 20) }
    tiered = TieredCache(
      memory: MemoryCache(countLimit: 200, entryLifetime: nil),
      disk: try DiskCache(directory: workspace.appendingPathComponent("tiered"), sizeLimit: 1 << 20))
    let database = workspace.appendingPathComponent("soak.sqlite")
    sqlite = try SQLiteStore(url: database, table: "local")
    sharedSQLite = try SQLiteStore(url: database, table: WriterChild.table)
    let sharedFolder = workspace.appendingPathComponent("shared")
    sharedDisk = try DiskCache(directory: sharedFolder)

    let repository = PaginationRepository<Int, SoakValue>(
      store: TieredCache(
        memory: MemoryCache(entryLifetime: nil),
        disk: try DiskCache(directory: workspace.appendingPathComponent("lists"))),
      expiration: .seconds(3))
    let fetcher = ListPages(baseURL: baseURL, handler: listHandler)
    lists = (0..<Self.listCount).map { list in
      PaginationStoreFlowable.from(cacher: repository, fetcher: fetcher, param: list, maxPages: Self.maxPages)
    }
    writer = WriterSupervisor(
      executable: writerExecutable, sqlitePath: database.path, diskPath: sharedFolder.path, keys: 50, stats: stats)
  }

  // MARK: - Operations

  typealias Operation = @Sendable (SoakStack) async -> Void

  /// Every kind of operation with its weight.
  var operations: [(kind: String, weight: Int, run: Operation)] {
    var operations: [(kind: String, weight: Int, run: Operation)] = [
      ("net.item", 20, { await $0.item(through: $0.itemHandler, "net.item") }),
      ("net.plain", 4, { await $0.item(through: $0.listHandler, "net.plain") }),
      // Diagnosis only (weight 0: run with --only raw): Foundation's URLSession without Kiln.
      ("raw.urlsession", 0, { await $0.rawItem() }),
      ("repo.next", 5, { await $0.page(.next) }),
      ("repo.prev", 5, { await $0.page(.prev) }),
      ("repo.refresh", 1, { await $0.refresh() }),
      ("repo.validate", 2, { await $0.validate() }),
      ("repo.read", 5, { await $0.readList() }),
      ("repo.observe", 2, { await $0.observe() }),
      ("memory", 15, { await $0.readOrWrite($0.memory, "memory") }),
      ("disk", 10, { await $0.readOrWrite($0.disk, "disk") }),
      ("tiered", 8, { await $0.readOrWrite($0.tiered, "tiered") }),
      ("sqlite", 8, { await $0.readOrWrite($0.sqlite, "sqlite") }),
      ("shared.sqlite", 5, { await $0.readShared($0.sharedSQLite, "shared.sqlite") }),
      ("shared.disk", 5, { await $0.readShared($0.sharedDisk, "shared.disk") }),
    ]
    if let full {
      operations.append(("full", 6, { await $0.readOrWrite(full, "full") }))
    }
    return operations
  }

  /// An item through `handler`: the item handler (HTTP cache, de-duplication) or the list
  /// handler (neither).
  private func item(through handler: NetworkHandler, _ name: String) async {
    let id = Int.random(in: 0..<200)
    do {
      let value = try await handler.request(ItemTarget(baseURL: baseURL, id: id), as: SoakValue.self)
      // With an external server (`--server`), the versions it sent are not known here.
      let newest = api.map { $0.newestIssuedVersion(of: id) ?? -1 } ?? .max
      if !value.isIntact || value.key != "item-\(id)" || value.sequence > newest {
        stats.corrupt(
          "\(name) \(id): read \(value.key)#\(value.sequence) (newest sent \(newest)), intact: \(value.isIntact)")
      }
    } catch {
      stats.error("\(name): \(Self.category(error))")
    }
  }

  private func page(_ direction: Direction) async {
    let list = Int.random(in: 0..<Self.listCount)
    let flowable = lists[list]
    let result = await (direction == .next ? flowable.requestNextData() : flowable.requestPrevData())
    switch result {
    case .loaded, .superseded, .skipped: break
    case .rejected:
      // No content yet, or the main state is an error: start it, as a screen would.
      await flowable.validate()
    case .failed(let error):
      stats.error("repo.\(direction): \(Self.category(error))")
    }
    verify(await flowable.getData(from: .cache), list: list, in: "repo.\(direction)")
  }

  private static let rawSession = URLSession(configuration: .ephemeral)

  private func rawItem() async {
    let id = Int.random(in: 0..<200)
    do {
      let (data, _) = try await Self.rawSession.data(from: baseURL.appendingPathComponent("item/\(id)"))
      _ = try? JSONDecoder().decode(SoakValue.self, from: data)
    } catch {
      stats.error("raw.urlsession: \(Self.category(error))")
    }
  }

  private enum Direction: String { case next, prev }

  private func refresh() async {
    let list = Int.random(in: 0..<Self.listCount)
    await lists[list].refresh(keepingPages: Bool.random())
    verify(await lists[list].getData(from: .cache), list: list, in: "repo.refresh")
  }

  private func validate() async {
    let list = Int.random(in: 0..<Self.listCount)
    await lists[list].validate()
  }

  private func readList() async {
    let list = Int.random(in: 0..<Self.listCount)
    // Nothing cached yet (or expired) is a miss, not an error.
    verify(await lists[list].getData(from: .cache), list: list, in: "repo.read")
  }

  /// Watches a list for a moment, as a screen that appears and goes away.
  private func observe() async {
    let list = Int.random(in: 0..<Self.listCount)
    let flowable = lists[list]
    let watcher = Task { [self] in
      var seen = 0
      for await state in flowable.publish() {
        verify(state.content, list: list, in: "repo.observe")
        seen += 1
        if seen == 3 { break }
      }
    }
    try? await Task.sleep(for: .milliseconds(Int.random(in: 5...200)))
    watcher.cancel()
    await watcher.value
  }

  /// A list's items must be intact and consecutive: the window holds adjacent pages.
  private func verify(_ items: [SoakValue]?, list: Int, in operation: String) {
    guard let items else { return }
    for (index, item) in items.enumerated() {
      if !item.isIntact || item.key != "list-\(list)" {
        stats.corrupt("\(operation): list \(list) holds \(item.key)#\(item.sequence), intact: \(item.isIntact)")
        return
      }
      if index > 0, item.sequence != items[index - 1].sequence + 1 {
        stats.corrupt(
          "\(operation): list \(list) not contiguous: \(items[index - 1].sequence) then \(item.sequence) "
            + "(\(items.map(\.sequence)))")
        return
      }
    }
    if items.count % SoakAPI.pageSize != 0 || items.count > SoakAPI.pageSize * Self.maxPages {
      stats.corrupt("\(operation): list \(list) holds \(items.count) items")
    }
  }

  private func readOrWrite(_ store: some KeyValueStore<String, SoakValue>, _ name: String) async {
    let key = "k\(Int.random(in: 0..<Self.keyCount))"
    do {
      if Bool.random() {
        try await store.setValue(SoakValue(key: key, sequence: sequencer.next()), forKey: key)
      } else if let value = try await store.value(forKey: key) {
        let newest = sequencer.newest
        if !value.isIntact || value.key != key || value.sequence > newest {
          stats.corrupt(
            "\(name) \(key): read \(value.key)#\(value.sequence) (newest \(newest)), intact: \(value.isIntact)")
        }
      }
    } catch {
      stats.error("\(name): \(Self.category(error))")
    }
  }

  private func readShared(_ store: some KeyValueStore<String, SoakValue>, _ name: String) async {
    let key = "w\(Int.random(in: 0..<writer.keys))"
    do {
      if let value = try await store.value(forKey: key) { writer.sawValue(value, forKey: key, in: name) }
    } catch {
      stats.error("\(name): \(Self.category(error))")
    }
  }

  /// Reads every key the writer acknowledged after it was killed: each store must hold that
  /// write or a later one.
  func verifyAcknowledged(_ acked: [String: Int]) async -> Int {
    var lost = 0
    for (key, sequence) in acked {
      for (name, store) in [
        ("shared.sqlite", sharedSQLite as any KeyValueStore<String, SoakValue>), ("shared.disk", sharedDisk),
      ] {
        do {
          guard let value = try await store.value(forKey: key) else {
            stats.corrupt("\(name): acknowledged \(key)#\(sequence) is missing after a kill")
            lost += 1
            continue
          }
          writer.sawValue(value, forKey: key, in: name)
          if value.sequence < sequence {
            stats.corrupt("\(name): acknowledged \(key)#\(sequence) lost after a kill: found #\(value.sequence)")
            lost += 1
          }
        } catch {
          stats.error("writer check \(name): \(Self.category(error))")
        }
      }
    }
    return lost
  }

  // MARK: - Errors

  /// A short, stable name for an error, to count errors by type.
  static func category(_ error: any Error) -> String {
    switch error {
    case let error as NetworkError:
      switch error {
      case .transport(let failure):
        if case .other(let message) = failure { return "transport other(\(message.prefix(40)))" }
        return "transport \(failure)"
      case .status(let response): return "status \(response.status)"
      case .timedOut: return "timed out"
      case .decoding: return "decoding"
      case .cancelled: return "cancelled"
      default: return "\(error)".prefix(50).description
      }
    case let error as DiskCacheError:
      if case .fileSystem(let failure) = error {
        return "fileSystem \(failure.operation) \(String(cString: strerror(failure.code)))"
      }
      return "\(error)".prefix(50).description
    case let error as SQLiteStoreError:
      switch error {
      case .busy: return "busy"
      case .sqlite(let code, _): return "sqlite \(code)"
      default: return "\(error)".prefix(50).description
      }
    default:
      return "\(type(of: error)) \(WriterSupervisor.category("\(error)"))"
    }
  }
}
