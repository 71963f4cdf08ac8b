import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The result of reading a whole file.
struct FileContents: Sendable {
  var bytes: [UInt8]
  var identity: FileIdentity
  /// Seconds since 1970 of the file's last modification.
  var modified: Double
}

/// The result of reading a whole file in two parts (``POSIX/readFile(_:head:maximumSize:)``).
struct SplitFileContents {
  /// How many bytes were read into the caller's head buffer.
  var headCount: Int
  /// The bytes after the head (empty when the file is no longer than the head).
  var tail: Data
  var identity: FileIdentity
  /// Seconds since 1970 of the file's last modification.
  var modified: Double
}
