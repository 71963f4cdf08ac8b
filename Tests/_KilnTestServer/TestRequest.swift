public import Foundation
import NIOHTTP1

/// A request a ``TestServer`` received.
public struct TestRequest: Sendable, CustomStringConvertible {
  /// The method: `GET`, `POST`…
  public var method: String
  /// The path, without the query: `/articles`.
  public var path: String
  /// The query items, by name (the last one wins when a name repeats).
  public var query: [String: String]
  /// The headers, names lowercased (the last one wins when a name repeats).
  public var headers: [String: String]
  /// The body.
  public var body: Data
  /// The request target exactly as it arrived, percent-encoding included: `/a%20b?q=1`.
  public var uri: String
  /// Every header field in arrival order, names as sent, repeated names kept.
  public var headerFields: [(name: String, value: String)]
  /// Which connection carried the request: the server numbers its connections from 1.
  public var connection: Int

  init(head: HTTPRequestHead, body: Data, connection: Int = 0) {
    method = head.method.rawValue
    uri = head.uri
    headerFields = head.headers.map { (name: $0.name, value: $0.value) }
    self.connection = connection
    let components = URLComponents(string: head.uri)
    path = components?.path ?? head.uri
    query = Dictionary(
      (components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
    headers = Dictionary(head.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    self.body = body
  }

  public var description: String {
    "\(method) \(path)\(query.isEmpty ? "" : "?" + query.map { "\($0)=\($1)" }.sorted().joined(separator: "&"))"
  }
}
