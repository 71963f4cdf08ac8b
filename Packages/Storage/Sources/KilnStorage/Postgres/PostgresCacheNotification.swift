#if PostgreSQL
  import Foundation

  /// One `NOTIFY` payload of a ``PostgresStore`` write: `<node> k<key bytes in hex>` for one
  /// key, `<node> #<sha-256>` for a key too long for a payload, `<node> *` for every key.
  struct PostgresCacheNotification: Equatable, Sendable {
    /// The longest encoded key sent in full (a payload holds at most 8000 bytes).
    static let maximumKeyBytes = 3_900

    enum Change: Equatable, Sendable {
      /// One key, by its encoded bytes.
      case key(Data)
      /// Every key, or a key that cannot be named (too long): the whole tier is suspect.
      case everything
    }

    var node: Substring
    var change: Change

    /// Parses a payload; anything unreadable drops everything, which is always safe.
    init(payload: String) {
      guard let space = payload.firstIndex(of: " ") else {
        node = ""
        change = .everything
        return
      }
      node = payload[..<space]
      let body = payload.utf8[payload.utf8.index(after: space)...]
      guard body.first == UInt8(ascii: "k"), let bytes = Self.hexBytes(body.dropFirst()) else {
        change = .everything
        return
      }
      change = .key(bytes)
    }

    private static func hexBytes(_ hex: Substring.UTF8View.SubSequence) -> Data? {
      guard hex.count % 2 == 0 else { return nil }
      var bytes = Data(capacity: hex.count / 2)
      var high: UInt8?
      for character in hex {
        let nibble: UInt8
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
        default: return nil
        }
        if let value = high {
          bytes.append(value << 4 | nibble)
          high = nil
        } else {
          high = nibble
        }
      }
      return bytes
    }
  }
#endif
