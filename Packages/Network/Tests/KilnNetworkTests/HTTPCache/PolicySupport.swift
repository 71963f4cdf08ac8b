import Foundation
import KilnNetwork

/// A fixed instant the policy tests count from.
let t0 = Date(timeIntervalSince1970: 1_767_225_600)

let exampleURL = URL(string: "https://api.example.com/articles?page=1")!

func getRequest(_ headers: HTTPHeaders = [:], url: URL = exampleURL) -> HTTPRequest {
  HTTPRequest(method: .get, url: url, headers: headers)
}

/// A response received at `received` (request sent at `sent`, `received` by default) with a
/// `Date` of `received` unless `headers` sets one.
func storedResponse(
  _ headers: HTTPHeaders,
  status: Int = 200,
  body: String = "body",
  sent: Date? = nil,
  received: Date = t0,
  request: HTTPRequest = getRequest(),
  policy: HTTPCachePolicy = .private
) -> StoredHTTPResponse {
  var headers = headers
  if !headers.contains("Date") { headers.set(HTTPDate.format(received), for: "Date") }
  return StoredHTTPResponse(
    response: HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: request.url),
    requestTime: sent ?? received, responseTime: received, request: request)
}

extension Date {
  func plus(_ seconds: TimeInterval) -> Date { addingTimeInterval(seconds) }
}

extension HTTPCacheDecision {
  var servedResponse: HTTPResponse? {
    if case .serve(let response) = self { return response }
    return nil
  }

  var forwardedRequest: HTTPRequest? {
    if case .forward(let request, _) = self { return request }
    return nil
  }

  var forwardReason: HTTPCacheStatus.Forward? {
    if case .forward(_, let reason) = self { return reason }
    return nil
  }

  var generatedResponse: HTTPResponse? {
    if case .generate(let response) = self { return response }
    return nil
  }

  var isServeStale: Bool {
    if case .serveStale = self { return true }
    return false
  }
}
