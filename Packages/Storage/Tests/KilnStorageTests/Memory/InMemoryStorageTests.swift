import Foundation
import KilnStorage
import KilnTesting
import Testing

@Suite("InMemoryStorage", .timeLimit(.minutes(1)))
struct InMemoryStorageTests {
  @Test("an empty storage loads as StorageError.empty and has no timestamp")
  func empty() {
    let storage = InMemoryStorage<Int>()
    #expect(throws: StorageError.empty) { try storage.load() }
    #expect(storage.timestamp == nil)
    #expect(storage.value == nil)
  }

  @Test("saving stamps the value with now; clearing removes both")
  func saveAndClear() throws {
    let now = ManualDate()
    let storage = InMemoryStorage<String>(now: now.provider)
    storage.save("a")
    #expect(try storage.load() == "a")
    #expect(storage.timestamp == now())
    now.advance(by: .seconds(10))
    storage.save("b")
    #expect(storage.value == "b")
    #expect(storage.timestamp == now())
    storage.clear()
    #expect(throws: StorageError.empty) { try storage.load() }
    #expect(storage.timestamp == nil)
  }

  @Test("an initial value is stamped at creation")
  func initialValue() throws {
    let now = ManualDate()
    let storage = InMemoryStorage(3, now: now.provider)
    #expect(try storage.load() == 3)
    #expect(storage.timestamp == now())
  }

  @Test("it composes as a Storage: generic code loads and saves through the protocol")
  func asStorage() async throws {
    func roundTrip<S: Storage<Int>>(_ storage: S) async throws -> Int {
      try await storage.save(9)
      return try await storage.load()
    }
    #expect(try await roundTrip(InMemoryStorage<Int>()) == 9)
    let storage = InMemoryStorage<Int>()
    let erased: any Storage<Int> = storage
    try await erased.save(1)
    #expect(await erased.timestamp != nil)
    try await erased.clear()
    await #expect(throws: StorageError.empty) { try await erased.load() }
  }
}
