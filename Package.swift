// swift-tools-version: 6.2
//
// Kiln — loading, caching and serving data in Swift 6.
//
// One manifest for every package under `Packages/`. Library products have no required
// package dependency: the only external packages are guarded by the `AsyncHTTPClient`
// and `PostgreSQL` traits (off by default), so a consumer that enables no trait
// resolves nothing but Kiln itself.

import PackageDescription

// MARK: - Traits

let asyncHTTPClientTrait = "AsyncHTTPClient"
let postgreSQLTrait = "PostgreSQL"

// MARK: - Targets

/// A library module that lives in `Packages/<package>/Sources/<name>`.
func module(
  _ name: String,
  package: String,
  dependencies: [Target.Dependency] = [],
  exclude: [String] = []
) -> Target {
  .target(
    name: name,
    dependencies: dependencies,
    path: "Packages/\(package)/Sources/\(name)",
    exclude: exclude
  )
}

/// The test target of a library module, in `Packages/<package>/Tests/<name>Tests`.
func tests(
  for name: String,
  package: String,
  dependencies: [Target.Dependency] = []
) -> Target {
  .testTarget(
    name: "\(name)Tests",
    dependencies: [.target(name: name)] + dependencies,
    path: "Packages/\(package)/Tests/\(name)Tests"
  )
}

