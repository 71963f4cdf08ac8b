// PostgresStore against the same statements sent through postgres-nio's PostgresClient
// directly, on one server, in one run. Needs KILN_POSTGRES_URL (Scripts/bench.sh starts a
// throwaway PostgreSQL); without it nothing is registered and a message says why.

import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnStorage
import PostgresNIO

private let rowCount = 1_000
private let value = Data(repeating: 7, count: 100)
private let keys = (0..<rowCount).map { "key-\($0)" }
private let keyBuffers = keys.map { ByteBuffer(bytes: Array($0.utf8)) }
private let valueBuffer = ByteBuffer(bytes: value)

/// One client and one store for every benchmark, opened on first use.
private actor Fixture {
  let client: PostgresClient
  private var opened: PostgresStore<String, Data>?

  init(url: String) throws {
    var configuration = try PostgresStore<String, Data>.configuration(url: url)
    configuration.options.maximumConnections = 64
    client = PostgresClient(configuration: configuration)
    let client = self.client
    Task.detached { await client.run() }
  }

  func store() async throws -> PostgresStore<String, Data> {
    if let opened { return opened }
    let store = try await PostgresStore<String, Data>(client: client, table: "kiln_bench")
    try await store.setValues(keys.map { ($0, value) })
    // The raw side's table: the same layout, filled with the same rows.
    try await client.query(
      """
      CREATE TABLE IF NOT EXISTS kiln_bench_raw (key bytea NOT NULL,
        key_hash bytea GENERATED ALWAYS AS (sha256(key)) STORED PRIMARY KEY, value bytea NOT NULL,
        stored_at timestamptz NOT NULL, expires_at timestamptz, updated_at timestamptz NOT NULL DEFAULT clock_timestamp())
      """)
    for key in keyBuffers {
      try await client.query(
        """
        INSERT INTO kiln_bench_raw (key, value, stored_at) VALUES (\(key), \(valueBuffer), now())
        ON CONFLICT (key_hash) DO NOTHING
        """)
    }
    opened = store
    return store
  }
}

/// The raw side's write: the statement PostgresStore sends, the upsert and the NOTIFY that
/// tells the other nodes' caches which key changed.
private func rawWrite(_ key: ByteBuffer) -> PostgresQuery {
  let channel = "kiln_bench_raw"
  let node = "raw "
  return """
    WITH written AS (
      INSERT INTO kiln_bench_raw (key, value, stored_at, expires_at, updated_at)
      VALUES (\(key), \(valueBuffer), \(Date()), \(Date?.none), clock_timestamp())
      ON CONFLICT (key_hash) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at,
        expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
      RETURNING key)
    SELECT pg_notify(\(channel), \(node) || CASE WHEN length(key) <= 3900 THEN 'k' || encode(key, 'hex')
      ELSE '#' || encode(sha256(key), 'hex') END) FROM written
    """
}

private let rawLogger = Logger(label: "bench.raw")

/// The raw side's point read: the statement PostgresStore sends, decoded the same way.
private func rawRead(_ client: PostgresClient, _ key: ByteBuffer) async throws -> Data? {
  let now = Date()
  var found: Data?
  for try await (bytes, _, _) in try await client.query(
    """
    SELECT value, stored_at, expires_at FROM kiln_bench_raw \
    WHERE key_hash = sha256(\(key)) AND key = \(key) AND (expires_at IS NULL OR expires_at >= \(now))
    """
  ).decode((ByteBuffer, Date, Date?).self) {
    found = Data(buffer: bytes)
  }
  return found
}

func registerPostgresBenchmarks() {
  guard let url = ProcessInfo.processInfo.environment["KILN_POSTGRES_URL"], !url.isEmpty,
    let fixture = try? Fixture(url: url)
  else {
    print("PostgresBenchmarks: skipped, no server (set KILN_POSTGRES_URL; Scripts/bench.sh starts one)")
    return
  }

  comparison("PostgresStore point read vs PostgresClient", batch: 200) { _ in
    let store = try await fixture.store()
    for index in 0..<200 { blackHole(try await store.value(forKey: keys[index % rowCount])) }
  } baseline: { _ in
    let client = fixture.client
    _ = try await fixture.store()
    for index in 0..<200 { blackHole(try await rawRead(client, keyBuffers[index % rowCount])) }
  }

  // A write is acknowledged once committed: postgres-nio reports a statement done at its
  // CommandComplete, which the server sends before it commits at the Sync after it, so
  // PostgresStore confirms each write with a SELECT 1 on the same connection (one more round
  // trip). The baseline does what a PostgresClient user needs for the same guarantee; the
  // second comparison shows the cost of the guarantee against the bare statement.
  comparison("PostgresStore single write vs PostgresClient", batch: 200) { _ in
    let store = try await fixture.store()
    for index in 0..<200 { try await store.setValue(value, forKey: keys[index % rowCount], expiresAt: nil) }
  } baseline: { _ in
    let client = fixture.client
    _ = try await fixture.store()
    for index in 0..<200 {
      try await client.withConnection { connection in
        try await connection.query(rawWrite(keyBuffers[index % rowCount]), logger: rawLogger).collect()
        try await connection.query("SELECT 1", logger: rawLogger).collect()
      }
    }
  }

  comparison("PostgresStore single write vs an unconfirmed PostgresClient statement", batch: 200) { _ in
    let store = try await fixture.store()
    for index in 0..<200 { try await store.setValue(value, forKey: keys[index % rowCount], expiresAt: nil) }
  } baseline: { _ in
    let client = fixture.client
    _ = try await fixture.store()
    for index in 0..<200 {
      try await client.query(rawWrite(keyBuffers[index % rowCount])).collect()
    }
  }

  // Throughput of 64 readers at once: the time per read over 64 × 20 reads.
  comparison("PostgresStore 64 concurrent reads vs PostgresClient", batch: 64 * 20) { _ in
    let store = try await fixture.store()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for reader in 0..<64 {
        group.addTask {
          for index in 0..<20 { blackHole(try await store.value(forKey: keys[(reader * 20 + index) % rowCount])) }
        }
      }
      try await group.waitForAll()
    }
  } baseline: { _ in
    let client = fixture.client
    _ = try await fixture.store()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for reader in 0..<64 {
        group.addTask {
          for index in 0..<20 { blackHole(try await rawRead(client, keyBuffers[(reader * 20 + index) % rowCount])) }
        }
      }
      try await group.waitForAll()
    }
  }
}

let benchmarks: @Sendable () -> Void = {
  registerPostgresBenchmarks()
}
