import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

/// What a routed function saw: where it ran and the arguments it got.
struct Report: Equatable, Sendable {
  var ranOn: Place
  var arguments: String
}

/// Synchronous functions of arities 0, 1, 2 and 4 that report where they ran.
enum Subject {
  @Sendable static func zero() -> Report {
    Report(ranOn: QueueProbe.here, arguments: "")
  }

  @Sendable static func one(_ a: Int) -> Report {
    Report(ranOn: QueueProbe.here, arguments: "\(a)")
  }

  @Sendable static func two(_ a: Int, _ b: String) -> Report {
    Report(ranOn: QueueProbe.here, arguments: "\(a) \(b)")
  }

  @Sendable static func four(_ a: Int, _ b: String, _ c: Double, _ d: Bool) -> Report {
    Report(ranOn: QueueProbe.here, arguments: "\(a) \(b) \(c) \(d)")
  }

  /// A main-actor function, as UI code is.
  @MainActor static func onMain(_ a: Int, _ b: String) -> Report {
    Report(ranOn: QueueProbe.here, arguments: "\(a) \(b)")
  }
}

/// A handler's view: the function's report and where the handler itself ran.
struct Delivery: Equatable, Sendable {
  var report: Report
  var handledOn: Place
}

/// The reports every arity should produce, in call order.
let expectedArguments = ["", "1", "1 b", "1 b 3.0 true"]

@Suite("Sync → async: +>>, ~>>, ?+>>, ?~>> and the postfix routes", .timeLimit(.minutes(1)))
struct SyncToAsyncTests {
  // MARK: - Where functions and handlers run, for every arity

