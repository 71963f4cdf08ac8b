import _KilnSynchronization

// Hooks for KilnStorage's tests and benchmarks; not public API.

extension SerializableCache {
  /// Waits for the write scheduled by earlier changes, if any (for tests).
  func waitForScheduledWrite() async {
    let task = state.withLock { $0.scheduledWrite }
    await task?.value
  }

  /// Makes `sync` what flushes the journal's directory with ``Durability/powerLoss`` (for
  /// tests).
  func useDirectorySync(_ sync: @escaping DirectorySync) async {
    await writer.useDirectorySync(sync)
  }

  /// The journal's size in bytes as its writer knows it (for tests and benchmarks).
  var journalSize: Int {
    get async { await writer.fileSize }
  }
}
