// KilnStorageCrashWriter — the child process of KilnStorageTests' crash suite.
//
//   KilnStorageCrashWriter <disk|serializable|sqlite> <path> loop <first generation> <key count>
//     Writes keys "k0"… in a loop until killed; after each write is durable (returned,
//     and flushed for the serializable cache) prints "ack <key> <generation>".
//   KilnStorageCrashWriter sqlite <path> batch <prefix> <count>
//     Writes "<prefix>-0"… and the shared keys "shared-0"…, one transaction each, then
//     prints "done" and exits: two of these run at once against one file.
//
// The values are `CrashValue`s whose payload is a function of key and generation, so the
// parent can tell a complete value from a torn one.

import Foundation
import KilnStorage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

struct CrashValue: Codable, Sendable {
  var key: String
  var generation: Int
  var payload: String

  init(key: String, generation: Int) {
    self.key = key
    self.generation = generation
    payload = CrashValue.payload(key: key, generation: generation)
  }

  /// 40 to 6,000 characters that depend on both key and generation.
  static func payload(key: String, generation: Int) -> String {
    let length = 40 + (generation &* 7_919 &+ key.utf8.count &* 131) % 6_000
    let letter = Character(Unicode.Scalar(UInt8(97 + generation % 26)))
    return key + ":" + String(repeating: letter, count: length)
  }
}

func say(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  bytes.withUnsafeBytes { buffer in
    var offset = 0
    while offset < buffer.count {
      let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
      if written <= 0 { exit(3) }
      offset += written
    }
  }
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("KilnStorageCrashWriter: \(message)\n".utf8))
  exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 6 else {
  fail("usage: <disk|serializable|sqlite> <path> <loop|batch> <generation|prefix> <count>")
}
let store = arguments[1]
let url = URL(fileURLWithPath: arguments[2])
let mode = arguments[3]
guard let count = Int(arguments[5]) else { fail("bad count \(arguments[5])") }

do {
  switch (store, mode) {
  case ("disk", "loop"):
    let cache = try DiskCache<String, CrashValue>(directory: url)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    while true {
      let key = "k\(generation % count)"
      try await cache.setValue(CrashValue(key: key, generation: generation), forKey: key)
      say("ack \(key) \(generation)")
      generation += 1
    }
  case ("serializable", "loop"):
    let cache = try SerializableCache<String, CrashValue>.load(
      name: "crash", directory: url, entryLifetime: nil, writeDelay: .zero)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    while true {
      let key = "k\(generation % count)"
      cache[key] = CrashValue(key: key, generation: generation)
      if generation % 7 == 0 { cache.removeValue(forKey: "transient") } else { cache["transient"] = nil }
      try await cache.flush()
      say("ack \(key) \(generation)")
      generation += 1
    }
  case ("sqlite", "loop"):
    let sqlite = try SQLiteStore<String, CrashValue>(url: url)
    guard var generation = Int(arguments[4]) else { fail("bad generation") }
    while true {
      let key = "k\(generation % count)"
      if generation % 5 == 0 {
        // A batch: several keys in one transaction.
        let keys = (0..<3).map { "k\((generation + $0) % count)" }
        try await sqlite.setValues(keys.map { ($0, CrashValue(key: $0, generation: generation)) })
        for batchKey in keys { say("ack \(batchKey) \(generation)") }
      } else {
        try await sqlite.setValue(CrashValue(key: key, generation: generation), forKey: key)
        say("ack \(key) \(generation)")
      }
      generation += 1
    }
  case ("sqlite", "batch"):
    let sqlite = try SQLiteStore<String, CrashValue>(url: url)
    let prefix = arguments[4]
    for index in 0..<count {
      try await sqlite.setValue(CrashValue(key: "\(prefix)-\(index)", generation: index), forKey: "\(prefix)-\(index)")
      let shared = "shared-\(index % 20)"
      try await sqlite.setValue(CrashValue(key: shared, generation: index), forKey: shared)
    }
    say("done")
  default:
    fail("unknown store or mode \(store) \(mode)")
  }
} catch {
  fail("\(error)")
}
