#if OpenAPI
  import Foundation
  import HTTPTypes
  @testable import KilnNetwork
  import KilnTesting
  import OpenAPIRuntime
  import Testing

  /// `OpenAPIClientMiddleware`'s hold on its `next` closure, which may be used only while
  /// `intercept` runs.
  @Suite("OpenAPIClientMiddleware's next calls", .timeLimit(.minutes(1)))
  struct OpenAPINextCallsTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    private static func request(_ path: String) -> HTTPTypes.HTTPRequest {
      HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
    }

    @Test("a call runs next; once closed, running calls are cancelled and waited for, and new ones refused")
    func closeCancelsAndRefuses() async throws {
      let gate = Gate()
      let ended = AsyncCounter()
      let calls = OpenAPINextCalls { request, _, _ in
        defer { ended.increment() }
        if request.path == "/wait" { try await gate.wait() }
        return (HTTPTypes.HTTPResponse(status: .ok), nil)
      }
      let (response, _) = try await calls.call(Self.request("/quick"), body: nil, baseURL: Self.baseURL)
      #expect(response.status == .ok)

      let waiting = Task { () async -> TransportError? in
        do throws(TransportError) {
          _ = try await calls.call(Self.request("/wait"), body: nil, baseURL: Self.baseURL)
          return nil
        } catch {
          return error
        }
      }
      await gate.waitForWaiters(1)
      await calls.close()
      #expect(ended.value == 2)  // close returned after the running call ended
      #expect(await waiting.value == .cancelled)

      do throws(TransportError) {
        _ = try await calls.call(Self.request("/quick"), body: nil, baseURL: Self.baseURL)
        Issue.record("expected a refusal")
      } catch {
        #expect(error == .cancelled)
      }
      #expect(ended.value == 2)
    }

    @Test("cancelling the calling task cancels its call in next")
    func callerCancellation() async throws {
      let gate = Gate()
      let calls = OpenAPINextCalls { _, _, _ in
        try await gate.wait()
        return (HTTPTypes.HTTPResponse(status: .ok), nil)
      }
      let waiting = Task { () async -> TransportError? in
        do throws(TransportError) {
          _ = try await calls.call(Self.request("/wait"), body: nil, baseURL: Self.baseURL)
          return nil
        } catch {
          return error
        }
      }
      await gate.waitForWaiters(1)
      waiting.cancel()
      #expect(await waiting.value == .cancelled)
      await calls.close()
    }

    @Test("a URL splits into a server URL and a path that put it back together")
    func split() throws {
      for string in [
        "https://api.example.com/v1/articles/7?from=v1", "http://127.0.0.1:8080/a%20b?q=%26", "https://example.com",
        "https://example.com/?", "http://[::1]:8080/x#fragment",
      ] {
        let url = URL(string: string)!
        let (baseURL, path) = try #require(OpenAPIExchange.split(url))
        let joined = try #require(OpenAPIExchange.url(baseURL: baseURL, path: path))
        var expected = try #require(URLComponents(url: url, resolvingAgainstBaseURL: true))
        expected.fragment = nil
        if expected.percentEncodedPath.isEmpty { expected.percentEncodedPath = "/" }
        #expect(joined == expected.url, "\(string)")
      }
      #expect(OpenAPIExchange.split(URL(string: "/relative")!) == nil)
    }
  }
#endif
