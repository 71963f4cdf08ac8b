import Foundation
import KilnNetwork
import KilnRepository
import Synchronization
import _KilnTestServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where the API is: the server comes back on a new port after the outage.
final class APIAddress: Sendable {
  private let base: Mutex<URL>

  init(_ base: URL) { self.base = Mutex(base) }

  func move(to base: URL) { self.base.withLock { $0 = base } }

  var baseURL: URL { base.withLock { $0 } }
}

/// `GET /articles?page=<n>` as a typed target.
struct ArticlesPage: TargetGroup {
  let baseURL: URL
  let page: Int
  var path: String { "articles" }
  var task: NetworkTask { .parameters(["page": "\(page)"]) }
}

/// The articles API paged both ways, opening at page 2, fetched through KilnNetwork's
/// handler (no retries: the outage below should show at once).
struct ArticlePages: TwoWayPaginationFetcher {
  let address: APIAddress
  let handler = NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never)

  func page(_ number: Int) async throws -> PaginationResult<Article> {
    let articles = try await handler.request(ArticlesPage(baseURL: address.baseURL, page: number), as: [Article].self)
    return PaginationResult(
      data: articles, nextKey: number < 3 ? "\(number + 1)" : nil, prevKey: number > 1 ? "\(number - 1)" : nil)
  }

  func fetch(param: UnitParam) async throws -> PaginationResult<Article> { try await page(2) }

  func fetchNext(nextKey: String, param: UnitParam) async throws -> PaginationResult<Article> {
    try await page(Int(nextKey)!)
  }

  func fetchPrev(prevKey: String, param: UnitParam) async throws -> PaginationResult<Article> {
    try await page(Int(prevKey)!)
  }
}

/// The states an observer saw, for the demo to wait on.
final class StateLog: Sendable {
  private let states = Mutex<[LoadingState<[Article]>]>([])

  func append(_ state: LoadingState<[Article]>) { states.withLock { $0.append(state) } }

  /// Waits (polling) until the last state matches.
  func waitForLast(_ matches: (LoadingState<[Article]>) -> Bool) async throws {
    while !(states.withLock { $0.last }.map(matches) ?? false) { try await Task.sleep(for: .milliseconds(2)) }
  }
}

func describe(_ state: LoadingState<[Article]>) -> String {
  func ids(_ articles: [Article]?) -> String {
    guard let first = articles?.first, let last = articles?.last else { return "nothing" }
    return "articles \(first.id)–\(last.id)"
  }
  func more(_ state: AdditionalLoadingState) -> String {
    switch state {
    case .fixed(let canRequest): canRequest ? "more" : "none"
    case .loading: "loading"
    case .error: "failed"
    }
  }
  switch state {
  case .loading(let content): return "loading (showing \(ids(content)))"
  case .completed(let content, let next, let prev):
    return "\(ids(content)) [before: \(more(prev)), after: \(more(next))]"
  case .error(let error, let content):
    let reason =
      switch error as? NetworkError {
      case .transport(let failure)?: "\(failure)"
      default: (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(error)"
      }
    return "error: \(reason) — still showing \(ids(content))"
  }
}

func repositoryStep(workspace: URL) async throws {
  step("7. A repository: a list paged both ways over memory + disk + the network handler, through an outage")
  var server = try await DemoAPI.start()
  let address = APIAddress(server.baseURL)
  let disk = try DiskCache<UnitParam, PageWindow<Article>>(directory: workspace.appendingPathComponent("list"))
  let articles = Repository(
    store: TieredCache(memory: MemoryCache(entryLifetime: nil), disk: disk), expiration: .seconds(60))
  let list = PaginationStoreFlowable.from(
    cacher: articles, fetcher: ArticlePages(address: address), param: UnitParam(), maxPages: 2)

  let log = StateLog()
  let observer = Task {
    for await state in list.publish() {
      log.append(state)
      print("   ↳ \(describe(state))")
    }
  }
  try await log.waitForLast { if case .completed = $0 { true } else { false } }
  print("   opened at page 2 (\(server.requestCount(path: "/articles")) request)")

  check(await list.requestNextData() == .loaded, "page 3 loads")
  try await log.waitForLast { $0.content?.last?.id == 12 && !($0.isLoading) }
  check(await list.requestNextData() == .skipped(.noMoreData), "page 3 is the last")
  print("   after page 3 there is nothing more")

  check(await list.requestPrevData() == .loaded, "page 1 loads")
  try await log.waitForLast { $0.content?.first?.id == 1 && !($0.isLoading) }
  check(await list.getData(from: .cache)?.map(\.id) == Array(1...8), "a window of two pages: page 3 dropped")
  print("   a window of 2 pages: paging back to page 1 dropped page 3 (reachable again as the next page)")

  try await server.stop()
  print("   the server stops; pull to refresh:")
  await list.refresh()
  try await log.waitForLast { $0.error != nil }
  check(await list.getData(from: .cache)?.count == 8, "the failed refresh keeps the cached list")

  server = try await DemoAPI.start()
  address.move(to: server.baseURL)
  print("   the server is back; refresh keeping both pages:")
  await list.refresh(keepingPages: true)
  try await log.waitForLast { if case .completed = $0 { true } else { false } }
  print("   → \(server.requestCount(path: "/articles")) requests, one per held page")
  check(server.requestCount(path: "/articles") == 2, "k pages, k requests")
  observer.cancel()
  try await server.stop()
}
