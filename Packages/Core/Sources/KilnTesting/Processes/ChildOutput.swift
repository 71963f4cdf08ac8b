import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The output of a child process that a test (or the soak) reads through ``ChildProcess``.
public enum ChildOutput {
  /// Writes `line` and a newline to standard output in `write` calls, unbuffered, so a
  /// `SIGKILL` right after it returns cannot lose it; exits with status 3 when standard
  /// output is gone.
  ///
  /// ```swift
  /// try await store.setValue(value, forKey: key)
  /// ChildOutput.say("ack \(key)")   // the parent counts on this write being durable
  /// ```
  public static func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
        if written <= 0 { exit(3) }
        offset += written
      }
    }
  }
}
