// Thin wrappers over the POSIX file calls the persistent stores need. Foundation's file
// APIs allocate and convert more than a cache's hot path can afford, and hide the
// distinctions (ENOENT vs EACCES, inode identity, O_APPEND) that crash safety needs.

import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

enum POSIX {
  /// Reads the whole file at `path`; `nil` when it does not exist (or is a directory).
  ///
  /// - Parameter maximumSize: Files larger than this are not read: they answer with empty
  ///   `bytes` (a size no valid record has), so a foreign huge file cannot exhaust memory.
  static func readFile(_ path: String, maximumSize: Int = .max) throws(FileSystemError) -> FileContents? {
    guard let file = try openForReading(path) else { return nil }
    defer { close(file.descriptor) }
    let size = Int(file.info.st_size)
    let identity = FileIdentity(device: UInt64(file.info.st_dev), inode: UInt64(file.info.st_ino))
    let modified = modificationTime(file.info)
    guard size <= maximumSize else {
      return FileContents(bytes: [], identity: identity, modified: modified)
    }
    let bytes = try readBytes(file.descriptor, count: size, path: path)
    return FileContents(bytes: bytes, identity: identity, modified: modified)
  }

  /// Reads the whole file at `path` in one `readv` split in two parts: its first bytes into
  /// `head` (the caller's buffer, typically on its stack), the rest into a fresh buffer that
  /// `tail` owns. `nil` when the file does not exist (or is a directory).
  ///
  /// What `DiskCache` reads an entry with: the value at the start of `tail` can be handed out
  /// without another copy.
  ///
  /// - Parameter maximumSize: Files larger than this are not read: they answer with nothing
  ///   read (a size no valid record has), so a foreign huge file cannot exhaust memory.
  static func readFile(
    _ path: String,
    head: UnsafeMutableRawBufferPointer,
    maximumSize: Int = .max
  ) throws(FileSystemError) -> SplitFileContents? {
    guard let file = try openForReading(path) else { return nil }
    defer { close(file.descriptor) }
    let size = Int(file.info.st_size)
    let identity = FileIdentity(device: UInt64(file.info.st_dev), inode: UInt64(file.info.st_ino))
    let modified = modificationTime(file.info)
    guard size <= maximumSize else {
      return SplitFileContents(headCount: 0, tail: Data(), identity: identity, modified: modified)
    }
    let headCapacity = min(head.count, size)
    let tailCapacity = size - headCapacity
    let tail = UnsafeMutableRawPointer.allocate(byteCount: max(tailCapacity, 1), alignment: 16)
    var done = 0
    var failure: Int32 = 0
    withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2) { vectors in
      while done < size {
        let count: Int32
        if done < headCapacity {
          vectors[0] = iovec(iov_base: head.baseAddress! + done, iov_len: headCapacity - done)
          vectors[1] = iovec(iov_base: tail, iov_len: tailCapacity)
          count = tailCapacity > 0 ? 2 : 1
        } else {
          vectors[0] = iovec(iov_base: tail + (done - headCapacity), iov_len: size - done)
          count = 1
        }
        let result = readv(file.descriptor, vectors.baseAddress!, count)
        if result < 0 {
          if errno == EINTR { continue }
          failure = errno
          return
        }
        if result == 0 { return }  // Truncated under us: fewer bytes than its size.
        done += result
      }
    }
    if failure != 0 {
      tail.deallocate()
      throw FileSystemError(operation: "read", path: path, code: failure)
    }
    return SplitFileContents(
      headCount: min(done, headCapacity),
      tail: Data(
        bytesNoCopy: tail, count: max(done - headCapacity, 0),
        deallocator: .custom { pointer, _ in pointer.deallocate() }),
      identity: identity, modified: modified)
  }

  /// Reads at most the first `count` bytes of the file at `path`; `nil` when it does not
  /// exist (or is a directory).
  ///
  /// - Returns: The bytes (fewer when the file is shorter), the file's identity and its
  ///   whole size.
  static func readPrefix(
    _ path: String,
    count: Int
  ) throws(FileSystemError) -> (bytes: [UInt8], identity: FileIdentity, size: Int)? {
    guard let file = try openForReading(path) else { return nil }
    defer { close(file.descriptor) }
    let size = Int(file.info.st_size)
    let bytes = try readBytes(file.descriptor, count: min(count, size), path: path)
    return (bytes, FileIdentity(device: UInt64(file.info.st_dev), inode: UInt64(file.info.st_ino)), size)
  }

  /// Opens the regular file at `path` for reading, with its `stat`; `nil` when it does not
  /// exist or is a directory. The caller closes the descriptor.
  private static func openForReading(_ path: String) throws(FileSystemError) -> (descriptor: Int32, info: stat)? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    if descriptor < 0 {
      let code = errno
      if code == ENOENT || code == ENOTDIR || code == EISDIR { return nil }
      throw FileSystemError(operation: "open", path: path, code: code)
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      let code = errno
      close(descriptor)
      throw FileSystemError(operation: "fstat", path: path, code: code)
    }
    if info.st_mode & S_IFMT == S_IFDIR {
      close(descriptor)
      return nil
    }
    return (descriptor, info)
  }

  /// Reads up to `count` bytes from `descriptor`, freshly opened at the start of its file;
  /// fewer when the file turns out shorter (truncated under us).
  private static func readBytes(_ descriptor: Int32, count: Int, path: String) throws(FileSystemError) -> [UInt8] {
    var failure: Int32 = 0
    let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      var offset = 0
      while offset < count {
        let result = read(descriptor, buffer.baseAddress! + offset, count - offset)
        if result < 0 {
          if errno == EINTR { continue }
          failure = errno
          break
        }
        if result == 0 { break }
        offset += result
      }
      initialized = offset
    }
    if failure != 0 { throw FileSystemError(operation: "read", path: path, code: failure) }
    return bytes
  }

  /// Creates `path` exclusively and writes `bytes` into it; optionally `fsync`s it.
  static func writeNewFile(_ path: String, _ bytes: [UInt8], sync: Bool) throws(FileSystemError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    if descriptor < 0 { throw FileSystemError(operation: "create", path: path, code: errno) }
    do throws(FileSystemError) {
      try writeAll(descriptor, bytes, path: path)
      if sync, fsync(descriptor) != 0 { throw FileSystemError(operation: "fsync", path: path, code: errno) }
    } catch {
      close(descriptor)
      unlink(path)
      throw error
    }
    if close(descriptor) != 0 {
      let code = errno
      unlink(path)
      throw FileSystemError(operation: "close", path: path, code: code)
    }
  }

  /// Writes every byte of `bytes` to `descriptor`, retrying short writes.
  static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws(FileSystemError) {
    var failure: Int32 = 0
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let result = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if result < 0 {
          if errno == EINTR { continue }
          failure = errno
          return
        }
        offset += result
      }
    }
    if failure != 0 { throw FileSystemError(operation: "write", path: path, code: failure) }
  }

  /// Opens `path` for appending, creating it if needed and `create` is set.
  ///
  /// - Returns: The descriptor; `nil` when the file does not exist and `create` is not set.
  static func openForAppending(_ path: String, create: Bool) throws(FileSystemError) -> Int32? {
    let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0), 0o644)
    if descriptor < 0 {
      if !create, errno == ENOENT { return nil }
      throw FileSystemError(operation: "open", path: path, code: errno)
    }
    return descriptor
  }

  static func closeDescriptor(_ descriptor: Int32) {
    close(descriptor)
  }

  static func sync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    if fsync(descriptor) != 0 { throw FileSystemError(operation: "fsync", path: path, code: errno) }
  }

  /// Cuts the file at `path` to `length` bytes.
  static func truncate(_ path: String, to length: Int) throws(FileSystemError) {
    #if canImport(Glibc)
      let result = Glibc.truncate(path, off_t(length))
    #elseif canImport(Musl)
      let result = Musl.truncate(path, off_t(length))
    #else
      let result = Darwin.truncate(path, off_t(length))
    #endif
    if result != 0 { throw FileSystemError(operation: "truncate", path: path, code: errno) }
  }

  /// Atomically replaces `destination` with `source`.
  static func rename(_ source: String, to destination: String) throws(FileSystemError) {
    #if canImport(Glibc)
      let result = Glibc.rename(source, destination)
    #elseif canImport(Musl)
      let result = Musl.rename(source, destination)
    #else
      let result = Darwin.rename(source, destination)
    #endif
    if result != 0 { throw FileSystemError(operation: "rename", path: destination, code: errno) }
  }

  /// Removes `path`; a missing file is not an error.
  static func remove(_ path: String) throws(FileSystemError) {
    if unlink(path) != 0, errno != ENOENT {
      throw FileSystemError(operation: "unlink", path: path, code: errno)
    }
  }

  /// The identity of the file at `path`, without following a symbolic link.
  static func identity(of path: String) -> FileIdentity? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
  }

  /// The identity of an open file.
  static func identity(ofDescriptor descriptor: Int32) -> FileIdentity? {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
  }

  /// The identity and size of an open file.
  static func status(ofDescriptor descriptor: Int32) -> (identity: FileIdentity, size: Int)? {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    return (FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), Int(info.st_size))
  }

  /// Flushes a directory's entries (after a rename) to stable storage.
  static func syncDirectory(_ path: String) throws(FileSystemError) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    if descriptor < 0 { throw FileSystemError(operation: "open", path: path, code: errno) }
    defer { close(descriptor) }
    if fsync(descriptor) != 0 { throw FileSystemError(operation: "fsync", path: path, code: errno) }
  }

  /// Sets the modification time of the open file to now.
  static func touch(_ path: String) {
    _ = utimes(path, nil)
  }

  /// Creates the directory (and its parents); succeeds when it already exists.
  static func makeDirectory(_ path: String) throws(FileSystemError) {
    var info = stat()
    if stat(path, &info) == 0 {
      guard info.st_mode & S_IFMT == S_IFDIR else {
        throw FileSystemError(operation: "mkdir", path: path, code: ENOTDIR)
      }
      return
    }
    let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    if !parent.isEmpty, parent != path { try makeDirectory(parent) }
    if mkdir(path, 0o755) != 0, errno != EEXIST {
      throw FileSystemError(operation: "mkdir", path: path, code: errno)
    }
  }

  /// One entry of a directory listing.
  struct DirectoryEntry {
    var name: String
    var size: Int
    var modified: Double
    var isRegularFile: Bool
  }

  /// Lists the entries of a directory (without `.` and `..`), with their sizes.
  static func listDirectory(_ path: String, withAttributes: Bool = true) throws(FileSystemError) -> [DirectoryEntry] {
    guard let directory = opendir(path) else {
      throw FileSystemError(operation: "opendir", path: path, code: errno)
    }
    defer { closedir(directory) }
    let descriptor = dirfd(directory)
    var entries: [DirectoryEntry] = []
    while let entry = readdir(directory) {
      let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
        pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
      }
      if name == "." || name == ".." { continue }
      guard withAttributes else {
        entries.append(DirectoryEntry(name: name, size: 0, modified: 0, isRegularFile: true))
        continue
      }
      var info = stat()
      guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
      entries.append(
        DirectoryEntry(
          name: name, size: Int(info.st_size), modified: modificationTime(info),
          isRegularFile: info.st_mode & S_IFMT == S_IFREG))
    }
    return entries
  }

  /// Whether a process with this identifier exists.
  static func processExists(_ pid: Int32) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
  }

  static var processID: Int32 { getpid() }

  private static func modificationTime(_ info: stat) -> Double {
    #if canImport(Darwin)
      return Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
    #else
      return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    #endif
  }

  /// The current wall-clock time in seconds since 1970, as the file system stamps files.
  static func fileSystemNow() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
}
