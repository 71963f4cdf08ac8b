#if AsyncHTTPClient
  import AsyncHTTPClient
  import NIOCore
  import NIOHTTP1
  import NIOPosix

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Musl)
    import Musl
  #elseif canImport(Darwin)
    import Darwin
  #endif

  extension TransportError {
    /// The transport error for a failure async-http-client or SwiftNIO reported.
    init(asyncHTTPClientError error: any Error) {
      switch error {
      case let error as HTTPClientError:
        if error == .cancelled {
          self = .cancelled
        } else if [.readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout]
          .contains(error)
        {
          self = .timedOut
        } else if error == .remoteConnectionClosed || error == .bodyLengthMismatch {
          self = .connectionLost
        } else if [.invalidURL, .emptyHost, .emptyScheme, .traceRequestWithBody].contains(error) {
          self = .invalidRequest(String(describing: error))
        } else if error == .tlsHandshakeTimeout {
          self = .secureConnectionFailed
        } else {
          self = .other(String(describing: error))
        }
      case let error as NIOConnectionError:
        if let first = error.connectionErrors.first {
          self.init(asyncHTTPClientError: first.error)
        } else if error.dnsAError != nil || error.dnsAAAAError != nil {
          self = .cannotFindHost
        } else {
          self = .other(String(describing: error))
        }
      case let error as IOError:
        switch error.errnoCode {
        case ECONNREFUSED: self = .connectionRefused
        case ECONNRESET, EPIPE, ECONNABORTED: self = .connectionLost
        case ETIMEDOUT: self = .timedOut
        default: self = .other(String(describing: error))
        }
      case let error as HTTPParserError where error == .invalidEOFState:
        self = .connectionLost
      case is CancellationError:
        self = .cancelled
      case let error as ChannelError:
        switch error {
        case .connectTimeout: self = .timedOut
        case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed: self = .connectionLost
        default: self = .other(String(describing: error))
        }
      default:
        let description = String(describing: error)
        if String(reflecting: type(of: error)).contains("NIOSSL") {
          self = .secureConnectionFailed
        } else if String(reflecting: type(of: error)).contains("Resolution") {
          self = .cannotFindHost
        } else {
          self = .other(description)
        }
      }
    }
  }
#endif
