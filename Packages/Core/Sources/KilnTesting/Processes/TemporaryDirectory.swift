public import Foundation

/// Runs `body` with a new, empty directory under the system's temporary directory, and
/// removes the directory and everything in it afterwards, whether `body` returns or throws.
///
/// ```swift
/// try await withTemporaryDirectory { directory in
///   let cache = try DiskCache<String, Article>(directory: directory)
///   // …
/// }
/// ```
///
/// - Parameters:
///   - prefix: The start of the directory's name, to recognise leftovers of a crashed run.
///   - body: The work, given the directory's URL.
/// - Returns: What `body` returns.
/// - Throws: When the directory cannot be created, or what `body` throws.
@discardableResult
public func withTemporaryDirectory<Result>(
  prefix: String = "kiln-tests",
  _ body: (URL) async throws -> Result
) async throws -> Result {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: url) }
  return try await body(url)
}