let package = Package(
  name: "Kiln",
  platforms: [
    .macOS(.v15),
    .iOS(.v18),
    .tvOS(.v18),
    .watchOS(.v11),
    .visionOS(.v2),
  ],
  products: [
    .library(name: "KilnCore", targets: ["KilnCore"]),
    .library(name: "KilnQuery", targets: ["KilnQuery"]),
    .library(name: "KilnStorage", targets: ["KilnStorage"]),
    .library(name: "KilnNetwork", targets: ["KilnNetwork"]),
    .library(name: "KilnRepository", targets: ["KilnRepository"]),
    .library(name: "KilnSwiftUI", targets: ["KilnSwiftUI"]),
    .library(name: "KilnDispatch", targets: ["KilnDispatch"]),
    .library(name: "KilnTesting", targets: ["KilnTesting"]),
  ],
  traits: [
    .trait(
      name: asyncHTTPClientTrait,
      description: "Adds a KilnNetwork transport built on swift-server/async-http-client."
    ),
    .trait(
      name: postgreSQLTrait,
      description: "Adds a KilnStorage store built on vapor/postgres-nio."
    ),
    .default(enabledTraits: []),
  ],
  dependencies: [
    // Test and demo only (_KilnTestServer), and under KilnNetwork's AsyncHTTPClient trait: a consumer without
    // the trait never fetches it (Scripts/check-consumers.sh proves it).
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
  ],
  targets: [
    // Core: protocols and primitives, no I/O.
    module("_KilnSynchronization", package: "Core"),
    module("KilnCore", package: "Core", dependencies: ["_KilnSynchronization"]),
    module("KilnTesting", package: "Core", dependencies: ["KilnCore", "_KilnSynchronization"]),
    tests(for: "KilnCore", package: "Core", dependencies: ["KilnTesting", "_KilnSynchronization"]),
    tests(for: "KilnTesting", package: "Core", dependencies: ["KilnCore"]),

    // Query: decorators and coordinators (Bricks).
    module("KilnQuery", package: "Query", dependencies: ["KilnCore", "_KilnSynchronization"]),
    tests(for: "KilnQuery", package: "Query", dependencies: ["KilnCore", "KilnTesting"]),

    // Storage: memory, disk, serializable, SQLite and PostgreSQL stores.
    .systemLibrary(
      name: "CKilnSQLite",
      path: "Packages/Storage/Sources/CKilnSQLite",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    // Hardware CRC-32 and SHA-256 for KilnStorage's checksums and key digests (C: the
    // carry-less multiply, CRC and SHA instructions have no Swift spelling); the portable
    // fallbacks stay in Swift.
    .target(name: "CKilnChecksum", path: "Packages/Storage/Sources/CKilnChecksum"),
    module(
      "KilnStorage",
      package: "Storage",
      dependencies: [
        "KilnCore",
        "_KilnSynchronization",
        "CKilnSQLite",
        "CKilnChecksum",
        .product(
          name: "PostgresNIO",
          package: "postgres-nio",
          condition: .when(traits: [postgreSQLTrait])
        ),
      ]
    ),
    tests(
      for: "KilnStorage",
      package: "Storage",
      dependencies: [
        "KilnCore", "KilnTesting", "KilnStorageCrashWriter", "KilnPostgresChild", "_KilnTestServer",
        .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: [postgreSQLTrait])),
      ]
    ),
    // The child process of KilnStorageTests' crash suite: writes to a store until killed.
    .executableTarget(
      name: "KilnStorageCrashWriter",
      dependencies: ["KilnStorage", "KilnTesting"],
      path: "Packages/Storage/Tests/KilnStorageCrashWriter"
    ),
    // The child process of KilnStorageTests' PostgreSQL suites: one node sharing a table.
    .executableTarget(
      name: "KilnPostgresChild",
      dependencies: [
        "KilnStorage",
        .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: [postgreSQLTrait])),
      ],
      path: "Packages/Storage/Tests/KilnPostgresChild"
    ),

    // Network: targets, handler, transports, retry, HTTP cache (Lynn, Moya).
    module(
      "KilnNetwork",
      package: "Network",
      dependencies: [
        "KilnCore",
        "KilnQuery",
        "_KilnSynchronization",
        .product(
          name: "AsyncHTTPClient",
          package: "async-http-client",
          condition: .when(traits: [asyncHTTPClientTrait])
        ),
        .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: [asyncHTTPClientTrait])),
        .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: [asyncHTTPClientTrait])),
        .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: [asyncHTTPClientTrait])),
      ]
    ),
    tests(
      for: "KilnNetwork", package: "Network",
      dependencies: ["KilnCore", "KilnTesting", "KilnStorage", "_KilnTestServer"]),

    // Repository: single source of truth, loading states, pagination, loaders.
    module(
      "KilnRepository",
      package: "Repository",
      // KilnNetwork only for SimpleNetworkLoader; the repository itself needs none of it.
      dependencies: ["KilnCore", "KilnStorage", "KilnNetwork", "_KilnSynchronization"]
    ),
    // SwiftUI views over the loaders; empty where SwiftUI does not exist (Linux).
    module("KilnSwiftUI", package: "Repository", dependencies: ["KilnRepository"]),
    tests(
      for: "KilnRepository", package: "Repository",
      dependencies: ["KilnCore", "KilnTesting", "_KilnSynchronization", "_KilnTestServer"]),

    // Dispatch: Brisk's GCD operators, timers and async bridges. Stands alone: no KilnCore.
    module("KilnDispatch", package: "Dispatch+", dependencies: ["_KilnSynchronization"]),
    tests(for: "KilnDispatch", package: "Dispatch+", dependencies: ["KilnTesting", "KilnDispatchMainThreadProbe"]),
    // Runs KilnDispatch's waits on a real main thread, which Swift Testing never uses on Linux.
    .executableTarget(
      name: "KilnDispatchMainThreadProbe",
      dependencies: ["KilnDispatch"],
      path: "Packages/Dispatch+/Tests/KilnDispatchMainThreadProbe"
    ),

    // A real HTTP server on loopback for network tests and the demo. Not a product.
    .target(
      name: "_KilnTestServer",
      dependencies: [
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
      ],
      path: "Tests/_KilnTestServer"
    ),

    // Cross-package scenarios.
    .testTarget(
      name: "KilnIntegrationTests",
      dependencies: [
        "KilnQuery", "KilnStorage", "KilnNetwork", "KilnDispatch", "KilnTesting", "_KilnTestServer",
      ],
      path: "Tests/KilnIntegrationTests"
    ),

    // The main job: `swift run kiln-demo`. An executable target, not a product.
    .executableTarget(
      name: "kiln-demo",
      dependencies: [
        "KilnCore", "KilnQuery", "KilnStorage", "KilnNetwork", "KilnRepository", "KilnDispatch", "_KilnTestServer",
        .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: [postgreSQLTrait])),
      ],
      path: "Examples/KilnDemo"
    ),
    // `Scripts/soak.sh`: the demo's stack under load and faults for minutes. Not in CI.
    .executableTarget(
      name: "kiln-soak",
      dependencies: ["KilnCore", "KilnStorage", "KilnNetwork", "KilnRepository", "KilnTesting", "_KilnTestServer"],
      path: "Examples/KilnSoak"
    ),
  ],
  swiftLanguageModes: [.v6]
)

// MARK: - Settings shared by every Swift target

let sharedSwiftSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

for target in package.targets where target.type != .system && target.type != .binary {
  target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}
