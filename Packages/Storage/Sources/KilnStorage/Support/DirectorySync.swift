#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Flushes a directory's entries to stable storage: ``POSIX/syncDirectory(_:)``, or a spy
/// in tests.
typealias DirectorySync = @Sendable (_ directory: String) throws(FileSystemError) -> Void
