/// The failure of a query with a timeout: it took too long, its own load failed, or the
/// caller was cancelled first.
///
/// ```swift
/// do throws(QueryTimeoutError<any Error>) {
///   let feed = try await network.timeout(.seconds(10)).load()
/// } catch .timedOut(let limit) {
///   show("No answer within \(limit)")
/// } catch .failed(let error) {
///   show(error)
/// } catch .cancelled {
///   // the screen went away
/// }
/// ```
public enum QueryTimeoutError<Failure: Error>: Error, CustomStringConvertible {
  /// The load did not finish within the limit; it was cancelled.
  case timedOut(after: Duration)

  /// The load failed on its own, within the limit.
  case failed(Failure)

  /// The caller's task was cancelled before the load finished; the load was cancelled.
  case cancelled

  /// The upstream's failure, when the load failed on its own.
  public var failure: Failure? {
    if case .failed(let failure) = self { return failure }
    return nil
  }

  public var description: String {
    switch self {
    case .timedOut(let limit): "the load did not finish within \(limit)"
    case .failed(let failure): "the load failed: \(failure)"
    case .cancelled: "the load was cancelled"
    }
  }
}

extension QueryTimeoutError: Equatable where Failure: Equatable {}
extension QueryTimeoutError: Hashable where Failure: Hashable {}
