import Foundation
import KilnStorage
import KilnTesting
import Synchronization
import Testing

/// A throwaway defaults suite, removed after `body`, so tests never touch the real domain.
func withTemporaryDefaults<Result>(_ body: (UserDefaults) throws -> Result) throws -> Result {
  let name = "kiln-storage-tests-\(UUID().uuidString)"
  let defaults = try #require(UserDefaults(suiteName: name))
  defer {
    defaults.removePersistentDomain(forName: name)
  }
  return try body(defaults)
}

@Suite("UserDefaultsStore", .timeLimit(.minutes(1)))
struct UserDefaultsStoreTests {
  @Test("values round-trip through a suite and a second store on it reads them")
  func roundTrip() throws {
    try withTemporaryDefaults { defaults in
      let now = ManualDate()
      let store = UserDefaultsStore<String, Article>(defaults: defaults, now: now.provider)
      try store.setValue(Article(id: 1, title: "a"), forKey: "a", expiresAt: nil)
      try store.setValue(Article(id: 2, title: "b"), forKey: "a", expiresAt: nil)
      #expect(try store.entry(forKey: "a") == CacheEntry(value: Article(id: 2, title: "b"), storedAt: now()))
      #expect(store.value(forKey: "missing") == nil)
      let again = UserDefaultsStore<String, Article>(defaults: defaults)
      #expect(again.value(forKey: "a") == Article(id: 2, title: "b"))
      try again.removeValue(forKey: "a")
      #expect(store.value(forKey: "a") == nil)
    }
  }

  @Test("entries expire on the injected clock")
  func expiry() throws {
    try withTemporaryDefaults { defaults in
      let now = ManualDate()
      let store = UserDefaultsStore<String, Int>(defaults: defaults, entryLifetime: .seconds(10), now: now.provider)
      try store.setValue(1, forKey: "k", expiresAt: nil)
      now.advance(by: .seconds(10))
      #expect(store.value(forKey: "k") == 1)
      now.advance(by: .seconds(1))
      #expect(store.value(forKey: "k") == nil)
      #expect(defaults.data(forKey: "kiln.str:k") == nil)
    }
  }

  @Test("an expired read does not remove a value another store wrote after the read")
  func expiredReadKeepsNewerValue() throws {
    try withTemporaryDefaults { defaults in
      let clock = ManualDate()
      let writer = UserDefaultsStore<String, Int>(defaults: defaults, now: clock.provider)
      // The other store's write lands between the read of the expired entry and its removal:
      // the reader judges expiry with `now` exactly there.
      let interleave = OneShot()
      let reader = UserDefaultsStore<String, Int>(
        defaults: defaults,
        now: {
          interleave.run()
          return clock()
        })
      try reader.setValue(1, forKey: "k", expiresAt: clock() + 10)
      clock.advance(by: .seconds(11))
      interleave.arm { try? writer.setValue(2, forKey: "k", expiresAt: nil) }
      #expect(try reader.entry(forKey: "k") == nil)
      #expect(interleave.hasRun)
      #expect(try writer.entry(forKey: "k")?.value == 2)
    }
  }

  @Test("a preference that is not an entry reads as a miss and is removed")
  func corruptPreference() throws {
    try withTemporaryDefaults { defaults in
      let store = UserDefaultsStore<String, Int>(defaults: defaults)
      defaults.set(Data("garbage".utf8), forKey: "kiln.str:k")
      #expect(store.value(forKey: "k") == nil)
      #expect(defaults.object(forKey: "kiln.str:k") == nil)
    }
  }

  @Test("removeAll removes exactly the preferences with the store's prefix")
  func removeAllKeepsOthers() throws {
    try withTemporaryDefaults { defaults in
      let store = UserDefaultsStore<String, Int>(defaults: defaults, keyPrefix: "cache.")
      try store.setValue(1, forKey: "a", expiresAt: nil)
      try store.setValue(2, forKey: "nul\0key", expiresAt: nil)
      defaults.set("keep", forKey: "user.setting")
      #expect(store.value(forKey: "nul\0key") == 2)
      store.removeAll()
      #expect(store.value(forKey: "a") == nil)
      #expect(store.value(forKey: "nul\0key") == nil)
      #expect(defaults.string(forKey: "user.setting") == "keep")
    }
  }

  @Test("removeAll leaves a list store's lists alone, though the default prefixes overlap")
  func removeAllKeepsLists() throws {
    try withTemporaryDefaults { defaults in
      let items = UserDefaultsStore<String, Int>(defaults: defaults)  // prefix "kiln."
      let lists = UserDefaultsListStore<String, Int>(defaults: defaults)  // prefix "kiln.list."
      try lists.append(1, forKey: "feed")
      try items.setValue(2, forKey: "token", expiresAt: nil)
      try items.setValue(3, forKey: "nul\0key", expiresAt: nil)
      defaults.set("mine", forKey: "kiln.setting")
      items.removeAll()
      #expect(items.value(forKey: "token") == nil)
      #expect(items.value(forKey: "nul\0key") == nil)
      #expect(lists.entries(forKey: "feed").map(\.value) == [1])
      #expect(defaults.string(forKey: "kiln.setting") == "mine")
      try items.setValue(4, forKey: "token", expiresAt: nil)
      lists.removeAll()
      #expect(lists.entries(forKey: "feed").isEmpty)
      #expect(items.value(forKey: "token") == 4)
    }
  }

