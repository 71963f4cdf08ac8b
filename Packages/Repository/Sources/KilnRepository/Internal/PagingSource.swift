/// Stored data that knows whether more pages exist (a ``PageWindow``).
protocol PagingSource {
  var canRequestNext: Bool { get }
  var canRequestPrev: Bool { get }
}
