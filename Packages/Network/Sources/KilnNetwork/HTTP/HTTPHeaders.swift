/// The header fields of an HTTP request or response: ordered, with case-insensitive names and
/// repeated names kept.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add("max-age=60", for: "Cache-Control")
/// headers.add("public", for: "cache-control")
/// headers["CACHE-CONTROL"]                 // "max-age=60, public" (every value, comma-joined)
/// headers.values(for: "Cache-Control")     // ["max-age=60", "public"]
/// headers["Accept"] = nil                  // removes every field named Accept
/// ```
///
/// Field names compare case-insensitively (ASCII), as RFC 9110 §5.1 requires; each field
/// keeps the spelling it was added with, and the order in which fields were added is kept.
public struct HTTPHeaders: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
  /// One header field: a name and its value.
  public struct Field: Sendable, Hashable, CustomStringConvertible {
    /// The field name as it was added (compare names with ``HTTPHeaders/Field/hasName(_:)``).
    public var name: String
    /// The field value, without leading or trailing whitespace.
    public var value: String

    /// Creates a field.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value; leading and trailing spaces and tabs are removed.
    public init(name: String, value: String) {
      self.name = name
      self.value = HTTPHeaders.trimmingWhitespace(value)
    }

    /// Whether the field's name is `name`, ignoring ASCII case.
    public func hasName(_ name: String) -> Bool {
      HTTPHeaders.namesEqual(self.name, name)
    }

    public var description: String { "\(name): \(value)" }
  }

  /// The fields in the order they were added.
  public private(set) var fields: [Field]

  /// Creates headers from fields, keeping their order and repetitions.
  ///
  /// - Parameter fields: The fields.
  public init(_ fields: [Field] = []) {
    self.fields = fields
  }

  /// Creates headers from name–value pairs, keeping their order and repetitions.
  ///
  /// - Parameter pairs: The fields as `(name, value)` pairs.
  public init(_ pairs: [(String, String)]) {
    self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
  }

  /// Creates headers from a dictionary literal, in the literal's order.
  public init(dictionaryLiteral elements: (String, String)...) {
    self.init(elements)
  }

  // MARK: Collection

  public var startIndex: Int { fields.startIndex }
  public var endIndex: Int { fields.endIndex }
  public subscript(position: Int) -> Field { fields[position] }

  // MARK: Reading

  /// Every value of the fields named `name`, comma-joined as RFC 9110 §5.3 allows; `nil` when
  /// there is none. Setting replaces every such field with one (or removes them all for `nil`).
  ///
  /// - Important: `Set-Cookie` cannot be comma-joined safely; read it with ``values(for:)``.
  public subscript(name: String) -> String? {
    get {
      var result: String?
      for field in fields where field.hasName(name) {
        if let joined = result {
          result = joined + ", " + field.value
        } else {
          result = field.value
        }
      }
      return result
    }
    set {
      if let newValue {
        set(newValue, for: name)
      } else {
        remove(name)
      }
    }
  }

  /// The value of each field named `name`, in order; empty when there is none.
  ///
  /// - Parameter name: The field name, in any case.
  public func values(for name: String) -> [String] {
    fields.lazy.filter { $0.hasName(name) }.map(\.value)
  }

  /// The first value of a field named `name`, or `nil`.
  ///
  /// - Parameter name: The field name, in any case.
  public func first(_ name: String) -> String? {
    fields.first { $0.hasName(name) }?.value
  }

  /// Whether a field named `name` is present.
  ///
  /// - Parameter name: The field name, in any case.
  public func contains(_ name: String) -> Bool {
    fields.contains { $0.hasName(name) }
  }

  /// The comma-separated list elements of every field named `name` (RFC 9110 §5.6.1), trimmed,
  /// empty elements dropped; commas inside quoted strings do not split.
  ///
  /// ```swift
  /// let headers: HTTPHeaders = ["Vary": "Accept, accept-encoding", "vary": ""]
  /// headers.listElements(for: "Vary")     // ["Accept", "accept-encoding"]
  /// ```
  ///
  /// - Parameter name: The field name, in any case.
  public func listElements(for name: String) -> [String] {
    var elements: [String] = []
    for field in fields where field.hasName(name) {
      HTTPHeaders.splitList(field.value, into: &elements)
    }
    return elements
  }

  // MARK: Writing

  /// Adds a field after the existing ones, keeping any field of the same name.
  ///
  /// - Parameters:
  ///   - value: The field value.
  ///   - name: The field name.
  public mutating func add(_ value: String, for name: String) {
    fields.append(Field(name: name, value: value))
  }

  /// Replaces every field named `name` with one field holding `value`, where the first of them
  /// stood (or at the end when there was none).
  ///
  /// - Parameters:
  ///   - value: The field value.
  ///   - name: The field name.
  public mutating func set(_ value: String, for name: String) {
    if let index = fields.firstIndex(where: { $0.hasName(name) }) {
      fields[index] = Field(name: name, value: value)
      var next = index + 1
      while next < fields.count {
        if fields[next].hasName(name) { fields.remove(at: next) } else { next += 1 }
      }
    } else {
      fields.append(Field(name: name, value: value))
    }
  }

  /// Removes every field named `name`.
  ///
  /// - Parameter name: The field name, in any case.
  public mutating func remove(_ name: String) {
    fields.removeAll { $0.hasName(name) }
  }

  /// Adds the fields of `other`, replacing the fields of the same names (the merge of RFC 9111
  /// §3.2, used when a `304 Not Modified` updates a stored response).
  ///
  /// - Parameter other: The fields that win.
  public mutating func replaceFields(with other: HTTPHeaders) {
    var replaced: Set<String> = []
    for field in other.fields {
      let key = HTTPHeaders.canonicalName(field.name)
      if replaced.insert(key).inserted {
        remove(field.name)
      }
      fields.append(field)
    }
  }

  /// The headers as a dictionary with one entry per distinct name (comma-joined values), the
  /// spelling of each name's first field kept. `Set-Cookie` values are joined too: read them
  /// with ``values(for:)``.
  public var dictionary: [String: String] {
    var result: [String: String] = [:]
    var spelling: [String: String] = [:]
    for field in fields {
      let key = HTTPHeaders.canonicalName(field.name)
      if let name = spelling[key] {
        result[name] = result[name]! + ", " + field.value
      } else {
        spelling[key] = field.name
        result[field.name] = field.value
      }
    }
    return result
  }
}

