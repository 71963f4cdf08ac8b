/// Why a ``ParallelPriorityLoader`` load failed.
public enum ParallelPriorityLoaderError<Failure: Error>: Error, CustomStringConvertible {
  /// A mandatory item failed; the load ended at once and the other items were cancelled.
  ///
  /// - Parameters:
  ///   - index: The failed item's position in the loader's items.
  ///   - failure: Its failure.
  case mandatoryFailed(index: Int, failure: Failure)

  /// The time limit passed before every mandatory item was in; the items were cancelled.
  case timeout

  /// The caller's task was cancelled; the items were cancelled.
  case cancelled

  public var description: String {
    switch self {
    case .mandatoryFailed(let index, let failure): "mandatory item \(index) failed: \(failure)"
    case .timeout: "the mandatory items did not load in time"
    case .cancelled: "the load was cancelled"
    }
  }
}

extension ParallelPriorityLoaderError: Equatable where Failure: Equatable {}
extension ParallelPriorityLoaderError: Hashable where Failure: Hashable {}
