import KilnRepository
import KilnTesting
import _KilnSynchronization

/// A two-way paginated API of pages `0..<count`; page `i` holds `[10 i, 10 i + 1]` and its
/// keys are the neighbours' indices. Records each call ("first", "next:2", "prev:0"); keys in
/// `failing` fail; when `gate` is set, next and prev calls wait for it.
final class NumberPages: TwoWayPaginationFetcher, Sendable {
  let count: Int
  let start: Int
  let calls = Recorder<String>()
  let firstGate: Gate?
  let gate: Gate?
  private let failing = KilnMutex<Set<String>>([])

  init(count: Int = 5, start: Int = 0, firstGate: Gate? = nil, gate: Gate? = nil) {
    self.count = count
    self.start = start
    self.firstGate = firstGate
    self.gate = gate
  }

  func fail(_ call: String) { failing.withLock { _ = $0.insert(call) } }
  func heal(_ call: String) { failing.withLock { _ = $0.remove(call) } }

  static func items(_ index: Int) -> [Int] { [index * 10, index * 10 + 1] }

  private func page(_ index: Int, call: String) throws -> PaginationResult<Int> {
    calls.append(call)
    if failing.withLock({ $0.contains(call) }) { throw TestError(call) }
    return PaginationResult(
      data: Self.items(index), nextKey: index + 1 < count ? "\(index + 1)" : nil,
      prevKey: index > 0 ? "\(index - 1)" : nil)
  }

  func fetch(param: String) async throws -> PaginationResult<Int> {
    try await firstGate?.wait()
    return try page(start, call: "first")
  }

  func fetchNext(nextKey: String, param: String) async throws -> PaginationResult<Int> {
    try await gate?.wait()
    return try page(Int(nextKey)!, call: "next:\(nextKey)")
  }

  func fetchPrev(prevKey: String, param: String) async throws -> PaginationResult<Int> {
    try await gate?.wait()
    return try page(Int(prevKey)!, call: "prev:\(prevKey)")
  }
}

/// A one-way view of ``NumberPages``.
struct ForwardPages: PaginationFetcher {
  let base: NumberPages

  func fetch(param: String) async throws -> PaginationResult<Int> { try await base.fetch(param: param) }

  func fetchNext(nextKey: String, param: String) async throws -> PaginationResult<Int> {
    try await base.fetchNext(nextKey: nextKey, param: param)
  }
}

/// A completed list state with the given additional states.
func page(
  _ items: [Int], next: AdditionalLoadingState, prev: AdditionalLoadingState = .fixed(canRequestAdditionalData: false)
)
  -> LoadingState<[Int]>
{
  .completed(content: items, next: next, prev: prev)
}

let more = AdditionalLoadingState.fixed(canRequestAdditionalData: true)
let noMore = AdditionalLoadingState.fixed(canRequestAdditionalData: false)