  @Test("+>> runs the function on the main queue and +>> { } hands the value over on the main queue")
  func mainThenMain() async {
    let deliveries = Recorder<Delivery>()
    let record: @MainActor (Report) -> Void = { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    Subject.zero +>> () +>> record
    Subject.one +>> 1 +>> record
    Subject.two +>> (1, "b") +>> record
    Subject.four +>> (1, "b", 3.0, true) +>> record
    #expect(await deliveries.wait(forCount: 4))
    #expect(deliveries.values.map(\.report.arguments).sorted() == expectedArguments)
    #expect(deliveries.values.allSatisfy { $0.report.ranOn == .main && $0.handledOn == .main })
  }

  @Test("~>> runs the function on the global queue and ~>> { } hands the value over on the global queue")
  func globalThenGlobal() async {
    let deliveries = Recorder<Delivery>()
    let record: @Sendable (Report) -> Void = {
      dispatchPrecondition(condition: .onQueue(.global()))
      deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here))
    }
    Subject.zero ~>> () ~>> record
    Subject.one ~>> 1 ~>> record
    Subject.two ~>> (1, "b") ~>> record
    Subject.four ~>> (1, "b", 3.0, true) ~>> record
    #expect(await deliveries.wait(forCount: 4))
    #expect(deliveries.values.map(\.report.arguments).sorted() == expectedArguments)
    #expect(deliveries.values.allSatisfy { $0.report.ranOn == .unnamed && $0.handledOn == .unnamed })
  }

  @Test("f ~>> queue ~>> (arguments) runs the function on that queue; ~>> other ~>> { } hands over on the other")
  func namedThenNamed() async {
    let work = QueueProbe.serialQueue("work")
    let results = QueueProbe.serialQueue("results")
    let deliveries = Recorder<Delivery>()
    let record: @Sendable (Report) -> Void = { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    Subject.zero ~>> work ~>> () ~>> results ~>> record
    Subject.one ~>> work ~>> 1 ~>> results ~>> record
    Subject.two ~>> work ~>> (1, "b") ~>> results ~>> record
    Subject.four ~>> work ~>> (1, "b", 3.0, true) ~>> results ~>> record
    #expect(await deliveries.wait(forCount: 4))
    #expect(deliveries.values.map(\.report.arguments) == expectedArguments)  // one serial queue: in order
    #expect(deliveries.values.allSatisfy { $0.report.ranOn == .queue("work") && $0.handledOn == .queue("results") })
  }

  @Test("The queue of the function and the queue of the handler are independent")
  func mixedQueues() async {
    let results = QueueProbe.serialQueue("results")
    let deliveries = Recorder<Delivery>()
    Subject.two +>> (1, "b") ~>> results ~>> { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    Subject.two ~>> (2, "c") +>> { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    #expect(await deliveries.wait(forCount: 2))
    let byArguments = Dictionary(uniqueKeysWithValues: deliveries.values.map { ($0.report.arguments, $0) })
    #expect(
      byArguments["1 b"] == Delivery(report: Report(ranOn: .main, arguments: "1 b"), handledOn: .queue("results")))
    #expect(byArguments["2 c"] == Delivery(report: Report(ranOn: .unnamed, arguments: "2 c"), handledOn: .main))
  }

  @Test("+>> takes main-actor functions")
  func mainActorFunction() async {
    let deliveries = Recorder<Report>()
    Subject.onMain +>> (7, "x") ~>> { deliveries.append($0) }
    #expect(await deliveries.first() == Report(ranOn: .main, arguments: "7 x"))
  }

  // MARK: - Arguments and return values

  @Test("Labelled tuples pass as arguments, as in Brisk's README")
  func labelledArguments() async {
    let received = Recorder<String>()
    let completionHandler: @Sendable (Bool, (any Error)?) -> Void = { success, error in
      received.append("\(success) \(error == nil)")
    }
    completionHandler +>> (success: false, error: nil)
    completionHandler ~>> (success: true, error: nil)
    #expect(await received.wait(forCount: 2))
    #expect(received.values.sorted() == ["false true", "true true"])
  }

  @Test("`return f +>> (arguments)` compiles in a function that returns nothing, as in Brisk's README")
  func returnInVoidFunction() async {
    let received = Recorder<Int>()
    let completionHandler: @Sendable (Int) -> Void = { received.append($0) }
    func finish(with value: Int) {
      guard value > 0 else { return completionHandler +>> (0) }
      return completionHandler ~>> (value)
    }
    finish(with: 0)
    finish(with: 5)
    #expect(await received.wait(forCount: 2))
    #expect(received.values.sorted() == [0, 5])
  }

  @Test("The arguments on the right may be any expression: arithmetic, ?? and comparisons bind first")
  func argumentExpressions() async {
    let received = Recorder<String>()
    let record: @Sendable (String) -> Void = { received.append($0) }
    let describe: @Sendable (Int) -> String = { "\($0)" }
    let describeFlag: @Sendable (Bool) -> String = { "\($0)" }
    let missing: Int? = nil
    describe ~>> 1 + 2 * 3 ~>> record
    describe ~>> missing ?? 4 ~>> record
    describeFlag ~>> 2 > 1 ~>> record
    #expect(await received.wait(forCount: 3))
    #expect(received.values.sorted() == ["4", "7", "true"])
  }

  @Test("A function whose only parameter is a queue: f ~>> queue names the queue, f~>>.async(queue) passes it")
  func queueParameter() async {
    let work = QueueProbe.serialQueue("work")
    let other = QueueProbe.serialQueue("other")
    let received = Recorder<String>()
    let label: @Sendable (DispatchQueue) -> String = { "\($0.label) on \(QueueProbe.here)" }
    label ~>> work ~>> (other) ~>> { received.append($0) }
    #expect(await received.first() == "kiln.tests.other on work")
  }

  @Test("A dispatched call can be awaited, and every handler gets the value exactly once")
  func dispatchedCall() async {
    let gate = DispatchSemaphore(value: 0)
    let slow: @Sendable (Int) -> Int = { value in
      gate.wait()
      return value * 2
    }
    let call = slow ~>> 21
    let handled = Recorder<Int>()
    call ~>> { handled.append($0) }
    call +>> { handled.append($0 + 1) }
    #expect(call.currentValue == nil)
    gate.signal()
    #expect(await call.value == 42)
    #expect(call.currentValue == 42)
    call ~>> { handled.append($0 + 2) }  // registered after the function returned
    #expect(await handled.wait(forCount: 3))
    #expect(handled.values.sorted() == [42, 43, 44])
  }

  // MARK: - Optional functions

  @Test("?+>> and ?~>> call a function that is there, on the right queue")
  func optionalPresent() async {
    let deliveries = Recorder<Delivery>()
    let work = QueueProbe.serialQueue("work")
    let two: (@Sendable (Int, String) -> Report)? = Subject.two
    let onMain: (@MainActor (Int, String) -> Report)? = Subject.onMain
    two ?+>> (1, "main") ~>> { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    two ?~>> (2, "global") +>> { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    two ?~>> work ~>> (3, "work") ~>> work ~>> { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    onMain ?+>> (4, "actor") ~>> work ~>> { deliveries.append(Delivery(report: $0, handledOn: QueueProbe.here)) }
    #expect(await deliveries.wait(forCount: 4))
    let places = Dictionary(uniqueKeysWithValues: deliveries.values.map { ($0.report.arguments, $0) })
    #expect(places["1 main"] == Delivery(report: Report(ranOn: .main, arguments: "1 main"), handledOn: .unnamed))
    #expect(places["2 global"] == Delivery(report: Report(ranOn: .unnamed, arguments: "2 global"), handledOn: .main))
    #expect(
      places["3 work"]
        == Delivery(report: Report(ranOn: .queue("work"), arguments: "3 work"), handledOn: .queue("work")))
    #expect(
      places["4 actor"] == Delivery(report: Report(ranOn: .main, arguments: "4 actor"), handledOn: .queue("work")))
  }

  @Test("?+>> and ?~>> do nothing with a nil function, and the rest of the chain does nothing either")
  func optionalAbsent() {
    let two: (@Sendable (Int, String) -> Report)? = nil
    let void: (@Sendable (Int) -> Void)? = nil
    #expect((two ?+>> (1, "b")) == nil)
    #expect((two ?~>> (1, "b")) == nil)
    #expect((two ?~>> DispatchQueue.main) == nil)
    #expect((two ?~>> DispatchQueue.main ~>> (1, "b")) == nil)
    #expect((two ?~>> (1, "b") ~>> DispatchQueue.main) == nil)
    two ?+>> (1, "b") +>> { _ in Issue.record("A handler ran for a nil function") }
    two ?~>> (1, "b") ~>> { _ in Issue.record("A handler ran for a nil function") }
    void ?+>> 1
    void ?~>> 1
  }

  @Test("Optional chaining reaches the postfix forms: f?~>>.async(arguments)")
  func optionalPostfix() async {
    let deliveries = Recorder<Report>()
    let present: (@Sendable (Int) -> Report)? = Subject.one
    let absent: (@Sendable (Int) -> Report)? = nil
    let work = QueueProbe.serialQueue("work")
    present?~>>.on(work).async(1) ~>> { deliveries.append($0) }
    #expect(absent?~>>.async(2) == nil)
    #expect(await deliveries.first() == Report(ranOn: .queue("work"), arguments: "1"))
  }

  // MARK: - Postfix routes

  @Test("f~>>.async runs on the global queue; .on(queue), .main and .background move it", arguments: [0, 1, 2, 4])
  func postfixAsync(arity: Int) async {
    let work = QueueProbe.serialQueue("work")
    let reports = Recorder<Report>()
    let record: @Sendable (Report) -> Void = { reports.append($0) }
    switch arity {
    case 0:
      Subject.zero~>>.async() ~>> record
      Subject.zero~>>.on(work).async() ~>> record
      Subject.zero~>>.main.async() ~>> record
      Subject.zero~>>.main.background.async() ~>> record
    case 1:
      Subject.one~>>.async(1) ~>> record
      Subject.one~>>.on(work).async(1) ~>> record
      Subject.one~>>.main.async(1) ~>> record
      Subject.one~>>.main.background.async(1) ~>> record
    case 2:
      Subject.two~>>.async(1, "b") ~>> record
      Subject.two~>>.on(work).async(1, "b") ~>> record
      Subject.two~>>.main.async(1, "b") ~>> record
      Subject.two~>>.main.background.async(1, "b") ~>> record
    default:
      Subject.four~>>.async(1, "b", 3.0, true) ~>> record
      Subject.four~>>.on(work).async(1, "b", 3.0, true) ~>> record
      Subject.four~>>.main.async(1, "b", 3.0, true) ~>> record
      Subject.four~>>.main.background.async(1, "b", 3.0, true) ~>> record
    }
    #expect(await reports.wait(forCount: 4))
    #expect(Set(reports.values.map(\.arguments)) == [expectedArguments[[0, 1, 2, 4].firstIndex(of: arity)!]])
    let places = reports.values.map(\.ranOn.description).sorted()
    let expectedPlaces = [Place.unnamed, .unnamed, .main, .queue("work")].map(\.description).sorted()
    #expect(places == expectedPlaces)
  }

  @Test("f~>>.on(queue).sync returns the value computed on that queue, for every arity")
  func postfixSync() async {
    let work = QueueProbe.serialQueue("work")
    let reports = await run(on: QueueProbe.serialQueue("caller")) {
      [
        Subject.zero~>>.on(work).sync(),
        Subject.one~>>.on(work).sync(1),
        Subject.two~>>.on(work).sync(1, "b"),
        Subject.four~>>.on(work).sync(1, "b", 3.0, true),
        Subject.two~>>.main.sync(1, "b"),
        Subject.two~>>.background.sync(1, "b"),
        Subject.onMain+>>.sync(1, "b"),
      ]
    }
    #expect(reports?.map(\.arguments) == expectedArguments + ["1 b", "1 b", "1 b"])
    #expect(
      reports?.map(\.ranOn) == [.queue("work"), .queue("work"), .queue("work"), .queue("work"), .main, .unnamed, .main])
  }

  @Test(".sync from the target queue itself runs inline instead of deadlocking")
  func syncReentrant() async {
    let work = QueueProbe.serialQueue("work")
    let inner = DispatchQueue(label: "kiln.tests.inner", target: work)
    let fromWork = await run(on: work) { Subject.one~>>.on(work).sync(1) }
    let fromInner = await run(on: inner) { Subject.one~>>.on(work).sync(2) }
    #expect(fromWork == Report(ranOn: .queue("work"), arguments: "1"))
    #expect(fromInner == Report(ranOn: .queue("work"), arguments: "2"))
  }

  @Test(".sync to the main queue from the main queue runs inline instead of deadlocking")
  @MainActor
  func syncOnMain() {
    #expect(Subject.onMain+>>.sync(1, "b") == Report(ranOn: .main, arguments: "1 b"))
    #expect(Subject.two~>>.main.sync(2, "c") == Report(ranOn: .main, arguments: "2 c"))
    #expect(Subject.two+>>.sync(3, "d") == Report(ranOn: .main, arguments: "3 d"))
  }

  @Test("f+>> on a @Sendable function makes a main-queue route that .on(queue) can still move")
  func postfixMainRoute() async {
    let work = QueueProbe.serialQueue("work")
    let reports = Recorder<Report>()
    Subject.one+>>.async(1) ~>> { reports.append($0) }
    Subject.one+>>.on(work).async(2) ~>> { reports.append($0) }
    Subject.onMain+>>.async(3, "c") ~>> { reports.append($0) }
    #expect(await reports.wait(forCount: 3))
    let byArguments = Dictionary(uniqueKeysWithValues: reports.values.map { ($0.arguments, $0.ranOn) })
    #expect(byArguments == ["1": .main, "2": .queue("work"), "3 c": .main])
  }

  @Test("A route is a value: called twice, the function runs twice")
  func routeReuse() async {
    let reports = Recorder<Report>()
    let route = Subject.one~>>.on(QueueProbe.serialQueue("work"))
    route.async(1) ~>> { reports.append($0) }
    route ~>> 2 ~>> { reports.append($0) }
    #expect(await reports.wait(forCount: 2))
    #expect(reports.values.map(\.arguments) == ["1", "2"])
  }
}
