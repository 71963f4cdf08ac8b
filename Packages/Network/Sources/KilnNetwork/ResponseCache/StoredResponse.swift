import Foundation

/// A response as a response store writes it: status, headers, body, URL and valid-until date.
struct StoredResponse: Codable, Sendable {
  /// The format's version; an entry of another version is a miss.
  static let version = 1

  var version: Int
  var status: Int
  var headers: [[String]]
  var body: Data
  var url: URL?
  var validUntil: Date

  init(_ response: HTTPResponse, validUntil: Date) {
    self.version = Self.version
    self.status = response.status
    self.headers = response.headers.fields.map { [$0.name, $0.value] }
    self.body = response.body
    self.url = response.url
    self.validUntil = validUntil
  }

  /// The response, or `nil` when the entry is malformed.
  var response: HTTPResponse? {
    guard version == Self.version, (100...999).contains(status), headers.allSatisfy({ $0.count == 2 }) else {
      return nil
    }
    return HTTPResponse(
      status: status,
      headers: HTTPHeaders(headers.map { ($0[0], $0[1]) }),
      body: body,
      url: url
    )
  }

  func isValid(at now: Date) -> Bool {
    now <= validUntil
  }

  static func serialize(_ entries: some Encodable) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .millisecondsSince1970
    return try encoder.encode(entries)
  }

  static func deserialize<Value: Decodable>(_ type: Value.Type, from data: Data) -> Value? {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .millisecondsSince1970
    return try? decoder.decode(type, from: data)
  }
}
