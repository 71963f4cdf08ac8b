public import Foundation

/// Decides whether a value stored at some instant may still be used.
///
/// A policy judges a storage's ``Storage/timestamp`` (or an entry's
/// ``CacheEntry/storedAt``); `KilnQuery`'s `expiring(validationPolicy:)` asks it before
/// reading a storage at all. Use the built-in policies through their static members:
///
/// ```swift
/// cache.expiring(validationPolicy: .maxAge(.minutes(5)))
/// cache.expiring(validationPolicy: .custom { timestamp, now in
///   timestamp.map { Calendar.current.isDate($0, inSameDayAs: now) } ?? false
/// })
/// ```
public protocol ValidationPolicy: Sendable {
  /// Whether a value stored at `timestamp` is valid at `now`.
  ///
  /// - Parameters:
  ///   - timestamp: When the value was stored; `nil` when there is no value.
  ///   - now: The instant to judge at.
  /// - Returns: `true` when the value may be used.
  func isValid(timestamp: Date?, now: Date) -> Bool
}

/// Valid while the value's age is at most ``maxAge``: up to and including
/// `timestamp + maxAge`. A missing timestamp is invalid.
///
/// Create one with ``ValidationPolicy/maxAge(_:)``.
@frozen
public struct MaxAgeValidationPolicy: ValidationPolicy {
  /// The oldest a value may be and still be valid.
  public let maxAge: Duration

  /// Creates the policy.
  ///
  /// - Parameter maxAge: The oldest a value may be; must not be negative.
  @inlinable
  public init(maxAge: Duration) {
    precondition(maxAge >= .zero, "maxAge must not be negative, got \(maxAge)")
    self.maxAge = maxAge
  }

  @inlinable
  public func isValid(timestamp: Date?, now: Date) -> Bool {
    guard let timestamp else { return false }
    return now <= timestamp.addingTimeInterval(maxAge.timeInterval)
  }
}

/// Every stored value is valid, whatever its age. An empty storage is still read (and
/// reports ``StorageError/empty``).
///
/// Create one with ``ValidationPolicy/alwaysValid``.
@frozen
public struct AlwaysValidPolicy: ValidationPolicy {
  /// Creates the policy.
  @inlinable
  public init() {}

  @inlinable
  public func isValid(timestamp: Date?, now: Date) -> Bool { true }
}

/// No stored value is valid: every read goes to the source.
///
/// Create one with ``ValidationPolicy/neverValid``.
@frozen
public struct NeverValidPolicy: ValidationPolicy {
  /// Creates the policy.
  @inlinable
  public init() {}

  @inlinable
  public func isValid(timestamp: Date?, now: Date) -> Bool { false }
}

/// A policy given by a closure.
///
/// Create one with ``ValidationPolicy/custom(_:)``.
@frozen
public struct CustomValidationPolicy: ValidationPolicy {
  @usableFromInline
  let decide: @Sendable (_ timestamp: Date?, _ now: Date) -> Bool

  /// Creates the policy.
  ///
  /// - Parameter decide: Returns whether a value stored at `timestamp` is valid at `now`.
  @inlinable
  public init(_ decide: @escaping @Sendable (_ timestamp: Date?, _ now: Date) -> Bool) {
    self.decide = decide
  }

  @inlinable
  public func isValid(timestamp: Date?, now: Date) -> Bool {
    decide(timestamp, now)
  }
}

extension ValidationPolicy where Self == MaxAgeValidationPolicy {
  /// Valid while `now - timestamp <= age`; a missing timestamp is invalid.
  ///
  /// - Parameter age: The oldest a value may be; must not be negative.
  @inlinable
  public static func maxAge(_ age: Duration) -> MaxAgeValidationPolicy {
    MaxAgeValidationPolicy(maxAge: age)
  }
}

extension ValidationPolicy where Self == AlwaysValidPolicy {
  /// Every stored value is valid.
  @inlinable
  public static var alwaysValid: AlwaysValidPolicy { AlwaysValidPolicy() }
}

extension ValidationPolicy where Self == NeverValidPolicy {
  /// No stored value is valid.
  @inlinable
  public static var neverValid: NeverValidPolicy { NeverValidPolicy() }
}

extension ValidationPolicy where Self == CustomValidationPolicy {
  /// A policy given by a closure of the timestamp (`nil` when empty) and the current instant.
  @inlinable
  public static func custom(
    _ decide: @escaping @Sendable (_ timestamp: Date?, _ now: Date) -> Bool
  ) -> CustomValidationPolicy {
    CustomValidationPolicy(decide)
  }
}