  @Test("an unencodable value is a typed error and changes nothing")
  func encodingFailure() throws {
    try withTemporaryDefaults { defaults in
      let store = UserDefaultsStore<String, Double>(
        defaults: defaults, keyCodec: .automatic, valueCodec: .json())
      try store.setValue(1, forKey: "k", expiresAt: nil)
      #expect {
        try store.setValue(.nan, forKey: "k", expiresAt: nil)
      } throws: { error in
        guard case UserDefaultsStoreError.valueEncodingFailed = error else { return false }
        return true
      }
      #expect(store.value(forKey: "k") == 1)
    }
  }

  @Test("it is a KeyValueStore")
  func keyValueStore() async throws {
    let name = "kiln-storage-tests-\(UUID().uuidString)"
    let defaults = try #require(UserDefaults(suiteName: name))
    defer { defaults.removePersistentDomain(forName: name) }
    let store: any KeyValueStore<String, Int> = UserDefaultsStore<String, Int>(defaults: defaults)
    try await store.setValue(3, forKey: "k", expiresAt: nil)
    #expect(try await store.value(forKey: "k") == 3)
    try await store.removeAll()
    #expect(try await store.value(forKey: "k") == nil)
  }
}

/// An action that runs once, the first time ``run()`` is called after ``arm(_:)``.
final class OneShot: Sendable {
  private let armed = Atomic<Bool>(false)
  private let ran = Atomic<Bool>(false)
  private let actions = Recorder<@Sendable () -> Void>()

  func arm(_ action: @escaping @Sendable () -> Void) {
    actions.append(action)
    armed.store(true, ordering: .sequentiallyConsistent)
  }

  func run() {
    guard armed.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
    else { return }
    actions.values.last?()
    ran.store(true, ordering: .sequentiallyConsistent)
  }

  var hasRun: Bool {
    ran.load(ordering: .sequentiallyConsistent)
  }
}

/// Defaults whose `set` first runs ``beforeSet`` (once armed) on the writing thread: a
/// write that lands late — and, on Apple platforms, where change observers run.
final class HookedDefaults: UserDefaults {
  let beforeSet = OneShot()

  override func set(_ value: Any?, forKey defaultName: String) {
    beforeSet.run()
    super.set(value, forKey: defaultName)
  }
}

@Suite("UserDefaultsListStore", .timeLimit(.minutes(1)))
struct UserDefaultsListStoreTests {
  @Test("appends keep the list in order and bounded, dropping the oldest")
  func bounded() throws {
    try withTemporaryDefaults { defaults in
      let store = UserDefaultsListStore<String, Int>(defaults: defaults, maximumEntriesPerKey: 3)
      for value in 1...5 { try store.append(value, forKey: "k") }
      #expect(store.entries(forKey: "k").map(\.value) == [3, 4, 5])
      #expect(store.entry(forKey: "k")?.value == 5)
      #expect(store.entries(forKey: "other").isEmpty)
    }
  }

  @Test("expired entries are skipped when read and dropped on the next append")
  func expiry() throws {
    try withTemporaryDefaults { defaults in
      let now = ManualDate()
      let store = UserDefaultsListStore<String, Int>(defaults: defaults, maximumEntriesPerKey: 10, now: now.provider)
      try store.append(1, forKey: "k", expiresAt: now() + 10)
      try store.append(2, forKey: "k", expiresAt: now() + 100)
      try store.append(3, forKey: "k", expiresAt: now() + 5)
      now.advance(by: .seconds(20))
      #expect(store.entries(forKey: "k").map(\.value) == [2])
      #expect(store.entry(forKey: "k")?.value == 2)
      try store.setValue(4, forKey: "k", expiresAt: nil)
      #expect((defaults.array(forKey: "kiln.list.str:k") ?? []).count == 2)
    }
  }

  @Test(
    "an append that lands after another began loses nothing, through one store or two, and holds no lock",
    arguments: [true, false])
  func lateAppend(throughOneStore: Bool) throws {
    let name = "kiln-storage-tests-\(UUID().uuidString)"
    let defaults = try #require(HookedDefaults(suiteName: name))
    defer { defaults.removePersistentDomain(forName: name) }
    let lists = UserDefaultsListStore<String, Int>(defaults: defaults)
    let other = throughOneStore ? lists : UserDefaultsListStore<String, Int>(defaults: defaults)
    // The append of 1 decides its list, then — before the list lands — the append of 2 runs
    // to completion on the same thread, as an observer of the change would.
    defaults.beforeSet.arm { try? other.append(2, forKey: "feed") }
    try lists.append(1, forKey: "feed")
    #expect(defaults.beforeSet.hasRun)
    #expect(lists.entries(forKey: "feed").map(\.value) == [1, 2])
  }

  @Test("removeValue drops the whole list; concurrent appends lose nothing within the bound")
  func removeAndConcurrency() async throws {
    let name = "kiln-storage-tests-\(UUID().uuidString)"
    let defaults = try #require(UserDefaults(suiteName: name))
    defer { defaults.removePersistentDomain(forName: name) }
    let store = UserDefaultsListStore<String, Int>(defaults: defaults, maximumEntriesPerKey: 100)
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<4 {
        group.addTask {
          for index in 0..<20 { try? store.append(worker * 100 + index, forKey: "k") }
        }
      }
    }
    #expect(store.entries(forKey: "k").count == 80)
    try store.removeValue(forKey: "k")
    #expect(store.entries(forKey: "k").isEmpty)
  }

  @Test("many threads appending through two stores on one defaults lose nothing within the bound")
  func concurrentAppendsThroughTwoStores() throws {
    try withTemporaryDefaults { defaults in
      let stores = (0..<2).map { _ in UserDefaultsListStore<String, Int>(defaults: defaults, maximumEntriesPerKey: 400)
      }
      DispatchQueue.concurrentPerform(iterations: 8) { worker in
        for index in 0..<40 { try? stores[worker % 2].append(worker * 100 + index, forKey: "k") }
      }
      let values = stores[0].entries(forKey: "k").map(\.value)
      #expect(values.count == 320)
      #expect(Set(values).count == 320)
    }
  }
}
