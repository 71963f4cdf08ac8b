import Foundation
import KilnNetwork

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A small `Transport` on `URLSession.shared` for the demo's network step, standing in until
/// KilnNetwork's own `URLSessionTransport` is available here.
struct DemoTransport: Transport {
  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    var urlRequest = URLRequest(url: request.url)
    urlRequest.httpMethod = request.method.rawValue
    for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
    if case .data(let data)? = request.body { urlRequest.httpBody = data }
    let data: Data
    let response: URLResponse
    do {
      (data, response) = try await URLSession.shared.data(for: urlRequest)
    } catch let error as URLError {
      switch error.code {
      case .cannotConnectToHost: throw .connectionRefused
      case .networkConnectionLost: throw .connectionLost
      case .timedOut: throw .timedOut
      case .cancelled: throw .cancelled
      default: throw .other("\(error)")
      }
    } catch {
      throw Task.isCancelled ? .cancelled : .other("\(error)")
    }
    guard let http = response as? HTTPURLResponse else { throw .other("not an HTTP response") }
    var headers = HTTPHeaders()
    for (name, value) in http.allHeaderFields { headers.add("\(value)", for: "\(name)") }
    return HTTPResponse(status: http.statusCode, headers: headers, body: data, url: http.url)
  }
}
