/// How much an item of a ``ParallelPriorityLoader`` matters: items at or above the loader's
/// mandatory priority must load; the others are included only if they are in on time.
///
/// Priorities are ordered by ``value``: ``optional`` is the lowest there is, ``required`` the
/// highest, and ``custom(_:)`` sits in between.
///
/// ```swift
/// let loader = ParallelPriorityLoader(
///   [headline.prioritized(.required), related.prioritized(.custom(5)), ads.prioritized(.optional)],
///   mandatoryPriority: .custom(5)          // headline and related must load; ads may not
/// )
/// ```
@frozen
public struct ParallelPriority: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The rank; a higher value matters more.
  public let value: Int

  @inlinable
  init(value: Int) {
    self.value = value
  }

  /// The lowest priority: never mandatory unless the mandatory priority is `.optional` itself.
  public static let optional = ParallelPriority(value: .min)

  /// The highest priority: mandatory whatever the loader's mandatory priority.
  public static let required = ParallelPriority(value: .max)

  /// A priority between ``optional`` and ``required``, ordered by `value`.
  ///
  /// - Parameter value: The rank; a higher value matters more.
  @inlinable
  public static func custom(_ value: Int) -> ParallelPriority {
    ParallelPriority(value: value)
  }

  @inlinable
  public static func < (lhs: ParallelPriority, rhs: ParallelPriority) -> Bool {
    lhs.value < rhs.value
  }

  public var description: String {
    switch value {
    case .min: "optional"
    case .max: "required"
    default: "custom(\(value))"
    }
  }
}
