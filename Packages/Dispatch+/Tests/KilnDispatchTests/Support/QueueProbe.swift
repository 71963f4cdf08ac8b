import Dispatch
import Foundation

/// Names queues through their specifics, so a test can ask "which queue runs this?" and
/// assert on the answer instead of crashing on a failed `dispatchPrecondition`.
enum QueueProbe {
  private static let key = DispatchSpecificKey<String>()

  /// The name of the main queue.
  static let mainName = "main"

  /// Marks the main queue (once) so that ``currentName`` reports it.
  static let markMain: Void = DispatchQueue.main.setSpecific(key: key, value: mainName)

  /// A new serial queue that reports `name`.
  static func serialQueue(_ name: String) -> DispatchQueue {
    let queue = DispatchQueue(label: "kiln.tests.\(name)")
    queue.setSpecific(key: key, value: name)
    return queue
  }

  /// A new concurrent queue that reports `name`.
  static func concurrentQueue(_ name: String) -> DispatchQueue {
    let queue = DispatchQueue(label: "kiln.tests.\(name)", attributes: .concurrent)
    queue.setSpecific(key: key, value: name)
    return queue
  }

  /// The name of the queue running the caller (or of a queue it targets): `"main"`, a
  /// name given above, or `nil` for any other queue — the global queues among them.
  static var currentName: String? {
    _ = markMain
    return DispatchQueue.getSpecific(key: key)
  }

  /// Where the caller runs, as a value tests can compare.
  static var here: Place {
    _ = markMain
    return Place(queueName: DispatchQueue.getSpecific(key: key))
  }
}

/// A queue a piece of work ran on, as seen by ``QueueProbe``.
struct Place: Equatable, Sendable, CustomStringConvertible {
  /// The probe name of the queue, `nil` for a queue without one (the global queues).
  var queueName: String?

  static let main = Place(queueName: QueueProbe.mainName)
  static let unnamed = Place(queueName: nil)

  static func queue(_ name: String) -> Place { Place(queueName: name) }

  var description: String { queueName ?? "an unnamed (global) queue" }
}
