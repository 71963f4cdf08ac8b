/// Why a ``DiskCache`` call failed.
///
/// Corrupt, truncated and foreign files are never errors: they read as misses and are
/// removed.
public enum DiskCacheError: Error, Sendable, CustomStringConvertible {
  /// A file-system call failed (permissions, a full disk, an I/O error).
  case fileSystem(FileSystemError)

  /// The encoded entry is larger than the cache's whole ``DiskCache/sizeLimit``; nothing
  /// was written and the previous value of the key, if any, is kept.
  case entryTooLarge(size: Int, limit: Int)

  /// The key codec could not encode the key.
  case keyEncodingFailed(any Error)

  /// The value codec could not encode the value; nothing was written.
  case valueEncodingFailed(any Error)

  public var description: String {
    switch self {
    case .fileSystem(let error): "disk cache: \(error)"
    case .entryTooLarge(let size, let limit):
      "disk cache: an entry of \(size) bytes cannot fit under the size limit of \(limit) bytes"
    case .keyEncodingFailed(let error): "disk cache: the key could not be encoded: \(error)"
    case .valueEncodingFailed(let error): "disk cache: the value could not be encoded: \(error)"
    }
  }
}
