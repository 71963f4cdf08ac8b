/// Ordered query parameters: names may repeat, and the order written is the order sent.
///
/// ```swift
/// let parameters: QueryParameters = ["q": "swift & rust", "page": 2]   // q=swift%20%26%20rust&page=2
/// var tags = QueryParameters()
/// tags.append("a", for: "tag")
/// tags.append("b", for: "tag")                                       // tag=a&tag=b
/// let flags = QueryParameters([.init(name: "verbose", value: nil)])   // verbose
/// ```
///
/// A dictionary literal keeps the order it is written in. To build parameters from a
/// `Dictionary` (whose order is unspecified), use ``init(sortedByName:)``.
/// Names and values are percent-encoded when the URL is built; write them unencoded.
public struct QueryParameters: Sendable, Hashable, ExpressibleByDictionaryLiteral {
  /// One `name=value` pair.
  public struct Item: Sendable, Hashable {
    /// The unencoded name.
    public var name: String
    /// The unencoded value, or `nil` for a bare `name` with no `=`.
    public var value: String?

    /// Creates an item.
    ///
    /// - Parameters:
    ///   - name: The unencoded name.
    ///   - value: The unencoded value, or `nil` for a bare name.
    public init(name: String, value: String?) {
      self.name = name
      self.value = value
    }
  }

  /// The parameters in the order they are sent.
  public var items: [Item]

  /// Creates parameters from items, in their order.
  ///
  /// - Parameter items: The items; names may repeat.
  public init(_ items: [Item] = []) {
    self.items = items
  }

  /// Creates parameters from a dictionary literal, in the literal's order. Values are written
  /// with their `description`: `2` → `"2"`, `true` → `"true"`.
  public init(dictionaryLiteral elements: (String, any CustomStringConvertible & Sendable)...) {
    self.items = elements.map { Item(name: $0.0, value: $0.1.description) }
  }

  /// Creates parameters from a dictionary, sorted by name so the URL is the same every time.
  ///
  /// - Parameter dictionary: The parameters; values are written with their `description`.
  public init(sortedByName dictionary: [String: any CustomStringConvertible & Sendable]) {
    self.items = dictionary.sorted { $0.key < $1.key }.map { Item(name: $0.key, value: $0.value.description) }
  }

  /// Adds a parameter after the others, keeping any parameter of the same name.
  ///
  /// - Parameters:
  ///   - value: The unencoded value, or `nil` for a bare name.
  ///   - name: The unencoded name.
  public mutating func append(_ value: (any CustomStringConvertible & Sendable)?, for name: String) {
    items.append(Item(name: name, value: value?.description))
  }

  /// Whether there is no parameter.
  public var isEmpty: Bool { items.isEmpty }

  /// The parameters percent-encoded as a query (or form body), without a leading `?`:
  /// every byte other than `A–Z a–z 0–9 - . _ ~` is encoded, a space as `%20`.
  public var percentEncoded: String {
    var result = ""
    for (index, item) in items.enumerated() {
      if index > 0 { result += "&" }
      result += PercentEncoding.encode(item.name, allowing: PercentEncoding.unreserved)
      if let value = item.value {
        result += "="
        result += PercentEncoding.encode(value, allowing: PercentEncoding.unreserved)
      }
    }
    return result
  }
}
