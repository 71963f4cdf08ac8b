/// A plain, comparable error for tests.
///
/// ```swift
/// let spy = SpyQuery<Int, TestError>(.failure(TestError("offline")))
/// await #expect(throws: TestError("offline")) { try await spy.load() }
/// ```
public struct TestError: Error, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// What the error stands for.
  public var name: String

  /// Creates an error named `name`.
  public init(_ name: String) {
    self.name = name
  }

  public init(stringLiteral name: String) {
    self.name = name
  }

  public var description: String {
    "TestError(\(name))"
  }
}
