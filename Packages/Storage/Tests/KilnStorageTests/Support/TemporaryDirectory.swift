import Foundation
import KilnTesting

/// The regular files directly inside `directory` whose names do not start with a dot.
func entryFiles(in directory: URL) throws -> [URL] {
  try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey])
    .filter { !$0.lastPathComponent.hasPrefix(".") }
}

/// The sum of the sizes of ``entryFiles(in:)``.
func totalFileSize(in directory: URL) throws -> Int {
  try entryFiles(in: directory).reduce(0) { sum, url in
    sum + (try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0)
  }
}

/// A value with a class inside, to observe when the cache releases it.
final class Tracked: Sendable {
  let id: Int
  let onDeinit: @Sendable (Int) -> Void
  init(_ id: Int, onDeinit: @escaping @Sendable (Int) -> Void) {
    self.id = id
    self.onDeinit = onDeinit
  }
  deinit { onDeinit(id) }
}
