#if OpenAPI
  import Foundation
  import HTTPTypes
  import OpenAPIRuntime

  /// What ``OpenAPIClientTransport`` and ``OpenAPIClientMiddleware`` share: turning an OpenAPI
  /// request (a swift-http-types request, a body and a server URL) into a KilnNetwork request,
  /// a KilnNetwork response into an OpenAPI one, and another transport's error into a
  /// ``TransportError``.
  enum OpenAPIExchange {
    /// The request's URL: the server URL with the request's path and query appended, as
    /// swift-openapi-urlsession puts them together; `nil` when they make no URL.
    static func url(baseURL: URL, path: String?) -> URL? {
      guard var components = URLComponents(string: baseURL.absoluteString),
        let requestComponents = URLComponents(string: path ?? "")
      else { return nil }
      components.percentEncodedPath += requestComponents.percentEncodedPath
      components.percentEncodedQuery = requestComponents.percentEncodedQuery
      return components.url
    }

    /// `url` split into a server URL (its scheme, host and port) and a path with the query, so
    /// that ``url(baseURL:path:)`` puts `url` back together; `nil` without a scheme or a host.
    static func split(_ url: URL) -> (baseURL: URL, path: String)? {
      guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
        components.scheme?.isEmpty == false, components.host?.isEmpty == false
      else { return nil }
      var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
      if let query = components.percentEncodedQuery { path += "?" + query }
      components.percentEncodedPath = ""
      components.percentEncodedQuery = nil
      components.percentEncodedFragment = nil
      guard let baseURL = components.url else { return nil }
      return (baseURL, path)
    }

    /// The KilnNetwork request for an OpenAPI request, its body read whole.
    ///
    /// - Throws: ``NetworkError/invalidURL(_:)`` when the server URL and the path make no URL,
    ///   ``NetworkError/encodingFailed(_:)`` when the body cannot be read, and
    ///   ``NetworkError/cancelled`` when the task is cancelled while it is read.
    static func kilnRequest(
      _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL
    ) async throws(NetworkError) -> KilnNetwork.HTTPRequest {
      guard let url = url(baseURL: baseURL, path: request.path) else {
        throw .invalidURL("the path \((request.path ?? "<none>").debugDescription) does not extend \(baseURL)")
      }
      var data: Data?
      if let body {
        do {
          data = try await Data(collecting: body, upTo: .max)
        } catch {
          if Task.isCancelled || error is CancellationError { throw .cancelled }
          throw .encodingFailed("the request body could not be read: \(error)")
        }
      }
      return KilnNetwork.HTTPRequest(
        method: HTTPMethod(rawValue: request.method.rawValue), url: url, headers: HTTPHeaders(request.headerFields),
        body: data.map { .data($0) })
    }

    /// The OpenAPI response for a KilnNetwork response to `request`: no body for a `HEAD`.
    ///
    /// - Throws: ``NetworkError/transport(_:)`` with ``TransportError/other(_:)`` when the
    ///   response has no swift-http-types form (a status outside `0...999`, a field a stage
    ///   added with a name or value that HTTP forbids).
    static func openAPIResponse(
      _ response: KilnNetwork.HTTPResponse, to request: HTTPTypes.HTTPRequest
    ) throws(NetworkError) -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
      let converted: HTTPTypes.HTTPResponse
      do {
        converted = try HTTPTypes.HTTPResponse(response)
      } catch {
        throw .transport(.other("the response has no swift-http-types form: \(error)"))
      }
      let body = request.method == .head ? nil : OpenAPIRuntime.HTTPBody(response.body)
      return (converted, body)
    }

    /// The transport error for a failure of another OpenAPI transport (or of the middleware
    /// after this one), as KilnNetwork's stages expect it.
    static func transportError(_ error: any Error) -> TransportError {
      if Task.isCancelled || error is CancellationError { return .cancelled }
      switch error {
      case let error as ClientError:
        return transportError(error.underlyingError)
      case let error as TransportError:
        return error
      case let error as NetworkError:
        switch error {
        case .transport(let error): return error
        case .cancelled: return .cancelled
        case .timedOut: return .timedOut
        default: return .other(String(describing: error))
        }
      default:
        let converted = TransportError(urlSessionError: error)
        #if AsyncHTTPClient
          if case .other = converted { return TransportError(asyncHTTPClientError: error) }
        #endif
        return converted
      }
    }
  }
#endif
