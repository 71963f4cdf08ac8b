/// What a completed write of a file-backed store survives.
///
/// Every Kiln file store replaces data atomically (a temporary file renamed over the old
/// one, or a checksummed append), so a crash never leaves a half-written value whichever
/// level you choose. The level decides whether a write that *returned* may still be lost.
public enum Durability: Hashable, Sendable {
  /// A returned write survives the process crashing or being killed; the operating system
  /// flushes it to the disk in its own time, so a power loss or kernel panic may lose the
  /// last seconds of writes (never corrupt older ones). The default, and fast.
  case processCrash

  /// A returned write survives a power loss too: files and their directory are `fsync`ed
  /// before the call returns — after a file is created, renamed in, or removed (a removal,
  /// `removeAll`, an eviction). Each write costs a disk flush (milliseconds on many disks).
  case powerLoss
}
