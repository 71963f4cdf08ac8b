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
/// Refreshes happen in **rounds**. Each request remembers the round its credential was added
/// in; a refresh, successful or not, ends the round.
/// - A request rejected in the current round starts a refresh, or joins the one in flight.
/// - A request rejected in a round that has ended since (it was sent before the refresh and
///   its 401 came after) does not refresh again: it is sent once more with the new credential
///   when that refresh succeeded, and fails with that refresh's error when it failed. So a
///   burst of rejections causes one refresh, and a refresh that fails ends the whole burst.
/// - A request is sent again after a refresh once: rejected again, it fails with
///   ``NetworkError/status(_:)``.
/// - A failed refresh fails every request of its round with
///   ``AuthenticationError/refreshFailed(_:)``. The credential is kept, so a request sent
///   later and rejected starts a new round.
/// - More than ``maximumRefreshes`` refresh rounds within ``refreshWindow`` fail with
///   ``AuthenticationError/excessiveRefresh`` instead of refreshing in a loop.
/// - New requests wait for a refresh in flight rather than go out with the rejected credential.
public final class AuthenticationInterceptor<Authenticator: KilnNetwork.Authenticator>: RequestAuthenticating {
  private typealias Credential = Authenticator.Credential
  private typealias Refresh = Task<Result<Credential, AuthenticationError>, Never>

  private struct State {
    var credential: Credential
    /// How many refreshes replaced the credential.
    var generation = 0
    /// How many refresh rounds ended, successful or not.
    var round = 0
    /// The outcome of the round that ended last.
    var lastOutcome: Result<Void, AuthenticationError> = .success(())
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
      let (current, round, refresh) = state.withLock { ($0.credential, $0.round, $0.refresh) }
      if let refresh {
        // Whatever its outcome, the request then goes out with the credential there is.
        _ = try await Self.wait(for: refresh)
        continue
      }
      authenticator.apply(current, to: &request)
      return round
    }
  }

  public func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
    authenticator.isRejection(response, for: request)
  }

  private enum Step {
    case done
    case failed(AuthenticationError)
    case wait(Refresh)
    case excessive
  }

  /// Makes sure the round `rejectedGeneration` (the value ``authenticate(_:)`` returned) has
  /// ended: starts its refresh, joins the one in flight, or returns the outcome of the refresh
  /// that ended it.
  public func refresh(rejectedGeneration rejectedRound: Int) async throws(NetworkError) {
    let date = now()
    let window = refreshWindow.timeInterval
    let step = state.withLock { state -> Step in
      if state.round != rejectedRound {
        // The round ended while the request was out: it shares that round's outcome.
        switch state.lastOutcome {
        case .success: return .done
        case .failure(let error): return .failed(error)
        }
      }
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
          switch outcome {
          case .success(let credential):
            state.credential = credential
            state.generation += 1
            state.lastOutcome = .success(())
          case .failure(let error):
            state.lastOutcome = .failure(error)
          }
          state.round += 1
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
    case .failed(let error):
      throw .authentication(error)
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
    let outcome = await Race.value(of: refresh, orWhenCancelled: { nil })
    guard let outcome else { throw .cancelled }
    return outcome
  }
}
