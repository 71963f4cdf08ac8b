// KilnStorageCrashWriter — the child process of KilnStorageTests' crash suite.
//
//   KilnStorageCrashWriter <disk|serializable|sqlite> <path> loop <first generation> <key count>
//     Writes keys "k0"… in a loop until killed; after each write is durable (returned,
//     and flushed for the serializable cache) prints "ack <key> <generation>".
//   KilnStorageCrashWriter outbox <path> loop <first generation> <scope count>
//     Appends outbox records (scope "k<generation % count>", change a JSON `CheckedValue`)
//     until killed; prints "ack <generation> <sequence>" once each append returned, and
//     every third append removes the entry appended two before it, printing
//     "removing <sequence>" before and "removed <sequence>" once the removal returned.
//   KilnStorageCrashWriter outbox <path> hold-sender-lock - 0
//     Takes the outbox's sender lock, prints "locked" (or "held <holder>") and waits to be
//     killed.
//   KilnStorageCrashWriter sqlite <path> batch <prefix> <count>
//     Writes "<prefix>-0"… and the shared keys "shared-0"…, one transaction each, then
//     prints "done" and exits: two of these run at once against one file.
//
// The values are KilnTesting's `CheckedValue`s, whose payload and checksum are a function of
// key and generation, so the parent can tell a complete value from a torn one.

import Foundation
import KilnStorage
import KilnTesting

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The value written for `key` at `generation`: 40 to 6,039 payload characters, larger than
/// the soak's, so values straddle pages.
func crashValue(key: String, generation: Int) -> CheckedValue {
  CheckedValue(key: key, sequence: generation, payloadLengths: 40..<6_040)
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("KilnStorageCrashWriter: \(message)\n".utf8))
  exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 6 else {
  fail("usage: <disk|serializable|sqlite|outbox> <path> <loop|batch> <generation|prefix> <count>")
}
let store = arguments[1]
let url = URL(fileURLWithPath: arguments[2])
let mode = arguments[3]
guard let count = Int(arguments[5]) else { fail("bad count \(arguments[5])") }

do {
  switch (store, mode) {
  case ("disk", "loop"):
    let cache = try DiskCache<String, CheckedValue>(directory: url)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    while true {
      let key = "k\(generation % count)"
      try await cache.setValue(crashValue(key: key, generation: generation), forKey: key)
      ChildOutput.say("ack \(key) \(generation)")
      generation += 1
    }
  case ("serializable", "loop"):
    let cache = try SerializableCache<String, CheckedValue>.load(
      name: "crash", directory: url, entryLifetime: nil, writeDelay: .zero)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    while true {
      let key = "k\(generation % count)"
      cache[key] = crashValue(key: key, generation: generation)
      if generation % 7 == 0 { cache.removeValue(forKey: "transient") } else { cache["transient"] = nil }
      try await cache.flush()
      ChildOutput.say("ack \(key) \(generation)")
      generation += 1
    }
  case ("sqlite", "loop"):
    let sqlite = try SQLiteStore<String, CheckedValue>(url: url)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    while true {
      let key = "k\(generation % count)"
      if generation % 5 == 0 {
        // A batch: several keys in one transaction.
        let keys = (0..<3).map { "k\((generation + $0) % count)" }
        try await sqlite.setValues(keys.map { ($0, crashValue(key: $0, generation: generation)) })
        for batchKey in keys { ChildOutput.say("ack \(batchKey) \(generation)") }
      } else {
        try await sqlite.setValue(crashValue(key: key, generation: generation), forKey: key)
        ChildOutput.say("ack \(key) \(generation)")
      }
      generation += 1
    }
  case ("outbox", "loop"):
    let outbox = try SQLiteOutboxStore(url: url)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    var recent: [UInt64] = []
    while true {
      let scope = Data("k\(generation % count)".utf8)
      let change = try JSONEncoder().encode(crashValue(key: "k\(generation % count)", generation: generation))
      let sequence = try await outbox.append(OutboxRecord(channel: "crash", scope: scope, param: scope, change: change))
      ChildOutput.say("ack \(generation) \(sequence)")
      recent.append(sequence)
      if generation % 3 == 0, recent.count >= 3 {
        let confirmed = recent[recent.count - 3]
        ChildOutput.say("removing \(confirmed)")
        try await outbox.remove([confirmed])
        ChildOutput.say("removed \(confirmed)")
      }
      generation += 1
    }
  case ("outbox", "hold-sender-lock"):
    let outbox = try SQLiteOutboxStore(url: url)
    switch try await outbox.lockSender() {
    case .acquired(let lease):
      ChildOutput.say("locked")
      try await Task.sleep(for: .seconds(3_600))
      withExtendedLifetime(lease) {}
    case .held(let holder):
      ChildOutput.say("held \(holder)")
    }
  case ("sqlite", "batch"):
    let sqlite = try SQLiteStore<String, CheckedValue>(url: url)
    let prefix = arguments[4]
    for index in 0..<count {
      try await sqlite.setValue(crashValue(key: "\(prefix)-\(index)", generation: index), forKey: "\(prefix)-\(index)")
      let shared = "shared-\(index % 20)"
      try await sqlite.setValue(crashValue(key: shared, generation: index), forKey: shared)
    }
    ChildOutput.say("done")
  default:
    fail("unknown store or mode \(store) \(mode)")
  }
} catch {
  fail("\(error)")
}
