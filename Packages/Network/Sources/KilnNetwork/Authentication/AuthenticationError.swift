/// Why authentication failed; carried by ``NetworkError/authentication(_:)``.
public enum AuthenticationError: Error, Sendable, Hashable {
  /// Refreshing the credential failed, with the refresh's error described. Every request
  /// waiting for that refresh fails with it.
  case refreshFailed(String)
  /// The credential was refreshed more than ``AuthenticationInterceptor/maximumRefreshes`` times within
  /// ``AuthenticationInterceptor/refreshWindow``: the server keeps rejecting fresh credentials, so the
  /// handler stops instead of looping.
  case excessiveRefresh
}
