#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The identity of a file: device and inode.
struct FileIdentity: Hashable, Sendable {
  var device: UInt64
  var inode: UInt64
}
