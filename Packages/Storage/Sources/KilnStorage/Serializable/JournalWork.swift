import Foundation

/// What the journal writer should do next, decided under the cache's lock.
enum JournalWork: Sendable {
  case nothing
  /// Append these records.
  case append([UInt8])
  /// Replace the whole file with a header and these records.
  case replace([UInt8])
}
