import Foundation
import KilnCore
import KilnTesting
import Testing
import _KilnSynchronization

/// A synchronous storage holding one value in memory, stamped by an injected clock.
private final class Box<Value: Sendable>: SynchronousStorage {
  private let state = KilnMutex<(value: Value?, timestamp: Date?)>((nil, nil))
  private let now: @Sendable () -> Date

  init(now: @escaping @Sendable () -> Date) { self.now = now }

  var timestamp: Date? { state.withLock { $0.timestamp } }
  func load() -> Value? { state.withLock { $0.value } }
  func save(_ value: Value) {
    let date = now()
    state.withLock { $0 = (value, date) }
  }
  func clear() { state.withLock { $0 = (nil, nil) } }
}

/// A synchronous storage whose medium is broken.
private struct Broken: SynchronousStorage {
  var timestamp: Date? { nil }
  func load() throws -> Int? { throw TestError("read") }
  func save(_ value: Int) throws { throw TestError("write") }
  func clear() throws { throw TestError("clear") }
}

@Suite("Storage", .timeLimit(.minutes(1)))
struct StorageTests {
  @Test("an empty adapted storage loads as StorageError.empty and has no timestamp")
  func emptyAdapter() async {
    let storage: any Storage<Int> = Box<Int>(now: ManualDate().provider).asAsyncStorage()
    await #expect(throws: StorageError.empty) { try await storage.load() }
    #expect(await storage.timestamp == nil)
  }

  @Test("save, load, timestamp and clear go through the adapter")
  func adapterRoundTrip() async throws {
    let now = ManualDate()
    let box = Box<String>(now: now.provider)
    let storage = box.asAsyncStorage()

    try await storage.save("hello")
    #expect(try await storage.load() == "hello")
    #expect(storage.timestamp == now())
    #expect(box.load() == "hello")

    now.advance(by: .seconds(5))
    try await storage.save("again")
    #expect(storage.timestamp == now())

    try await storage.clear()
    #expect(box.load() == nil)
    await #expect(throws: StorageError.empty) { try await storage.load() }
  }

  @Test("asQuery loads the stored value as a query")
  func asQuery() async throws {
    let box = Box<Int>(now: Date.init)
    let query = box.asQuery()
    await #expect(throws: StorageError.empty) { try await query.load() }
    box.save(8)
    #expect(try await query.load() == 8)
    // It composes like any query.
    #expect(try await query.eraseToAnyQuery().load() == 8)
  }

  @Test("errors of the synchronous medium reach the caller unchanged")
  func mediumErrors() async {
    let storage = Broken().asAsyncStorage()
    await #expect(throws: TestError("read")) { try await storage.load() }
    await #expect(throws: TestError("write")) { try await storage.save(1) }
    await #expect(throws: TestError("clear")) { try await storage.clear() }
  }

  @Test("StorageError describes itself")
  func describesError() {
    #expect(StorageError.empty.description == "the storage is empty")
  }
}
