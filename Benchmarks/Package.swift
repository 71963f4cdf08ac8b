// swift-tools-version: 6.2
//
// Kiln's benchmarks: a separate package so that ordo-one/benchmark never reaches Kiln's
// consumers. Run them with `Scripts/bench.sh`, which prints every Kiln figure beside its
// baseline measured in the same run.
//
// Each benchmark target lives in `Benchmarks/<Target>/` and registers comparisons (a Kiln side
// and its baseline, measured interleaved) through `KilnBenchmarkSupport.comparison(...)`.

import PackageDescription

let benchmarkTargets = [
  "CoreBenchmarks", "QueryBenchmarks", "StorageBenchmarks", "HTTPCacheBenchmarks", "RepositoryBenchmarks",
  "NetworkBenchmarks",
]

let package = Package(
  name: "KilnBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    // The PostgreSQL trait for PostgresBenchmarks (PostgresStore against PostgresClient), the
    // AsyncHTTPClient trait for NetworkBenchmarks (AsyncHTTPClientTransport), the OpenAPI trait
    // for OpenAPIBenchmarks (OpenAPIClientTransport).
    // Logging, Metrics, Tracing and ServiceLifecycle for ObservationBenchmarks (in NetworkBenchmarks).
    .package(
      name: "Kiln", path: "..",
      traits: ["PostgreSQL", "AsyncHTTPClient", "OpenAPI", "Logging", "Metrics", "Tracing", "ServiceLifecycle"]),
    // The no-op backends ObservationBenchmarks bootstraps, and the Logger it injects.
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    // OpenAPIBenchmarks' baseline: the generated client over swift-openapi-async-http-client.
    .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
    .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    // The loopback HTTP server of NetworkBenchmarks (KilnBenchmarkSupport.LoopbackHTTPServer).
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    // Its allocation counters, which KilnBenchmarkSupport reads for each side of a round.
    .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.5.0"),
  ],
  targets: [
    .target(
      name: "KilnBenchmarkSupport",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      path: "Sources/KilnBenchmarkSupport"
    )
  ]
    + benchmarkTargets.map { name in
      .executableTarget(
        name: name,
        dependencies: [
          "KilnBenchmarkSupport",
          .product(name: "Benchmark", package: "benchmark"),
          .product(name: "KilnCore", package: "Kiln"),
          .product(name: "KilnQuery", package: "Kiln"),
          .product(name: "KilnStorage", package: "Kiln"),
          .product(name: "KilnNetwork", package: "Kiln"),
          .product(name: "KilnRepository", package: "Kiln"),
          .product(name: "KilnRepositoryNetwork", package: "Kiln"),
          .product(name: "KilnDispatch", package: "Kiln"),
          .product(name: "Logging", package: "swift-log"),
          .product(name: "CoreMetrics", package: "swift-metrics"),
          .product(name: "Tracing", package: "swift-distributed-tracing"),
          .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        ],
        path: "Benchmarks/\(name)",
        exclude: ["targets.tsv"],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
      )
    }
    + [
      .executableTarget(
        name: "PostgresBenchmarks",
        dependencies: [
          "KilnBenchmarkSupport",
          .product(name: "Benchmark", package: "benchmark"),
          .product(name: "KilnStorage", package: "Kiln"),
          .product(name: "PostgresNIO", package: "postgres-nio"),
        ],
        path: "Benchmarks/PostgresBenchmarks",
        exclude: ["targets.tsv"],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
      ),
      // A client generated from the OpenAPI tests' document (Scripts/openapi-generate.sh copies
      // it into Generated/, wrapped in `#if OpenAPI`, hence the define).
      .executableTarget(
        name: "OpenAPIBenchmarks",
        dependencies: [
          "KilnBenchmarkSupport",
          .product(name: "Benchmark", package: "benchmark"),
          .product(name: "KilnNetwork", package: "Kiln"),
          .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
          .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
          .product(name: "AsyncHTTPClient", package: "async-http-client"),
        ],
        path: "Benchmarks/OpenAPIBenchmarks",
        exclude: ["targets.tsv"],
        swiftSettings: [.define("OpenAPI")],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
      ),
    ],
  swiftLanguageModes: [.v6]
)
