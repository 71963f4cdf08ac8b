import _KilnSynchronization

// Handing queued journal records to the writer: after `writeDelay`, on `flush()`, or as
// a full snapshot once the journal has grown past twice the live data.

extension SerializableCache {
  /// Writes every queued change now and waits until it is written.
  ///
  /// - Throws: ``SerializableCacheError/fileSystem(_:)`` when the journal cannot be written,
  ///   or the first error of a background write or of a subscript assignment since the
  ///   last `flush()`. The changes stay queued after a file-system failure and are written
  ///   by the next successful write.
  public func flush() async throws(SerializableCacheError) {
    await write()
    let failure = state.withLock { state in
      let failure = state.failure
      state.failure = nil
      return failure
    }
    if let failure { throw failure }
  }

  func scheduleWrite() {
    let delay = writeDelay
    let clock = clock
    state.withLock { state in
      guard state.scheduledWrite == nil else { return }
      state.scheduledWrite = Task { [self] in
        try? await clock.sleep(for: delay)
        await self.write()
      }
    }
  }

  func write() async {
    do {
      try await writer.write { [self] fileSize, mustReplace in takeWork(fileSize: fileSize, mustReplace: mustReplace) }
    } catch {
      state.withLock { state in
        state.needsSnapshot = true
        state.failure = state.failure ?? .fileSystem(error)
      }
    }
  }

  /// Hands the queued records to the writer, or a full snapshot when the journal has grown
  /// past twice the live data (or a write failed). Runs on the writer, under the lock.
  func takeWork(fileSize: Int, mustReplace: Bool) -> JournalWork {
    state.withLock { state in
      state.scheduledWrite = nil
      let live = state.table.totalCost
      if mustReplace || state.needsSnapshot || fileSize + state.pending.count > 2 * live + Self.compactionSlack {
        var snapshot: [UInt8] = []
        snapshot.reserveCapacity(live)
        for node in state.table.entriesOldestFirst { snapshot += node.value.record }
        state.pending = []
        state.needsSnapshot = false
        return .replace(snapshot)
      }
      guard !state.pending.isEmpty else { return .nothing }
      var pending: [UInt8] = []
      swap(&pending, &state.pending)
      return .append(pending)
    }
  }
}
