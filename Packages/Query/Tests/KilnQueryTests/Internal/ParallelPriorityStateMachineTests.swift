import Testing

@testable import KilnQuery

/// The decisions of one parallel priority load, event by event, without any concurrency.
@Suite("ParallelPriorityStateMachine", .timeLimit(.minutes(1)))
struct ParallelPriorityStateMachineTests {
  typealias Machine = ParallelPriorityStateMachine<Int, TestFailure>

  struct TestFailure: Error, Hashable {}

  @Test("a load of no items succeeds at once with no values; one with items does not")
  func noItems() {
    var empty = Machine(mandatory: [])
    #expect(empty.outcomeWithoutItems() == .success([]))
    #expect(empty.timeLimitReached() == nil)

    var some = Machine(mandatory: [true])
    #expect(some.outcomeWithoutItems() == nil)
    #expect(!some.isDecided)
  }

  @Test("succeeds as soon as every mandatory item is in, with the optional ones in by then")
  func mandatoryComplete() {
    var machine = Machine(mandatory: [true, false, true, false])
    #expect(machine.record(.success(10), at: 0) == nil)
    #expect(machine.record(.success(11), at: 1) == nil)
    #expect(machine.record(.success(12), at: 2) == .success([10, 11, 12, nil]))
    #expect(machine.isDecided)
    #expect(machine.record(.success(13), at: 3) == nil, "decides exactly once")
    #expect(machine.timeLimitReached() == nil)
  }

  @Test("the first mandatory failure ends the load; a failed optional item is nil")
  func failures() {
    var machine = Machine(mandatory: [false, true, true])
    #expect(machine.record(.failure(TestFailure()), at: 0) == nil)
    #expect(
      machine.record(.failure(TestFailure()), at: 2) == .failure(.mandatoryFailed(index: 2, failure: TestFailure())))
    #expect(machine.record(.failure(TestFailure()), at: 1) == nil)

    var optionalFails = Machine(mandatory: [true, false])
    #expect(optionalFails.record(.failure(TestFailure()), at: 1) == nil)
    #expect(optionalFails.record(.success(1), at: 0) == .success([1, nil]))
  }

  @Test("with no mandatory item the load waits for every item")
  func noMandatory() {
    var machine = Machine(mandatory: [false, false])
    #expect(machine.record(.success(1), at: 1) == nil)
    #expect(machine.record(.failure(TestFailure()), at: 0) == .success([nil, 1]))
  }

  @Test("the time limit is a timeout while mandatory items are missing, else success with what is in")
  func timeLimit() {
    var missing = Machine(mandatory: [true, false])
    #expect(missing.record(.success(2), at: 1) == nil)
    #expect(missing.timeLimitReached() == .failure(.timeout))
    #expect(missing.record(.success(1), at: 0) == nil, "nothing after the outcome")

    var optionalOnly = Machine(mandatory: [false, false, false])
    #expect(optionalOnly.record(.success(7), at: 2) == nil)
    #expect(optionalOnly.timeLimitReached() == .success([nil, nil, 7]))
  }
}
