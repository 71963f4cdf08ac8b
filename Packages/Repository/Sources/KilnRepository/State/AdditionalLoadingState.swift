/// The state of loading an additional page (next or previous) of a paginated content.
///
/// ```swift
/// switch next {
/// case .fixed(let canRequestAdditionalData): showMoreButton = canRequestAdditionalData
/// case .loading: showSpinner()
/// case .error(let error): showRetry(error)
/// }
/// ```
public enum AdditionalLoadingState: Sendable {
  /// Nothing is loading; `canRequestAdditionalData` tells whether another page exists.
  case fixed(canRequestAdditionalData: Bool)
  /// A page is loading.
  case loading
  /// Loading a page failed; the content loaded so far is kept.
  case error(any Error)

  /// Calls the closure matching the state and returns its result.
  ///
  /// - Parameters:
  ///   - onFixed: Called with `canRequestAdditionalData` when nothing loads.
  ///   - onLoading: Called while a page loads.
  ///   - onError: Called with the error of the last page request.
  /// - Returns: What the called closure returns.
  @inlinable
  public func doAction<Result>(
    onFixed: (Bool) throws -> Result,
    onLoading: () throws -> Result,
    onError: (any Error) throws -> Result
  ) rethrows -> Result {
    switch self {
    case .fixed(let canRequestAdditionalData): try onFixed(canRequestAdditionalData)
    case .loading: try onLoading()
    case .error(let error): try onError(error)
    }
  }

  /// Combines two additional states: the first error wins, then loading, else fixed with
  /// `canRequestAdditionalData` if either can request more.
  ///
  /// - Parameters:
  ///   - lhs: The first state; its error wins over the second's.
  ///   - rhs: The second state.
  /// - Returns: The combined state.
  public static func zip(_ lhs: AdditionalLoadingState, _ rhs: AdditionalLoadingState) -> AdditionalLoadingState {
    switch (lhs, rhs) {
    case (.error, _): lhs
    case (_, .error): rhs
    case (.loading, _), (_, .loading): .loading
    case (.fixed(let left), .fixed(let right)): .fixed(canRequestAdditionalData: left || right)
    }
  }
}

extension AdditionalLoadingState: Equatable {
  /// Two states are equal when they have the same case and the same flag; two errors are
  /// equal when they have the same type and the same description.
  public static func == (lhs: AdditionalLoadingState, rhs: AdditionalLoadingState) -> Bool {
    switch (lhs, rhs) {
    case (.fixed(let left), .fixed(let right)): left == right
    case (.loading, .loading): true
    case (.error(let left), .error(let right)): ErrorIdentity.same(left, right)
    default: false
    }
  }
}
