public import Foundation
import _KilnSynchronization

/// Holds a credential, adds it to every request, and refreshes it **once** for all the requests
/// the server rejects together.
///
/// ```swift
/// let authentication = AuthenticationInterceptor(authenticator: OAuth(), credential: token)
/// let handler = NetworkHandler(transport: transport, authentication: authentication)
/// // Six requests that get 401 at the same time cause one refresh; each is then sent once
/// // more with the new token.
/// ```
///
/// - A request rejected with the credential of generation *n* triggers a refresh only when the
///   credential is still generation *n* and no refresh is in flight; otherwise it waits for the
///   refresh in flight, or is sent again at once with the newer credential.
/// - A request is sent again after a refresh once: rejected again, it fails with
///   ``NetworkError/status(_:)``.
/// - A failed refresh fails every request waiting for it with
///   ``AuthenticationError/refreshFailed(_:)``. The credential is kept, so a later rejection
///   tries again.
/// - More than ``maximumRefreshes`` refreshes within ``refreshWindow`` fail with
///   ``AuthenticationError/excessiveRefresh`` instead of refreshing in a loop.
/// - New requests wait for a refresh in flight rather than go out with the rejected credential.
public final class AuthenticationInterceptor<Authenticator: KilnNetwork.Authenticator>: RequestAuthenticating {
  private typealias Credential = Authenticator.Credential
  private typealias Refresh = Task<Result<Credential, AuthenticationError>, Never>

  private struct State {
    var credential: Credential
    var generation = 0
    var refresh: Refresh?
    var refreshDates: [Date] = []
  }

  /// The authenticator that applies and refreshes the credential.
  public let authenticator: Authenticator

  /// The window in which at most ``maximumRefreshes`` refreshes may happen.
  public let refreshWindow: Duration

  /// The most refreshes within ``refreshWindow``.
  public let maximumRefreshes: Int

  private let now: @Sendable () -> Date
  private let state: KilnMutex<State>

  /// Creates an interceptor.
  ///
  /// - Parameters:
  ///   - authenticator: Applies and refreshes the credential.
  ///   - credential: The credential to start with.
  ///   - refreshWindow: The window for detecting refresh loops; 30 s by default.
  ///   - maximumRefreshes: The most refreshes within the window; 5 by default.
  ///   - now: The current date, for the window; `Date.init` by default.
  public init(
    authenticator: Authenticator,
    credential: Authenticator.Credential,
    refreshWindow: Duration = .seconds(30),
    maximumRefreshes: Int = 5,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.authenticator = authenticator
    self.refreshWindow = refreshWindow
    self.maximumRefreshes = maximumRefreshes
    self.now = now
    self.state = KilnMutex(State(credential: credential))
  }

  /// The current credential.
  public var credential: Authenticator.Credential {
    state.withLock { $0.credential }
  }

  /// How many times the credential was replaced by a refresh.
  public var generation: Int {
    state.withLock { $0.generation }
  }

  public func authenticate(_ request: inout HTTPRequest) async throws(NetworkError) -> Int {
    while true {
      let (current, generation, refresh) = state.withLock { ($0.credential, $0.generation, $0.refresh) }
      if let refresh {
        // Whatever its outcome, the request then goes out with the credential there is.
        _ = try await Self.wait(for: refresh)
        continue
      }
      authenticator.apply(current, to: &request)
      return generation
    }
  }

  public func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
    authenticator.isRejection(response, for: request)
  }

  private enum Step {
    case done
    case wait(Refresh)
    case excessive
  }

  public func refresh(rejectedGeneration: Int) async throws(NetworkError) {
    let date = now()
    let window = refreshWindow.timeInterval
    let step = state.withLock { state -> Step in
      if state.generation != rejectedGeneration { return .done }
      if let refresh = state.refresh { return .wait(refresh) }
      state.refreshDates.removeAll { date.timeIntervalSince($0) > window }
      guard state.refreshDates.count < maximumRefreshes else { return .excessive }
      state.refreshDates.append(date)
      let credential = state.credential
      let authenticator = self.authenticator
      let refresh = Refresh { [self] in
        let outcome: Result<Credential, AuthenticationError>
        do {
          outcome = .success(try await authenticator.refresh(credential))
        } catch {
          outcome = .failure(.refreshFailed("\(error)"))
        }
        self.state.withLock { state in
          if case .success(let credential) = outcome {
            state.credential = credential
            state.generation += 1
          }
          state.refresh = nil
        }
        return outcome
      }
      state.refresh = refresh
      return .wait(refresh)
    }
    switch step {
    case .done:
      return
    case .excessive:
      throw .authentication(.excessiveRefresh)
    case .wait(let refresh):
      if case .failure(let error) = try await Self.wait(for: refresh) {
        throw .authentication(error)
      }
    }
  }

  /// The outcome of `refresh`, or ``NetworkError/cancelled`` as soon as the calling task is
  /// cancelled (the refresh itself runs on for the other requests).
  private static func wait(for refresh: Refresh) async throws(NetworkError) -> Result<Credential, AuthenticationError> {
    let outcome = await CancellableWait.value(of: refresh)
    guard let outcome else { throw .cancelled }
    return outcome
  }
}
