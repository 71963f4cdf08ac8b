public import Foundation

/// How a persistent store turns keys and values into bytes and back.
///
/// ``DiskCache``, ``SerializableCache``, ``SQLiteStore`` and ``UserDefaultsStore`` take one
/// codec for keys and one for values. The default, ``automatic``, stores `Data` and `String`
/// as their raw bytes and everything else as JSON with sorted keys, so the same key always
/// produces the same bytes (keys are compared byte for byte, and their hash names files).
///
/// ```swift
/// let cache = try DiskCache<String, Article>(
///   directory: cachesURL,
///   valueCodec: .json(encoder: { let e = JSONEncoder(); e.dateEncodingStrategy = .iso8601; return e }(),
///                     decoder: { let d = JSONDecoder(); d.dateDecodingStrategy = .iso8601; return d }())
/// )
/// ```
///
/// - Important: A key codec must be deterministic: equal keys must encode to equal bytes in
///   every process. JSON with sorted keys is, for every standard type except `Set` (whose
///   order is random per process); do not use a `Set` inside a persistent key.
public struct StoreCodec<Value>: Sendable {
  /// Encodes a value into bytes.
  public var encode: @Sendable (Value) throws -> Data

  /// Decodes a value from bytes produced by ``encode``.
  public var decode: @Sendable (Data) throws -> Value

  /// Creates a codec from two closures.
  ///
  /// - Parameters:
  ///   - encode: Turns a value into bytes; may throw.
  ///   - decode: Turns those bytes back into the value; throws on bytes it cannot read.
  public init(
    encode: @escaping @Sendable (Value) throws -> Data,
    decode: @escaping @Sendable (Data) throws -> Value
  ) {
    self.encode = encode
    self.decode = decode
  }
}

extension StoreCodec where Value: Codable & Sendable {
  /// `Data` and `String` as their raw bytes (UTF-8 for strings), everything else as JSON
  /// with sorted keys (an `Int` as its decimal digits, the JSON of an integer, written
  /// without an encoder).
  public static var automatic: StoreCodec {
    // The closures below run unspecialised, where `as!` is a dynamic cast through the
    // runtime (a tenth of a batched SQLite write in perf). Each branch has checked that
    // `Value` *is* the type, so reinterpreting the bits is exact.
    if Value.self == Data.self {
      return StoreCodec(
        encode: { unsafeBitCast($0, to: Data.self) },
        decode: { unsafeBitCast($0, to: Value.self) }
      )
    }
    if Value.self == String.self {
      return StoreCodec(
        encode: { Data(unsafeBitCast($0, to: String.self).utf8) },
        decode: { data in
          // Not `String(data:encoding:)`, which drops a leading byte order mark: the string
          // read back must be the string stored.
          guard let string = String(validating: data, as: UTF8.self) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not UTF-8"))
          }
          return unsafeBitCast(string, to: Value.self)
        }
      )
    }
    if Value.self == Int.self {
      // The same bytes JSONEncoder writes for an integer (its decimal digits), without an
      // encoder: keys and params are often integers, encoded on every write.
      let decoder = JSONDecoder()
      return StoreCodec(
        encode: { Data(String(unsafeBitCast($0, to: Int.self)).utf8) },
        decode: { data in
          if let value = Int(String(decoding: data, as: UTF8.self)) { return unsafeBitCast(value, to: Value.self) }
          return try decoder.decode(Value.self, from: data)
        }
      )
    }
    return json()
  }

  /// JSON through the given encoder and decoder.
  ///
  /// - Parameters:
  ///   - encoder: The encoder; the default sorts object keys so encodings are deterministic.
  ///   - decoder: The decoder.
  /// - Returns: A codec that reads and writes JSON.
  public static func json(
    encoder: JSONEncoder = StoreCodec.sortedJSONEncoder(),
    decoder: JSONDecoder = JSONDecoder()
  ) -> StoreCodec {
    StoreCodec(
      encode: { try encoder.encode($0) },
      decode: { try decoder.decode(Value.self, from: $0) }
    )
  }

  /// Binary property lists, through Foundation's `PropertyListEncoder`.
  public static var propertyList: StoreCodec {
    StoreCodec(
      encode: { value in
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
      },
      decode: { try PropertyListDecoder().decode(Value.self, from: $0) }
    )
  }

  /// A JSON encoder that sorts object keys.
  public static func sortedJSONEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return encoder
  }
}
