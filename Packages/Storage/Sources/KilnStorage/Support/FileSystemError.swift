/// A failed file-system call of a persistent store: which call, on which path, with which
/// `errno`.
///
/// ```swift
/// do { try await cache.setValue(data, forKey: "k") }
/// catch let error as DiskCacheError {
///   if case .fileSystem(let failure) = error, failure.code == ENOSPC { /* disk full */ }
/// }
/// ```
public struct FileSystemError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The call that failed, such as `"open"`, `"write"` or `"rename"`.
  public var operation: String

  /// The path it was called on.
  public var path: String

  /// The `errno` it failed with.
  public var code: Int32

  /// Creates an error.
  public init(operation: String, path: String, code: Int32) {
    self.operation = operation
    self.path = path
    self.code = code
  }

  public var description: String {
    "\(operation) failed for \(path): \(FileSystemError.message(for: code)) (errno \(code))"
  }

  private static func message(for code: Int32) -> String {
    guard let text = strerror(code) else { return "unknown error" }
    return String(cString: text)
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
