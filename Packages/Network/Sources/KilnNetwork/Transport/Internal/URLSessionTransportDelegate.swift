import Foundation
import _KilnSynchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The delegate of a ``URLSessionTransport``'s one session: routes each task's events to its
/// ``URLSessionTransfer`` by task identifier, and never lets the session follow a redirect by
/// itself (the transport follows redirects, so it controls which headers go where).
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
  private let transfers = KilnMutex<[Int: URLSessionTransfer]>([:])

  /// Routes the events of `task` to `transfer` until the task completes.
  func register(_ transfer: URLSessionTransfer, for task: URLSessionTask) {
    transfers.withLock { $0[task.taskIdentifier] = transfer }
  }

  /// Stops routing the events of `task`.
  func unregister(_ task: URLSessionTask) {
    _ = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
  }

  private func transfer(for task: URLSessionTask) -> URLSessionTransfer? {
    transfers.withLock { $0[task.taskIdentifier] }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let proceed = transfer(for: dataTask)?.didReceive(response) ?? false
    completionHandler(proceed ? .allow : .cancel)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    guard let transfer = transfer(for: dataTask) else { return }
    if !transfer.didReceive(data) {
      dataTask.cancel()
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    // The 3xx itself becomes the response; the transport decides whether and how to follow it.
    completionHandler(nil)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    transfer?.didComplete(response: task.response, error: error)
  }
}
