/// Where a ``NetworkHandler`` takes responses from (Lynn's response modes).
///
/// The cache is consulted only when the handler has a ``ResponseStore`` and the request
/// gives a `validUntil`.
public enum ResponseMode: Sendable, Hashable {
  /// A valid cached response when there is one, else the network (and the response is
  /// cached).
  case normal
  /// Always the network, never a cached response (the response is still cached).
  case alwaysLive
  /// A valid cached response when there is one, else the target's
  /// ``TargetGroup/sampleData`` as a `200` response, which is then cached. No request goes
  /// out; a target without sample data fails with ``NetworkError/noSampleData``.
  case sample
  /// Every request fails with ``NetworkError/simulatedFailure``, to test error paths.
  case alwaysFail
}
