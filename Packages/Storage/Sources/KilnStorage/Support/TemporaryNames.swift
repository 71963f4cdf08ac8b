import Synchronization
import _KilnSynchronization

/// Names of temporary files that say whose they are: `<prefix><pid>-<nonce>-<n>`.
///
/// The process identifier alone does not tell: in a container every run is often PID 1, so
/// a file left by an earlier run that crashed looks like this process's own, and a counter
/// that starts again at 1 collides with it. Each instance draws a random nonce, and the
/// process keeps the nonces of the instances alive in it: a file of this process's pid whose
/// nonce is not among them — or that has none, as 0.1.0's names — was left by an earlier
/// process and will never be renamed.
final class TemporaryNames: Sendable {
  /// The start of every name.
  let prefix: String
  /// This instance's random part of the names.
  let nonce: UInt64
  private let counter = Atomic<UInt64>(0)

  /// The nonces of the instances alive in this process.
  private static let live = KilnMutex<Set<UInt64>>([])

  init(prefix: String) {
    self.prefix = prefix
    var nonce: UInt64
    repeat {
      nonce = UInt64.random(in: 1...UInt64.max)
    } while !Self.live.withLock({ $0.insert(nonce).inserted })
    self.nonce = nonce
  }

  deinit {
    _ = Self.live.withLock { [nonce] in $0.remove(nonce) }
  }

  /// A name no other writer uses: `<prefix><pid>-<nonce in hexadecimal>-<counter>`.
  func next() -> String {
    let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
    return prefix + "\(POSIX.processID)-\(String(nonce, radix: 16))-\(number)"
  }

  /// Whether `name`, which starts with `prefix`, is a temporary file that its writer will
  /// never rename: written by a process that is gone, or by an earlier process that had
  /// this one's pid. A name that does not parse is not judged one (it is not ours).
  static func isLeftover(_ name: String, prefix: String) -> Bool {
    let parts = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
    guard let first = parts.first, let pid = Int32(first) else { return false }
    guard pid == POSIX.processID else { return !POSIX.processExists(pid) }
    guard parts.count == 3, let nonce = UInt64(parts[1], radix: 16) else { return true }
    return !live.withLock { $0.contains(nonce) }
  }
}
