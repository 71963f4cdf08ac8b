/// The state of a repository's content, as a UI shows it.
///
/// ```swift
/// for await state in flowable.publish() {
///   state.doAction(
///     onLoading: { stale in showSpinner(over: stale) },
///     onCompleted: { content, next, prev in show(content) },
///     onError: { error in showBanner(error) }
///   )
/// }
/// ```
///
/// Content is never thrown away: while an expired value refreshes the state is
/// `.loading(content: stale)`, and a failed load keeps the last good content in
/// `.error(_:content:)`, so a UI can show both.
public enum LoadingState<Content: Sendable>: Sendable {
  /// The content is loading; `content` is what was known before (stale or `nil`).
  case loading(content: Content?)
  /// The content is loaded; `next` and `prev` are the states of additional pages.
  case completed(content: Content, next: AdditionalLoadingState, prev: AdditionalLoadingState)
  /// Loading failed; `content` is the last good content, or `nil` when there was none.
  case error(_ error: any Error, content: Content? = nil)

  /// The content the state carries, whatever the case: stale while loading, the last good
  /// content in an error, or `nil`.
  @inlinable
  public var content: Content? {
    switch self {
    case .loading(let content): content
    case .completed(let content, _, _): content
    case .error(_, let content): content
    }
  }

  /// Whether the state is `.loading`.
  @inlinable
  public var isLoading: Bool {
    if case .loading = self { return true }
    return false
  }

  /// The error of an `.error` state, else `nil`.
  @inlinable
  public var error: (any Error)? {
    if case .error(let error, _) = self { return error }
    return nil
  }

  /// Calls the closure matching the state and returns its result.
  ///
  /// ```swift
  /// let text = state.doAction(
  ///   onLoading: { _ in "…" }, onCompleted: { content, _, _ in content.title }, onError: { "\($0)" })
  /// ```
  ///
  /// - Parameters:
  ///   - onLoading: Called with the stale content (or `nil`) while loading.
  ///   - onCompleted: Called with the content and the next and previous page states.
  ///   - onError: Called with the error; read ``content`` for the last good content.
  /// - Returns: What the called closure returns.
  @inlinable
  public func doAction<Result>(
    onLoading: (Content?) throws -> Result,
    onCompleted: (Content, AdditionalLoadingState, AdditionalLoadingState) throws -> Result,
    onError: (any Error) throws -> Result
  ) rethrows -> Result {
    switch self {
    case .loading(let content): try onLoading(content)
    case .completed(let content, let next, let prev): try onCompleted(content, next, prev)
    case .error(let error, _): try onError(error)
    }
  }

  /// The same state with its content transformed.
  ///
  /// - Parameter transform: Maps the content (stale, loaded or last good).
  /// - Returns: The state with the transformed content.
  @inlinable
  public func mapContent<NewContent: Sendable>(
    _ transform: (Content) throws -> NewContent
  ) rethrows -> LoadingState<NewContent> {
    switch self {
    case .loading(let content): .loading(content: try content.map(transform))
    case .completed(let content, let next, let prev):
      .completed(content: try transform(content), next: next, prev: prev)
    case .error(let error, let content): .error(error, content: try content.map(transform))
    }
  }
}

extension LoadingState: Equatable where Content: Equatable {
  /// Two states are equal when they have the same case, equal content and equal additional
  /// states; errors compare by type and description (or `==` when they are `Equatable`).
  public static func == (lhs: LoadingState, rhs: LoadingState) -> Bool {
    switch (lhs, rhs) {
    case (.loading(let left), .loading(let right)):
      left == right
    case (.completed(let left, let leftNext, let leftPrev), .completed(let right, let rightNext, let rightPrev)):
      left == right && leftNext == rightNext && leftPrev == rightPrev
    case (.error(let leftError, let left), .error(let rightError, let right)):
      left == right && ErrorIdentity.same(leftError, rightError)
    default:
      false
    }
  }
}

extension LoadingState {
  /// Whether two states are equal as far as Kiln can tell without an `Equatable` constraint:
  /// `nil` when the content is not `Equatable`.
  func isSame(as other: LoadingState) -> Bool? {
    switch (self, other) {
    case (.loading(let left), .loading(let right)):
      switch (left, right) {
      case (nil, nil): return true
      case (let left?, let right?): return DynamicEquality.equal(left, right)
      default: return false
      }
    case (.completed(let left, let leftNext, let leftPrev), .completed(let right, let rightNext, let rightPrev)):
      guard leftNext == rightNext && leftPrev == rightPrev else { return false }
      return DynamicEquality.equal(left, right)
    case (.error(let leftError, let left), .error(let rightError, let right)):
      guard ErrorIdentity.same(leftError, rightError) else { return false }
      switch (left, right) {
      case (nil, nil): return true
      case (let left?, let right?): return DynamicEquality.equal(left, right)
      default: return false
      }
    default:
      return false
    }
  }
}
