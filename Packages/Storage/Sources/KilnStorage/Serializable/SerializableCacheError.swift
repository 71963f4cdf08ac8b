/// Why a ``SerializableCache`` call failed.
///
/// A damaged cache file is never an error: ``SerializableCache/load(name:directory:entryLifetime:countLimit:writeDelay:clock:durability:keyCodec:valueCodec:now:)``
/// keeps every intact change, truncates a torn tail and sets a file it cannot read at all
/// aside; see ``SerializableCache/recovery``.
public enum SerializableCacheError: Error, Sendable, CustomStringConvertible {
  /// The name is empty, too long, or contains `/`, a NUL byte, or is `.` or `..`.
  case invalidName(String)

  /// A file-system call failed (permissions, a full disk, an I/O error).
  case fileSystem(FileSystemError)

  /// The key codec could not encode the key; nothing changed.
  case keyEncodingFailed(any Error)

  /// The value codec could not encode the value; nothing changed.
  case valueEncodingFailed(any Error)

  public var description: String {
    switch self {
    case .invalidName(let name): "serializable cache: \(String(reflecting: name)) is not a valid cache name"
    case .fileSystem(let error): "serializable cache: \(error)"
    case .keyEncodingFailed(let error): "serializable cache: the key could not be encoded: \(error)"
    case .valueEncodingFailed(let error): "serializable cache: the value could not be encoded: \(error)"
    }
  }
}
