import Foundation
import KilnNetwork
import KilnTesting
import Testing

/// Adds `X-Attempt-Prepared` and records every call.
private struct RecordingWatch: NetworkWatch {
  let calls: Recorder<String>

  func prepare(_ request: HTTPRequest, for target: any TargetGroup) -> HTTPRequest {
    var request = request
    request.headers["X-Prepared"] = "yes"
    calls.append("prepare \(target.path)")
    return request
  }

  func willSend(_ request: HTTPRequest, attempt: Int) {
    calls.append("willSend \(attempt) prepared=\(request.headers["X-Prepared"] ?? "no")")
  }

  func didReceive(_ result: Result<HTTPResponse, NetworkError>, for request: HTTPRequest, attempt: Int) {
    switch result {
    case .success(let response): calls.append("didReceive \(attempt) \(response.status)")
    case .failure(let error): calls.append("didReceive \(attempt) \(error)")
    }
  }
}

@Suite("Watches", .timeLimit(.minutes(1)))
struct WatchTests {
  @Test("prepare, willSend and didReceive are called on every attempt, and prepare changes the request")
  func everyAttempt() async throws {
    let calls = Recorder<String>()
    let transport = StubTransport(replies: [.status(503), .failure(.connectionLost), .item(1)])
    let policy = NetworkHandler.RetryPolicy(backoff: .immediate, jitter: .none)
    let handler = makeHandler(transport, retryPolicy: policy, watches: [RecordingWatch(calls: calls)])
    _ = try await handler.request(TestAPI.item(id: 1))
    #expect(
      calls.values == [
        "prepare items/1", "willSend 1 prepared=yes", "didReceive 1 503",
        "prepare items/1", "willSend 2 prepared=yes", "didReceive 2 transport error: connectionLost",
        "prepare items/1", "willSend 3 prepared=yes", "didReceive 3 200",
      ]
    )
    #expect(transport.requests.allSatisfy { $0.headers["X-Prepared"] == "yes" })
  }

  @Test("the logging watch redacts credentials, cookies and configured headers")
  func loggingRedacts() async throws {
    let lines = Recorder<String>()
    let watch = LoggingWatch(redacting: ["x-api-key"]) { lines.append($0) }
    let transport = StubTransport(replies: [
      .status(200, headers: ["Set-Cookie": "session=s3cr3t", "Content-Type": "text/plain"], body: Data("ok".utf8))
    ])
    struct Secret: TargetGroup {
      var baseURL: URL { URL(string: "https://example.com")! }
      var path: String { "me" }
      var headers: [String: String]? {
        [
          "Authorization": "Bearer s3cr3t", "Cookie": "id=s3cr3t", "Proxy-Authorization": "Basic s3cr3t",
          "X-API-Key": "s3cr3t", "Accept": "text/plain",
        ]
      }
    }
    _ = try await makeHandler(transport, watches: [watch]).request(Secret())
    let log = lines.values.joined(separator: "\n")
    #expect(!log.contains("s3cr3t"))
    #expect(log.contains("→ GET https://example.com/me (attempt 1)"))
    #expect(log.contains("  Authorization: <redacted>"))
    #expect(log.contains("  Cookie: <redacted>"))
    #expect(log.contains("  Proxy-Authorization: <redacted>"))
    #expect(log.contains("  X-API-Key: <redacted>"))
    #expect(log.contains("  Accept: text/plain"))
    #expect(log.contains("← 200 https://example.com/me (attempt 1, 2 bytes)"))
    #expect(log.contains("  Set-Cookie: <redacted>"))
  }

  @Test("the logging watch logs failures")
  func loggingFailure() async {
    let lines = Recorder<String>()
    let transport = StubTransport(replies: [.failure(.cannotFindHost)])
    _ = try? await makeHandler(transport, watches: [LoggingWatch { lines.append($0) }]).request(TestAPI.item(id: 1))
    #expect(
      lines.values.last == "✕ GET https://api.example.com/v1/items/1 (attempt 1): transport error: cannotFindHost")
  }

  @Test("a curl rendering quotes every argument and redacts credentials")
  func curl() throws {
    var request = try TestAPI.create(body: .json(["note": "it's"])).makeRequest()
    request.headers["Authorization"] = "Bearer s3cr3t"
    request.headers["X-Token"] = "s3cr3t"
    #expect(
      request.curlCommand(redacting: ["X-Token"])
        == #"curl 'https://api.example.com/v1/items' -H 'Content-Type: application/json; charset=utf-8' "#
        + #"-H 'Authorization: <redacted>' -H 'X-Token: <redacted>' --data-binary '{"note":"it'\''s"}'"#
    )
    let get = HTTPRequest(url: URL(string: "https://example.com/a?b=c")!, headers: ["Cookie": "a=b"])
    #expect(get.curlCommand() == "curl 'https://example.com/a?b=c' -H 'Cookie: <redacted>'")
    let delete = HTTPRequest(method: .delete, url: URL(string: "https://example.com/a")!)
    #expect(delete.curlCommand() == "curl -X 'DELETE' 'https://example.com/a'")
    let binary = HTTPRequest(method: .put, url: URL(string: "https://example.com/a")!, body: .data(Data([0xFF, 0xFE])))
    #expect(binary.curlCommand() == "curl -X 'PUT' 'https://example.com/a' --data-binary '<2 bytes>'")
  }
}
