#if PostgreSQL
  import Foundation
  public import PostgresNIO

  extension PostgresStore {
    /// A postgres-nio client configuration read from a connection URL such as
    /// `postgres://user:password@host:5432/database`.
    ///
    /// ```swift
    /// let client = PostgresClient(configuration: try PostgresStore<String, Data>.configuration(url: url))
    /// ```
    ///
    /// TLS is off unless the URL says `?sslmode=require` (or `prefer`); the port defaults to
    /// 5432 and the user to `postgres`.
    ///
    /// - Parameter url: The connection URL (`postgres://` or `postgresql://`).
    /// - Returns: The configuration, to adjust (pool size, timeouts) before creating the client.
    /// - Throws: ``PostgresStoreError/connectionFailed(_:)`` when the URL cannot be read.
    public static func configuration(url: String) throws(PostgresStoreError) -> PostgresClient.Configuration {
      guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
        let host = components.host, !host.isEmpty
      else { throw .connectionFailed("not a PostgreSQL URL: \(url)") }
      let database = components.path.split(separator: "/").first.map(String.init)
      let mode = components.queryItems?.first { $0.name == "sslmode" }?.value
      let tls: PostgresClient.Configuration.TLS =
        switch mode {
        case "require", "verify-full", "verify-ca": .require(.makeClientConfiguration())
        case "prefer": .prefer(.makeClientConfiguration())
        default: .disable
        }
      return PostgresClient.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: database, tls: tls)
    }
  }
#endif
