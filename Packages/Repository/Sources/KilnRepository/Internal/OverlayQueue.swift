import Foundation

/// A param's local changes in sequence order, with what ``PendingStatus`` reports kept up to
/// date as they change, so that a change costs O(1) however many wait: appending the newest,
/// removing the oldest (a head index instead of shifting the array), finding one (binary
/// search), and the status (counters, not a pass over every change).
struct OverlayQueue<Data: Sendable>: Sequence, Sendable {
  typealias Overlay = FlowStateMachine<Data>.Overlay

  private var storage: [Overlay] = []
  /// The index in `storage` of the oldest change.
  private var head = 0
  /// How many changes are being sent.
  private(set) var sendingCount = 0
  /// The failed attempts of every change, together.
  private(set) var failedAttempts = 0
  /// The last failure reported while changes were waiting; `nil` once none waits.
  private(set) var lastFailure: String?

  var count: Int { storage.count - head }
  var isEmpty: Bool { head == storage.count }
  var first: Overlay? { isEmpty ? nil : storage[head] }
  var last: Overlay? { isEmpty ? nil : storage[storage.count - 1] }

  func makeIterator() -> ArraySlice<Overlay>.Iterator {
    storage[head...].makeIterator()
  }

  /// The position (from 0, the oldest) of the change of `sequence`.
  func position(of sequence: UInt64) -> Int? {
    var low = head
    var high = storage.count
    while low < high {
      let middle = (low + high) / 2
      if storage[middle].sequence < sequence { low = middle + 1 } else { high = middle }
    }
    return low < storage.count && storage[low].sequence == sequence ? low - head : nil
  }

  subscript(position: Int) -> Overlay {
    get { storage[head + position] }
    set {
      let old = storage[head + position]
      sendingCount += (newValue.isSending ? 1 : 0) - (old.isSending ? 1 : 0)
      failedAttempts += newValue.attempts - old.attempts
      if let failure = newValue.lastFailure, failure != old.lastFailure { lastFailure = failure }
      storage[head + position] = newValue
    }
  }

  /// Adds `overlay` in its place by sequence; returns whether it went last.
  @discardableResult
  mutating func insert(_ overlay: Overlay) -> Bool {
    count(in: overlay)
    guard let last, last.sequence > overlay.sequence else {
      storage.append(overlay)
      return true
    }
    let position = storage[head...].firstIndex { $0.sequence > overlay.sequence } ?? storage.count
    storage.insert(overlay, at: position)
    return false
  }

  /// Removes and returns the change at `position`.
  mutating func remove(at position: Int) -> Overlay {
    let overlay: Overlay
    if position == 0 {
      overlay = storage[head]
      head += 1
      if head == storage.count {
        storage.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 64, head * 2 >= storage.count {
        storage.removeFirst(head)
        head = 0
      }
    } else {
      overlay = storage.remove(at: head + position)
    }
    sendingCount -= overlay.isSending ? 1 : 0
    failedAttempts -= overlay.attempts
    if isEmpty { lastFailure = nil }
    return overlay
  }

  private mutating func count(in overlay: Overlay) {
    sendingCount += overlay.isSending ? 1 : 0
    failedAttempts += overlay.attempts
    if let failure = overlay.lastFailure { lastFailure = failure }
  }
}
