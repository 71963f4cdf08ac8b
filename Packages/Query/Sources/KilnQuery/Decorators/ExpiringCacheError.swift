/// The failure of an expiring storage whose value is missing or too old.
public enum ExpiringCacheError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The validation policy rejected the storage's timestamp (or the storage was empty);
  /// the storage was not read.
  case expired

  public var description: String {
    switch self {
    case .expired: "the cached value has expired"
    }
  }
}
