// swift-tools-version: 6.1
//
// A gateway that composes services (see README.md): an origin service and a gateway service on
// Hummingbird 2, two gateway instances sharing one PostgreSQL-backed HTTP cache. A package of its
// own, like Benchmarks/ and Fuzz/, so that Kiln's products never depend on Hummingbird.

import PackageDescription

let package = Package(
  name: "KilnGateway",
  platforms: [.macOS(.v15)],
  dependencies: [
    // The gateway's pipeline: KilnNetwork over AsyncHTTPClient, its shared HTTPCache in a
    // PostgresCache, and Kiln's owners of background work as ServiceGroup services.
    .package(name: "Kiln", path: "../..", traits: ["PostgreSQL", "AsyncHTTPClient", "ServiceLifecycle"]),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
  ],
  targets: [
    .executableTarget(
      name: "KilnGateway",
      dependencies: [
        .product(name: "KilnCore", package: "Kiln"),
        .product(name: "KilnNetwork", package: "Kiln"),
        .product(name: "KilnStorage", package: "Kiln"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    )
  ]
)
