// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "PostgresPoolRepro",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2")
  ],
  targets: [
    .executableTarget(
      name: "PostgresPoolRepro",
      dependencies: [.product(name: "PostgresNIO", package: "postgres-nio")]
    )
  ]
)