extension HTTPHeaders: CustomStringConvertible {
  public var description: String {
    fields.map(\.description).joined(separator: "\n")
  }
}

// MARK: - Helpers shared by the network layer's parsers

extension HTTPHeaders {
  /// Compares two field names ignoring ASCII case, without allocating.
  @usableFromInline
  static func namesEqual(_ lhs: String, _ rhs: String) -> Bool {
    // Native strings know their UTF-8 length: most names differ there.
    guard lhs.utf8.count == rhs.utf8.count else { return false }
    var left = lhs.utf8.makeIterator()
    var right = rhs.utf8.makeIterator()
    while true {
      switch (left.next(), right.next()) {
      case (nil, nil): return true
      case (let a?, let b?):
        if a != b && lowercasedASCII(a) != lowercasedASCII(b) { return false }
      default: return false
      }
    }
  }

  /// A field name in lowercase ASCII, for use as a dictionary key.
  static func canonicalName(_ name: String) -> String {
    // Most names arrive lowercase already (HTTP/2, HTTP/3 and most servers): no copy then.
    guard name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return name }
    return String(decoding: name.utf8.map(lowercasedASCII), as: UTF8.self)
  }

  @inline(__always)
  static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
    (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
  }

  /// `value` without leading or trailing spaces and horizontal tabs (RFC 9110 OWS).
  static func trimmingWhitespace(_ value: String) -> String {
    let utf8 = value.utf8
    if let first = utf8.first, let last = utf8.last, first != 0x20, first != 0x09, last != 0x20, last != 0x09 {
      return value
    }
    return trimmingWhitespace(value[...])
  }

  /// `value` without leading or trailing spaces and horizontal tabs (RFC 9110 OWS).
  static func trimmingWhitespace(_ value: Substring) -> String {
    let utf8 = value.utf8
    guard let first = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
    let last = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })!
    // Both ends are scalar boundaries: the bytes around them are ASCII whitespace or the ends.
    return String(value[first..<utf8.index(after: last)])
  }

  /// Splits a comma-separated list value into trimmed, non-empty elements, ignoring commas
  /// inside quoted strings (with backslash escapes).
  ///
  /// Reads UTF-8 bytes, as the grammar is written (every delimiter is ASCII): walking
  /// `Character`s, which breaks graphemes, made parsing `Cache-Control` a tenth of an HTTP
  /// cache miss.
  static func splitList(_ value: String, into elements: inout [String]) {
    forEachPart(of: value, separatedBy: UInt8(ascii: ",")) { part in
      let element = trimmingWhitespace(part)
      if !element.isEmpty { elements.append(element) }
    }
  }

  /// Calls `body` with each part of `value` between `separator` bytes outside quoted strings
  /// (a backslash escapes the next byte inside one), untrimmed, empty parts included: the
  /// scanning every list and structured-field parser here shares.
  static func forEachPart(of value: String, separatedBy separator: UInt8, _ body: (Substring) -> Void) {
    var inQuotes = false
    var escaped = false
    let utf8 = value.utf8
    var start = utf8.startIndex
    var index = utf8.startIndex
    while index < utf8.endIndex {
      let byte = utf8[index]
      if escaped {
        escaped = false
      } else if inQuotes && byte == UInt8(ascii: "\\") {
        escaped = true
      } else if byte == UInt8(ascii: "\"") {
        inQuotes.toggle()
      } else if byte == separator, !inQuotes {
        body(value[start..<index])
        start = utf8.index(after: index)
      }
      utf8.formIndex(after: &index)
    }
    body(value[start..<utf8.endIndex])
  }
}
