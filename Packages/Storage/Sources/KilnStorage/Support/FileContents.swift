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
