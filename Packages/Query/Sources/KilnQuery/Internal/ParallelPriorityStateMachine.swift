/// The decisions of one ``ParallelPriorityLoader`` load, as a plain value.
///
/// The loader's tasks only report events — an item finished, the time limit passed — and
/// carry out what the machine returns, so every rule of the load (when it succeeds, which
/// failure wins, what a timeout returns) is tested here without any concurrency. The machine
/// decides exactly once: after its outcome every later event returns `nil`.
struct ParallelPriorityStateMachine<Value, Failure: Error> {
  /// How the load ends.
  typealias Outcome = Result<[Value?], ParallelPriorityLoaderError<Failure>>

  private let mandatory: [Bool]
  private let hasMandatory: Bool
  private var values: [Value?]
  private var mandatoryLeft: Int
  private var itemsLeft: Int
  private(set) var isDecided = false

  /// A machine for items whose mandatory flags are `mandatory`, in item order.
  init(mandatory: [Bool]) {
    self.mandatory = mandatory
    hasMandatory = mandatory.contains(true)
    values = Array(repeating: nil, count: mandatory.count)
    mandatoryLeft = mandatory.count { $0 }
    itemsLeft = mandatory.count
  }

  /// The outcome of a load of no items (success with no values); `nil` when there are items.
  mutating func outcomeWithoutItems() -> Outcome? {
    guard itemsLeft == 0, !isDecided else { return nil }
    isDecided = true
    return .success([])
  }

  /// Records item `index`'s result; returns the load's outcome when this decides it: the
  /// first mandatory failure, or success once every mandatory item (every item, when none is
  /// mandatory) is in.
  mutating func record(_ result: Result<Value, Failure>, at index: Int) -> Outcome? {
    guard !isDecided else { return nil }
    itemsLeft -= 1
    switch result {
    case .success(let value):
      values[index] = value
      if mandatory[index] { mandatoryLeft -= 1 }
    case .failure(let failure):
      if mandatory[index] {
        isDecided = true
        return .failure(.mandatoryFailed(index: index, failure: failure))
      }
    }
    if (hasMandatory && mandatoryLeft == 0) || itemsLeft == 0 {
      isDecided = true
      return .success(values)
    }
    return nil
  }

  /// Decides the load at its time limit: a timeout while mandatory items are missing,
  /// otherwise success with the items that are in. `nil` when the load was already decided.
  mutating func timeLimitReached() -> Outcome? {
    guard !isDecided else { return nil }
    isDecided = true
    return mandatoryLeft > 0 ? .failure(.timeout) : .success(values)
  }
}
