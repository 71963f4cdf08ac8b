import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension TransportError {
  /// The transport error for a failure URLSession reported.
  init(urlSessionError error: any Error) {
    let code: Int
    let description: String
    if let urlError = error as? URLError {
      code = urlError.code.rawValue
      description = urlError.localizedDescription
    } else {
      let nsError = error as NSError
      guard nsError.domain == NSURLErrorDomain else {
        self = .other(String(describing: error))
        return
      }
      code = nsError.code
      description = nsError.localizedDescription
    }
    switch code {
    case URLError.Code.cancelled.rawValue:
      self = .cancelled
    case URLError.Code.cannotConnectToHost.rawValue:
      self = .connectionRefused
    case URLError.Code.cannotFindHost.rawValue, URLError.Code.dnsLookupFailed.rawValue:
      self = .cannotFindHost
    case URLError.Code.networkConnectionLost.rawValue, URLError.Code.zeroByteResource.rawValue,
      URLError.Code.badServerResponse.rawValue, URLError.Code.cannotParseResponse.rawValue:
      self = .connectionLost
    case URLError.Code.timedOut.rawValue:
      self = .timedOut
    case URLError.Code.secureConnectionFailed.rawValue, URLError.Code.serverCertificateHasBadDate.rawValue,
      URLError.Code.serverCertificateUntrusted.rawValue, URLError.Code.serverCertificateHasUnknownRoot.rawValue,
      URLError.Code.serverCertificateNotYetValid.rawValue, URLError.Code.clientCertificateRejected.rawValue,
      URLError.Code.clientCertificateRequired.rawValue:
      self = .secureConnectionFailed
    case URLError.Code.badURL.rawValue, URLError.Code.unsupportedURL.rawValue:
      self = .invalidRequest(description)
    default:
      self = .other("URLError \(code): \(description)")
    }
  }
}
