public import Foundation

extension SerializableCache {
  /// How a damaged file was repaired when the cache was loaded.
  public struct Recovery: Hashable, Sendable {
    /// The number of bytes of a torn or corrupt tail that were cut off.
    public var discardedBytes: Int
    /// The number of records that could not be decoded with the current codecs and were
    /// skipped (their keys read as misses).
    public var undecodableRecords: Int
    /// Where an unreadable file (not a Kiln journal) was moved; `nil` when none was.
    public var setAside: URL?
  }
}
