extension LoadingStateSequence {
  /// Combines this sequence with another: each time either emits, the latest states of both
  /// are combined with ``LoadingState/zip(_:_:_:)`` (first error wins, then loading, then
  /// completed) once both have emitted.
  ///
  /// ```swift
  /// let profile = user.publish().combineState(posts.publish()) { user, posts in Profile(user, posts) }
  /// ```
  ///
  /// - Parameters:
  ///   - other: The second sequence.
  ///   - transform: Combines the two contents.
  /// - Returns: The combined sequence; it ends when the iterating task is cancelled.
  public func combineState<Other: Sendable, Combined: Sendable>(
    _ other: LoadingStateSequence<Other>,
    _ transform: @escaping @Sendable (Content, Other) -> Combined
  ) -> LoadingStateSequence<Combined> {
    CombineLatest.combine(self, other) { LoadingState.zip($0, $1, transform) }
  }

  /// Combines three sequences with the precedence of ``LoadingState/zip(_:_:_:_:)``.
  public func combineState<B: Sendable, C: Sendable, Combined: Sendable>(
    _ b: LoadingStateSequence<B>, _ c: LoadingStateSequence<C>,
    _ transform: @escaping @Sendable (Content, B, C) -> Combined
  ) -> LoadingStateSequence<Combined> {
    combineState(b) { Pair(first: $0, second: $1) }.combineState(c) { ab, c in transform(ab.first, ab.second, c) }
  }

  /// Combines four sequences with the precedence of ``LoadingState/zip(_:_:_:_:_:)``.
  public func combineState<B: Sendable, C: Sendable, D: Sendable, Combined: Sendable>(
    _ b: LoadingStateSequence<B>, _ c: LoadingStateSequence<C>, _ d: LoadingStateSequence<D>,
    _ transform: @escaping @Sendable (Content, B, C, D) -> Combined
  ) -> LoadingStateSequence<Combined> {
    combineState(b) { Pair(first: $0, second: $1) }
      .combineState(c.combineState(d) { Pair(first: $0, second: $1) }) { ab, cd in
        transform(ab.first, ab.second, cd.first, cd.second)
      }
  }

  /// Combines five sequences with the precedence of ``LoadingState/zip(_:_:_:_:_:_:)``.
  public func combineState<B: Sendable, C: Sendable, D: Sendable, E: Sendable, Combined: Sendable>(
    _ b: LoadingStateSequence<B>, _ c: LoadingStateSequence<C>, _ d: LoadingStateSequence<D>,
    _ e: LoadingStateSequence<E>,
    _ transform: @escaping @Sendable (Content, B, C, D, E) -> Combined
  ) -> LoadingStateSequence<Combined> {
    combineState(b) { Pair(first: $0, second: $1) }
      .combineState(c.combineState(d) { Pair(first: $0, second: $1) }, e) { ab, cd, e in
        transform(ab.first, ab.second, cd.first, cd.second, e)
      }
  }
}

/// The latest state of two sequences, combined each time either changes.
enum CombineLatest {
  private enum Event<Left: Sendable, Right: Sendable>: Sendable {
    case left(LoadingState<Left>)
    case right(LoadingState<Right>)
  }

  static func combine<Left: Sendable, Right: Sendable, Combined: Sendable>(
    _ left: LoadingStateSequence<Left>,
    _ right: LoadingStateSequence<Right>,
    _ combine: @escaping @Sendable (LoadingState<Left>, LoadingState<Right>) -> LoadingState<Combined>
  ) -> LoadingStateSequence<Combined> {
    LoadingStateSequence<Combined>(
      LoadingSnapshotSequence {
        let (events, continuation) = AsyncStream<Event<Left, Right>>.makeStream()
        // Each side is pumped by its own task; both end when the consumer goes away.
        let pumps = [
          Task {
            for await state in left { continuation.yield(.left(state)) }
          },
          Task {
            for await state in right { continuation.yield(.right(state)) }
          },
        ]
        continuation.onTermination = { _ in for pump in pumps { pump.cancel() } }
        var iterator = events.makeAsyncIterator()
        var latestLeft: LoadingState<Left>?
        var latestRight: LoadingState<Right>?
        return SnapshotSource {
          while let event = await iterator.next() {
            switch event {
            case .left(let state): latestLeft = state
            case .right(let state): latestRight = state
            }
            if let latestLeft, let latestRight {
              return LoadingSnapshot(state: combine(latestLeft, latestRight), origin: nil)
            }
          }
          for pump in pumps { pump.cancel() }
          return nil
        }
      })
  }
}
