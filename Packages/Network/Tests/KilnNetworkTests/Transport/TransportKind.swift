import Foundation
import KilnNetwork
import Testing

/// The real transports every loopback test runs with.
enum TransportKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case urlSession
  #if AsyncHTTPClient
    case asyncHTTPClient
  #endif

  var testDescription: String { rawValue }

  /// Runs `body` with a new transport of this kind and shuts it down afterwards, also when
  /// `body` throws.
  func withTransport<Result: Sendable>(
    timeout: Duration = .seconds(30),
    _ body: (any Transport) async throws -> Result
  ) async throws -> Result {
    switch self {
    case .urlSession:
      return try await body(URLSessionTransport(timeout: timeout))
    #if AsyncHTTPClient
      case .asyncHTTPClient:
        let transport = AsyncHTTPClientTransport(timeout: timeout)
        do {
          let result = try await body(transport)
          try await transport.shutdown()
          return result
        } catch {
          try? await transport.shutdown()
          throw error
        }
    #endif
    }
  }
}

/// Sends `request` and returns the transport error it threw, or `nil` when it returned a response.
func transportError(
  _ transport: any Transport, _ request: HTTPRequest, options: TransportOptions = TransportOptions()
) async -> TransportError? {
  do {
    _ = try await transport.send(request, options: options)
    return nil
  } catch {
    return error
  }
}
