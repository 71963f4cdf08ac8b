/// What a request for an additional page did.
public enum AdditionalRequestResult: Sendable {
  /// The page was loaded and added to the content.
  case loaded
  /// Nothing was requested, for `reason`.
  case skipped(AdditionalRequestSkipReason)
  /// The request is not allowed in the current state (the seed's errors).
  case rejected(AdditionalRequestError)
  /// The page request failed; the content and the key are kept and the state's additional
  /// state is `.error`.
  case failed(any Error)
  /// A refresh, update or clear (or a page in the other direction that moved the window)
  /// replaced the content while the page loaded: the page was dropped.
  case superseded
}

extension AdditionalRequestResult: Equatable {
  /// Equal cases with equal reasons; failures compare their errors by type and value.
  public static func == (lhs: AdditionalRequestResult, rhs: AdditionalRequestResult) -> Bool {
    switch (lhs, rhs) {
    case (.loaded, .loaded), (.superseded, .superseded): true
    case (.skipped(let left), .skipped(let right)): left == right
    case (.rejected(let left), .rejected(let right)): left == right
    case (.failed(let left), .failed(let right)): ErrorIdentity.same(left, right)
    default: false
    }
  }
}

/// Why a request for an additional page did nothing.
public enum AdditionalRequestSkipReason: Hashable, Sendable {
  /// The main content is loading.
  case mainLoading
  /// A page in that direction is already loading.
  case alreadyLoading
  /// The last request in that direction failed and `continueWhenError` is `false`.
  case previousError
  /// There is no key for another page in that direction.
  case noMoreData
}

/// A request for an additional page that the state does not allow.
public enum AdditionalRequestError: Error, Hashable, Sendable {
  /// The main state is an error: refresh or validate first.
  case onErrorState
  /// There is no content to add a page to.
  case onNil
}
