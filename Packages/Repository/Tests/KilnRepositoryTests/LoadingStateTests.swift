import KilnRepository
import KilnTesting
import Testing

@Suite struct LoadingStateTests {
  static let fixedTrue = AdditionalLoadingState.fixed(canRequestAdditionalData: true)
  static let fixedFalse = AdditionalLoadingState.fixed(canRequestAdditionalData: false)

  /// Every kind of state, with content 1 or 10 where it carries one.
  static let states: [(String, LoadingState<Int>)] = [
    ("loading(nil)", .loading(content: nil)),
    ("loading(1)", .loading(content: 1)),
    ("completed(1, fixed(false))", .completed(content: 1, next: fixedFalse, prev: fixedFalse)),
    ("completed(1, fixed(true), loading)", .completed(content: 1, next: fixedTrue, prev: .loading)),
    ("completed(1, error, fixed(true))", .completed(content: 1, next: .error(TestError("n")), prev: fixedTrue)),
    ("error(nil)", .error(TestError("e"), content: nil)),
    ("error(1)", .error(TestError("e"), content: 1)),
  ]

  /// The seed's rule, written independently of the implementation.
  static func expectedZip(_ a: LoadingState<Int>, _ b: LoadingState<Int>) -> LoadingState<Int> {
    let content = a.content.flatMap { a in b.content.map { a * 100 + $0 } }
    if let error = a.error ?? b.error { return .error(error, content: content) }
    if a.isLoading || b.isLoading { return .loading(content: content) }
    guard case .completed(_, let aNext, let aPrev) = a, case .completed(_, let bNext, let bPrev) = b else {
      fatalError("unreachable")
    }
    func additional(_ x: AdditionalLoadingState, _ y: AdditionalLoadingState) -> AdditionalLoadingState {
      if case .error = x { return x }
      if case .error = y { return y }
      if x == .loading || y == .loading { return .loading }
      return .fixed(canRequestAdditionalData: x == fixedTrue || y == fixedTrue)
    }
    return .completed(content: content!, next: additional(aNext, bNext), prev: additional(aPrev, bPrev))
  }

  static var pairs: [(Int, Int)] {
    states.indices.flatMap { a in states.indices.map { b in (a, b) } }
  }

  @Test("zip follows the precedence rules for every pair of states", arguments: pairs)
  func zipMatrix(a: Int, b: Int) {
    let (left, right) = (Self.states[a].1, Self.states[b].1)
    let zipped = LoadingState.zip(left, right) { $0 * 100 + $1 }
    #expect(zipped == Self.expectedZip(left, right), "\(Self.states[a].0) × \(Self.states[b].0)")
  }

  @Test("the first argument's error wins")
  func firstErrorWins() {
    let zipped = LoadingState<Int>.zip(
      LoadingState<Int>.error(TestError("first"), content: nil), LoadingState<Int>.error(TestError("second"))
    ) { $0 + $1 }
    #expect(zipped.error as? TestError == TestError("first"))
    let additional = AdditionalLoadingState.zip(.error(TestError("a")), .error(TestError("b")))
    #expect(additional == .error(TestError("a")))
  }

  @Test("zip of three, four and five states keeps the precedence")
  func zipMany() {
    let done = completed(1)
    let loading = LoadingState<Int>.loading(content: 2)
    let failed = LoadingState<Int>.error(TestError("x"), content: 3)
    #expect(LoadingState.zip(done, done, done) { $0 + $1 + $2 } == completed(3))
    #expect(LoadingState.zip(done, loading, done) { $0 + $1 + $2 } == .loading(content: 4))
    #expect(LoadingState.zip(done, loading, failed, done) { $0 + $1 + $2 + $3 } == .error(TestError("x"), content: 7))
    #expect(
      LoadingState.zip(
        LoadingState<Int>.error(TestError("a")), done, done, done, LoadingState<Int>.error(TestError("e"))
      ) { $0 + $1 + $2 + $3 + $4 }.error as? TestError == TestError("a"))
    #expect(LoadingState.zip(done, done, done, done, done) { $0 + $1 + $2 + $3 + $4 } == completed(5))
  }

  @Test("doAction calls the closure of the case")
  func doAction() {
    func describe(_ state: LoadingState<Int>) -> String {
      state.doAction(
        onLoading: { "loading \(String(describing: $0))" },
        onCompleted: { content, next, _ in
          "completed \(content) "
            + next.doAction(onFixed: { "fixed \($0)" }, onLoading: { "loading" }, onError: { "\($0)" })
        },
        onError: { "error \($0)" })
    }
    #expect(describe(.loading(content: nil)) == "loading nil")
    #expect(describe(.completed(content: 1, next: Self.fixedTrue, prev: Self.fixedFalse)) == "completed 1 fixed true")
    #expect(describe(.completed(content: 1, next: .loading, prev: Self.fixedFalse)) == "completed 1 loading")
    #expect(describe(.error(TestError("e"), content: 4)) == "error TestError(e)")
  }

  @Test("mapContent maps the content of every case and keeps the rest")
  func mapContent() {
    #expect(LoadingState<Int>.loading(content: 2).mapContent { "\($0)" } == .loading(content: "2"))
    #expect(LoadingState<Int>.loading(content: nil).mapContent { "\($0)" } == .loading(content: nil))
    #expect(
      LoadingState<Int>.completed(content: 2, next: Self.fixedTrue, prev: .loading).mapContent { "\($0)" }
        == .completed(content: "2", next: Self.fixedTrue, prev: .loading))
    #expect(
      LoadingState<Int>.error(TestError("e"), content: 2).mapContent { "\($0)" } == .error(TestError("e"), content: "2")
    )
  }

  @Test("errors compare by type and value")
  func errorEquality() {
    struct Other: Error {}
    #expect(LoadingState<Int>.error(TestError("a")) == .error(TestError("a")))
    #expect(LoadingState<Int>.error(TestError("a")) != .error(TestError("b")))
    #expect(LoadingState<Int>.error(TestError("a")) != .error(Other()))
    #expect(LoadingState<Int>.error(TestError("a"), content: 1) != .error(TestError("a"), content: 2))
  }
}
