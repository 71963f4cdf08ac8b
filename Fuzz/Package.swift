// swift-tools-version: 6.2
//
// Kiln's coverage-guided fuzzers: a separate package so that nothing here reaches Kiln's
// consumers. Each fuzzer is an executable target built with `-sanitize=fuzzer,address`: it
// exports `LLVMFuzzerTestOneInput`, and its `main.swift` starts libFuzzer's driver
// (`LLVMFuzzerRunDriver`, declared by CLibFuzzer). The parsers are internal, so the fuzzers
// `@testable import` Kiln's modules (debug builds enable testing).
//
// Build and run them with `Scripts/fuzz.sh [target] [seconds]`; see README.md.

import PackageDescription

/// The fuzzers: target name and the Kiln products it needs.
let fuzzers: [(name: String, products: [String])] = [
  ("JournalDecode", ["KilnStorage"]),
  ("DiskEntryFile", ["KilnStorage"]),
  ("DiskFileName", ["KilnStorage"]),
  ("StoreCodec", ["KilnStorage"]),
  ("OutboxEnvelope", ["KilnStorage"]),
  ("CacheControl", ["KilnNetwork"]),
  ("RetryAfter", ["KilnNetwork"]),
  ("HTTPDate", ["KilnNetwork"]),
  ("VaryETag", ["KilnNetwork"]),
  ("CachePolicy", ["KilnNetwork"]),
  ("StoredResponse", ["KilnNetwork"]),
  ("TargetURL", ["KilnNetwork"]),
  ("Multipart", ["KilnNetwork"]),
]

let package = Package(
  name: "KilnFuzz",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Kiln", path: "..")
  ],
  targets: [
    .target(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
    .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Sources/FuzzSupport"),
  ]
    + fuzzers.map { fuzzer in
      .executableTarget(
        name: fuzzer.name,
        dependencies: ["FuzzSupport"] + fuzzer.products.map { .product(name: $0, package: "Kiln") },
        path: "Sources/\(fuzzer.name)"
      )
    }
    + [
      // KilnStorage's PostgreSQL change notifications: the target compiles the parser's own
      // source file (a symbolic link) with the trait's condition defined, so that fuzzing it
      // needs no postgres-nio build.
      .executableTarget(
        name: "PostgresNotification",
        dependencies: ["FuzzSupport"],
        path: "Sources/PostgresNotification",
        swiftSettings: [.define("PostgreSQL")]
      )
    ],
  swiftLanguageModes: [.v6]
)
