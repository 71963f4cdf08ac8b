extension LoadingState {
  /// Combines two states with the precedence rules of a screen that needs both: any error
  /// wins (the first argument's first), else loading if either loads, else completed with
  /// the additional states zipped (error, then loading, then fixed if either can request more).
  ///
  /// ```swift
  /// let screen = LoadingState.zip(user, posts) { user, posts in Profile(user: user, posts: posts) }
  /// ```
  ///
  /// A combined content exists only when both contents do: an error or loading state carries
  /// `transform(a, b)` when both states carry content, else `nil`.
  ///
  /// - Parameters:
  ///   - first: The first state; its error wins over the second's.
  ///   - second: The second state.
  ///   - transform: Combines the two contents.
  /// - Returns: The combined state.
  public static func zip<First: Sendable, Second: Sendable>(
    _ first: LoadingState<First>,
    _ second: LoadingState<Second>,
    _ transform: (First, Second) throws -> Content
  ) rethrows -> LoadingState<Content> {
    let content: Content? =
      if let left = first.content, let right = second.content { try transform(left, right) } else { nil }
    switch (first, second) {
    case (.error(let error, _), _), (_, .error(let error, _)):
      return .error(error, content: content)
    case (.loading, _), (_, .loading):
      return .loading(content: content)
    case (.completed(_, let leftNext, let leftPrev), .completed(_, let rightNext, let rightPrev)):
      // Both completed: both contents exist, so `content` does.
      return .completed(
        content: content!, next: .zip(leftNext, rightNext), prev: .zip(leftPrev, rightPrev))
    }
  }

  /// Combines three states: the first error wins, else loading if any loads, else completed.
  public static func zip<A: Sendable, B: Sendable, C: Sendable>(
    _ a: LoadingState<A>, _ b: LoadingState<B>, _ c: LoadingState<C>,
    _ transform: (A, B, C) throws -> Content
  ) rethrows -> LoadingState<Content> {
    try .zip(LoadingState<Pair<A, B>>.zip(a, b, Pair.init), c) { ab, c in try transform(ab.first, ab.second, c) }
  }

  /// Combines four states: the first error wins, else loading if any loads, else completed.
  public static func zip<A: Sendable, B: Sendable, C: Sendable, D: Sendable>(
    _ a: LoadingState<A>, _ b: LoadingState<B>, _ c: LoadingState<C>, _ d: LoadingState<D>,
    _ transform: (A, B, C, D) throws -> Content
  ) rethrows -> LoadingState<Content> {
    try .zip(LoadingState<Pair<A, B>>.zip(a, b, Pair.init), LoadingState<Pair<C, D>>.zip(c, d, Pair.init)) {
      ab, cd in try transform(ab.first, ab.second, cd.first, cd.second)
    }
  }

  /// Combines five states: the first error wins, else loading if any loads, else completed.
  public static func zip<A: Sendable, B: Sendable, C: Sendable, D: Sendable, E: Sendable>(
    _ a: LoadingState<A>, _ b: LoadingState<B>, _ c: LoadingState<C>, _ d: LoadingState<D>, _ e: LoadingState<E>,
    _ transform: (A, B, C, D, E) throws -> Content
  ) rethrows -> LoadingState<Content> {
    try .zip(LoadingState<Pair<A, B>>.zip(a, b, Pair.init), LoadingState<Pair<C, D>>.zip(c, d, Pair.init), e) {
      ab, cd, e in try transform(ab.first, ab.second, cd.first, cd.second, e)
    }
  }
}

/// Two values, `Sendable` when both are (a tuple cannot be a generic argument constrained
/// to `Sendable` in every toolchain this builds with).
struct Pair<First: Sendable, Second: Sendable>: Sendable {
  var first: First
  var second: Second
}
