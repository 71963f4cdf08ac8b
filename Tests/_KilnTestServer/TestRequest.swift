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

  init(head: HTTPRequestHead, body: Data) {
    method = head.method.rawValue
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
